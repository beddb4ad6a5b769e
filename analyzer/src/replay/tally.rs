//! `tf analyze`'s figures, as an observer of the replay: every warp's replay
//! tells its [`Tally`] what it tells any other [`IssueSink`], and the tally
//! counts instructions, memory requests and sectors, divergences and locks
//! from that alone (memory requests by [`crate::coalesce`]). The export and
//! the report observe the same stream, so their figures agree with these
//! exactly.

use super::counts::WarpStats;
use crate::blocks::CBlockId;
use crate::coalesce::Coalescer;
use crate::segments::Segments;
use crate::sink::{idle_instructions, Issue, IssueSink};
use crate::stats::{FunctionStats, Insns};
use tf_trace::LockKind;

/// The counts of one warp's replay.
pub(super) struct Tally<'a> {
    /// What was counted, but for the totals of instructions and memory,
    /// which are the sums of the functions' (made by [`Tally::finish`]).
    stats: WarpStats,
    segments: &'a Segments,
    coalescer: Coalescer,
}

impl<'a> Tally<'a> {
    /// A tally for a warp of `width` lanes with these stacks (per lane: its
    /// range and its stack pointer at its unit's start), charging
    /// instructions to `functions` function ids.
    pub(super) fn new(
        segments: &'a Segments,
        width: usize,
        stacks: Vec<((u64, u64), u64)>,
        functions: usize,
    ) -> Tally<'a> {
        Tally {
            stats: WarpStats {
                functions: vec![FunctionStats::default(); functions],
                ..WarpStats::default()
            },
            segments,
            coalescer: Coalescer::new(width, stacks),
        }
    }

    /// What was counted, the totals included. Every issue is charged to
    /// exactly one function, so the totals are summed once here rather
    /// than counted beside the function's on every issue.
    pub(super) fn finish(&mut self) -> WarpStats {
        let mut stats = std::mem::take(&mut self.stats);
        for f in &stats.functions {
            stats.insns.add(&f.insns);
            stats.memory.add(&f.memory);
        }
        stats
    }
}

impl IssueSink for Tally<'_> {
    fn issue(&mut self, issue: &Issue<'_>) {
        let s = &mut self.stats;
        let warp = issue.warp_instructions;
        if issue.counted != issue.active {
            // lanes predicated off or spinning (rare: only under --predicate
            // or --lock-model spin)
            s.predicated_off += idle_instructions(issue.predicated, issue.active, warp);
            s.spinning += idle_instructions(issue.spinning, issue.active, warp);
        }
        let issued = Insns {
            thread_instructions: issue.thread_instructions,
            warp_instructions: warp,
        };
        let f = (issue.function as usize).min(s.functions.len() - 1);
        s.functions[f].insns.add(&issued);
        if let Some(lock) = issue.serialized {
            s.functions[f].serialized_warp_instructions += warp;
            s.locks
                .entry(lock)
                .or_default()
                .serialized_warp_instructions += warp;
        }
        if issue.block.n_ops > 0 {
            let fs = &mut s.functions[f].memory;
            self.coalescer.requests(issue, self.segments, |r| {
                fs.add_request(r.segment, r.write, r.sectors, r.interleaved);
            });
        }
    }

    fn diverged(&mut self, _: CBlockId, _: u64, _: usize, _: Option<CBlockId>) {
        self.stats.divergent_branches += 1;
    }

    fn predicated(&mut self, _: CBlockId) {
        self.stats.predicated_branches += 1;
    }

    fn lock_acquired(&mut self, _: usize, lock: u64, kind: LockKind) {
        let s = self.stats.locks.entry(lock).or_default();
        s.acquisitions += 1;
        s.kind.get_or_insert(kind);
    }

    fn lock_contended(&mut self, lock: u64, lanes: u64, waiting: u64) {
        let _ = lanes;
        let s = self.stats.locks.entry(lock).or_default();
        s.contentions += 1;
        s.serialized_lanes += waiting;
    }
}
