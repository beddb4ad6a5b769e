//! Stage 7's driver: every warp is one job, and the jobs replay in
//! parallel (widths too, which keeps all cores busy when a trace makes few
//! warps); a warp that several widths form alike (the same lanes in the
//! same order) is one job counted at each of them. When there are at least
//! as many wide warps as cores, the narrower warps made of a wide warp's
//! units (under consecutive batching a warp of 32 holds the lanes of two of
//! 16 and four of 8) replay on the same core right after it, from the same
//! decoded units. Each warp's replay is shown to the observer, once per
//! width.

use crate::blocks::CanonicalBlocks;
use crate::job_order::{interleaved, queued};
use crate::lane_source::LaneSource;
use crate::replay::{CountedAt, Counts, Lane, NarrowerWarp, Replay, WarpStats};
use crate::sink::{Context, IssueSink, LaneInfo, Observer, WarpInfo};
use crate::unit_source::{UnitCache, UnitSource};
use crate::unit_starts::Places;
use crate::units::Unit;
use rayon::prelude::*;
use std::collections::HashMap;
use tf_trace::Trace;

/// One job: a warp's units, and where it stands among the warps of each
/// width that forms it: (the width's index, the warp's number).
pub(crate) struct Job<'u> {
    pub(crate) members: &'u [usize],
    pub(crate) warps: Vec<(usize, usize)>,
    /// The members (a mask of their places) whose warps of width 1 this
    /// job counts too ([`crate::lanes_alone`]).
    pub(crate) alone: u64,
}

impl<'u> Job<'u> {
    /// The jobs of `warps` (the warps of each width, in formation order)
    /// that `keep` keeps (by warp number): one per distinct list of units.
    pub(crate) fn of(warps: &'u [Vec<Vec<usize>>], keep: impl Fn(usize) -> bool) -> Vec<Job<'u>> {
        let mut jobs: Vec<Job<'u>> = Vec::new();
        let mut seen: HashMap<&'u [usize], usize> = HashMap::new();
        for (k, ws) in warps.iter().enumerate() {
            for (index, m) in ws.iter().enumerate().filter(|&(i, _)| keep(i)) {
                match seen.get(m.as_slice()) {
                    Some(&j) => jobs[j].warps.push((k, index)),
                    None => {
                        seen.insert(m, jobs.len());
                        jobs.push(Job {
                            members: m,
                            warps: vec![(k, index)],
                            alone: 0,
                        });
                    }
                }
            }
        }
        jobs
    }
}

/// The jobs that replay together, as indices of `jobs`: the first (the
/// widest) holds the units of all the others. One group per job when the
/// groups would be fewer than `cores`: the cores are better used replaying
/// the narrower warps in parallel than sharing their decoding.
pub(crate) fn groups(jobs: &[Job<'_>], cores: usize) -> Vec<Vec<usize>> {
    let alone = || (0..jobs.len()).map(|j| vec![j]).collect();
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(jobs[j].members.len()));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for j in order {
        let members = jobs[j].members;
        let g = group_of.get(&members[0]).copied();
        match g {
            Some(g) if members.iter().all(|u| group_of.get(u) == Some(&g)) => groups[g].push(j),
            _ => {
                for &u in members {
                    group_of.entry(u).or_insert(groups.len());
                }
                groups.push(vec![j]);
            }
        }
    }
    if groups.len() < cores {
        return alone();
    }
    groups
}

/// What a job's replay costs per instruction depends on: the widths it
/// counts at (by index), and whether it counts lanes alone too.
fn class(job: &Job<'_>) -> (Vec<usize>, bool) {
    let widths = job.warps.iter().map(|&(k, _)| k).collect();
    (widths, job.alone != 0)
}

/// What the jobs read.
pub(crate) struct WarpJobs<'a> {
    pub(crate) trace: &'a Trace,
    pub(crate) canon: &'a CanonicalBlocks,
    pub(crate) units: &'a [&'a Unit],
    /// Thread stacks by thread id.
    pub(crate) stacks: &'a HashMap<u64, (u64, u64)>,
    /// Where each thread's readers may start, by thread id.
    pub(crate) places: &'a HashMap<u64, Places<'a>>,
    /// The replay's settings.
    pub(crate) replay: &'a Replay<'a>,
    /// The warp widths.
    pub(crate) widths: &'a [usize],
}

