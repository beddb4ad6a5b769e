//! Stage 7: replay of one warp on a SIMT stack with IPDOM reconvergence.
//!
//! The stack is frame-relative (`simt-reconvergence.md` §3.7): every entry
//! belongs to one activation depth of its lanes. Executing the top entry's
//! block advances each of its lanes along its own trace; the lanes are then
//! grouped by where they go next:
//! - the same next block in the same frame: one group per block;
//! - a call: the calling lanes wait in a *return-site* entry of this frame
//!   while one entry per callee (N-way for indirect calls) runs the callee
//!   frames, which reconverge at their virtual exit;
//! - a return (or unwinding): the lane leaves this frame and waits in the
//!   caller's return-site entry below;
//! - the end of its unit: the lane is done.
//!
//! One group updates the entry in place. Several groups diverge: the entry
//! becomes the reconvergence entry at the block's immediate post-dominator
//! (unless that is already the entry's own reconvergence point) and each
//! group gets an entry above it, the fall-through path pushed first (so the
//! taken path runs first, as in GPGPU-Sim; the order never changes counts).
//! An entry whose lanes reach its reconvergence point, or that has no live
//! lanes left, is popped.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::cfg::VEXIT;
use crate::frames::{Frame, FrameTracker};
use crate::lanes::{LaneEvent, LaneSource, LaneStep};
use crate::segments::{interleaved_sectors, sectors, Segments};
use crate::stats::{FunctionStats, Insns, Memory};
use std::collections::HashMap;
use tf_trace::FunctionId;

/// Immediate post-dominators of every function, by (function entry, block).
pub type IpdomMap = HashMap<(u64, CBlockId), CBlockId>;

/// What a stack entry runs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pc {
    /// A block of the entry's frame.
    Block(CBlockId),
    /// The frame's virtual exit.
    Exit,
    /// Lanes that called from this block, back from (or unwinding through) the callee.
    ReturnSite(CBlockId),
}

impl Pc {
    fn of(block: CBlockId) -> Pc {
        if block == VEXIT {
            Pc::Exit
        } else {
            Pc::Block(block)
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    pc: Pc,
    /// Reconvergence point: a block of the frame, or its exit.
    rpc: Pc,
    mask: u64,
    depth: u32,
    /// The frame's function (entry address): the key of its post-dominators.
    func: u64,
}

/// Where a lane goes after a step, relative to the frame it ran in.
enum Next {
    Done,
    Left,
    Called { block: CBlockId, func: u64 },
    Block { block: CBlockId, func: u64 },
}

/// One SIMT lane: a unit and its position.
pub struct Lane<'t> {
    source: LaneSource<'t>,
    step: LaneStep,
    events: Vec<LaneEvent>,
    tracker: FrameTracker,
    done: bool,
    /// The lane's thread stack `[lo, hi)`.
    stack: (u64, u64),
    /// The stack pointer at the unit's start (interleaved stack model base).
    sp: u64,
}

impl<'t> Lane<'t> {
    /// A lane that runs the unit read by `source`, rooted in `root` (the
    /// unit's bottom frame function), with thread stack `stack` and stack
    /// pointer `sp` at the unit's start.
    pub fn new(
        mut source: LaneSource<'t>,
        root: (u64, FunctionId),
        stack: (u64, u64),
        sp: u64,
    ) -> tf_trace::Result<Lane<'t>> {
        let mut step = LaneStep::default();
        let mut events = Vec::new();
        let done = !source.next_step(&mut step, &mut events)?;
        let tracker = FrameTracker::new(Frame::root(root.0, root.1, step.cblock));
        Ok(Lane {
            source,
            step,
            events,
            tracker,
            done,
            stack,
            sp,
        })
    }
}

/// Counts of one warp's replay.
#[derive(Clone, Debug, Default)]
pub struct WarpStats {
    /// All instructions.
    pub insns: Insns,
    /// Per function id (index 0: unknown).
    pub functions: Vec<FunctionStats>,
    /// All memory requests.
    pub memory: Memory,
    /// Branches (blocks with several successor groups) that diverged.
    pub divergent_branches: u64,
    /// Warp-level executions of blocks.
    pub block_issues: u64,
}

/// What the replay needs besides the lanes.
pub struct Replay<'a> {
    /// Canonical blocks.
    pub canon: &'a CanonicalBlocks,
    /// Post-dominators.
    pub ipdom: &'a IpdomMap,
    /// Segment ranges.
    pub segments: &'a Segments,
    /// Warp width (lanes 0..width; the warp may have fewer lanes).
    pub width: usize,
    /// Number of function ids (per-function counters are sized by it).
    pub n_functions: usize,
}

struct Warp<'a, 't> {
    cfg: &'a Replay<'a>,
    lanes: Vec<Lane<'t>>,
    stack: Vec<Entry>,
    stats: WarpStats,
    /// Scratch: (operand index in the block, lane, address, size, write).
    accesses: Vec<(u16, u32, u64, u16, bool)>,
    sectors: Vec<u64>,
    interleaved: Vec<u64>,
    groups: Vec<(CBlockId, u64, u64)>,
    callees: Vec<(CBlockId, u64, u64)>,
}

