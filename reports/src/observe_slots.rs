//! One warp's per-block figures as the observer ([`super::WarpSink`]) counts
//! them: a slot per block of a function, found by the block's id rather
//! than by hashing its key on every issue, and each slot's edges to the
//! slots lanes went to next, kept beside it. The sink's cost was about that
//! of the replay it watched, most of it two hash-map lookups per issue.

use super::{BlockKey, BlockStats, WidthDetails};
use rustc_hash::FxHashMap as HashMap;
use tf_analyzer::blocks::CBlock;

/// A block's place in a [`BlockSlots`].
pub(super) type Slot = u32;

/// No slot yet.
const NONE: Slot = Slot::MAX;

/// A block of a function, its figures, and where lanes went from it.
struct Entry {
    key: BlockKey,
    stats: BlockStats,
    /// `(slot, lanes)`: lanes that went on to another block of the same
    /// function; a block has few successors, found by a linear search.
    edges: Vec<(Slot, u64)>,
}

/// The blocks one warp issued, each with its figures.
#[derive(Default)]
pub(super) struct BlockSlots {
    /// The slot of each block id for the function it was first charged to.
    by_block: Vec<Slot>,
    /// Slots of blocks charged to another function than that one (code
    /// without a symbol, charged to its frame's function).
    others: HashMap<BlockKey, Slot>,
    entries: Vec<Entry>,
}

impl BlockSlots {
    /// The slot of `key`, whose block is `block`: made on its first issue.
    #[inline]
    pub(super) fn slot(&mut self, key: BlockKey, block: &CBlock) -> Slot {
        let b = key.1 as usize;
        if b >= self.by_block.len() {
            self.by_block.resize(b + 1, NONE);
        }
        match self.by_block[b] {
            NONE => {
                let s = self.push(key, block);
                self.by_block[b] = s;
                s
            }
            s if self.entries[s as usize].key == key => s,
            _ => match self.others.get(&key) {
                Some(&s) => s,
                None => {
                    let s = self.push(key, block);
                    self.others.insert(key, s);
                    s
                }
            },
        }
    }

    /// The slot of `key`, if it was issued.
    pub(super) fn find(&self, key: BlockKey) -> Option<Slot> {
        match *self.by_block.get(key.1 as usize)? {
            NONE => None,
            s if self.entries[s as usize].key == key => Some(s),
            _ => self.others.get(&key).copied(),
        }
    }

    fn push(&mut self, key: BlockKey, block: &CBlock) -> Slot {
        self.entries.push(Entry {
            key,
            stats: BlockStats::new(block),
            edges: Vec::new(),
        });
        (self.entries.len() - 1) as Slot
    }

    /// The figures of the block in `slot`.
    #[inline]
    pub(super) fn stats(&mut self, slot: Slot) -> &mut BlockStats {
        &mut self.entries[slot as usize].stats
    }

    /// The block in `slot`.
    pub(super) fn key(&self, slot: Slot) -> BlockKey {
        self.entries[slot as usize].key
    }

    /// Counts `n` lanes that went from block `from` to block `to` of one function.
    #[inline]
    pub(super) fn edge(&mut self, from: Slot, to: Slot, n: u64) {
        let edges = &mut self.entries[from as usize].edges;
        match edges.iter_mut().find(|(s, _)| *s == to) {
            Some((_, m)) => *m += n,
            None => edges.push((to, n)),
        }
    }

    /// The figures by block and the edges by `(function, from, to)`, as
    /// [`WidthDetails`] holds them.
    pub(super) fn into_details(self, details: &mut WidthDetails) {
        let keys: Vec<BlockKey> = self.entries.iter().map(|e| e.key).collect();
        for e in self.entries {
            let (f, from) = e.key;
            for (to, n) in e.edges {
                *details
                    .edges
                    .entry((f, from, keys[to as usize].1))
                    .or_default() += n;
            }
            details.blocks.insert(e.key, e.stats);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n_insns: u32) -> CBlock {
        CBlock {
            address: 0x1000,
            end_address: 0x1010,
            n_insns,
            n_ops: 0,
            function: 0,
            end: tf_trace::EndKind::Fallthrough,
            is_entry: false,
            is_cold: false,
            origin: (0, 0, 0),
        }
    }

    #[test]
    fn a_block_charged_to_two_functions_has_two_slots() {
        let mut t = BlockSlots::default();
        let a = t.slot((1, 5), &block(2));
        let b = t.slot((2, 5), &block(2));
        assert_ne!(a, b);
        assert_eq!(t.slot((1, 5), &block(2)), a);
        assert_eq!(t.slot((2, 5), &block(2)), b);
        assert_eq!(t.key(b), (2, 5));
        assert_eq!(t.find((2, 5)), Some(b));
        assert_eq!(t.find((3, 5)), None);
        assert_eq!(t.find((1, 99)), None);
        t.stats(a).issues += 3;
        t.stats(b).issues += 1;
        let c = t.slot((1, 7), &block(1));
        t.edge(a, c, 2);
        t.edge(a, c, 1);
        t.edge(c, a, 4);
        let mut d = WidthDetails::default();
        t.into_details(&mut d);
        assert_eq!(d.blocks[&(1, 5)].issues, 3);
        assert_eq!(d.blocks[&(2, 5)].issues, 1);
        assert_eq!(d.blocks[&(1, 7)].lanes_by_length, vec![0, 0]);
        assert_eq!(d.edges.len(), 2);
        assert_eq!(d.edges[&(1, 5, 7)], 3);
        assert_eq!(d.edges[&(1, 7, 5)], 4);
    }
}
