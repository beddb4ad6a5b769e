//! Memory coalescing of one warp issue: one request per x86 memory operand
//! that at least one active lane performed; its sectors are the distinct
//! aligned 32-byte sectors the lanes touch, counted twice: with stack
//! addresses as the CPU laid them out, and interleaved as GPU local memory
//! lays them out. Its segment is that of the first such lane's address.
//! `tf analyze`'s tally and the report's observer count requests with it.

use crate::segments::{
    interleaved_sector_count, interleaved_sector_count_of_lanes, interleaved_sectors, sector_range,
    sectors, SegmentCache, Segments,
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
    /// The lowest and the highest end of the lanes' stacks: an address
    /// outside is on no lane's stack.
    stacks_hull: (u64, u64),
    cursors: Vec<usize>,
    gather: Gather,
    cache: SegmentCache,
}

impl Coalescer {
    /// A coalescer for a warp of `width` lanes with these stacks (per lane:
    /// its range and its stack pointer at its unit's start).
    pub fn new(width: usize, stacks: Vec<((u64, u64), u64)>) -> Coalescer {
        let stacks_hull = stacks.iter().fold((u64::MAX, 0), |(lo, hi), &((l, h), _)| {
            (lo.min(l), hi.max(h))
        });
        Coalescer {
            width,
            stacks,
            stacks_hull,
            ..Coalescer::default()
        }
    }

    /// Calls `each` with every request of `issue`, in operand order.
    // Always inlined: the tally calls it once per issue with memory operands.
    #[inline(always)]
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
        if every_access_made(issue) {
            for j in 0..n_ops {
                let at = usize::from(j);
                let counts = match self.uniform(issue.lanes, at) {
                    Some(counts) => counts,
                    None => self.gathered(issue.lanes.iter().map(|l| (l.lane, &l.accesses[at]))),
                };
                let l = &issue.lanes[0];
                let a = &l.accesses[at];
                each(self.request(j, l.lane, a, counts, segments));
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
                let counts = self.gather.counts();
                each(self.request(j, lane, a, counts, segments));
            }
        }
    }

    /// The warp width it coalesces for.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The distinct sectors of operand `j` of `issue` with each lane's stack
    /// interleaved, as [`Coalescer::requests`] counts them for its request
    /// (`Request::interleaved`): all that differs between warps of several
    /// widths that hold the same lanes, which one replay counts at once.
    pub fn interleaved(&mut self, issue: &Issue<'_>, j: u16) -> u64 {
        fn of_operand<'l>(l: &LaneIssue<'l>, j: u16) -> Option<&'l Access> {
            l.accesses
                .iter()
                .find(|a| a.operand.wrapping_sub(l.first_op) == j)
        }
        if let [lane] = issue.lanes {
            return of_operand(lane, j).map_or(0, |a| self.lone_interleaved(lane.lane, a));
        }
        if every_access_made(issue) {
            if let Some((_, interleaved)) = self.uniform(issue.lanes, usize::from(j)) {
                return interleaved;
            }
        }
        let lanes = issue.lanes.iter();
        self.gathered(lanes.filter_map(|l| Some((l.lane, of_operand(l, j)?))))
            .1
    }

    /// The distinct sectors, in both layouts of the stack, of these accesses
    /// (by lane), gathered and sorted.
    fn gathered<'a>(&mut self, accesses: impl Iterator<Item = (usize, &'a Access)>) -> (u64, u64) {
        self.gather.clear();
        for (lane, a) in accesses {
            self.gather.add(a, lane, &self.stacks, self.width);
        }
        self.gather.counts()
    }

    /// The distinct sectors, in both layouts of the stack, of lane `lane`'s
    /// access `a` made alone.
    // Always inlined: most requests of a one-warp replay are a lone lane's,
    // counted here once per access.
    #[inline(always)]
    fn lone(&self, lane: usize, a: &Access) -> (u64, u64) {
        let span = sector_range(a.addr, a.size).count() as u64;
        (span, self.lone_interleaved(lane, a))
    }

    /// The distinct sectors of lane `lane`'s access `a` made alone, its
    /// stack interleaved. Its place in the warp is `lane % width`: a lane
    /// of a warp is below the width, and a coalescer of width 1 holding
    /// several lanes' stacks counts each lane as the one lane of a warp of
    /// its own (width 1's warps counted by a wider warp's replay).
    #[inline(always)]
    fn lone_interleaved(&self, lane: usize, a: &Access) -> u64 {
        let (stack, sp) = self.stacks[lane];
        if a.addr >= stack.0 && a.addr < stack.1 {
            let place = (lane % self.width) as u32;
            interleaved_sector_count(a.addr, a.size, sp, place, self.width)
        } else {
            sector_range(a.addr, a.size).count() as u64
        }
    }

    /// The request of operand `j` whose first lane is `lane`, accessing
    /// `first`, touching `(sectors, interleaved)` distinct sectors.
    fn request(
        &mut self,
        j: u16,
        lane: usize,
        first: &Access,
        (sectors, interleaved): (u64, u64),
        segments: &Segments,
    ) -> Request {
        Request {
            operand: j,
            segment: segments.classify(self.stacks[lane].0, first.addr, &mut self.cache),
            write: first.write,
            sectors,
            interleaved,
        }
    }
}

