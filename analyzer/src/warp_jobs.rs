//! Stage 7's driver: every (warp width, warp) is one job, and the jobs
//! replay in parallel (widths too, which keeps all cores busy when a trace
//! makes few warps); each warp's replay is shown to the observer.

use crate::blocks::CanonicalBlocks;
use crate::lanes::UnitCache;
use crate::replay::{Lane, Replay, WarpStats};
use crate::scan::ChunkStart;
use crate::sink::{Context, IssueSink, LaneInfo, Observer, WarpInfo};
use crate::units::Unit;
use rayon::prelude::*;
use std::collections::HashMap;
use tf_trace::Trace;

/// One job: the width's index, the warp's number, its units.
pub(crate) type Job<'u> = (usize, usize, &'u [usize]);

/// What the jobs read.
pub(crate) struct WarpJobs<'a> {
    pub(crate) trace: &'a Trace,
    pub(crate) canon: &'a CanonicalBlocks,
    pub(crate) units: &'a [&'a Unit],
    /// Thread stacks by thread id.
    pub(crate) stacks: &'a HashMap<u64, (u64, u64)>,
    /// Where each thread's chunks start, by thread id.
    pub(crate) chunks: &'a HashMap<u64, &'a [ChunkStart]>,
    /// One replay per width.
    pub(crate) replays: &'a [Replay<'a>],
}

impl WarpJobs<'_> {
    /// Replays `jobs`; the counts of each width, summed.
    pub(crate) fn run<O: Observer>(
        &self,
        jobs: &[Job<'_>],
        observer: &O,
        ctx: &Context<'_>,
    ) -> tf_trace::Result<Vec<WarpStats>> {
        let totals: Vec<WarpStats> = jobs
            .par_iter()
            .try_fold(
                || {
                    (
                        vec![WarpStats::default(); self.replays.len()],
                        UnitCache::default(),
                    )
                },
                |(mut acc, mut cache), &(k, index, members)| {
                    // Fewer warps than cores: decode each long lane on a thread of its own.
                    let ahead = jobs.len() < rayon::current_num_threads();
                    let stats = std::thread::scope(|scope| {
                        let lanes = members
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
                        let recorded: u64 = members.iter().map(|&i| self.units[i].insns).sum();
                        if !O::ACTIVE {
                            return self.replays[k]
                                .run(lanes, None)
                                .map(|s| s.recorded(recorded));
                        }
                        let infos: Vec<LaneInfo> = members
                            .iter()
                            .zip(&lanes)
                            .map(|(&i, lane)| LaneInfo {
                                tid: self.units[i].tid,
                                unit: i,
                                stack: lane.stack(),
                                sp: lane.sp(),
                            })
                            .collect();
                        let info = WarpInfo {
                            width: self.replays[k].width,
                            index,
                            lanes: &infos,
                        };
                        let mut sink = observer.begin(ctx, &info);
                        let stats =
                            self.replays[k].run(lanes, Some(&mut sink as &mut dyn IssueSink));
                        observer.end(ctx, &info, sink);
                        stats.map(|s| s.recorded(recorded))
                    })?;
                    acc[k] = std::mem::take(&mut acc[k]).merge(stats);
                    Ok::<_, tf_trace::Error>((acc, cache))
                },
            )
            .map(|r| r.map(|(acc, _)| acc))
            .try_reduce(
                || vec![WarpStats::default(); self.replays.len()],
                |a, b| Ok(a.into_iter().zip(b).map(|(x, y)| x.merge(y)).collect()),
            )?;
        Ok(totals)
    }
}
