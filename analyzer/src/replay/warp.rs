//! The replay of one warp: runs the top entry of the SIMT stack, issues its
//! block for the entry's live lanes, moves each lane on, and rewrites the
//! stack from where the lanes went (see the [module rules](super)).

use super::issuer::Issuer;
use super::lane::{Lane, Next};
use super::reconverge::Reconvergence;
use super::stack::{add_callee, add_group, bits, Callee, Entry, Group, Pc};
use super::Replay;
use crate::blocks::CBlockId;
use crate::sink::LaneIssue;
use arrayvec::ArrayVec;

pub(super) struct Warp<'a, 't, 's> {
    pub(super) cfg: &'a Replay<'a>,
    /// Where the issues go.
    pub(super) issuer: Issuer<'a, 's>,
    pub(super) lanes: Vec<Lane<'t>>,
    pub(super) stack: Vec<Entry>,
    pub(super) next_region: u32,
    pub(super) groups: Vec<Group>,
    pub(super) callees: Vec<Callee>,
}

impl Warp<'_, '_, '_> {
    /// One entry per distinct first block: units that start in different
    /// places run one after the other.
    pub(super) fn start(&mut self) {
        let mut starts: Vec<Group> = Vec::new();
        for (i, lane) in self.lanes.iter().enumerate() {
            if !lane.done {
                add_group(&mut starts, self.block_of(i), lane.tracker.top().entry, i);
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
                predicated: 0,
                spinning: 0,
            });
        }
    }

    #[inline]
    pub(super) fn live(&self, e: &Entry) -> u64 {
        let mut live = 0;
        for i in bits(e.mask) {
            let lane = &self.lanes[i];
            let depth = lane.depth();
            let here = match e.pc {
                Pc::Block(_) | Pc::Exit | Pc::Frontier => depth == e.depth,
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

    /// Runs the stack until the issuer has told `told` thread instructions
    /// or more (checked between two entries), or until it is empty: true
    /// when it is.
    pub(super) fn run_until(&mut self, told: u64) -> tf_trace::Result<bool> {
        while let Some(&top) = self.stack.last() {
            if self.issuer.told() >= told {
                return Ok(false);
            }
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
                    if !self.execute(b, live, &top) {
                        // lanes regrouped without a branch
                        self.issuer.void_narrower();
                        let left = self.regroup(live, top.depth);
                        self.diverge(None, top, left, false);
                        continue;
                    }
                    if live & (live - 1) == 0 && super::solo::enabled() {
                        self.run_solo(live.trailing_zeros() as usize, b, top)?;
                        continue;
                    }
                    let mut left = 0u64;
                    for i in bits(live) {
                        let next = self.advance(i, top.depth)?;
                        left |= self.place(i, b, top.depth, next);
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
                Pc::Frontier => self.frontier(live, top)?,
                Pc::Exit => {
                    self.stack.pop();
                }
            }
        }
        Ok(true)
    }

    /// Files lane `i`, which ran block `b` in a frame at `depth`, by where
    /// it goes next: a group of the frame or a callee; returns its bit when
    /// it left the frame.
    #[inline]
    pub(super) fn place(&mut self, i: usize, b: CBlockId, depth: u32, next: Next) -> u64 {
        match next {
            Next::Done | Next::Parked => return 0,
            Next::Left => return 1 << i,
            Next::Called { block, func } => {
                add_callee(&mut self.callees, (b, block, func, 0, depth + 1, 0), i)
            }
            Next::Block { block, func } => add_group(&mut self.groups, block, func, i),
        }
        0
    }

    /// Groups lanes that are already on their next step by where that is,
    /// relative to a frame at `depth`; returns the lanes that left it.
    pub(super) fn regroup(&mut self, live: u64, depth: u32) -> u64 {
        let mut left = 0u64;
        for i in bits(live) {
            let lane = &self.lanes[i];
            let d = lane.depth();
            let func = lane.tracker.top().entry;
            if d < depth {
                left |= 1 << i;
            } else if d == depth {
                let at = self.block_of(i);
                add_group(&mut self.groups, at, func, i);
            } else {
                // Inside a callee of this frame, maybe several calls deep (a
                // lane that released a lock inside a wrapper function): it
                // returns here through a return-site entry per frame between.
                let frames = &lane.tracker.frames()[depth as usize + 1..];
                let at = self.block_of(i);
                let call = frames[0].call_node.unwrap_or(at);
                let signature = frames.iter().fold(0u64, |h, f| {
                    let node = f.call_node.map_or(u64::MAX, u64::from);
                    (h.rotate_left(5) ^ f.entry ^ node.rotate_left(32))
                        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                });
                add_callee(&mut self.callees, (call, at, func, 0, d, signature), i);
            }
        }
        left
    }

    /// Issues block `b` of entry `e` for the lanes of `live`; false (and
    /// nothing issued) when one of them stands at another block.
    // Always inlined: every issue comes through here (the compiler left it
    // out of line, and the call cost a tenth of it).
    #[inline(always)]
    pub(super) fn execute(&mut self, b: CBlockId, live: u64, e: &Entry) -> bool {
        debug_assert!(live != 0, "an entry without live lanes issues nothing");
        if live & (live - 1) == 0 {
            return self.execute_lone(b, live.trailing_zeros() as usize, e);
        }
        let cb = self.cfg.canon.block(b);
        let mut thread = 0u64;
        let mut warp = 0u64;
        let mut elsewhere = false;
        let mut lanes: ArrayVec<LaneIssue<'_>, 64> = ArrayVec::new();
        for i in bits(live) {
            let lane = &self.lanes[i];
            elsewhere |= self.block_of(i) != b;
            let n = u64::from(lane.step.insns);
            thread += n;
            warp = warp.max(n);
            lanes.push(lane.issue(i, cb.n_ops));
        }
        if elsewhere {
            return false;
        }
        self.issuer
            .issue(self.cfg, b, e, live, &lanes, thread, warp);
        true
    }

    /// [`execute`](Self::execute) for lane `i` alone: most issues of a warp
    /// whose lanes ran apart, without the gathering of lanes.
    #[inline(always)]
    fn execute_lone(&mut self, b: CBlockId, i: usize, e: &Entry) -> bool {
        let lane = &self.lanes[i];
        if self.block_of(i) != b {
            return false;
        }
        let n = u64::from(lane.step.insns);
        let lanes = [lane.issue(i, self.cfg.canon.block(b).n_ops)];
        self.issuer.issue(self.cfg, b, e, 1 << i, &lanes, n, n);
        true
    }

    /// Rewrites the stack after the lanes of `top` ran `node` (or came back
    /// to a return site, a round or a join, `node` being `None` when there is
    /// no block to take a post-dominator from): `groups` stay in the frame,
    /// `callees` entered callees, `left` left the frame. Lock serialization
    /// is considered when `may_serialize`.
    pub(super) fn diverge(
        &mut self,
        node: Option<CBlockId>,
        top: Entry,
        left: u64,
        may_serialize: bool,
    ) {
        // Without a block (a round, a join, regrouping), the lanes rejoin at
        // the nearest point that post-dominates where each one stands.
        if may_serialize && self.cfg.serialize_locks && self.serialize(top, left) {
            self.issuer.void_narrower(); // lock serialization
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
        let stay = self.groups.iter().fold(callers, |m, g| m | g.2);
        let mut predicated = top.predicated;
        let r = match (targets, node) {
            (1, _) => top.rpc,
            (_, Some(n)) => {
                let r = self.point(top.func, n);
                let predicable =
                    callers == 0 && left == 0 && self.cfg.predicable.contains(&(top.func, n));
                // a branch of code left out of the figures is told to no one
                let told = !self.cfg.leaves_out(n);
                if predicable {
                    // If-converted: every lane issues both arms (a predicated
                    // branch voids the narrower counts).
                    self.issuer.void_narrower();
                    if told {
                        self.issuer.tell(|s| s.predicated(n));
                    }
                    predicated |= stay;
                } else if told {
                    let active = stay | left;
                    let at = match r {
                        Pc::Block(b) => Some(b),
                        _ => None,
                    };
                    self.issuer.tell(|s| s.diverged(n, active, targets, at));
                    let groups = self.groups.iter().map(|g| g.2);
                    let paths = groups.chain([callers, left]).filter(|&m| m != 0);
                    self.issuer.narrower_diverged(n, paths, at);
                }
                r
            }
            (_, None) if self.cfg.reconvergence == Reconvergence::MinPc => Pc::Frontier,
            (_, None) => Pc::of(self.meet(top.func, left)),
        };
        if r == Pc::Frontier {
            // The frame's lanes stay in one entry that runs the lowest
            // group first; it is also where lanes come back from callees.
            let e = &mut self.stack[at];
            e.pc = Pc::Frontier;
            e.mask = stay;
            self.push_callees(top, Pc::Exit, false);
            return;
        }
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
                let mut e = Entry::above(&top, Pc::Block(block), r, mask, top.depth, func);
                e.predicated = predicated;
                self.stack.push(e);
            }
        }
        self.push_callees(top, r, true);
    }

    /// Pushes the entries of the lanes of `callees`: a return site in
    /// `top`'s frame (reconverging at `r`) when `return_site`, one per frame
    /// between, and the callee's block.
    pub(super) fn push_callees(&mut self, top: Entry, r: Pc, return_site: bool) {
        self.callees.sort_by_key(|c| (c.0, c.1, c.4, c.5));
        let mut k = 0;
        while k < self.callees.len() {
            let call = self.callees[k].0;
            let end = k + self.callees[k..].iter().take_while(|c| c.0 == call).count();
            let mask = self.callees[k..end].iter().fold(0, |m, c| m | c.3);
            if return_site {
                let site = Pc::ReturnSite(call);
                self.stack
                    .push(Entry::above(&top, site, r, mask, top.depth, top.func));
            }
            for &(_, block, func, mask, depth, _) in &self.callees[k..end] {
                // Frames between this one and the lanes' own: a return site each.
                let frames = self.lanes[mask.trailing_zeros() as usize].tracker.frames();
                for d in top.depth + 1..depth {
                    let site = Pc::ReturnSite(frames[d as usize + 1].call_node.unwrap_or(block));
                    let func = frames[d as usize].entry;
                    self.stack
                        .push(Entry::above(&top, site, Pc::Exit, mask, d, func));
                }
                self.stack.push(Entry::above(
                    &top,
                    Pc::Block(block),
                    Pc::Exit,
                    mask,
                    depth,
                    func,
                ));
            }
            k = end;
        }
    }
}
