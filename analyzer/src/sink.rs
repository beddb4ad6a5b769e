//! The observer seam: everything the replay issues, for whoever wants it.
//!
//! The replay ([`crate::replay`]) tells an [`IssueSink`] about every warp
//! issue (one canonical block run by a warp's active lanes, with each lane's
//! memory accesses), every divergence, predicated branch, lock acquisition,
//! contended lock and split into serialized lock rounds, in the order the
//! warp issues them. Warps replay in parallel: an
//! [`Observer`] makes one sink per warp ([`Observer::begin`]) and takes it
//! back when the warp is done ([`Observer::end`]), in any order. The Accel-Sim
//! export and the HTML report are observers; `tf analyze`'s figures are one
//! too (the replay's own tally), so an observer's figures agree with them
//! exactly.
//!
//! ```no_run
//! use tf_analyzer::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! /// Counts warp instructions issued with every lane of the warp active.
//! #[derive(Default)]
//! struct FullWarps(AtomicU64);
//! struct Count(u64, u64);
//!
//! impl IssueSink for Count {
//!     fn issue(&mut self, issue: &Issue<'_>) {
//!         if issue.active == self.1 {
//!             self.0 += issue.warp_instructions;
//!         }
//!     }
//! }
//!
//! impl Observer for FullWarps {
//!     type Sink = Count;
//!     fn begin(&self, _: &Context<'_>, warp: &WarpInfo<'_>) -> Count {
//!         let full = if warp.width == 64 { u64::MAX } else { (1u64 << warp.width) - 1 };
//!         Count(0, full)
//!     }
//!     fn end(&self, _: &Context<'_>, _: &WarpInfo<'_>, sink: Count) {
//!         self.0.fetch_add(sink.0, Ordering::Relaxed);
//!     }
//! }
//!
//! let trace = tf_trace::Trace::open("trace-pigz-1").unwrap();
//! let full = FullWarps::default();
//! let opts = tf_analyzer::Options::default();
//! tf_analyzer::analyze_observed(&trace, &opts, &tf_analyzer::Silent, &full).unwrap();
//! println!("{} full-warp instructions", full.0.load(Ordering::Relaxed));
//! ```

use crate::blocks::{CBlock, CBlockId, CanonicalBlocks};
use crate::functions::FunctionTable;
use crate::replay::IpdomMap;
use crate::segments::Segments;
use crate::symbols::SourceLines;
use tf_trace::{Access, FunctionId, LockKind, Trace};

/// What an observer may look at for the whole analysis, borrowed from it.
pub struct Context<'a> {
    /// The trace: block table with code bytes, modules, manifest.
    pub trace: &'a Trace,
    /// Canonical basic blocks.
    pub canon: &'a CanonicalBlocks,
    /// The functions instructions are charged to.
    pub functions: &'a FunctionTable,
    /// Source lines of addresses (DWARF).
    pub lines: &'a SourceLines,
    /// Memory segments (stack, heap, global, other).
    pub segments: &'a Segments,
    /// Immediate post-dominators: the reconvergence points.
    pub ipdom: &'a IpdomMap,
}

/// One warp, before it replays.
#[derive(Clone, Copy, Debug)]
pub struct WarpInfo<'a> {
    /// Its width W.
    pub width: usize,
    /// Its number among the warps of this width, in formation order.
    pub index: usize,
    /// Its lanes, lane 0 first (a last warp may have fewer than W).
    pub lanes: &'a [LaneInfo],
}

/// One lane of a warp: the unit it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneInfo {
    /// The unit's thread.
    pub tid: u64,
    /// The unit's index among all units of the analysis.
    pub unit: usize,
    /// The thread's stack range `[lo, hi)`.
    pub stack: (u64, u64),
    /// The stack pointer at the unit's start (base of GPU local memory).
    pub sp: u64,
}

/// One warp issue: the active lanes run (each a prefix of) one canonical block together.
#[derive(Clone, Copy, Debug)]
pub struct Issue<'a> {
    /// The block.
    pub cblock: CBlockId,
    /// Its description.
    pub block: &'a CBlock,
    /// The function its instructions are charged to.
    pub function: FunctionId,
    /// Lanes that run it.
    pub active: u64,
    /// Lanes counted as executing it: `active`, and the lanes whose
    /// predicate is off (`--predicate`) or that spin on a lock
    /// (`--lock-model spin`), as a GPU's profiler counts them.
    pub counted: u64,
    /// Lanes of the predicated branch this block belongs to (`--predicate`;
    /// those not in `active` run it with their predicate off).
    pub predicated: u64,
    /// Lanes spinning on a lock while this block runs (`--lock-model spin`;
    /// those not in `active` are counted as executing it).
    pub spinning: u64,
    /// Warp instructions issued: the most instructions any active lane ran.
    pub warp_instructions: u64,
    /// Thread instructions: the sum over the active lanes, plus
    /// `warp_instructions` for every other lane of `counted`.
    pub thread_instructions: u64,
    /// One entry per active lane, in lane order.
    pub lanes: &'a [LaneIssue<'a>],
    /// The lock, when this issue belongs to a serialized round after the first.
    pub serialized: Option<u64>,
}

/// Thread instructions counted for the lanes of `mask` that do not run an
/// issue of `warp` instructions whose active lanes are `active` (predicated
/// off, or spinning): `warp` each.
///
/// ```
/// use tf_analyzer::sink::idle_instructions;
/// assert_eq!(idle_instructions(0b1110, 0b0011, 5), 10);
/// assert_eq!(idle_instructions(0, 0b0011, 5), 0);
/// ```
#[inline]
pub fn idle_instructions(mask: u64, active: u64, warp: u64) -> u64 {
    match mask & !active {
        0 => 0, // most issues: no predication, no spinning
        idle => u64::from(idle.count_ones()) * warp,
    }
}

