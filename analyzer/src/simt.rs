//! Stage 7: replay of one warp on a SIMT stack with IPDOM reconvergence,
//! memory coalescing and lock serialization.
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
//!
//! # Locks
//!
//! A lane holds a lock from its acquire to its release. When two or more
//! lanes that move on together hold the same lock, they cannot run its
//! critical section in lock-step: the warp serializes them. The lanes are
//! split into *rounds*: round 0 holds every lane but the second, third, …
//! holder of each contended lock; round `i` holds the `i+1`-th holder of each.
//! Lanes holding different locks run in the same round, and so do readers
//! of a reader-writer lock (a writer excludes every other holder; a
//! semaphore is taken to be binary). Each round runs from
//! here until each of its lanes releases the lock it held when the round
//! began (or leaves this frame, for a lock taken inside a wrapper function,
//! or ends); it then waits. When the last round is done, all lanes continue
//! together from where they released: the reconvergence point is the
//! release, as in ThreadFuser (which reconverges at "the unlock of one of
//! the lanes"). Warp instructions issued by rounds after the first are
//! counted as *serialized*, per lock and per function.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::cfg::VEXIT;
use crate::frames::{Frame, FrameTracker};
use crate::functions::FunctionTable;
use crate::lanes::{LaneEvent, LaneSource, LaneStep};
use crate::segments::{interleaved_sectors, sectors, SegmentCache, Segments};
use crate::sink::{Issue, IssueSink, LaneIssue};
use crate::stats::{FunctionStats, Insns, Memory};
use std::collections::HashMap;
use tf_trace::{FunctionId, LockKind};

/// Immediate post-dominators of every function, by (function entry, block).
pub type IpdomMap = rustc_hash::FxHashMap<(u64, CBlockId), CBlockId>;

/// What a stack entry runs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pc {
    /// A block of the entry's frame.
    Block(CBlockId),
    /// The frame's virtual exit.
    Exit,
    /// Lanes that called from this block, back from (or unwinding through) the callee.
    ReturnSite(CBlockId),
    /// Lanes of a serialization round, each where it stands.
    Resume,
    /// Lanes of a serialization region, back from all its rounds.
    Join(u32),
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
    /// Reconvergence point: a block of the frame, its exit, or a join.
    rpc: Pc,
    mask: u64,
    depth: u32,
    /// The frame's function (entry address): the key of its post-dominators.
    func: u64,
    /// The lock whose serialized round (after the first) this entry runs.
    serialized: Option<u64>,
}

/// Where a lane goes after a step, relative to the frame it ran in.
enum Next {
    Done,
    Left,
    Parked,
    Called { block: CBlockId, func: u64 },
    Block { block: CBlockId, func: u64 },
}

/// A serialization region a lane is in: it waits at the region's join once
/// it releases `lock` (when it held a contended one) or leaves `depth`.
#[derive(Clone, Copy, Debug)]
struct Membership {
    region: u32,
    lock: Option<u64>,
    depth: u32,
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
    /// Locks held (acquired, not yet released), with their kinds.
    held: Vec<(u64, LockKind)>,
    /// Serialization regions, innermost last.
    regions: Vec<Membership>,
    /// Waiting at the join of this region.
    parked: Option<u32>,
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
        })
    }

    fn depth(&self) -> u32 {
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
}

/// What the replay learned about one lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Its kind (from its first acquisition).
    pub kind: Option<LockKind>,
    /// Acquisitions by the replayed units.
    pub acquisitions: u64,
    /// Times lanes of one warp contended for it.
    pub contentions: u64,
    /// Lanes that had to wait for another lane's critical section.
    pub serialized_lanes: u64,
    /// Warp instructions issued by the waiting lanes' rounds.
    pub serialized_warp_instructions: u64,
}

impl LockStats {
    /// Adds `o`.
    pub fn add(&mut self, o: &LockStats) {
        self.kind = self.kind.or(o.kind);
        self.acquisitions += o.acquisitions;
        self.contentions += o.contentions;
        self.serialized_lanes += o.serialized_lanes;
        self.serialized_warp_instructions += o.serialized_warp_instructions;
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
    /// Instructions the lanes' units recorded (set by the caller).
    pub recorded_instructions: u64,
    /// Lanes that did not reach the end of their unit.
    pub unfinished_lanes: u64,
    /// Per lock address.
    pub locks: HashMap<u64, LockStats>,
}

impl WarpStats {
    /// These counts, with `n` recorded instructions.
    pub fn recorded(mut self, n: u64) -> WarpStats {
        self.recorded_instructions = n;
        self
    }

