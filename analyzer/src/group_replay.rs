//! One group of warp jobs on one core (see [`crate::warp_jobs`]): the
//! first, the widest, replays; the narrower jobs that no observer looks at
//! and whose units are a run of its units are counted from its replay
//! ([`NarrowerWarp`]); the others, and those whose counts that replay
//! voided, replay after it from the units it decoded.

use crate::already_told::AlreadyTold;
use crate::job_order::interleaved;
use crate::replay::{CountedAt, Counts, Lane, NarrowerWarp, Replay, Running, Void, WarpStats};
use crate::sink::{Context, Observer};
use crate::turns::{take_turns, TURN};
use crate::unit_source::{UnitCache, UnitSource};
use crate::warp_jobs::{class, no_turns, Job, WarpJobs};
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
        // The narrower warps' own replays, when the wide warp voided their
        // counts before its end and they took turns with it.
        let mut own: Option<Vec<Counts>> = None;
        let wide = |running: &mut Running<'_, '_, '_>| {
            if narrower.is_empty() {
                return Ok(());
            }
            // void at the end, they replay after it (below)
            let Some(void) = running.run_until_void(TURN)? else {
                return Ok(());
            };
            #[cfg(test)]
            tests::TURNS_TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let size = self.insns(first.members) + void.told.iter().sum::<u64>();
            let told = running.told();
            own = Some(self.replay_voided(
                Some((running, size, told)),
                &narrower,
                &void,
                &mut lanes_of,
            )?);
            Ok(())
        };
        let counts = self.replay_observed(
            replay,
            first,
            first_lanes,
            alone,
            &warps,
            observer,
            ctx,
            wide,
        )?;
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
                let own = match own {
                    Some(own) => own,
                    None => self.replay_voided(None, &narrower, &void, &mut lanes_of)?,
                };
                for (&(job, _), counts) in narrower.iter().zip(own) {
                    self.add(acc, job, 0, counts.at, counts.alone);
                }
            }
        }
        for job in interleaved(others, |j| class(j), |j| self.insns(j.members)) {
            let lanes = lanes_of(job)?;
            let counts =
                self.replay_observed(replay, job, lanes, job.alone, &[], observer, ctx, no_turns)?;
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
        let own = (self.replay_observed(&quiet, job, lanes, 0, &[], nobody, ctx, no_turns)?).at;
        assert!(
            own == stats,
            "a narrower warp counted from a wider warp's replay differs from its own replay (units {:?})",
            job.members
        );
        Ok(())
    }

    /// The own replays of the `narrower` jobs, whose counts the wide
    /// warp's replay voided (`void`), taking turns with the rest of the
    /// wide warp's (`wide`: its replay under way, the steps it tells in all,
    /// and those told so far) if it is not done; each tells the progress
    /// bar only the steps past those the wide warp told of it.
    fn replay_voided<'t>(
        &self,
        wide: Option<(&mut Running<'_, '_, '_>, u64, u64)>,
        narrower: &[(&Job<'_>, usize)],
        void: &Void,
        lanes_of: &mut impl FnMut(&Job<'_>) -> tf_trace::Result<Vec<Lane<'t>>>,
    ) -> tf_trace::Result<Vec<Counts>> {
        let replay = self.replay;
        let bars: Vec<AlreadyTold<'_>> = (void.told.iter())
            .map(|&told| AlreadyTold::new(replay.progress, told))
            .collect();
        let replays: Vec<Replay<'_>> = (bars.iter())
            .map(|bar| Replay {
                progress: bar,
                ..*replay
            })
            .collect();
        // No observer looks at their widths (`counted_from`).
        let mut at: Vec<Vec<CountedAt<'_>>> = (narrower.iter())
            .map(|&(job, _)| {
                let at = |&(k, _): &(usize, usize)| CountedAt {
                    width: self.widths[k],
                    sink: None,
                };
                job.warps.iter().map(at).collect()
            })
            .collect();
        let mut running = Vec::with_capacity(narrower.len());
        for ((r, at), &(job, _)) in replays.iter().zip(&mut at).zip(narrower) {
            running.push(r.start(lanes_of(job)?, at, 0, &[]));
        }
        let (mut wide, wide_size, wide_told) = match wide {
            Some((w, size, told)) => (Some(w), size, told),
            None => (None, 0, 0),
        };
        let mut sizes = vec![wide_size];
        sizes.extend(narrower.iter().map(|&(job, _)| self.insns(job.members)));
        let mut told = vec![0; sizes.len()];
        told[0] = wide_told;
        take_turns(&sizes, told, TURN, |i, steps| match (i, &mut wide) {
            (0, Some(w)) => Ok((w.run_for(steps)?, w.told())),
            (0, None) => Ok((true, 0)),
            _ => {
                let r = &mut running[i - 1];
                Ok((r.run_for(steps)?, r.told()))
            }
        })?;
        running.into_iter().map(Running::finish).collect()
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
    /// Wide warps whose narrower warps, once void, replayed taking turns
    /// with the rest of the wide warp's replay.
    pub(crate) static TURNS_TAKEN: AtomicU64 = AtomicU64::new(0);
}
