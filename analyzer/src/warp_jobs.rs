//! Stage 7's driver: every warp is one job, and the jobs replay in
//! parallel (widths too, which keeps all cores busy when a trace makes few
//! warps); a warp that several widths form alike (the same lanes in the
//! same order) is one job counted at each of them. When there are at least
//! as many wide warps as cores, the narrower warps made of a wide warp's
//! units (under consecutive batching a warp of 32 holds the lanes of two of
//! 16 and four of 8) go with it, as one group ([`crate::group_replay`]):
//! counted from its replay where they can be, else replayed right after it
//! from the same decoded units. Each warp's replay is shown to the
//! observer, once per width.

use crate::blocks::CanonicalBlocks;
use crate::job_order::queued;
use crate::lane_source::LaneSource;
use crate::replay::{CountedAt, Counts, Lane, NarrowerWarp, Replay, Running, WarpStats};
use crate::sink::{Context, IssueSink, LaneInfo, Observer, WarpInfo};
use crate::unit_source::UnitCache;
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
pub(crate) fn class(job: &Job<'_>) -> (Vec<usize>, bool) {
    let widths = job.warps.iter().map(|&(k, _)| k).collect();
    (widths, job.alone != 0)
}

/// The `turns` of [`WarpJobs::replay_observed`] for a replay that takes
/// no turns with others: all of it runs at its end.
pub(crate) fn no_turns(_: &mut Running<'_, '_, '_>) -> tf_trace::Result<()> {
    Ok(())
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

    /// The instructions the units of `members` recorded.
    pub(crate) fn insns(&self, members: &[usize]) -> u64 {
        members.iter().map(|&i| self.units[i].insns).sum()
    }

    /// Where readers of `unit`'s thread may start.
    pub(crate) fn places_of(&self, unit: &Unit) -> Places<'a> {
        self.places.get(&unit.tid).copied().unwrap_or_default()
    }

    /// The lane of unit `i`, read from `source`.
    pub(crate) fn lane<'t>(&self, i: usize, source: LaneSource<'t>) -> tf_trace::Result<Lane<'t>> {
        let u = self.units[i];
        let stack = self.stacks.get(&u.tid).copied().unwrap_or((0, 0));
        Lane::new(source, (u.root, u.root_sym), stack, u.stack_pointer)
    }

    /// Replays `job`'s warp on `lanes` with `replay`, shown to `observer` at each width
    /// that forms it, counting its lanes of `alone` alone too and the
    /// `narrower` warps; the counts of each width in the order of
    /// `job.warps`. `turns` runs the replay as far as it likes (other
    /// replays taking turns with it), and the rest runs after.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn replay_observed<'t, O: Observer>(
        &self,
        replay: &Replay<'_>,
        job: &Job<'_>,
        lanes: Vec<Lane<'t>>,
        alone: u64,
        narrower: &[NarrowerWarp],
        observer: &O,
        ctx: &Context<'_>,
        turns: impl FnOnce(&mut Running<'_, 't, '_>) -> tf_trace::Result<()>,
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
            let mut running = replay.start(lanes, &mut at, alone, narrower);
            turns(&mut running)?;
            return running.finish();
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
        // The sinks of widths the observer does not look at are told
        // nothing: `tf report`'s wide warp of pigz is one warp at six
        // widths, and five sinks that each ignored every issue cost 3% of
        // the report.
        let mut at: Vec<CountedAt> = warps
            .iter()
            .zip(&mut sinks)
            .map(|(w, sink)| CountedAt {
                width: w.width,
                sink: observer
                    .observes(w.width)
                    .then_some(sink as &mut dyn IssueSink),
            })
            .collect();
        let mut running = replay.start(lanes, &mut at, alone, narrower);
        let stats = turns(&mut running).and_then(|()| running.finish());
        drop(at);
        for (w, sink) in warps.iter().zip(sinks) {
            observer.end(ctx, w, sink);
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warps::Batch;

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
