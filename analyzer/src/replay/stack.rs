//! The SIMT stack's entries and the lane groups the replay forms.
//!
//! An entry belongs to one frame depth of its lanes and runs one place of
//! that frame ([`Pc`]) until its lanes reach its reconvergence point
//! (`rpc`). Lanes are kept as bit masks (at most 64 lanes).

use crate::blocks::CBlockId;
use crate::cfg::VEXIT;

/// What a stack entry runs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pc {
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
    /// `--reconverge min-pc`: the frame's lanes, wherever they stand; the
    /// group at the lowest address runs next.
    Frontier,
}

impl Pc {
    pub(super) fn of(block: CBlockId) -> Pc {
        if block == VEXIT {
            Pc::Exit
        } else {
            Pc::Block(block)
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) pc: Pc,
    /// Reconvergence point: a block of the frame, its exit, or a join.
    pub(super) rpc: Pc,
    pub(super) mask: u64,
    pub(super) depth: u32,
    /// The frame's function (entry address): the key of its post-dominators.
    pub(super) func: u64,
    /// The lock whose serialized round (after the first) this entry runs
    /// (no lock lies at address 0; the entry stays small, as it is copied
    /// at every step).
    pub(super) serialized: Option<std::num::NonZeroU64>,
    /// Lanes counted as active in this entry's issues though they do not
    /// run them, their predicate off (`--predicate`).
    pub(super) predicated: u64,
    /// Lanes counted as active in this entry's issues though they do not
    /// run them, spinning on a lock (`--lock-model spin`).
    pub(super) spinning: u64,
}

impl Entry {
    /// An entry pushed above `top` (or replacing it), in its serialized
    /// round, predication and spinning.
    pub(super) fn above(top: &Entry, pc: Pc, rpc: Pc, mask: u64, depth: u32, func: u64) -> Entry {
        Entry {
            pc,
            rpc,
            mask,
            depth,
            func,
            ..*top
        }
    }
}

/// A group of lanes going to the same place: (block, frame function, lanes).
pub(super) type Group = (CBlockId, u64, u64);

/// Lanes inside callees of a frame: (call block of the frame, the lanes'
/// next block, its frame's function, lanes, the lanes' depth, a signature of
/// the frames between).
pub(super) type Callee = (CBlockId, CBlockId, u64, u64, u32, u64);

pub(super) fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
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

pub(super) fn add_group(groups: &mut Vec<Group>, block: CBlockId, func: u64, lane: usize) {
    match groups.iter_mut().find(|g| g.0 == block && g.1 == func) {
        Some(g) => g.2 |= 1 << lane,
        None => groups.push((block, func, 1 << lane)),
    }
}

/// Adds `lane` to the group of `callee` (whose mask is ignored).
pub(super) fn add_callee(callees: &mut Vec<Callee>, callee: Callee, lane: usize) {
    let same = |c: &&mut Callee| {
        (c.0, c.1, c.2, c.4, c.5) == (callee.0, callee.1, callee.2, callee.4, callee.5)
    };
    match callees.iter_mut().find(same) {
        Some(c) => c.3 |= 1 << lane,
        None => callees.push((callee.0, callee.1, callee.2, 1 << lane, callee.4, callee.5)),
    }
}
