//! Memory coalescing of one warp issue: one request per x86 memory operand
//! that at least one active lane performed; its sectors are the distinct
//! aligned 32-byte sectors the lanes touch, counted twice: with stack
//! addresses as the CPU laid them out, and interleaved as GPU local memory
//! lays them out. Its segment is that of the first such lane's address.
//! `tf analyze`'s tally and the report's observer count requests with it.

use crate::segments::{
    interleaved_sector_count, interleaved_sectors, sector_range, sectors, SegmentCache, Segments,
};
use crate::sink::{Issue, LaneIssue};
use crate::stats::Segment;

/// One request of an issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The operand's index in the block.
    pub operand: u16,
    /// The segment of its first lane's address.
    pub segment: Segment,
    /// Whether it writes.
    pub write: bool,
    /// Distinct sectors, stack addresses as the CPU laid them out.
    pub sectors: u64,
    /// Distinct sectors, stack addresses interleaved across lanes.
    pub interleaved: u64,
}

/// Turns issues of one warp into requests (keeps its scratch space).
#[derive(Debug, Default)]
pub struct Coalescer {
    width: usize,
    /// Per lane: its stack range and its stack pointer at its unit's start.
    stacks: Vec<((u64, u64), u64)>,
    cursors: Vec<usize>,
    sectors: Vec<u64>,
    interleaved: Vec<u64>,
    cache: SegmentCache,
}

impl Coalescer {
    /// A coalescer for a warp of `width` lanes with these stacks (per lane:
    /// its range and its stack pointer at its unit's start).
    pub fn new(width: usize, stacks: Vec<((u64, u64), u64)>) -> Coalescer {
        Coalescer {
            width,
            stacks,
            ..Coalescer::default()
        }
    }

    /// Calls `each` with every request of `issue`, in operand order.
    pub fn requests(
        &mut self,
        issue: &Issue<'_>,
        segments: &Segments,
        mut each: impl FnMut(Request),
    ) {
        if let [lane] = issue.lanes {
            return self.one_lane(lane, issue.block.n_ops as u16, segments, each);
        }
        // Each lane's accesses are in operand order: walk them side by side,
        // one operand at a time, with a cursor per lane.
        self.cursors.clear();
        self.cursors.resize(issue.lanes.len(), 0);
        for j in 0..issue.block.n_ops as u16 {
            self.sectors.clear();
            self.interleaved.clear();
            let mut first: Option<(usize, u64, bool)> = None;
            for (c, l) in self.cursors.iter_mut().zip(issue.lanes) {
                let Some(a) = l.accesses.get(*c) else {
                    continue;
                };
                if a.operand.wrapping_sub(l.first_op) != j {
                    continue;
                }
                *c += 1;
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
            let segment = segments.classify(self.stacks[lane].0, addr, &mut self.cache);
            each(Request {
                operand: j,
                segment,
                write,
                sectors: distinct(&mut self.sectors),
                interleaved: distinct(&mut self.interleaved),
            });
        }
    }
}

impl Coalescer {
    /// [`Coalescer::requests`] of an issue with one lane: each of its
    /// accesses is a request of its own (the same walk, without gathering).
    fn one_lane(
        &mut self,
        l: &LaneIssue<'_>,
        n_ops: u16,
        segments: &Segments,
        mut each: impl FnMut(Request),
    ) {
        let (stack, sp) = self.stacks[l.lane];
        let mut c = 0;
        for j in 0..n_ops {
            let Some(a) = l.accesses.get(c) else {
                break;
            };
            if a.operand.wrapping_sub(l.first_op) != j {
                continue;
            }
            c += 1;
            let span = sector_range(a.addr, a.size).count() as u64;
            let interleaved = if a.addr >= stack.0 && a.addr < stack.1 {
                interleaved_sector_count(a.addr, a.size, sp, l.lane as u32, self.width)
            } else {
                span
            };
            each(Request {
                operand: j,
                segment: segments.classify(stack, a.addr, &mut self.cache),
                write: a.write,
                sectors: span,
                interleaved,
            });
        }
    }
}

/// Number of distinct values (sorts `v`).
///
/// ```
/// assert_eq!(tf_analyzer::coalesce::distinct(&mut [3, 1, 3, 2, 1]), 3);
/// ```
pub fn distinct(v: &mut [u64]) -> u64 {
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
