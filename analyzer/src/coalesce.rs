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
use tf_trace::Access;

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
    gather: Gather,
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
        let n_ops = issue.block.n_ops as u16;
        if let [lane] = issue.lanes {
            return self.one_lane(lane, n_ops, segments, each);
        }
        // Every lane made every access of the block (no conditional operand
        // left out): the j-th access of each lane is operand j.
        if issue
            .lanes
            .iter()
            .all(|l| l.accesses.len() == usize::from(n_ops))
        {
            for j in 0..n_ops {
                self.gather.clear();
                for l in issue.lanes {
                    self.gather.add(
                        &l.accesses[usize::from(j)],
                        l.lane,
                        &self.stacks,
                        self.width,
                    );
                }
                let l = &issue.lanes[0];
                let request = self.request(j, l.lane, &l.accesses[usize::from(j)], segments);
                each(request);
            }
            return;
        }
        // Each lane's accesses are in operand order: walk them side by side,
        // one operand at a time, with a cursor per lane.
        self.cursors.clear();
        self.cursors.resize(issue.lanes.len(), 0);
        for j in 0..n_ops {
            self.gather.clear();
            let mut first: Option<(usize, &Access)> = None;
            for (c, l) in self.cursors.iter_mut().zip(issue.lanes) {
                let Some(a) = l.accesses.get(*c) else {
                    continue;
                };
                if a.operand.wrapping_sub(l.first_op) != j {
                    continue;
                }
                *c += 1;
                first.get_or_insert((l.lane, a));
                self.gather.add(a, l.lane, &self.stacks, self.width);
            }
            if let Some((lane, a)) = first {
                each(self.request(j, lane, a, segments));
            }
        }
    }

    /// The request of operand `j` gathered so far, whose first lane is
    /// `lane`, accessing `first`.
    fn request(&mut self, j: u16, lane: usize, first: &Access, segments: &Segments) -> Request {
        let (sectors, interleaved) = self.gather.counts();
        Request {
            operand: j,
            segment: segments.classify(self.stacks[lane].0, first.addr, &mut self.cache),
            write: first.write,
            sectors,
            interleaved,
        }
    }
}

/// The sectors of one request's lanes, in both layouts of the stack.
#[derive(Debug, Default)]
struct Gather {
    sectors: Vec<u64>,
    interleaved: Vec<u64>,
    /// A lane touched its stack: until then the interleaved layout's
    /// sectors are those of the CPU's, copied over when one does.
    on_stack: bool,
}

impl Gather {
    fn clear(&mut self) {
        self.sectors.clear();
        self.interleaved.clear();
        self.on_stack = false;
    }

    /// Adds lane `lane`'s access `a`.
    #[inline]
    fn add(&mut self, a: &Access, lane: usize, stacks: &[((u64, u64), u64)], width: usize) {
        let (stack, sp) = stacks[lane];
        if a.addr >= stack.0 && a.addr < stack.1 {
            if !self.on_stack {
                self.on_stack = true;
                self.interleaved.extend_from_slice(&self.sectors);
            }
            interleaved_sectors(
                a.addr,
                a.size,
                sp,
                lane as u32,
                width,
                &mut self.interleaved,
            );
        } else if self.on_stack {
            sectors(a.addr, a.size, &mut self.interleaved);
        }
        sectors(a.addr, a.size, &mut self.sectors);
    }

    /// Distinct sectors as the CPU laid the stacks out, and interleaved.
    fn counts(&mut self) -> (u64, u64) {
        let cpu = distinct(&mut self.sectors);
        let interleaved = if self.on_stack {
            distinct(&mut self.interleaved)
        } else {
            cpu
        };
        (cpu, interleaved)
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