    /// Adds another warp's counts.
    pub fn merge(mut self, o: WarpStats) -> WarpStats {
        self.insns.add(&o.insns);
        self.memory.add(&o.memory);
        self.divergent_branches += o.divergent_branches;
        self.block_issues += o.block_issues;
        self.recorded_instructions += o.recorded_instructions;
        self.unfinished_lanes += o.unfinished_lanes;
        if self.functions.len() < o.functions.len() {
            self.functions
                .resize(o.functions.len(), FunctionStats::default());
        }
        for (x, y) in self.functions.iter_mut().zip(&o.functions) {
            x.add(y);
        }
        for (lock, s) in o.locks {
            self.locks.entry(lock).or_default().add(&s);
        }
        self
    }
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
    /// The functions blocks are charged to.
    pub functions: &'a FunctionTable,
    /// Serialize lanes that hold the same lock (`--locks on`).
    pub serialize_locks: bool,
}

/// A group of lanes going to the same place: (block, frame function, lanes).
type Group = (CBlockId, u64, u64);
/// Lanes inside callees of a frame: (call block of the frame, the lanes'
/// next block, its frame's function, lanes, the lanes' depth, a signature of
/// the frames between).
type Callee = (CBlockId, CBlockId, u64, u64, u32, u64);

struct Warp<'a, 't, 's> {
    cfg: &'a Replay<'a>,
    sink: Option<&'s mut dyn IssueSink>,
    lanes: Vec<Lane<'t>>,
    stack: Vec<Entry>,
    stats: WarpStats,
    next_region: u32,
    /// Scratch: per lane with accesses, (lane, index of its next access).
    cursors: Vec<(u32, u32)>,
    sectors: Vec<u64>,
    interleaved: Vec<u64>,
    groups: Vec<Group>,
    callees: Vec<Callee>,
    /// The last frame entry whose function was looked up, and that function.
    frame_function: (u64, FunctionId),
    segment_cache: SegmentCache,
}

