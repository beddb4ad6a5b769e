//! Stage 4a: one dynamic control-flow graph per function.
//!
//! Nodes are canonical blocks plus a virtual exit ([`VEXIT`]); an edge joins
//! two blocks that ran one after the other in the same frame. A call block's
//! successor is its return site (added when the callee returns), never the
//! callee: each function's graph summarizes its calls, so post-dominance is
//! the same at every call site (`docs/reconvergence.md` §4.1). Returns, tail
//! calls, frames abandoned by `longjmp` or exceptions, and thread ends all
//! lead to the virtual exit. Graphs are keyed by the function's entry address.
//!
//! ```
//! use tf_analyzer::cfg::{CfgBuilder, VEXIT};
//! let mut b = CfgBuilder::new(4);
//! b.entry(0x100, 0);
//! b.edge(0x100, 0, 1);
//! b.edge(0x100, 1, VEXIT);
//! let cfgs = b.finish();
//! let f = &cfgs[&0x100];
//! assert_eq!(f.edges, [(0, 1), (1, VEXIT)]);
//! assert_eq!(f.entries, [0]);
//! ```

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::frames::{FrameTracker, Transition};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::HashMap;
use std::sync::Arc;
use tf_trace::EndKind;

/// The virtual exit node of every function's graph.
pub const VEXIT: CBlockId = u32::MAX;

/// One function's dynamic CFG.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FunctionCfg {
    /// Blocks that started a frame of this function (its entry, or where a
    /// thread or signal handler began inside it), sorted.
    pub entries: Vec<CBlockId>,
    /// Edges, sorted and distinct; the target may be [`VEXIT`].
    pub edges: Vec<(CBlockId, CBlockId)>,
    /// Its blocks that called a yielding function (`sched_yield` …: see
    /// [`CfgBuilder::yielding`]), directly or through a stub that jumped on
    /// to it, sorted.
    #[serde(default)]
    pub yield_calls: Vec<CBlockId>,
}

