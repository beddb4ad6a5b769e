//! Stage 7: replay of one warp on a SIMT stack with IPDOM reconvergence,
//! memory coalescing and lock serialization.
//!
//! The stack is frame-relative (`docs/reconvergence.md` §6): every entry
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
//! lanes left, is popped. An entry never issues a block for a lane whose
//! next block is another one (a lock round can carry a lane past an
//! enclosing reconvergence point): such lanes are regrouped first.
//!
//! Every lane must end its unit: the replay counts lanes that did not
//! ([`WarpStats::unfinished_lanes`]), and the analysis compares the
//! instructions replayed with those recorded.
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
//! from where each one stands, like lanes after any divergence: they rejoin
//! at the nearest point of the frame that post-dominates every lane's
//! position (a lane inside a callee — it released the lock one or more calls
//! down — stands at the post-dominator of the frame's call, and returns to
//! it through one return-site entry per frame between; a lane that left the
//! frame stands at its exit). So lanes that left a lock through different
//! unlock sites reconverge where those paths meet, not at the enclosing
//! reconvergence point. Lanes of one round rejoin by the same rule. Warp
//! instructions issued by rounds after the first are
//! counted as *serialized*, per lock and per function.

mod alone;
mod counts;
mod issuer;
mod lane;
mod locks;
mod narrower;
#[cfg(test)]
mod random_program;
mod reconverge;
mod running;
mod solo;
mod stack;
mod tally;
mod warp;

pub use counts::{LockStats, WarpStats};
pub use lane::Lane;
pub use narrower::{NarrowerWarp, Void};
pub use reconverge::Reconvergence;
pub use running::Running;

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::functions::FunctionTable;
use crate::segments::Segments;
use crate::sink::IssueSink;

/// Immediate post-dominators of every function, by (function entry, block).
pub type IpdomMap = rustc_hash::FxHashMap<(u64, CBlockId), CBlockId>;

/// What the replay needs besides the lanes.
pub struct Replay<'a> {
    /// Canonical blocks.
    pub canon: &'a CanonicalBlocks,
    /// Post-dominators.
    pub ipdom: &'a IpdomMap,
    /// Segment ranges.
    pub segments: &'a Segments,
    /// The functions blocks are charged to.
    pub functions: &'a FunctionTable,
    /// Serialize lanes that hold the same lock (`--locks on`).
    pub serialize_locks: bool,
    /// Told every [`PROGRESS_STEP`] or so replayed thread instructions.
    pub progress: &'a dyn crate::Progress,
    /// Where diverged lanes reconverge.
    pub reconvergence: Reconvergence,
    /// Branches executed as predicated code by all lanes.
    pub predicable: &'a crate::predicate::Predicable,
    /// How lanes waiting for a lock count.
    pub lock_model: LockModel,
    /// Spin-wait code, whose instructions are counted apart too.
    pub spin_wait: &'a crate::spin_wait::SpinWait,
    /// Whether spin-wait code is issued or left out (`--spin-wait`).
    pub spin_wait_rule: crate::spin_wait::SpinWaitRule,
    /// The block each block issues as (`--merge-tails`).
    pub classes: &'a crate::tail_copies::BlockClasses,
}

impl Replay<'_> {
    /// Whether block `b` is left out of every figure and observer: spin-wait
    /// code under `--spin-wait exclude`. Its issues, and the divergences and
    /// predicated branches at its end, are replayed but not told.
    #[inline(always)]
    pub(super) fn leaves_out(&self, b: CBlockId) -> bool {
        self.spin_wait_rule == crate::spin_wait::SpinWaitRule::Exclude && self.spin_wait.holds(b)
    }
}

/// How lanes that wait for a lock held by another lane of their warp count
/// (`--lock-model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockModel {
    /// They are inactive until their round: a lock's critical sections run
    /// one lane after another (ThreadFuser's lock emulation).
    #[default]
    Serialize,
    /// As `Serialize`, but lanes still waiting for their round count as
    /// active while another round runs, as lanes spinning on a lock do in a
    /// GPU's counters.
    Spin,
}

impl std::fmt::Display for LockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LockModel::Serialize => "serialize",
            LockModel::Spin => "spin",
        })
    }
}

/// Thread instructions between two progress reports of a warp.
pub const PROGRESS_STEP: u64 = 1 << 20;

/// What [`Replay::run_counting`] counted.
pub struct Counts {
    /// At each width the warp was counted at.
    pub at: Vec<WarpStats>,
    /// Its lanes counted alone.
    pub alone: WarpStats,
    /// Each narrower warp's counts at each of its widths, or why they are
    /// void.
    pub narrower: Result<Vec<Vec<WarpStats>>, Void>,
}

/// One width a warp's replay is counted at, and the sink observing the
/// warp at that width.
pub struct CountedAt<'s> {
    /// The warp width W (the warp's lanes are some of lanes 0..W).
    pub width: usize,
    /// Told every issue, if any.
    pub sink: Option<&'s mut dyn IssueSink>,
}

impl Replay<'_> {
    /// Replays one warp whose lanes are `lanes` (at most 64) once, counting
    /// it at every width of `at`: warps of several widths that hold the same
    /// lanes in the same order (a trace with fewer units than the widths)
    /// replay alike, for nothing in the replay depends on the width but the
    /// GPU local-memory layout of stack accesses, which each width's tally
    /// lays out for itself. Returns the counts of each width of `at`.
    pub fn run(
        &self,
        lanes: Vec<Lane<'_>>,
        at: &mut [CountedAt<'_>],
    ) -> tf_trace::Result<Vec<WarpStats>> {
        Ok(self.run_with_lanes_alone(lanes, at, 0)?.0)
    }

    /// [`Replay::run`], counting besides each lane of `alone_lanes` (a mask
    /// of `lanes`) as a warp of width 1 of its own, all of them in one sum.
    ///
    /// A lane alone issues each of its blocks by itself: its part of every
    /// issue of the warp, in the same order, which never diverges, is never
    /// predicated and never waits for another lane's lock. So the warps of
    /// width 1 need no replay of their own, which would decode the lanes
    /// again. The sum's unfinished lanes and off-stack calls are those of
    /// the lanes of `alone`.
    pub fn run_with_lanes_alone(
        &self,
        lanes: Vec<Lane<'_>>,
        at: &mut [CountedAt<'_>],
        alone_lanes: u64,
    ) -> tf_trace::Result<(Vec<WarpStats>, WarpStats)> {
        let counts = self.run_counting(lanes, at, alone_lanes, &[])?;
        Ok((counts.at, counts.alone))
    }

    /// [`Replay::run_with_lanes_alone`], counting besides the `narrower`
    /// warps (runs of `lanes`) as their own replays would have, as long as
    /// this replay's stack does nothing that may differ in theirs
    /// (`replay::narrower`'s rules): otherwise [`Counts::narrower`] says
    /// why not, and they must replay by themselves.
    pub fn run_counting(
        &self,
        lanes: Vec<Lane<'_>>,
        at: &mut [CountedAt<'_>],
        alone_lanes: u64,
        narrower: &[NarrowerWarp],
    ) -> tf_trace::Result<Counts> {
        self.start(lanes, at, alone_lanes, narrower).finish()
    }
}