impl Replay<'_> {
    /// Replays one warp whose lanes are `lanes` (at most 64), telling
    /// `sink` what it issues.
    pub fn run(
        &self,
        lanes: Vec<Lane<'_>>,
        sink: Option<&mut dyn IssueSink>,
    ) -> tf_trace::Result<WarpStats> {
        assert!(lanes.len() <= 64 && lanes.len() <= self.width.max(1));
        let mut w = Warp {
            cfg: self,
            sink,
            stack: Vec::new(),
            stats: WarpStats {
                functions: vec![FunctionStats::default(); self.functions.max_id() + 1],
                ..WarpStats::default()
            },
            lanes,
            next_region: 0,
            cursors: Vec::new(),
            sectors: Vec::new(),
            interleaved: Vec::new(),
            groups: Vec::new(),
            callees: Vec::new(),
            frame_function: (u64::MAX, 0),
            segment_cache: SegmentCache::default(),
        };
        w.start();
        w.run()?;
        // Every lane must have run its unit to the end: one that did not
        // would silently drop its instructions from every figure.
        w.stats.unfinished_lanes = w.lanes.iter().filter(|l| !l.done).count() as u64;
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

impl<'t> Warp<'_, 't, '_> {
    /// One entry per distinct first block: units that start in different
    /// places run one after the other.
    fn start(&mut self) {
        let mut starts: Vec<Group> = Vec::new();
        for (i, lane) in self.lanes.iter().enumerate() {
            if !lane.done {
                add_group(&mut starts, lane.step.cblock, lane.tracker.top().entry, i);
            }
        }
        for &(block, func, mask) in starts.iter().rev() {
            self.stack.push(Entry {
                pc: Pc::Block(block),
                rpc: Pc::Exit,
                mask,
                depth: 0,
                func,
                serialized: None,
            });
        }
    }

    fn live(&self, e: &Entry) -> u64 {
        let mut live = 0;
        for i in bits(e.mask) {
            let lane = &self.lanes[i];
            let depth = lane.depth();
            let here = match e.pc {
                Pc::Block(_) | Pc::Exit => depth == e.depth,
                Pc::ReturnSite(_) | Pc::Resume => depth <= e.depth,
                Pc::Join(_) => true,
            };
            let waiting = match (lane.parked, e.pc) {
                (None, _) => false,
                (Some(r), Pc::Join(j)) => r != j,
                (Some(_), _) => true,
            };
            if !lane.done && here && !waiting {
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
            self.groups.clear();
            self.callees.clear();
            match top.pc {
                Pc::Block(b) => {
                    // Lanes that stand elsewhere (a lock round or a join let
                    // them through this entry's reconvergence point) are never
                    // issued as if they ran this block: they regroup first.
                    if bits(live).any(|i| self.lanes[i].step.cblock != b) {
                        let left = self.regroup(live, top.depth);
                        self.diverge(None, top, left, false);
                        continue;
                    }
                    self.execute(b, live, &top);
                    let mut left = 0u64;
                    for i in bits(live) {
                        match self.advance(i, top.depth)? {
                            Next::Done | Next::Parked => {}
                            Next::Left => left |= 1 << i,
                            Next::Called { block, func } => add_callee(
                                &mut self.callees,
                                (b, block, func, 0, top.depth + 1, 0),
                                i,
                            ),
                            Next::Block { block, func } => {
                                add_group(&mut self.groups, block, func, i)
                            }
                        }
                    }
                    self.diverge(Some(b), top, left, true);
                }
                Pc::ReturnSite(call) => {
                    let left = self.regroup(live, top.depth);
                    self.diverge(Some(call), top, left, true);
                }
                Pc::Resume => {
                    let left = self.regroup(live, top.depth);
                    self.diverge(None, top, left, true);
                }
                Pc::Join(region) => {
                    for i in bits(live) {
                        let lane = &mut self.lanes[i];
                        lane.parked = None;
                        if let Some(k) = lane.regions.iter().rposition(|m| m.region == region) {
                            lane.regions.truncate(k);
                        }
                    }
                    // Lanes that still hold the lock here (they left the
                    // region's frame instead of releasing) are serialized
                    // again only after their next block, so that every
                    // region makes progress.
                    let left = self.regroup(live, top.depth);
                    self.diverge(None, top, left, false);
                }
                Pc::Exit => {
                    self.stack.pop();
                }
            }
        }
        Ok(())
    }

    /// Groups lanes that are already on their next step by where that is,
    /// relative to a frame at `depth`; returns the lanes that left it.
    fn regroup(&mut self, live: u64, depth: u32) -> u64 {
        let mut left = 0u64;
        for i in bits(live) {
            let lane = &self.lanes[i];
            let d = lane.depth();
            let func = lane.tracker.top().entry;
            if d < depth {
                left |= 1 << i;
            } else if d == depth {
                add_group(&mut self.groups, lane.step.cblock, func, i);
            } else {
                // Inside a callee of this frame, maybe several calls deep (a
                // lane that released a lock inside a wrapper function): it
                // returns here through a return-site entry per frame between.
                let frames = &lane.tracker.frames()[depth as usize + 1..];
                let call = frames[0].call_node.unwrap_or(lane.step.cblock);
                let signature = frames.iter().fold(0u64, |h, f| {
                    let node = f.call_node.map_or(u64::MAX, u64::from);
                    (h.rotate_left(5) ^ f.entry ^ node.rotate_left(32))
                        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                });
                add_callee(
                    &mut self.callees,
                    (call, lane.step.cblock, func, 0, d, signature),
                    i,
                );
            }
        }
        left
    }

    /// Issues block `b` of entry `e` for the lanes of `live`.
    fn execute(&mut self, b: CBlockId, live: u64, e: &Entry) {
        let cb = self.cfg.canon.block(b);
        let serialized = e.serialized;
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
        let f = if cb.function != 0 {
            cb.function
        } else {
            if self.frame_function.0 != e.func {
                self.frame_function = (e.func, self.cfg.functions.frame(e.func));
            }
            self.frame_function.1
        };
        let f = (f as usize).min(self.stats.functions.len() - 1);
        self.stats.functions[f].insns.add(&issued);
        if let Some(lock) = serialized {
            self.stats.functions[f].serialized_warp_instructions += warp;
            self.stats
                .locks
                .entry(lock)
                .or_default()
                .serialized_warp_instructions += warp;
        }
        if cb.n_ops > 0 {
            self.coalesce(live, cb.n_ops, f);
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            const IDLE: LaneIssue<'static> = LaneIssue {
                lane: 0,
                insns: 0,
                first_op: 0,
                accesses: &[],
            };
            let mut lanes = [IDLE; 64];
            let mut n = 0;
            for i in bits(live) {
                let lane = &self.lanes[i];
                lanes[n] = LaneIssue {
                    lane: i,
                    insns: lane.step.insns,
                    first_op: lane.step.first_op,
                    accesses: lane.source.accesses(&lane.step),
                };
                n += 1;
            }
            sink.issue(&Issue {
                cblock: b,
                block: cb,
                function: f as FunctionId,
                active: live,
                warp_instructions: warp,
                thread_instructions: thread,
                lanes: &lanes[..n],
                serialized,
            });
        }
    }

    /// Counts the requests and sectors of the lanes' memory accesses, one
    /// request per operand that at least one lane performed.
    fn coalesce(&mut self, live: u64, n_ops: u32, f: usize) {
        // Each lane's accesses are in operand order: walk them side by side,
        // one operand at a time, with a cursor per lane.
        self.cursors.clear();
        for i in bits(live) {
            let lane = &self.lanes[i];
            let acc = lane.source.accesses(&lane.step);
            if !acc.is_empty() {
                self.cursors.push((i as u32, 0));
            }
        }
        if self.cursors.is_empty() {
            return;
        }
        for j in 0..n_ops as u16 {
            self.sectors.clear();
            self.interleaved.clear();
            let mut first: Option<(usize, u64, bool)> = None;
            for c in &mut self.cursors {
                let lane = &self.lanes[c.0 as usize];
                let acc = lane.source.accesses(&lane.step);
                let Some(a) = acc.get(c.1 as usize) else {
                    continue;
                };
                if a.operand - lane.step.first_op != j {
                    continue;
                }
                c.1 += 1;
                first.get_or_insert((c.0 as usize, a.addr, a.write));
                sectors(a.addr, a.size, &mut self.sectors);
                if a.addr >= lane.stack.0 && a.addr < lane.stack.1 {
                    interleaved_sectors(
                        a.addr,
                        a.size,
                        lane.sp,
                        c.0,
                        self.cfg.width,
                        &mut self.interleaved,
                    );
                } else {
                    sectors(a.addr, a.size, &mut self.interleaved);
                }
            }
            let Some((lane, addr, write)) = first else {
                continue;
            };
            let segment =
                self.cfg
                    .segments
                    .classify(self.lanes[lane].stack, addr, &mut self.segment_cache);
            let n = distinct(&mut self.sectors);
            let ni = distinct(&mut self.interleaved);
            self.stats.memory.add_request(segment, write, n, ni);
            self.stats.functions[f]
                .memory
                .add_request(segment, write, n, ni);
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
        let mut released = false;
        for e in &lane.events {
            match *e {
                LaneEvent::Signal => lane.tracker.signal(),
                LaneEvent::SignalReturn => lane.tracker.signal_return(),
                LaneEvent::Acquire { kind, lock } => {
                    lane.held.push((lock, kind));
                    let s = self.stats.locks.entry(lock).or_default();
                    s.acquisitions += 1;
                    s.kind.get_or_insert(kind);
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
    /// to a return site, a round or a join, `node` being `None` when there is
    /// no block to take a post-dominator from): `groups` stay in the frame,
    /// `callees` entered callees, `left` left the frame. Lock serialization
    /// is considered when `may_serialize`.
    fn diverge(&mut self, node: Option<CBlockId>, top: Entry, left: u64, may_serialize: bool) {
        // Without a block (a round, a join, regrouping), the lanes rejoin at
        // the nearest point that post-dominates where each one stands.
        if may_serialize && self.cfg.serialize_locks && self.serialize(top, left) {
            return;
        }
        let callers: u64 = self.callees.iter().fold(0, |m, c| m | c.3);
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
                return;
            }
            if left != 0 {
                // Every lane left the frame.
                self.stack.pop();
                return;
            }
        }
        let r = match (targets, node) {
            (1, _) => top.rpc,
            (_, Some(n)) => {
                self.stats.divergent_branches += 1;
                let r = self.cfg.ipdom.get(&(top.func, n)).copied();
                if let Some(sink) = self.sink.as_deref_mut() {
                    let active = self.groups.iter().fold(callers | left, |m, g| m | g.2);
                    sink.diverged(n, active, targets, r.filter(|&r| r != VEXIT));
                }
                r.map_or(Pc::Exit, Pc::of)
            }
            (_, None) => Pc::of(self.meet(top.func, left)),
        };
        let stay = self.groups.iter().fold(callers, |m, g| m | g.2);
        if r != top.rpc {
            let e = &mut self.stack[at];
            e.pc = r;
            e.mask = stay;
        } else {
            self.stack.pop();
        }
        // Fall-through first (lowest), then by address: the taken path runs first.
        let canon = self.cfg.canon;
        let fall = node.map(|n| canon.block(n).end_address);
        self.groups.sort_by_key(|g| {
            let a = canon.block(g.0).address;
            (Some(a) != fall, a)
        });
        for &(block, func, mask) in &self.groups {
            if Pc::Block(block) != r {
                self.stack.push(Entry {
                    pc: Pc::Block(block),
                    rpc: r,
                    mask,
                    depth: top.depth,
                    func,
                    serialized: top.serialized,
                });
            }
        }
        self.callees.sort_by_key(|c| (c.0, c.1, c.4, c.5));
        let mut k = 0;
        while k < self.callees.len() {
            let call = self.callees[k].0;
            let end = k + self.callees[k..].iter().take_while(|c| c.0 == call).count();
            let mask = self.callees[k..end].iter().fold(0, |m, c| m | c.3);
            self.stack.push(Entry {
                pc: Pc::ReturnSite(call),
                rpc: r,
                mask,
                depth: top.depth,
                func: top.func,
                serialized: top.serialized,
            });
            for &(_, block, func, mask, depth, _) in &self.callees[k..end] {
                // Frames between this one and the lanes' own: a return site each.
                let frames = self.lanes[mask.trailing_zeros() as usize].tracker.frames();
                for d in top.depth + 1..depth {
                    self.stack.push(Entry {
                        pc: Pc::ReturnSite(frames[d as usize + 1].call_node.unwrap_or(block)),
                        rpc: Pc::Exit,
                        mask,
                        depth: d,
                        func: frames[d as usize].entry,
                        serialized: top.serialized,
                    });
                }
                self.stack.push(Entry {
                    pc: Pc::Block(block),
                    rpc: Pc::Exit,
                    mask,
                    depth,
                    func,
                    serialized: top.serialized,
                });
            }
            k = end;
        }
    }

    /// The nearest block of frame function `func` (or its exit) that
    /// post-dominates where every lane of `groups` and `callees` stands; the
    /// lanes of `left` stand at the exit. A lane inside a callee stands at
    /// the post-dominator of its call.
    fn meet(&self, func: u64, left: u64) -> CBlockId {
        let ipdom = |b: CBlockId| self.cfg.ipdom.get(&(func, b)).copied().unwrap_or(VEXIT);
        let positions = self
            .groups
            .iter()
            .map(|g| g.0)
            .chain(self.callees.iter().map(|c| ipdom(c.0)))
            .chain((left != 0).then_some(VEXIT));
        // Walk the post-dominator tree up from the first position; every
        // other position climbs until it meets that chain.
        let limit = self.cfg.canon.len() + 2;
        let mut chain: Vec<CBlockId> = Vec::new();
        let mut best = 0;
        for p in positions {
            if chain.is_empty() {
                let mut b = p;
                while b != VEXIT && chain.len() < limit {
                    chain.push(b);
                    b = ipdom(b);
                }
                chain.push(VEXIT);
                continue;
            }
            let mut b = p;
            for _ in 0..limit {
                if let Some(k) = chain.iter().position(|&c| c == b) {
                    best = best.max(k);
                    break;
                }
                if b == VEXIT {
                    best = chain.len() - 1;
                    break;
                }
                b = ipdom(b);
            }
        }
        chain.get(best).copied().unwrap_or(VEXIT)
    }

    /// If lanes moving on together hold the same lock, splits them into
    /// serialized rounds (see the module documentation); true if it did.
    fn serialize(&mut self, top: Entry, left: u64) -> bool {
        let stay = self
            .groups
            .iter()
            .map(|g| g.2)
            .chain(self.callees.iter().map(|c| c.3))
            .fold(0u64, |m, x| m | x);
        // Holders per lock, in lane order, and whether one holds it exclusively.
        let mut holders: Vec<(u64, u64, bool)> = Vec::new();
        for i in bits(stay) {
            let lane = &self.lanes[i];
            for &(lock, kind) in &lane.held {
                // Already waiting in a region of this lock.
                if lane.regions.iter().any(|m| m.lock == Some(lock)) {
                    continue;
                }
                let exclusive = kind != LockKind::RwRead;
                match holders.iter_mut().find(|h| h.0 == lock) {
                    Some(h) => {
                        h.1 |= 1 << i;
                        h.2 |= exclusive;
                    }
                    None => holders.push((lock, 1 << i, exclusive)),
                }
            }
        }
        // Readers of a reader-writer lock share it; a writer excludes all.
        holders.retain(|h| h.1.count_ones() > 1 && h.2);
        if holders.is_empty() {
            return false;
        }
        // Each lane waits for the first contended lock it holds.
        let mut waits_for: HashMap<usize, u64> = HashMap::new();
        let mut rounds: Vec<(u64, Option<u64>)> = vec![(stay, None)];
        for &(lock, mask, _) in &holders {
            let s = self.stats.locks.entry(lock).or_default();
            s.contentions += 1;
            for (n, i) in bits(mask).enumerate() {
                if waits_for.contains_key(&i) {
                    continue;
                }
                waits_for.insert(i, lock);
                if n > 0 {
                    s.serialized_lanes += 1;
                    rounds[0].0 &= !(1 << i);
                    if rounds.len() <= n {
                        rounds.push((0, Some(lock)));
                    }
                    rounds[n].0 |= 1 << i;
                }
            }
        }
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.lock_rounds(&rounds);
        }
        let region = self.next_region;
        self.next_region += 1;
        for i in bits(stay) {
            self.lanes[i].regions.push(Membership {
                region,
                lock: waits_for.get(&i).copied(),
                depth: top.depth,
            });
        }
        let at = self.stack.len() - 1;
        let _ = left;
        self.stack[at] = Entry {
            pc: Pc::Join(region),
            rpc: top.rpc,
            mask: stay,
            depth: top.depth,
            func: top.func,
            serialized: top.serialized,
        };
        for &(mask, lock) in rounds.iter().rev() {
            self.stack.push(Entry {
                pc: Pc::Resume,
                rpc: Pc::Join(region),
                mask,
                depth: top.depth,
                func: top.func,
                serialized: lock.or(top.serialized),
            });
        }
        true
    }
}

fn add_group(groups: &mut Vec<Group>, block: CBlockId, func: u64, lane: usize) {
    match groups.iter_mut().find(|g| g.0 == block && g.1 == func) {
        Some(g) => g.2 |= 1 << lane,
        None => groups.push((block, func, 1 << lane)),
    }
}

/// Adds `lane` to the group of `callee` (whose mask is ignored).
fn add_callee(callees: &mut Vec<Callee>, callee: Callee, lane: usize) {
    let same = |c: &&mut Callee| {
        (c.0, c.1, c.2, c.4, c.5) == (callee.0, callee.1, callee.2, callee.4, callee.5)
    };
    match callees.iter_mut().find(same) {
        Some(c) => c.3 |= 1 << lane,
        None => callees.push((callee.0, callee.1, callee.2, 1 << lane, callee.4, callee.5)),
    }
}

/// Number of distinct values (sorts `v`).
fn distinct(v: &mut [u64]) -> u64 {
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