impl Coalescer {
    /// The distinct sectors of access `j` of every lane of `lanes`, in both
    /// layouts of the stack, when the lanes access alike: off their stacks,
    /// the same bytes; on them, each on its own stack at the same offset
    /// from its own stack pointer (lanes that run the same code in the same
    /// frame, units of one thread or of several); `None` otherwise. The
    /// same counts as gathering every lane's sectors and sorting them:
    /// GPU local memory puts a lane's word where its offset from the lane's
    /// stack pointer does, whatever that pointer, so the interleaved layout
    /// needs no gathering; as the CPU laid them out, lanes on stacks of
    /// their own are gathered only when their stack pointers differ.
    #[inline(never)]
    fn uniform(&mut self, lanes: &[LaneIssue<'_>], j: usize) -> Option<(u64, u64)> {
        let a = &lanes[0].accesses[j];
        if a.addr < self.stacks_hull.0 || a.addr >= self.stacks_hull.1 {
            // On no lane's stack, nor is any other lane's access to the same
            // address: only addresses and sizes need comparing.
            let alike = (lanes[1..].iter()).all(|l| {
                let b = &l.accesses[j];
                (b.addr, b.size) == (a.addr, a.size)
            });
            let cpu = sector_range(a.addr, a.size).count() as u64;
            return alike.then_some((cpu, cpu));
        }
        let (stack, sp) = self.stacks[lanes[0].lane];
        let on_stack = a.addr >= stack.0 && a.addr < stack.1;
        let offset = a.addr.wrapping_sub(sp);
        let mut one_sp = true;
        for l in &lanes[1..] {
            let b = &l.accesses[j];
            let (stack, lane_sp) = self.stacks[l.lane];
            let lane_on_stack = b.addr >= stack.0 && b.addr < stack.1;
            let alike = if on_stack {
                b.addr.wrapping_sub(lane_sp) == offset
            } else {
                b.addr == a.addr
            };
            if (b.size, lane_on_stack) != (a.size, on_stack) || !alike {
                return None;
            }
            one_sp &= lane_sp == sp;
        }
        let span = || sector_range(a.addr, a.size).count() as u64;
        if !on_stack {
            let span = span();
            return Some((span, span));
        }
        let cpu = if one_sp {
            span()
        } else {
            // Each lane's own bytes, as gathering counts them (lanes of one
            // stack pointer, mostly side by side, give the same sectors).
            let sectors = &mut self.gather.sectors;
            sectors.clear();
            for l in lanes {
                let b = &l.accesses[j];
                for s in sector_range(b.addr, b.size) {
                    if sectors.last() != Some(&s) {
                        sectors.push(s);
                    }
                }
            }
            distinct(sectors)
        };
        let lanes = lanes.iter().map(|l| l.lane as u32);
        let interleaved = interleaved_sector_count_of_lanes(a.addr, a.size, sp, lanes, self.width);
        Some((cpu, interleaved))
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
    // Always inlined: called per lane of every multi-lane request, from
    // `requests` and from `interleaved`; shared, it was left out of line.
    #[inline(always)]
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
    /// [`Coalescer::requests`] of an issue with one lane: its accesses are
    /// its block's present operands, in operand order, one each, so each is
    /// a request of its own (nothing to gather).
    fn one_lane(
        &mut self,
        l: &LaneIssue<'_>,
        n_ops: u16,
        segments: &Segments,
        mut each: impl FnMut(Request),
    ) {
        let stack = self.stacks[l.lane].0;
        for a in l.accesses {
            let j = a.operand.wrapping_sub(l.first_op);
            debug_assert!(j < n_ops, "an access outside its block's operands");
            let (span, interleaved) = self.lone(l.lane, a);
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

/// Whether a lone lane's request counts the same interleaved sectors
/// (`Request::interleaved`) at widths `a` and `b`: at every width of 8 or
/// more, a lane's stack words lie a sector apart (see
/// [`interleaved_sector_count`]).
///
/// ```
/// use tf_analyzer::coalesce::lone_counts_alike;
/// assert!(lone_counts_alike(8, 64));
/// assert!(!lone_counts_alike(4, 32));
/// ```
pub fn lone_counts_alike(a: usize, b: usize) -> bool {
    a >= 8 && b >= 8
}

/// Whether every lane of `issue` made every access of its block (no
/// conditional operand left out): the j-th access of each lane is then
/// operand j.
fn every_access_made(issue: &Issue<'_>) -> bool {
    let n_ops = issue.block.n_ops as usize;
    issue.lanes.iter().all(|l| l.accesses.len() == n_ops)
}

/// Number of distinct values (sorts `v` unless it is in order already).
///
/// ```
/// assert_eq!(tf_analyzer::coalesce::distinct(&mut [3, 1, 3, 2, 1]), 3);
/// assert_eq!(tf_analyzer::coalesce::distinct(&mut [1, 1, 2, 5, 5]), 3);
/// ```
pub fn distinct(v: &mut [u64]) -> u64 {
    match v.len() {
        0 | 1 => return v.len() as u64,
        2 => return 1 + u64::from(v[0] != v[1]),
        _ => {}
    }
    // Lanes that access consecutive elements in lane order (most gathered
    // requests) give their sectors in order: counted in one pass, unsorted.
    if let Some(n) = distinct_in_order(v) {
        return n;
    }
    v.sort_unstable();
    distinct_in_order(v).expect("sorted")
}

/// Number of distinct values of `v` if it is in increasing order (equal
/// neighbours allowed), else `None`.
fn distinct_in_order(v: &[u64]) -> Option<u64> {
    let mut n = u64::from(!v.is_empty());
    for w in v.windows(2) {
        if w[1] < w[0] {
            return None;
        }
        n += u64::from(w[1] != w[0]);
    }
    Some(n)
}

#[cfg(test)]
#[path = "coalesce_tests.rs"]
mod tests;
