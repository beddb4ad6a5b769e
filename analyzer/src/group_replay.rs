//! One group of warp jobs on one core (see [`crate::warp_jobs`]): the
//! first, the widest, replays; the narrower jobs that no observer looks at
//! and whose units are a run of its units are counted from its replay
//! ([`NarrowerWarp`]); the others, and those whose counts that replay
//! voided, replay after it from the units it decoded.

use crate::already_told::AlreadyTold;
use crate::job_order::interleaved;
use crate::replay::{NarrowerWarp, Replay, WarpStats};
use crate::sink::{Context, Observer};
use crate::unit_source::{UnitCache, UnitSource};
use crate::warp_jobs::{class, Job, WarpJobs};
use std::collections::HashMap;

impl<'a> WarpJobs<'a> {
    /// Replays a group's jobs (the first holds the units of all the
    /// others: they are decoded once, for all of them when there are
    /// several), adding the counts of each width to `acc`. The jobs that
    /// no observer looks at and whose lanes are a run of the first's are
    /// counted from the first's replay ([`NarrowerWarp`]), unless it voids
    /// them; the others replay one after the other.
    pub(crate) fn replay_group<'scope, O: Observer>(
        &self,
        jobs: &[&Job<'_>],
        cache: &mut UnitCache<'a>,
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
        observer: &O,
        ctx: &Context<'_>,
        acc: &mut [WarpStats],
    ) -> tf_trace::Result<()>
    where
        'a: 'scope,
    {
        let mut sources: HashMap<usize, UnitSource<'a>> = HashMap::new();
        let [first, rest @ ..] = jobs else {
            return Ok(());
        };
        if !rest.is_empty() {
            for &i in first.members {
                let u = self.units[i];
                sources.insert(
                    i,
                    cache.decode(self.trace, self.canon, u, self.places_of(u))?,
                );
            }
        }
        let mut lanes_of = |job: &Job<'_>| {
            job.members
                .iter()
                .map(|&i| {
                    let source = match sources.get(&i) {
                        Some(s) => s.lane(ahead)?,
                        None => {
                            let u = self.units[i];
                            cache.source(self.trace, self.canon, u, self.places_of(u), ahead)?
                        }
                    };
                    self.lane(i, source)
                })
                .collect::<tf_trace::Result<Vec<_>>>()
        };
        let (narrower, others): (Vec<(&Job<'_>, usize)>, Vec<&Job<'_>>) =
            self.counted_from(first, rest, observer);
        let warps: Vec<NarrowerWarp> = narrower
            .iter()
            .map(|&(job, at)| NarrowerWarp {
                lanes: at..at + job.members.len(),
                widths: job.warps.iter().map(|&(k, _)| self.widths[k]).collect(),
            })
            .collect();
        // The first counts the narrower jobs' lanes alone, which are its own.
        let alone = narrower
            .iter()
            .fold(first.alone, |m, &(j, at)| m | j.alone << at);
        let replay = self.replay;
        let first_lanes = lanes_of(first)?;
        let counts =
            self.replay_observed(replay, first, first_lanes, alone, &warps, observer, ctx)?;
        self.add(acc, first, alone, counts.at, counts.alone);
        #[cfg(test)]
        tests::NARROWER_COUNTS[usize::from(counts.narrower.is_err())]
            .fetch_add(narrower.len() as u64, std::sync::atomic::Ordering::Relaxed);
        match counts.narrower {
            Ok(stats) => {
                for (&(job, _), stats) in narrower.iter().zip(stats) {
                    #[cfg(debug_assertions)]
                    self.check_narrower(job, &stats, lanes_of(job)?, ctx)?;
                    self.add(acc, job, 0, stats, WarpStats::default());
                }
            }
            Err(void) => {
                // Replayed by themselves: their lanes alone are counted
                // already, and the progress bar was told part of them.
                for (&(job, _), told) in narrower.iter().zip(void.told) {
                    let bar = AlreadyTold::new(replay.progress, told);
                    let replay = Replay {
                        progress: &bar,
                        ..*replay
                    };
                    let lanes = lanes_of(job)?;
                    let counts =
                        self.replay_observed(&replay, job, lanes, 0, &[], observer, ctx)?;
                    self.add(acc, job, 0, counts.at, counts.alone);
                }
            }
        }
        for job in interleaved(others, |j| class(j), |j| self.insns(j.members)) {
            let lanes = lanes_of(job)?;
            let counts = self.replay_observed(replay, job, lanes, job.alone, &[], observer, ctx)?;
            self.add(acc, job, job.alone, counts.at, counts.alone);
        }
        Ok(())
    }