impl<'a> WarpJobs<'a> {
    /// Replays `jobs`; the counts of each width, summed.
    pub(crate) fn run<O: Observer>(
        &self,
        jobs: &[Job<'_>],
        observer: &O,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<Vec<WarpStats>> {
        let zero = || vec![WarpStats::default(); self.widths.len()];
        let cores = rayon::current_num_threads();
        let groups = groups(jobs, cores);
        let insns = |g: &Vec<usize>| g.iter().map(|&j| self.insns(jobs[j].members)).sum();
        // One width: every group is one warp, all alike; they keep their
        // order, which replays a thread's units one after the other
        // (nbody 8192 at W=32 replayed 4-5% slower on one core reordered).
        let groups = if self.widths.len() > 1 {
            queued(groups, cores, |g| class(&jobs[g[0]]), insns)
        } else {
            groups
        };
        let sizes: Vec<u64> = groups.iter().map(insns).collect();
        self.replay.progress.parts(&sizes, cores);
        // Fewer warps than cores: decode each long lane on a thread of its own.
        let ahead = groups.len() < cores;
        let totals: Vec<WarpStats> = groups
            .par_iter()
            .enumerate()
            .try_fold(
                || (zero(), UnitCache::default()),
                |(mut acc, mut cache), (i, group)| {
                    self.replay.progress.part(i);
                    std::thread::scope(|scope| {
                        let group: Vec<&Job<'_>> = group.iter().map(|&j| &jobs[j]).collect();
                        self.replay_group(
                            &group,
                            &mut cache,
                            ahead.then_some(scope),
                            observer,
                            ctx,
                            &mut acc,
                        )
                    })?;
                    Ok::<_, tf_trace::Error>((acc, cache))
                },
            )
            .map(|r| r.map(|(acc, _)| acc))
            .try_reduce(zero, |a, b| {
                Ok(a.into_iter().zip(b).map(|(x, y)| x.merge(y)).collect())
            })?;
        Ok(totals)
    }

    /// Replays a group's jobs (the first holds the units of all the
    /// others: they are decoded once, for all of them when there are
    /// several), adding the counts of each width to `acc`. The jobs that
    /// no observer looks at and whose lanes are a run of the first's are
    /// counted from the first's replay ([`NarrowerWarp`]), unless it voids
    /// them; the others replay one after the other.
    fn replay_group<'scope, O: Observer>(
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
        let counts = self.replay_observed(first, lanes_of(first)?, alone, &warps, observer, ctx)?;
        self.add(acc, first, alone, counts.at, counts.alone);
        let mut again = Vec::new();
        #[cfg(test)]
        tests::NARROWER_COUNTS[usize::from(counts.narrower.is_err())]
            .fetch_add(narrower.len() as u64, std::sync::atomic::Ordering::Relaxed);
        match counts.narrower {
            Ok(stats) => {
                for (&(job, _), stats) in narrower.iter().zip(stats) {
                    #[cfg(debug_assertions)]
                    self.check_narrower(job, &stats, lanes_of(job)?)?;
                    self.add(acc, job, 0, stats, WarpStats::default());
                }
            }
            Err(_) => again = narrower.iter().map(|&(j, _)| j).collect(),
        }
        let order = interleaved(others, |j| class(j), |j| self.insns(j.members));
        for job in again.iter().copied().chain(order) {
            // The narrower jobs' lanes alone are counted already.
            let alone = if again.iter().any(|j| std::ptr::eq(*j, job)) {
                0
            } else {
                job.alone
            };
            let counts = self.replay_observed(job, lanes_of(job)?, alone, &[], observer, ctx)?;
            self.add(acc, job, alone, counts.at, counts.alone);
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
        lanes: Vec<Lane<'_>>,
    ) -> tf_trace::Result<()> {
        let quiet = Replay {
            progress: &crate::Silent,
            ..*self.replay
        };
        let mut at: Vec<CountedAt> = (job.warps.iter())
            .map(|&(k, _)| CountedAt {
                width: self.widths[k],
                sink: None,
            })
            .collect();
        let own = quiet.run_counting(lanes, &mut at, 0, &[])?.at;
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

    /// The instructions the units of `members` recorded.
    fn insns(&self, members: &[usize]) -> u64 {
        members.iter().map(|&i| self.units[i].insns).sum()
    }

    /// Where readers of `unit`'s thread may start.
    fn places_of(&self, unit: &Unit) -> Places<'a> {
        self.places.get(&unit.tid).copied().unwrap_or_default()
    }

    /// The lane of unit `i`, read from `source`.
    fn lane<'t>(&self, i: usize, source: LaneSource<'t>) -> tf_trace::Result<Lane<'t>> {
        let u = self.units[i];
        let stack = self.stacks.get(&u.tid).copied().unwrap_or((0, 0));
        Lane::new(source, (u.root, u.root_sym), stack, u.stack_pointer)
    }

