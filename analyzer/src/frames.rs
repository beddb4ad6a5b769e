//! Frame tracking: which function's activation each executed block belongs to.
//!
//! A shadow call stack per thread (or per SIMT lane) classifies every move
//! from one block to the next as staying in the frame, calling, returning or
//! tail-calling. The same classification feeds the dynamic CFGs (stage 4) and
//! the SIMT replay (stage 7), so both agree on what a frame is.
//!
//! The rules (see `docs/reconvergence.md` §3), with `p` the block just run
//! and `n` the next one:
//! - `p` ended in a completed call: push a frame for `n` (the callee), unless
//!   `n` is the call's own return site (the callee was not traced at all).
//! - `n` is the return site of a frame on the stack: return to it, popping
//!   every frame above (one frame for a plain `ret`; several after `longjmp`
//!   or a skipped runtime call that returned). Jumps within a recursive
//!   function that happen to hit its caller's return site stay in the frame.
//! - `p` returned somewhere else: unwind to the nearest frame running `n`'s
//!   function (C++ exceptions land in a caller); no such frame: the `ret` was
//!   an indirect jump (retpolines, `push; ret`).
//! - `p` jumped to another function's entry: a tail call (the frame now runs
//!   that function, with the same return site). Cold parts (`foo.cold`) are
//!   not functions of their own.
//! - `p` jumped indirectly into a function running in a frame below: unwind
//!   to it (`longjmp` lands after `setjmp`'s call).
//! - otherwise `n` is in the same frame.
//!
//! ```
//! use tf_analyzer::frames::{Frame, FrameTracker, Transition};
//! let mut t = FrameTracker::new(Frame::root(0x1000, 1, 0));
//! // A call at block 0 (ending at 0x1005) into a function at 0x2000 ...
//! let call = t.call(0, 0x1005, 0x2000, 2, 7);
//! assert_eq!(call, Transition::Call);
//! assert_eq!(t.depth(), 1);
//! // ... which returns to 0x1005.
//! assert_eq!(t.arrive(true, 0x1005, 1), Some(1));
//! assert_eq!(t.depth(), 0);
//! ```

use crate::blocks::{CBlock, CBlockId, CanonicalBlocks};
use tf_trace::{EndKind, FunctionId};

/// One activation on the shadow stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The function's entry address: the key of its CFG.
    pub entry: u64,
    /// The function's symbol (0 = unknown), to recognize landing frames.
    pub sym: FunctionId,
    /// Where the call that made this frame returns to (0 for a root frame).
    pub return_site: u64,
    /// The block that made the call (`None` for a root frame).
    pub call_node: Option<CBlockId>,
    /// The last block run in this frame (`None` before its first block).
    pub last: Option<CBlockId>,
}

impl Frame {
    /// The bottom frame of a thread or unit, running `entry` (symbol `sym`),
    /// whose first block is `first`.
    pub fn root(entry: u64, sym: FunctionId, first: CBlockId) -> Frame {
        Frame {
            entry,
            sym,
            return_site: 0,
            call_node: None,
            last: Some(first),
        }
    }
}

/// How control moved from one block to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// The next block runs in the same frame.
    Same,
    /// A call: the next block starts a new frame.
    Call,
    /// Returned (or unwound) this many frames; the next block runs in the
    /// frame that is now on top.
    Return(u32),
    /// A tail call: the same frame now runs another function.
    TailCall,
}

/// A shadow call stack.
#[derive(Clone, Debug)]
pub struct FrameTracker {
    frames: Vec<Frame>,
    /// Frames removed by the last return, top first (for the CFG builder).
    popped: Vec<Frame>,
    pending: Pending,
    /// How many frames of the stack return to an address of each
    /// [`site_bucket`]: most arrivals are at no return site, and the
    /// bucket tells so without searching a deep (recursive) stack.
    sites: [u32; SITE_BUCKETS],
}

impl FrameTracker {
    /// A stack holding only `root`.
    pub fn new(root: Frame) -> FrameTracker {
        FrameTracker {
            frames: vec![root],
            popped: Vec::new(),
            pending: Pending::None,
            sites: [0; SITE_BUCKETS],
        }
    }

    /// The bottom frame for a thread or unit whose first block is `first`:
    /// the function containing it (its symbol's entry when known).
    pub fn root_for(
        canon: &CanonicalBlocks,
        entries: &impl Fn(FunctionId) -> Option<u64>,
        first: CBlockId,
    ) -> Frame {
        let b = canon.block(first);
        let entry = entries(b.function).unwrap_or(b.address);
        Frame::root(entry, b.function, first)
    }

    /// Frames above the root (0 = in the root frame).
    #[inline]
    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    /// The frame on top.
    #[inline]
    pub fn top(&self) -> &Frame {
        self.frames.last().expect("the root frame is never popped")
    }

    /// All frames, bottom first.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The frames removed by the last [`Transition::Return`], top first.
    pub fn popped(&self) -> &[Frame] {
        &self.popped
    }

    /// Moves from the step just executed (block `prev`, which ended as
    /// `prev_end`: see [`Step::end`](crate::blocks::Step::end)) to canonical block `next`.
    // Inlined where called: most steps take the first branch, which is a
    // test and a store, and a call cost more than it.
    #[inline]
    pub fn advance(
        &mut self,
        canon: &CanonicalBlocks,
        prev: CBlockId,
        prev_end: EndKind,
        next: CBlockId,
    ) -> Transition {
        // Fall-through, branches and direct jumps stay in their function:
        // nothing to look up (the common case).
        if self.pending == Pending::None
            && matches!(
                prev_end,
                EndKind::Fallthrough | EndKind::Branch | EndKind::Syscall
            )
        {
            self.frames.last_mut().expect("root").last = Some(next);
            return Transition::Same;
        }
        self.advance_across(canon, prev, prev_end, next)
    }