impl Replay<'_> {
    /// Replays one warp whose lanes are `lanes` (at most 64).
    pub fn run(&self, lanes: Vec<Lane<'_>>) -> tf_trace::Result<WarpStats> {
        assert!(lanes.len() <= 64 && lanes.len() <= self.width.max(1));
        let mut w = Warp {
            cfg: self,
            stack: Vec::new(),
            stats: WarpStats {
                functions: vec![FunctionStats::default(); self.n_functions + 1],
                ..WarpStats::default()
            },
            lanes,
            accesses: Vec::new(),
            sectors: Vec::new(),
            interleaved: Vec::new(),
            groups: Vec::new(),
            callees: Vec::new(),
        };
        w.start();
        w.run()?;
        Ok(w.stats)
    }
}

fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(i)
        }
    })
}

impl<'t> Warp<'_, 't> {
    /// One entry per distinct first block: units that start in different
    /// places run one after the other.
    fn start(&mut self) {
        let mut starts: Vec<(CBlockId, u64, u64)> = Vec::new();
        for (i, lane) in self.lanes.iter().enumerate() {
            if lane.done {
                continue;
            }
            let func = lane.tracker.top().entry;
            match starts
                .iter_mut()
                .find(|(b, f, _)| *b == lane.step.cblock && *f == func)
            {
                Some(s) => s.2 |= 1 << i,
                None => starts.push((lane.step.cblock, func, 1 << i)),
            }
        }
        for &(block, func, mask) in starts.iter().rev() {
            self.stack.push(Entry {
                pc: Pc::Block(block),
                rpc: Pc::Exit,
                mask,
                depth: 0,
                func,
            });
        }
    }

    fn live(&self, e: &Entry) -> u64 {
        let mut live = 0;
        for i in bits(e.mask) {
            let lane = &self.lanes[i];
            let depth = lane.tracker.depth() as u32;
            let here = match e.pc {
                Pc::ReturnSite(_) => depth <= e.depth,
                _ => depth == e.depth,
            };
            if !lane.done && here {
                live |= 1 << i;
            }
        }
        live
    }

    fn run(&mut self) -> tf_trace::Result<()> {
        while let Some(&top) = self.stack.last() {
            let live = self.live(&top);
            if live == 0 || top.pc == top.rpc {
                self.stack.pop();
                continue;
            }
            match top.pc {
                Pc::Block(b) => {
                    self.execute(b, live);
                    self.groups.clear();
                    self.callees.clear();
                    let mut left = 0u64;
                    for i in bits(live) {
                        match self.advance(i, top.depth)? {
                            Next::Done => {}
                            Next::Left => left |= 1 << i,
                            Next::Called { block, func } => {
                                add_group(&mut self.callees, block, func, i)
                            }
                            Next::Block { block, func } => {
                                add_group(&mut self.groups, block, func, i)
                            }
                        }
                    }
                    self.diverge(b, top, left);
                }
                Pc::ReturnSite(call) => {
                    self.groups.clear();
                    self.callees.clear();
                    let mut left = 0u64;
                    for i in bits(live) {
                        let lane = &self.lanes[i];
                        if (lane.tracker.depth() as u32) < top.depth {
                            left |= 1 << i;
                        } else {
                            let func = lane.tracker.top().entry;
                            add_group(&mut self.groups, lane.step.cblock, func, i);
                        }
                    }
                    self.diverge(call, top, left);
                }
                Pc::Exit => {
                    self.stack.pop();
                }
            }
        }
        Ok(())
    }

    /// Issues block `b` for the lanes of `live`.
    fn execute(&mut self, b: CBlockId, live: u64) {
        let cb = self.cfg.canon.block(b);
        let mut thread = 0u64;
        let mut warp = 0u64;
        for i in bits(live) {
            let n = u64::from(self.lanes[i].step.insns);
            thread += n;
            warp = warp.max(n);
        }
        let issued = Insns {
            thread_instructions: thread,
            warp_instructions: warp,
        };
        self.stats.insns.add(&issued);
        self.stats.block_issues += 1;
        let f = (cb.function as usize).min(self.stats.functions.len() - 1);
        self.stats.functions[f].insns.add(&issued);
        if cb.n_ops > 0 {
            self.coalesce(live, f);
        }
    }

    /// Counts the requests and sectors of the lanes' memory accesses, one
    /// request per operand that at least one lane performed.
    fn coalesce(&mut self, live: u64, f: usize) {
        self.accesses.clear();
        for i in bits(live) {
            let step = &self.lanes[i].step;
            for a in &step.accesses {
                self.accesses
                    .push((a.operand - step.first_op, i as u32, a.addr, a.size, a.write));
            }
        }
        self.accesses.sort_by_key(|a| (a.0, a.1));
        let mut k = 0;
        while k < self.accesses.len() {
            let op = self.accesses[k].0;
            let end = k + self.accesses[k..].iter().take_while(|a| a.0 == op).count();
            let (_, first_lane, first_addr, _, write) = self.accesses[k];
            let first_stack = self.lanes[first_lane as usize].stack;
            let segment = self.cfg.segments.classify(first_stack, first_addr);
            self.sectors.clear();
            self.interleaved.clear();
            for &(_, lane, addr, size, _) in &self.accesses[k..end] {
                sectors(addr, size, &mut self.sectors);
                let l = &self.lanes[lane as usize];
                if addr >= l.stack.0 && addr < l.stack.1 {
                    interleaved_sectors(
                        addr,
                        size,
                        l.sp,
                        lane,
                        self.cfg.width,
                        &mut self.interleaved,
                    );
                } else {
                    sectors(addr, size, &mut self.interleaved);
                }
            }
            let n = distinct(&mut self.sectors);
            let ni = distinct(&mut self.interleaved);
            self.stats.memory.add_request(segment, write, n, ni);
            self.stats.functions[f]
                .memory
                .add_request(segment, write, n, ni);
            k = end;
        }
    }

    /// Moves lane `i` (which ran in a frame at `depth`) to its next step.
    fn advance(&mut self, i: usize, depth: u32) -> tf_trace::Result<Next> {
        let canon = self.cfg.canon;
        let lane = &mut self.lanes[i];
        let (prev, prev_end) = (lane.step.cblock, lane.step.end);
        if !lane.source.next_step(&mut lane.step, &mut lane.events)? {
            lane.done = true;
            return Ok(Next::Done);
        }
        for e in &lane.events {
            match e {
                LaneEvent::Signal => lane.tracker.signal(),
                LaneEvent::SignalReturn => lane.tracker.signal_return(),
                LaneEvent::Acquire { .. } | LaneEvent::Release { .. } => {}
            }
        }
        lane.tracker
            .advance(canon, prev, prev_end, lane.step.cblock);
        let d = lane.tracker.depth() as u32;
        let func = lane.tracker.top().entry;
        let block = lane.step.cblock;
        Ok(if d < depth {
            Next::Left
        } else if d > depth {
            Next::Called { block, func }
        } else {
            Next::Block { block, func }
        })
    }

    /// Rewrites the stack after the lanes of `top` ran `node` (or came back
    /// to its return site): `groups` stay in the frame, `callees` entered
    /// callees, `left` left the frame.
    fn diverge(&mut self, node: CBlockId, top: Entry, left: u64) {
        let callers: u64 = self.callees.iter().fold(0, |m, c| m | c.2);
        let targets = self.groups.len() + usize::from(callers != 0) + usize::from(left != 0);
        let at = self.stack.len() - 1;
        if targets == 0 {
            self.stack.pop();
            return;
        }
        if targets == 1 {
            if let Some(&(block, func, mask)) = self.groups.first() {
                let e = &mut self.stack[at];
                e.pc = Pc::Block(block);
                e.mask = mask;
                e.func = func;
                if e.pc == e.rpc {
                    self.stack.pop();
                }
            } else if callers != 0 {
                let e = &mut self.stack[at];
                e.pc = Pc::ReturnSite(node);
                e.mask = callers;
                self.push_callees(top.depth + 1);
            } else {
                // Every lane left the frame.
                self.stack.pop();
            }
            return;
        }
        self.stats.divergent_branches += 1;
        let r = self
            .cfg
            .ipdom
            .get(&(top.func, node))
            .map_or(Pc::Exit, |&r| Pc::of(r));
        let stay = self.groups.iter().fold(callers, |m, g| m | g.2);
        if r != top.rpc {
            let e = &mut self.stack[at];
            e.pc = r;
            e.mask = stay;
        } else {
            self.stack.pop();
        }
        // Fall-through first (lowest), then by address: the taken path runs first.
        let fall = self.cfg.canon.block(node).end_address;
        let canon = self.cfg.canon;
        self.groups.sort_by_key(|g| {
            let a = canon.block(g.0).address;
            (a != fall, a)
        });
        for &(block, func, mask) in &self.groups {
            if Pc::Block(block) != r {
                self.stack.push(Entry {
                    pc: Pc::Block(block),
                    rpc: r,
                    mask,
                    depth: top.depth,
                    func,
                });
            }
        }
        if callers != 0 {
            self.stack.push(Entry {
                pc: Pc::ReturnSite(node),
                rpc: r,
                mask: callers,
                depth: top.depth,
                func: top.func,
            });
            self.push_callees(top.depth + 1);
        }
    }

    fn push_callees(&mut self, depth: u32) {
        for &(block, func, mask) in &self.callees {
            self.stack.push(Entry {
                pc: Pc::Block(block),
                rpc: Pc::Exit,
                mask,
                depth,
                func,
            });
        }
    }
}

fn add_group(groups: &mut Vec<(CBlockId, u64, u64)>, block: CBlockId, func: u64, lane: usize) {
    match groups.iter_mut().find(|g| g.0 == block && g.1 == func) {
        Some(g) => g.2 |= 1 << lane,
        None => groups.push((block, func, 1 << lane)),
    }
}

/// Number of distinct values (sorts `v`).
fn distinct(v: &mut [u64]) -> u64 {
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
