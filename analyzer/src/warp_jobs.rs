//! Stage 7's driver: every warp is one job, and the jobs replay in
//! parallel (widths too, which keeps all cores busy when a trace makes few
//! warps); a warp that several widths form alike (the same lanes in the
//! same order) is one job counted at each of them. Each warp's replay is
//! shown to the observer, once per width.

use crate::blocks::CanonicalBlocks;
use crate::lane_source::UnitCache;
use crate::replay::{CountedAt, Lane, Replay, WarpStats};
use crate::scan::ChunkStart;
use crate::sink::{Context, IssueSink, LaneInfo, Observer, WarpInfo};
use crate::units::Unit;
use rayon::prelude::*;
use std::collections::HashMap;
use tf_trace::Trace;

/// One job: a warp's units, and where it stands among the warps of each
/// width that forms it: (the width's index, the warp's number).
pub(crate) struct Job<'u> {
    pub(crate) members: &'u [usize],
    pub(crate) warps: Vec<(usize, usize)>,
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
                        });
                    }
                }
            }
        }
        jobs
    }
}

/// What the jobs read.
pub(crate) struct WarpJobs<'a> {
    pub(crate) trace: &'a Trace,
    pub(crate) canon: &'a CanonicalBlocks,
    pub(crate) units: &'a [&'a Unit],
    /// Thread stacks by thread id.
    pub(crate) stacks: &'a HashMap<u64, (u64, u64)>,
    /// Where each thread's chunks start, by thread id.
    pub(crate) chunks: &'a HashMap<u64, &'a [ChunkStart]>,
    /// The replay's settings.
    pub(crate) replay: &'a Replay<'a>,
    /// The warp widths.
    pub(crate) widths: &'a [usize],
}

impl WarpJobs<'_> {
    /// Replays `jobs`; the counts of each width, summed.
    pub(crate) fn run<O: Observer>(
        &self,
        jobs: &[Job<'_>],
        observer: &O,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<Vec<WarpStats>> {
        let zero = || vec![WarpStats::default(); self.widths.len()];
        let totals: Vec<WarpStats> = jobs
            .par_iter()
            .try_fold(
                || (zero(), UnitCache::default()),
                |(mut acc, mut cache), job| {
                    // Fewer warps than cores: decode each long lane on a thread of its own.
                    let ahead = jobs.len() < rayon::current_num_threads();
                    let stats = std::thread::scope(|scope| {
                        let lanes = job
                            .members
                            .iter()
                            .map(|&i| {
                                let u = self.units[i];
                                let stack = self.stacks.get(&u.tid).copied().unwrap_or((0, 0));
                                let chunks = self.chunks.get(&u.tid).copied().unwrap_or(&[]);
                                let source = cache.source(
                                    self.trace,
                                    self.canon,
                                    u,
                                    chunks,
                                    ahead.then_some(scope),
                                )?;
                                Lane::new(source, (u.root, u.root_sym), stack, u.stack_pointer)
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        self.replay_observed(job, lanes, observer, ctx)
                    })?;
                    let recorded: u64 = job.members.iter().map(|&i| self.units[i].insns).sum();
                    for (&(k, _), s) in job.warps.iter().zip(stats) {
                        acc[k] = std::mem::take(&mut acc[k]).merge(s.recorded(recorded));
                    }
                    Ok::<_, tf_trace::Error>((acc, cache))
                },
            )
            .map(|r| r.map(|(acc, _)| acc))
            .try_reduce(zero, |a, b| {
                Ok(a.into_iter().zip(b).map(|(x, y)| x.merge(y)).collect())
            })?;
        Ok(totals)
    }

    /// Replays `job`'s warp on `lanes`, shown to `observer` at each width
    /// that forms it; the counts of each, in the order of `job.warps`.
    fn replay_observed<O: Observer>(
        &self,
        job: &Job<'_>,
        lanes: Vec<Lane<'_>>,
        observer: &O,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<Vec<WarpStats>> {
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
            return self.replay.run(lanes, &mut at);
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
        let stats = self.replay.run(lanes, &mut at);
        drop(at);
        for (w, sink) in warps.iter().zip(sinks) {
            observer.end(ctx, w, sink);
        }
        stats
    }
}