impl FunctionCfg {
    /// The blocks of the graph (entries and edge ends, not [`VEXIT`]), sorted.
    pub fn nodes(&self) -> Vec<CBlockId> {
        let mut v: Vec<CBlockId> = self
            .entries
            .iter()
            .copied()
            .chain(self.edges.iter().flat_map(|&(a, b)| [a, b]))
            .filter(|&n| n != VEXIT)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// All functions' graphs, by entry address.
pub type Cfgs = HashMap<u64, FunctionCfg>;

#[derive(Default)]
struct Pending {
    entries: FxHashSet<CBlockId>,
    edges: FxHashSet<(CBlockId, CBlockId)>,
    yield_calls: FxHashSet<CBlockId>,
}

/// Collects edges while threads are replayed through their frames.
///
/// One builder per thread (they are cheap to merge with [`merge`](Self::merge)).
pub struct CfgBuilder {
    // Fx: looked up at every call and every new edge of every thread's scan.
    funcs: FxHashMap<u64, Pending>,
    /// The last edge added from each block, to skip the hash set for the
    /// edges that repeat (almost all of them).
    recent: Vec<(CBlockId, u64)>,
    /// By function id: whether calls into it are recorded as yields.
    yielding: Arc<[bool]>,
}

impl CfgBuilder {
    /// A builder for graphs over `n_blocks` canonical blocks.
    pub fn new(n_blocks: usize) -> CfgBuilder {
        CfgBuilder {
            funcs: FxHashMap::default(),
            recent: vec![(VEXIT, 0); n_blocks],
            yielding: Arc::from([]),
        }
    }

    /// The same builder, recording the calls into the functions whose id
    /// `yielding` marks ([`FunctionCfg::yield_calls`]).
    ///
    /// ```
    /// # use tf_analyzer::cfg::CfgBuilder;
    /// let b = CfgBuilder::new(4).yielding(vec![false, true].into());
    /// assert!(b.finish().is_empty());
    /// ```
    pub fn yielding(mut self, yielding: Arc<[bool]>) -> CfgBuilder {
        self.yielding = yielding;
        self
    }

    /// Records that a frame of `func` started at `block`.
    pub fn entry(&mut self, func: u64, block: CBlockId) {
        self.funcs.entry(func).or_default().entries.insert(block);
    }

    /// Records the edge `from → to` in `func`'s graph.
    #[inline]
    pub fn edge(&mut self, func: u64, from: CBlockId, to: CBlockId) {
        if let Some(r) = self.recent.get_mut(from as usize) {
            if *r == (to, func) {
                return;
            }
            *r = (to, func);
        }
        self.funcs.entry(func).or_default().edges.insert((from, to));
    }

    /// The start of a thread (or unit) whose tracker holds only its root frame.
    pub fn start(&mut self, tracker: &FrameTracker) {
        let root = tracker.top();
        if let Some(first) = root.last {
            self.entry(root.entry, first);
        }
    }

    /// Moves `tracker` from block `prev` (ended as `prev_end`) to block `next`, recording the edges
    /// this implies; returns the transition.
    // Always inlined: the scan calls it on every step, and the call cost more
    // than its common case (an edge already recorded).
    #[inline(always)]
    pub fn step(
        &mut self,
        tracker: &mut FrameTracker,
        canon: &CanonicalBlocks,
        prev: CBlockId,
        prev_end: EndKind,
        next: CBlockId,
    ) -> Transition {
        let func_before = tracker.top().entry;
        let t = tracker.advance(canon, prev, prev_end, next);
        match t {
            Transition::Same => self.edge(func_before, prev, next),
            Transition::Call => {
                self.entry(tracker.top().entry, next);
                if self.yields_at(canon, next) {
                    self.yield_call(func_before, prev);
                }
            }
            Transition::Return(_) => {
                self.exit_popped(tracker);
                if let Some(node) = tracker.popped().last().and_then(|f| f.call_node) {
                    self.edge(tracker.top().entry, node, next);
                }
            }
            Transition::TailCall => {
                self.edge(func_before, prev, VEXIT);
                self.entry(tracker.top().entry, next);
                if self.yields_at(canon, next) {
                    // a stub (or the dynamic linker, resolving it) jumping
                    // on: the call into the stub is the yield's call
                    let frames = tracker.frames();
                    if let (Some(node), [.., caller, _]) = (tracker.top().call_node, frames) {
                        self.yield_call(caller.entry, node);
                    }
                }
            }
        }
        t
    }

    /// Whether `block` starts a function whose calls are recorded as yields.
    #[inline(always)]
    fn yields_at(&self, canon: &CanonicalBlocks, block: CBlockId) -> bool {
        let b = canon.block(block);
        b.is_entry && self.yielding.get(b.function as usize) == Some(&true)
    }

    /// Records that `block` of `func` called a yielding function.
    #[inline(never)]
    fn yield_call(&mut self, func: u64, block: CBlockId) {
        self.funcs
            .entry(func)
            .or_default()
            .yield_calls
            .insert(block);
    }

    fn exit_popped(&mut self, tracker: &FrameTracker) {
        for f in tracker.popped() {
            if let Some(last) = f.last {
                self.edge(f.entry, last, VEXIT);
            }
        }
    }

    /// The thread (or unit) ended: every open frame's last block exits.
    pub fn end(&mut self, tracker: &FrameTracker) {
        for f in tracker.frames() {
            if let Some(last) = f.last {
                self.edge(f.entry, last, VEXIT);
            }
        }
    }

    /// Adds another builder's edges to this one's.
    pub fn merge(&mut self, other: CfgBuilder) {
        for (func, p) in other.funcs {
            let mine = self.funcs.entry(func).or_default();
            mine.entries.extend(p.entries);
            mine.edges.extend(p.edges);
            mine.yield_calls.extend(p.yield_calls);
        }
    }

    /// The graphs.
    pub fn finish(self) -> Cfgs {
        self.funcs
            .into_iter()
            .map(|(func, p)| {
                let mut entries: Vec<_> = p.entries.into_iter().collect();
                entries.sort_unstable();
                let mut edges: Vec<_> = p.edges.into_iter().collect();
                edges.sort_unstable();
                let mut yield_calls: Vec<_> = p.yield_calls.into_iter().collect();
                yield_calls.sort_unstable();
                let cfg = FunctionCfg {
                    entries,
                    edges,
                    yield_calls,
                };
                (func, cfg)
            })
            .collect()
    }
}