    /// Checks that `job`'s own replay on `lanes` counts `stats`, which a
    /// wider warp's replay counted (debug builds: the test suite's
    /// analyses at several widths all check it).
    #[cfg(debug_assertions)]
    fn check_narrower(
        &self,
        job: &Job<'_>,
        stats: &[WarpStats],
        lanes: Vec<crate::replay::Lane<'_>>,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<()> {
        let quiet = Replay {
            progress: &crate::Silent,
            ..*self.replay
        };
        let nobody = &crate::sink::Nobody;
        let own = (self.replay_observed(&quiet, job, lanes, 0, &[], nobody, ctx)?).at;
        assert!(
            own == stats,
            "a narrower warp counted from a wider warp's replay differs from its own replay (units {:?})",
            job.members
        );
        Ok(())
    }

    /// The jobs of `rest` that `first`'s replay may count, each with where
    /// its lanes start among `first`'s (no observer looks at their widths,
    /// and their units are a run of `first`'s); and the others.
    #[allow(clippy::type_complexity)]
    fn counted_from<'j, 'u, O: Observer>(
        &self,
        first: &Job<'u>,
        rest: &[&'j Job<'u>],
        observer: &O,
    ) -> (Vec<(&'j Job<'u>, usize)>, Vec<&'j Job<'u>>) {
        let mut counted = Vec::new();
        let mut others = Vec::new();
        for &job in rest {
            let observed =
                O::ACTIVE && (job.warps.iter()).any(|&(k, _)| observer.observes(self.widths[k]));
            let at = first.members.iter().position(|&u| u == job.members[0]);
            let run = at.filter(|&at| first.members[at..].starts_with(job.members));
            #[cfg(test)]
            let observed =
                observed || tests::NARROWER_OFF.load(std::sync::atomic::Ordering::Relaxed);
            match run {
                Some(at) if !observed => counted.push((job, at)),
                _ => others.push(job),
            }
        }
        (counted, others)
    }

    /// Adds what `job` counted at its widths, `stats`, and its lanes of
    /// `alone` (a mask of its places) counted alone, to `acc`.
    fn add(
        &self,
        acc: &mut [WarpStats],
        job: &Job<'_>,
        alone: u64,
        stats: Vec<WarpStats>,
        alone_stats: WarpStats,
    ) {
        let all = self.insns(job.members);
        for (&(k, _), s) in job.warps.iter().zip(stats) {
            acc[k] = std::mem::take(&mut acc[k]).merge(s.recorded(all));
        }
        if alone != 0 {
            let k = self.widths.iter().position(|&w| w == 1).expect("width 1");
            let members = job.members.iter().enumerate();
            let alone_units = members.filter(|&(p, _)| alone & (1 << p) != 0);
            let recorded = alone_units.map(|(_, &i)| self.units[i].insns).sum();
            acc[k] = std::mem::take(&mut acc[k]).merge(alone_stats.recorded(recorded));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU64};

    /// Set by a test: every narrower warp replays by itself.
    pub(crate) static NARROWER_OFF: AtomicBool = AtomicBool::new(false);
    /// Narrower warps counted from a wider warp's replay, and those whose
    /// counts were void.
    pub(crate) static NARROWER_COUNTS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
}
