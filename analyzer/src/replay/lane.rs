//! One SIMT lane: the unit it runs, where it stands, the locks it holds,
//! and how it moves to its next step.
//!
//! A lane follows its own recorded path; the SIMT stack only decides when
//! it runs and with which other lanes. After each step its frame tracker
//! says whether it stayed in the frame, called, returned or ended.

use super::warp::Warp;
use crate::blocks::CBlockId;
use crate::frames::{Frame, FrameTracker};
use crate::lane_source::LaneSource;
use crate::lanes::{LaneEvent, LaneStep};
use crate::off_stack::OffStack;
use crate::scan::call_push;
use crate::sink::LaneIssue;
use tf_trace::{FunctionId, LockKind};

/// Where a lane goes after a step, relative to the frame it ran in.
pub(super) enum Next {
    Done,
    Left,
    Parked,
    Called { block: CBlockId, func: u64 },
    Block { block: CBlockId, func: u64 },
}

/// A serialization region a lane is in: it waits at the region's join once
/// it releases `lock` (when it held a contended one) or leaves `depth`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Membership {
    pub(super) region: u32,
    pub(super) lock: Option<u64>,
    pub(super) depth: u32,
}

/// One SIMT lane: a unit and its position.
pub struct Lane<'t> {
    pub(super) source: LaneSource<'t>,
    pub(super) step: LaneStep,
    pub(super) events: Vec<LaneEvent>,
    pub(super) tracker: FrameTracker,
    pub(super) done: bool,
    /// The lane's thread stack `[lo, hi)`.
    pub(super) stack: (u64, u64),
    /// The stack pointer at the unit's start (interleaved stack model base).
    pub(super) sp: u64,
    /// Locks held (acquired, not yet released), with their kinds.
    pub(super) held: Vec<(u64, LockKind)>,
    /// Serialization regions, innermost last.
    pub(super) regions: Vec<Membership>,
    /// Waiting at the join of this region.
    pub(super) parked: Option<u32>,
    /// Whether it started on a stack outside its thread's, and its calls.
    pub(super) off_stack: OffStack,
}

impl<'t> Lane<'t> {
    /// A lane that runs the unit read by `source`, rooted in `root` (the
    /// unit's bottom frame function), with thread stack `stack` and stack
    /// pointer `sp` at the unit's start (when the scan found it; else the
    /// call just before the unit's start tells, else the stack's top).
    pub fn new(
        mut source: LaneSource<'t>,
        root: (u64, FunctionId),
        stack: (u64, u64),
        sp: Option<u64>,
    ) -> tf_trace::Result<Lane<'t>> {
        let mut step = LaneStep::default();
        let mut events = Vec::new();
        let done = !source.next_step(&mut step, &mut events)?;
        let sp = sp.or(source.start_sp()).unwrap_or(stack.1);
        let tracker = FrameTracker::new(Frame::root(root.0, root.1, step.cblock));
        Ok(Lane {
            source,
            step,
            events,
            tracker,
            done,
            stack,
            sp,
            held: Vec::new(),
            regions: Vec::new(),
            parked: None,
            off_stack: OffStack::starting(stack, sp),
        })
    }

    pub(super) fn depth(&self) -> u32 {
        self.tracker.depth() as u32
    }

    /// The lane's thread stack `[lo, hi)`.
    pub fn stack(&self) -> (u64, u64) {
        self.stack
    }

    /// The stack pointer at the unit's start.
    pub fn sp(&self) -> u64 {
        self.sp
    }

    /// Counts the call its step made, by where it pushed its return
    /// address. Out of line: most steps are not calls.
    #[inline(never)]
    fn count_call(&mut self) {
        let push = call_push(self.source.accesses(&self.step));
        self.off_stack.call(self.stack, push);
    }

    /// What this lane, lane `i` of its warp, ran in its step: a block of
    /// `n_ops` memory operands.
    #[inline(always)]
    pub(super) fn issue(&self, i: usize, n_ops: u32) -> LaneIssue<'_> {
        LaneIssue {
            lane: i,
            insns: self.step.insns,
            first_op: self.step.first_op,
            // a block without memory operands has no accesses to look up
            accesses: if n_ops > 0 {
                self.source.accesses(&self.step)
            } else {
                &[]
            },
        }
    }
}

impl Warp<'_, '_, '_> {
    /// The block lane `i` stands at, as the SIMT stack sees it: its step's
    /// block, or the copy that block issues as (`--merge-tails`).
    #[inline(always)]
    pub(super) fn block_of(&self, i: usize) -> CBlockId {
        self.cfg.classes.of(self.lanes[i].step.cblock)
    }

    /// Moves lane `i` (which ran in a frame at `depth`) to its next step.
    // Always inlined: called, its result came back through memory, written
    // in parts and read back whole, and the read stalled (store forwarding
    // fails) on every step.
    #[inline(always)]
    pub(super) fn advance(&mut self, i: usize, depth: u32) -> tf_trace::Result<Next> {
        let canon = self.cfg.canon;
        let lane = &mut self.lanes[i];
        let (prev, prev_end) = (lane.step.cblock, lane.step.end);
        if prev_end.is_call() {
            lane.count_call();
        }
        if !lane.source.next_step(&mut lane.step, &mut lane.events)? {
            lane.done = true;
            return Ok(Next::Done);
        }
        let mut released = false;
        for e in &lane.events {
            match *e {
                LaneEvent::Signal => lane.tracker.signal(),
                LaneEvent::SignalReturn => lane.tracker.signal_return(),
                LaneEvent::Acquire { kind, lock } => {
                    lane.held.push((lock, kind));
                    self.issuer.lock_acquired(i, lock, kind);
                }
                LaneEvent::Release { lock, .. } => {
                    if let Some(k) = lane.held.iter().rposition(|h| h.0 == lock) {
                        lane.held.remove(k);
                    }
                    released |= lane.regions.last().is_some_and(|m| m.lock == Some(lock));
                }
            }
        }
        lane.tracker
            .advance(canon, prev, prev_end, lane.step.cblock);
        let d = lane.depth();
        if let Some(m) = lane.regions.last() {
            if released || d < m.depth {
                lane.parked = Some(m.region);
                return Ok(Next::Parked);
            }
        }
        let func = lane.tracker.top().entry;
        let block = self.block_of(i);
        Ok(if d < depth {
            Next::Left
        } else if d > depth {
            Next::Called { block, func }
        } else {
            Next::Block { block, func }
        })
    }
}