    /// [`FrameTracker::advance`] past a step that may leave its frame.
    #[inline(never)]
    fn advance_across(
        &mut self,
        canon: &CanonicalBlocks,
        prev: CBlockId,
        prev_end: EndKind,
        next: CBlockId,
    ) -> Transition {
        let n = canon.block(next);
        let p = canon.block(prev);
        let t = if let Some(t) = self.take_pending(n, next) {
            t
        } else if matches!(prev_end, EndKind::Call | EndKind::IndirectCall)
            && n.address != p.end_address
        {
            self.call(prev, p.end_address, n.address, n.function, next)
        } else if let Some(pops) = self.arrive(prev_end == EndKind::Return, n.address, n.function) {
            Transition::Return(pops)
        } else {
            self.jump(prev_end, n, next)
        };
        if t != Transition::Call {
            self.frames.last_mut().expect("root").last = Some(next);
        }
        t
    }

    /// A call from block `node` (returning to `return_site`) into the
    /// function at `entry` (symbol `sym`), whose first block is `first`.
    pub fn call(
        &mut self,
        node: CBlockId,
        return_site: u64,
        entry: u64,
        sym: FunctionId,
        first: CBlockId,
    ) -> Transition {
        self.push(Frame {
            entry,
            sym,
            return_site,
            call_node: Some(node),
            last: Some(first),
        });
        Transition::Call
    }

    /// Arrival at `address` (symbol `sym`): if it is a pending return site,
    /// pops the frames above it and returns how many.
    pub fn arrive(&mut self, after_ret: bool, address: u64, sym: FunctionId) -> Option<u32> {
        let top = self.top();
        // A jump inside a recursive function can hit its caller's return
        // site, which lies in the same function: that is no return.
        if !after_ret && top.sym != 0 && top.sym == sym {
            return None;
        }
        if self.sites[site_bucket(address)] == 0 {
            return None;
        }
        let k = self
            .frames
            .iter()
            .rposition(|f| f.call_node.is_some() && f.return_site == address)?;
        Some(self.pop_to(k))
    }

    /// Pushes `frame`, counting its return site.
    fn push(&mut self, frame: Frame) {
        if frame.call_node.is_some() {
            self.sites[site_bucket(frame.return_site)] += 1;
        }
        self.frames.push(frame);
    }

    /// Keeps `frames[..k]` and returns how many frames were removed.
    fn pop_to(&mut self, k: usize) -> u32 {
        self.popped.clear();
        self.popped.extend(self.frames.drain(k..).rev());
        for f in &self.popped {
            if f.call_node.is_some() {
                self.sites[site_bucket(f.return_site)] -= 1;
            }
        }
        self.popped.len() as u32
    }

    fn jump(&mut self, end: EndKind, n: &CBlock, next: CBlockId) -> Transition {
        let len = self.frames.len();
        let top_sym = self.top().sym;
        let landing = |frames: &[Frame]| {
            (n.function != 0)
                .then(|| frames[..len - 1].iter().rposition(|f| f.sym == n.function))
                .flatten()
        };
        match end {
            EndKind::Return => {
                // Returned somewhere unexpected: unwinding to a caller, or a
                // `ret` used as an indirect jump.
                match landing(&self.frames) {
                    Some(k) if top_sym != n.function => Transition::Return(self.pop_to(k + 1)),
                    _ => Transition::Same,
                }
            }
            EndKind::Jump | EndKind::IndirectJump
                if n.is_entry && !n.is_cold && n.function != top_sym =>
            {
                let top = self.frames.last_mut().expect("root");
                top.entry = n.address;
                top.sym = n.function;
                top.last = Some(next);
                Transition::TailCall
            }
            EndKind::IndirectJump | EndKind::Other if n.function != top_sym => {
                match landing(&self.frames) {
                    Some(k) => Transition::Return(self.pop_to(k + 1)),
                    None => Transition::Same,
                }
            }
            _ => Transition::Same,
        }
    }

    /// A signal was delivered: the next block starts its handler, which
    /// runs like a function called from the interrupted block.
    pub fn signal(&mut self) {
        self.pending = Pending::Signal;
    }

    /// The handler returned: the next block resumes the interrupted frame.
    pub fn signal_return(&mut self) {
        self.pending = Pending::SignalReturn;
    }

    /// Applies a pending signal delivery or return to the move into `next`.
    fn take_pending(&mut self, n: &CBlock, next: CBlockId) -> Option<Transition> {
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::None => None,
            Pending::Signal => {
                let node = self.top().last;
                self.push(Frame {
                    entry: n.address,
                    sym: n.function,
                    return_site: SIGNAL_FRAME,
                    call_node: node,
                    last: Some(next),
                });
                Some(Transition::Call)
            }
            Pending::SignalReturn => {
                let k = self
                    .frames
                    .iter()
                    .rposition(|f| f.return_site == SIGNAL_FRAME)?;
                Some(Transition::Return(self.pop_to(k)))
            }
        }
    }
}

/// The `return_site` of a signal handler's frame (no code returns there).
const SIGNAL_FRAME: u64 = u64::MAX;

/// Buckets of return-site addresses in [`FrameTracker::sites`].
const SITE_BUCKETS: usize = 64;

/// The bucket of return site `address`.
#[inline]
fn site_bucket(address: u64) -> usize {
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// A signal event waiting for the next block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    None,
    Signal,
    SignalReturn,
}

#[cfg(test)]
#[path = "frames_tests.rs"]
mod tests;