    /// Replays `job`'s warp on `lanes`, shown to `observer` at each width
    /// that forms it, counting its lanes of `alone` alone too and the
    /// `narrower` warps; the counts of each width in the order of
    /// `job.warps`.
    fn replay_observed<O: Observer>(
        &self,
        job: &Job<'_>,
        lanes: Vec<Lane<'_>>,
        alone: u64,
        narrower: &[NarrowerWarp],
        observer: &O,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<Counts> {
        let width = |k: usize| self.widths[k];
        if !O::ACTIVE {
            let mut at: Vec<CountedAt> = job
                .warps
                .iter()
                .map(|&(k, _)| CountedAt {
                    width: width(k),
                    sink: None,
                })
                .collect();
            return self.replay.run_counting(lanes, &mut at, alone, narrower);
        }
        let infos: Vec<LaneInfo> = job
            .members
            .iter()
            .zip(&lanes)
            .map(|(&i, lane)| LaneInfo {
                tid: self.units[i].tid,
                unit: i,
                stack: lane.stack(),
                sp: lane.sp(),
            })
            .collect();
        let warps: Vec<WarpInfo> = job
            .warps
            .iter()
            .map(|&(k, index)| WarpInfo {
                width: width(k),
                index,
                lanes: &infos,
            })
            .collect();
        let mut sinks: Vec<O::Sink> = warps.iter().map(|w| observer.begin(ctx, w)).collect();
        let mut at: Vec<CountedAt> = warps
            .iter()
            .zip(&mut sinks)
            .map(|(w, sink)| CountedAt {
                width: w.width,
                sink: Some(sink as &mut dyn IssueSink),
            })
            .collect();
        let stats = self.replay.run_counting(lanes, &mut at, alone, narrower);
        drop(at);
        for (w, sink) in warps.iter().zip(sinks) {
            observer.end(ctx, w, sink);
        }
        stats
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::warps::Batch;
    use std::sync::atomic::{AtomicBool, AtomicU64};

    /// Set by a test: every narrower warp replays by itself.
    pub(crate) static NARROWER_OFF: AtomicBool = AtomicBool::new(false);
    /// Narrower warps counted from a wider warp's replay, and those whose
    /// counts were void.
    pub(crate) static NARROWER_COUNTS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

    /// The jobs of consecutive warps of `widths` over `n` units, grouped
    /// for `cores`, as lists of (width, warp number).
    fn grouped(n: usize, widths: &[usize], cores: usize) -> Vec<Vec<Vec<(usize, usize)>>> {
        let warps: Vec<Vec<Vec<usize>>> = widths
            .iter()
            .map(|&w| Batch::Consecutive.warps(n, w, |_| 0, |_| 0))
            .collect();
        let jobs = Job::of(&warps, |_| true);
        groups(&jobs, cores)
            .iter()
            .map(|g| {
                g.iter()
                    .map(|&j| jobs[j].warps.iter().map(|&(k, i)| (widths[k], i)).collect())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn narrower_warps_replay_with_the_wide_warp_that_holds_their_units() {
        // 16 units: two warps of 8, each holding two of 4 and four of 2.
        let g = grouped(16, &[2, 8, 4], 2);
        assert_eq!(g.len(), 2);
        for (w8, g) in g.iter().enumerate() {
            assert_eq!(g[0], [(8, w8)], "the widest first");
            let mut rest: Vec<_> = g[1..].iter().flatten().copied().collect();
            rest.sort();
            let expect: Vec<_> = (0..4)
                .map(|i| (2, 4 * w8 + i))
                .chain((0..2).map(|i| (4, 2 * w8 + i)))
                .collect();
            assert_eq!(rest, expect);
        }
        // Fewer wide warps than cores: every warp is a job of its own.
        assert_eq!(grouped(16, &[2, 8, 4], 4).len(), 14);
        // Alike warps stay one job: 5 units make one warp at 8 and at 16.
        assert_eq!(
            grouped(5, &[8, 16, 2], 1),
            [vec![
                vec![(8, 0), (16, 0)],
                vec![(2, 0)],
                vec![(2, 1)],
                vec![(2, 2)]
            ]]
        );
    }

    #[test]
    fn a_warp_across_two_wide_warps_is_a_group_of_its_own() {
        // 12 units at 4 and 3: warps of 3 [3,6) and [6,9) straddle the warps of 4.
        let g = grouped(12, &[4, 3], 1);
        let sizes: Vec<usize> = g.iter().map(Vec::len).collect();
        assert_eq!(sizes, [2, 1, 2, 1, 1]);
        assert_eq!(g.iter().flatten().count(), 7);
        assert_eq!(g[1], [vec![(4, 1)]]);
        assert_eq!(g[3], [vec![(3, 1)]]);
    }
}
