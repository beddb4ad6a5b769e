//! What the replay of one warp counts: instructions, memory, divergences,
//! locks, and whether every lane finished.

use super::lane::Lane;
use crate::off_stack::OffStack;
use crate::stats::{FunctionStats, Insns, Memory};
use std::collections::HashMap;
use tf_trace::LockKind;

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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WarpStats {
    /// All instructions.
    pub insns: Insns,
    /// Per function id (index 0: unknown).
    pub functions: Vec<FunctionStats>,
    /// All memory requests.
    pub memory: Memory,
    /// Branches (blocks with several successor groups) that diverged.
    pub divergent_branches: u64,
    /// Instructions the lanes' units recorded (set by the caller).
    pub recorded_instructions: u64,
    /// Lanes that did not reach the end of their unit.
    pub unfinished_lanes: u64,
    /// Branches executed as predicated code (`--predicate`).
    pub predicated_branches: u64,
    /// Thread instructions of lanes whose predicate was off (counted in
    /// `insns`, not recorded by them).
    pub predicated_off: u64,
    /// Thread instructions of lanes spinning on a lock (`--lock-model spin`;
    /// counted in `insns`, not recorded by them).
    pub spinning: u64,
    /// Thread instructions replayed but left out of `insns` and of every
    /// observer (`--spin-wait exclude`).
    pub excluded: u64,
    /// Per lock address.
    pub locks: HashMap<u64, LockStats>,
    /// Lanes that ran on a stack outside their thread's, and their calls.
    pub off_stack: OffStack,
}

/// Sets, in each of `stats`, the lanes of `mask` among `lanes` that did
/// not end their unit, and their calls on stacks other than their
/// thread's.
pub(super) fn set_unfinished(stats: &mut [WarpStats], lanes: &[Lane<'_>], mask: u64) {
    let mut off_stack = OffStack::default();
    let mut unfinished = 0;
    for (i, l) in lanes.iter().enumerate() {
        if mask & (1 << i) != 0 {
            off_stack.add(&l.off_stack);
            unfinished += u64::from(!l.done);
        }
    }
    for s in stats {
        s.unfinished_lanes = unfinished;
        s.off_stack = off_stack;
    }
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
        self.recorded_instructions += o.recorded_instructions;
        self.unfinished_lanes += o.unfinished_lanes;
        self.predicated_branches += o.predicated_branches;
        self.predicated_off += o.predicated_off;
        self.spinning += o.spinning;
        self.excluded += o.excluded;
        self.off_stack.add(&o.off_stack);
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