/// What one active lane did in an issue.
#[derive(Clone, Copy, Debug)]
pub struct LaneIssue<'a> {
    /// Lane number in the warp.
    pub lane: usize,
    /// Instructions of the block it ran (the whole block unless it was cut
    /// short, by a fault or the end of its unit).
    pub insns: u32,
    /// Operand index of the block's first operand in the trace's block
    /// (`Access::operand - first_op` is the operand's index in the block).
    pub first_op: u16,
    /// Its memory accesses in this block, in operand order.
    pub accesses: &'a [Access],
}

/// Receives what one warp's replay issues, in issue order.
pub trait IssueSink {
    /// A warp issue.
    fn issue(&mut self, issue: &Issue<'_>);

    /// The lanes of `active` split at the end of `cblock` into `paths`
    /// groups, to reconverge at `reconverge` (`None`: the function's exit).
    fn diverged(
        &mut self,
        _cblock: CBlockId,
        _active: u64,
        _paths: usize,
        _reconverge: Option<CBlockId>,
    ) {
    }

    /// Lanes holding the same lock were split into serialized rounds
    /// (`rounds[0]` runs first and holds every lane that does not wait).
    fn lock_rounds(&mut self, _rounds: &[(u64, Option<u64>)]) {}

    /// The branch at the end of `cblock` runs as predicated code
    /// (`--predicate`): every lane issues both arms.
    fn predicated(&mut self, _cblock: CBlockId) {}

    /// Lane `lane` acquired `lock`.
    fn lock_acquired(&mut self, _lane: usize, _lock: u64, _kind: LockKind) {}

    /// The lanes of `lanes` hold `lock` at once; `waiting` of them wait for
    /// another's critical section (they run in later rounds).
    fn lock_contended(&mut self, _lock: u64, _lanes: u64, _waiting: u64) {}
}

/// Makes one sink per warp and takes it back when the warp is done.
pub trait Observer: Sync {
    /// The per-warp sink.
    type Sink: IssueSink + Send;

    /// Whether the replay needs to tell this observer anything (false only
    /// for [`Nobody`], which makes the seam cost nothing).
    const ACTIVE: bool = true;

    /// Whether it looks at the warps of `width`. The warps of a width it
    /// does not look at may replay without a sink (the warps of width 1,
    /// whose lanes a wider warp's replay counts alone too), and a sink it
    /// gives for one is told nothing between `begin` and `end`.
    fn observes(&self, width: usize) -> bool {
        let _ = width;
        Self::ACTIVE
    }

    /// A sink for `warp`, before it replays.
    fn begin(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>) -> Self::Sink;

    /// `warp` is done; its sink saw every issue. Called from any thread, in
    /// any order of warps.
    fn end(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>, sink: Self::Sink);
}

/// A sink that ignores everything.
pub struct Ignore;

impl IssueSink for Ignore {
    fn issue(&mut self, _: &Issue<'_>) {}
}

/// An observer that ignores everything: what [`crate::analyze`] uses.
pub struct Nobody;

impl Observer for Nobody {
    type Sink = Ignore;
    const ACTIVE: bool = false;
    fn begin(&self, _: &Context<'_>, _: &WarpInfo<'_>) -> Ignore {
        Ignore
    }
    fn end(&self, _: &Context<'_>, _: &WarpInfo<'_>, _: Ignore) {}
}

/// Tells several sinks everything, in order: one replay of a warp observed
/// at several widths (see [`crate::replay::Replay::run`]).
///
/// ```
/// use tf_analyzer::sink::{Fanout, IssueSink};
/// #[derive(Default)]
/// struct Predicated(u64);
/// impl IssueSink for Predicated {
///     fn issue(&mut self, _: &tf_analyzer::sink::Issue<'_>) {}
///     fn predicated(&mut self, _: tf_analyzer::blocks::CBlockId) {
///         self.0 += 1;
///     }
/// }
/// let (mut a, mut b) = (Predicated::default(), Predicated::default());
/// Fanout(vec![&mut a, &mut b]).predicated(7);
/// assert_eq!((a.0, b.0), (1, 1));
/// ```
pub struct Fanout<'s>(pub Vec<&'s mut dyn IssueSink>);

impl IssueSink for Fanout<'_> {
    fn issue(&mut self, issue: &Issue<'_>) {
        self.0.iter_mut().for_each(|s| s.issue(issue));
    }

    fn diverged(
        &mut self,
        cblock: CBlockId,
        active: u64,
        paths: usize,
        reconverge: Option<CBlockId>,
    ) {
        for s in &mut self.0 {
            s.diverged(cblock, active, paths, reconverge);
        }
    }

    fn lock_rounds(&mut self, rounds: &[(u64, Option<u64>)]) {
        self.0.iter_mut().for_each(|s| s.lock_rounds(rounds));
    }

    fn predicated(&mut self, cblock: CBlockId) {
        self.0.iter_mut().for_each(|s| s.predicated(cblock));
    }

    fn lock_acquired(&mut self, lane: usize, lock: u64, kind: LockKind) {
        self.0
            .iter_mut()
            .for_each(|s| s.lock_acquired(lane, lock, kind));
    }

    fn lock_contended(&mut self, lock: u64, lanes: u64, waiting: u64) {
        self.0
            .iter_mut()
            .for_each(|s| s.lock_contended(lock, lanes, waiting));
    }
}
