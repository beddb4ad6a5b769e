//! `tf analyze`'s figures, as an observer of the replay: every warp's replay
//! tells its [`Tally`] what it tells any other [`IssueSink`], and the tally
//! counts instructions, memory requests and sectors, divergences and locks
//! from that alone. The export and the report observe the same stream, so
//! their figures agree with these exactly.
//!
//! Memory coalescing: one request per x86 memory operand that at least one
//! active lane performed; its sectors are the distinct aligned 32-byte
//! sectors the lanes touch, counted twice: with stack addresses as the CPU
//! laid them out, and interleaved as GPU local memory lays them out.

use super::counts::WarpStats;
use crate::blocks::CBlockId;
use crate::segments::{interleaved_sectors, sectors, SegmentCache, Segments};
use crate::sink::{Issue, IssueSink};
use crate::stats::{FunctionStats, Insns};
use tf_trace::LockKind;

/// The counts of one warp's replay.
pub(super) struct Tally<'a> {
    /// What was counted.
    pub(super) stats: WarpStats,
    segments: &'a Segments,
    width: usize,
    /// Per lane: its stack range and its stack pointer at its unit's start.
    stacks: Vec<((u64, u64), u64)>,
    /// Scratch: per lane with accesses, (index in the issue, next access).
    cursors: Vec<(u32, u32)>,
    sectors: Vec<u64>,
    interleaved: Vec<u64>,
    segment_cache: SegmentCache,
}

impl<'a> Tally<'a> {
    /// A tally for a warp of `width` lanes with these stacks, charging
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
            width,
            stacks,
            cursors: Vec::new(),
            sectors: Vec::new(),
            interleaved: Vec::new(),
            segment_cache: SegmentCache::default(),
        }
    }

    /// Counts the requests and sectors of the issue's memory accesses, one
    /// request per operand that at least one lane performed.
    fn coalesce(&mut self, issue: &Issue<'_>, f: usize) {
        // Each lane's accesses are in operand order: walk them side by side,
        // one operand at a time, with a cursor per lane.
        self.cursors.clear();
        for (k, l) in issue.lanes.iter().enumerate() {
            if !l.accesses.is_empty() {
                self.cursors.push((k as u32, 0));
            }
        }
        if self.cursors.is_empty() {
            return;
        }
        for j in 0..issue.block.n_ops as u16 {
            self.sectors.clear();
            self.interleaved.clear();
            let mut first: Option<(usize, u64, bool)> = None;
            for c in &mut self.cursors {
                let l = &issue.lanes[c.0 as usize];
                let Some(a) = l.accesses.get(c.1 as usize) else {
                    continue;
                };
                if a.operand - l.first_op != j {
                    continue;
                }
                c.1 += 1;
                first.get_or_insert((l.lane, a.addr, a.write));
                sectors(a.addr, a.size, &mut self.sectors);
                let (stack, sp) = self.stacks[l.lane];
                if a.addr >= stack.0 && a.addr < stack.1 {
                    let lane = l.lane as u32;
                    interleaved_sectors(
                        a.addr,
                        a.size,
                        sp,
                        lane,
                        self.width,
                        &mut self.interleaved,
                    );
                } else {
                    sectors(a.addr, a.size, &mut self.interleaved);
                }
            }
            let Some((lane, addr, write)) = first else {
                continue;
            };
            let stack = self.stacks[lane].0;
            let segment = self.segments.classify(stack, addr, &mut self.segment_cache);
            let n = distinct(&mut self.sectors);
            let ni = distinct(&mut self.interleaved);
            self.stats.memory.add_request(segment, write, n, ni);
            self.stats.functions[f]
                .memory
                .add_request(segment, write, n, ni);
        }
    }
}

impl IssueSink for Tally<'_> {
    fn issue(&mut self, issue: &Issue<'_>) {
        let s = &mut self.stats;
        let warp = issue.warp_instructions;
        // Lanes counted as active without running: as many instructions as
        // the warp issues.
        let idle = |mask: u64| u64::from((mask & !issue.active).count_ones()) * warp;
        s.predicated_off += idle(issue.predicated);
        s.spinning += idle(issue.spinning);
        let issued = Insns {
            thread_instructions: issue.thread_instructions,
            warp_instructions: warp,
        };
        s.insns.add(&issued);
        s.block_issues += 1;
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
            self.coalesce(issue, f);
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

/// Number of distinct values (sorts `v`).
pub(super) fn distinct(v: &mut [u64]) -> u64 {
    match v.len() {
        0 | 1 => return v.len() as u64,
        2 => return 1 + u64::from(v[0] != v[1]),
        _ => {}
    }
    v.sort_unstable();
    let mut n = 0;
    let mut last = None;
    for &x in v.iter() {
        if last != Some(x) {
            n += 1;
            last = Some(x);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_counts_each_value_once() {
        assert_eq!(distinct(&mut []), 0);
        assert_eq!(distinct(&mut [5, 5]), 1);
        assert_eq!(distinct(&mut [3, 1, 3, 2, 1]), 3);
    }
}
