//! The prediction state of §6.2 (successors) and §6.3 (addresses).
//!
//! One implementation, used by both the reader and the writer, so that the
//! two cannot drift apart. The state lives for one chunk: [`Predictor::reset`]
//! starts a new one.

use crate::block_table::{BlockId, BlockRec, BlockTable, EndKind};
use crate::stream::TableParams;

mod rounds;
mod snapshot;
pub(crate) use rounds::{Course, Round};
pub(crate) use snapshot::PredictorState;

/// "No block" in candidate and successor slots.
pub(crate) const NONE: u32 = u32::MAX;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// `hash(x, bits)` of §6.2.
#[inline(always)]
pub(crate) fn hash(x: u64, bits: u32) -> usize {
    (x.wrapping_mul(GOLDEN) >> (64 - bits)) as usize
}

#[derive(Clone, Copy)]
struct SuccEntry {
    /// The block id + 1 (0 = empty) in the low half, and the chunk
    /// generation that wrote it (older entries count as empty) in the high
    /// half: one comparison tells whether the entry is the block's.
    tag: u64,
    s0: u32,
    s1: u32,
}

impl SuccEntry {
    /// The tag of block `b`'s entry in generation `gen`.
    #[inline(always)]
    fn tag(b: BlockId, gen: u32) -> u64 {
        u64::from(b + 1) | u64::from(gen) << 32
    }

    /// Block id + 1; 0 = empty.
    fn key(&self) -> u32 {
        self.tag as u32
    }

    /// The generation that wrote it.
    fn gen(&self) -> u32 {
        (self.tag >> 32) as u32
    }
}

/// Bit 63 of `AddrEntry::tag`: mode `offset`.
const MODE_OFFSET: u64 = 1 << 63;

/// Where the generation sits in `AddrEntry::tag`: above the key (a block id
/// of 32 bits and an operand index of 16, plus one, fits in 48 bits).
const GEN_SHIFT: u32 = 48;

/// The last generation before the tables are cleared: what fits in the
/// tag's bits 48..63.
const GEN_MAX: u32 = (1 << 15) - 1;

/// 32 bytes, aligned: two entries per cache line and none across two, so
/// that a prediction costs at most one miss.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct AddrEntry {
    /// `key + 1` (0 = empty) in bits 0..48, the chunk generation that wrote
    /// it in bits 48..63 (older entries count as empty), [`MODE_OFFSET`].
    tag: u64,
    last: u64,
    stride: u64,
    offset: u64,
}

/// Table entries whose all-zero bit pattern is a valid, empty entry.
///
/// # Safety
/// Implementors must consist of plain integers only.
unsafe trait Zeroed: Copy {}
// SAFETY: only integer fields.
unsafe impl Zeroed for SuccEntry {}
// SAFETY: only integer fields.
unsafe impl Zeroed for AddrEntry {}

/// A table of `n` empty entries, from zeroed memory: the operating system
/// maps large zeroed allocations lazily, so a reader that touches few entries
/// (a short thread) pays for few pages.
fn zeroed<T: Zeroed>(n: usize) -> Box<[T]> {
    let layout = std::alloc::Layout::array::<T>(n).expect("table size");
    if layout.size() == 0 {
        return Vec::new().into_boxed_slice();
    }
    // SAFETY: the layout is non-zero-sized; all-zero is a valid T (Zeroed);
    // the pointer comes from the global allocator with T's layout, as Box
    // requires.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
    }
}

/// The result of [`Predictor::predict`], to pass to [`Predictor::update`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prediction {
    /// The predicted address.
    pub(crate) addr: u64,
    slot: usize,
    key: u64,
    hit: bool,
}

/// The prediction state of one chunk. A clone has tables of its own (about
/// 0.7 MB at the tracers' table sizes).
#[derive(Clone)]
pub(crate) struct Predictor {
    succ: Box<[SuccEntry]>,
    succ_bits: u32,
    addr: Box<[AddrEntry]>,
    addr_bits: u32,
    ret: Box<[u64; 256]>,
    ret_top: u8,
    ret_len: u8,
    ret_cap: u8,
    /// The last block executed in the chunk, or NONE.
    prev: u32,
    /// The successor-table slot of `prev`, as found by `depart`.
    prev_slot: usize,
    /// The highest block id executed in the chunk.
    max_exec: u32,
    cand: [u32; 2],
    last_any: u64,
    /// The current chunk's generation, ≥ 1: entries of other generations
    /// are empty, so that a new chunk needs no clearing of the tables.
    gen: u32,
}

/// Tables of a dropped predictor, kept for the next one (with the
/// generation they reached, so that their stale entries stay stale).
struct Spare {
    succ: Box<[SuccEntry]>,
    addr: Box<[AddrEntry]>,
    gen: u32,
}

/// At most this many spare table pairs per thread.
const MAX_SPARES: usize = 64;

thread_local! {
    /// Readers come and go (one per SIMT lane in the analyzer): reusing
    /// their tables spares allocating and clearing ~0.7 MB each time.
    static SPARES: std::cell::RefCell<Vec<Spare>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for Predictor {
    fn drop(&mut self) {
        let spare = Spare {
            succ: std::mem::take(&mut self.succ),
            addr: std::mem::take(&mut self.addr),
            gen: self.gen,
        };
        SPARES.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < MAX_SPARES {
                s.push(spare);
            }
        });
    }
}

impl Predictor {
    /// A fresh state for chunks of a stream with these parameters (which
    /// must be in range, see [`TableParams::check`]).
    pub(crate) fn new(p: TableParams) -> Predictor {
        let (succ_len, addr_len) = (1usize << p.succ_table_bits, 1usize << p.addr_table_bits);
        let spare = SPARES.with(|s| {
            let mut s = s.borrow_mut();
            let i = s
                .iter()
                .position(|t| t.succ.len() == succ_len && t.addr.len() == addr_len)?;
            Some(s.swap_remove(i))
        });
        let spare = spare.unwrap_or_else(|| Spare {
            succ: zeroed(succ_len),
            addr: zeroed(addr_len),
            gen: 0,
        });
        let mut pred = Predictor {
            succ: spare.succ,
            succ_bits: p.succ_table_bits as u32,
            addr: spare.addr,
            addr_bits: p.addr_table_bits as u32,
            ret: Box::new([0; 256]),
            ret_top: 0,
            ret_len: 0,
            ret_cap: p.ret_stack_depth,
            prev: NONE,
            prev_slot: 0,
            max_exec: 0,
            cand: [NONE; 2],
            last_any: 0,
            gen: spare.gen,
        };
        pred.reset();
        pred
    }

    /// Forgets everything: the state at the start of a chunk.
    pub(crate) fn reset(&mut self) {
        if self.gen == GEN_MAX {
            self.succ = zeroed(self.succ.len());
            self.addr = zeroed(self.addr.len());
            self.gen = 0;
        }
        self.gen += 1;
        self.ret_len = 0;
        self.prev = NONE;
        self.max_exec = 0;
        self.cand = [NONE; 2];
        self.last_any = 0;
    }

    /// Successor candidates 0 and 1 for the next block (NONE where absent).
    #[inline(always)]
    pub(crate) fn candidates(&self) -> [u32; 2] {
        self.cand
    }

    /// Steps 3 and 4 of §6.2: block `n` (at `addr`) is the next block.
    #[inline(always)]
    pub(crate) fn arrive(&mut self, n: BlockId, addr: u64) {
        if self.ret_len > 0 && self.ret[self.ret_top as usize] == addr {
            self.ret_top = self.ret_top.wrapping_sub(1);
            self.ret_len -= 1;
        }
        if self.prev != NONE {
            let tag = SuccEntry::tag(self.prev, self.gen);
            let e = &mut self.succ[self.prev_slot];
            if e.tag == tag {
                // Swapping when s1 = n and shifting otherwise both leave
                // [n, old s0].
                if e.s0 != n {
                    e.s1 = e.s0;
                    e.s0 = n;
                }
            } else {
                *e = SuccEntry {
                    tag,
                    s0: n,
                    s1: NONE,
                };
            }
        }
        self.prev = n;
        if n > self.max_exec {
            self.max_exec = n;
        }
    }

    /// Steps 1 and 2 of §6.2, after an execution of block `b`.
    #[inline(always)]
    pub(crate) fn depart(
        &mut self,
        b: BlockId,
        rec: &BlockRec,
        complete: bool,
        table: &BlockTable,
    ) {
        let slot = hash(b as u64, self.succ_bits);
        self.prev_slot = slot;
        let e = self.succ[slot];
        let (s0, s1) = if e.tag == SuccEntry::tag(b, self.gen) {
            (e.s0, e.s1)
        } else {
            (NONE, NONE)
        };
        self.cand = [s0, s1];
        if complete {
            if rec.end == EndKind::Return && self.ret_len > 0 {
                if let Some(r) = table.block_at(self.ret[self.ret_top as usize]) {
                    if r <= self.max_exec {
                        self.cand = [r, if s0 != r { s0 } else { s1 }];
                    }
                }
            } else if rec.end.is_call() {
                self.ret_top = self.ret_top.wrapping_add(1);
                self.ret[self.ret_top as usize] = rec.end_addr;
                if self.ret_len < self.ret_cap {
                    self.ret_len += 1;
                }
            }
        }
    }

    /// Step 1 of §6.3 for operand `j` of block `b`; `prev` is the address of
    /// the previous present operand of this execution.
    #[inline(always)]
    pub(crate) fn predict(&self, b: BlockId, j: u32, prev: Option<u64>) -> Prediction {
        let (key, slot) = self.addr_key(b, j);
        let e = &self.addr[slot];
        let hit = e.tag & !MODE_OFFSET == self.tag(key);
        let addr = if !hit {
            prev.unwrap_or(self.last_any)
        } else {
            match prev {
                Some(p) if e.tag & MODE_OFFSET != 0 => p.wrapping_add(e.offset),
                _ => e.last.wrapping_add(e.stride),
            }
        };
        Prediction {
            addr,
            slot,
            key,
            hit,
        }
    }

    /// The address of operand `j` of block `b` whose record gives `delta`,
    /// its difference from the prediction (the reader's side of
    /// [`predict`](Self::predict) and [`update`](Self::update)); learns it.
    #[inline(always)]
    pub(crate) fn resolve(&mut self, b: BlockId, j: u32, delta: u64, prev: Option<u64>) -> u64 {
        let p = self.predict(b, j, prev);
        let a = p.addr.wrapping_add(delta);
        self.update(p, a, prev);
        a
    }

    /// The key of operand `j` of block `b` in the address table (§6.3), and
    /// its slot.
    #[inline(always)]
    fn addr_key(&self, b: BlockId, j: u32) -> (u64, usize) {
        let key = (b as u64) << 16 | j as u64;
        (key, hash(key, self.addr_bits))
    }

    /// The tag of an address entry for `key` written in this chunk (without
    /// its mode bit).
    #[inline(always)]
    fn tag(&self, key: u64) -> u64 {
        (key + 1) | u64::from(self.gen) << GEN_SHIFT
    }

    /// Step 3 of §6.3: the operand predicted by `p` accessed `a`.
    #[inline(always)]
    pub(crate) fn update(&mut self, p: Prediction, a: u64, prev: Option<u64>) {
        let tag = self.tag(p.key);
        let e = &mut self.addr[p.slot];
        if !p.hit {
            *e = match prev {
                Some(pa) => AddrEntry {
                    tag: tag | MODE_OFFSET,
                    last: a,
                    stride: 0,
                    offset: a.wrapping_sub(pa),
                },
                None => AddrEntry {
                    tag,
                    last: a,
                    stride: 0,
                    offset: 0,
                },
            };
        } else {
            let stride_ok = e.last.wrapping_add(e.stride) == a;
            let offset_ok = matches!(prev, Some(pa) if pa.wrapping_add(e.offset) == a);
            if e.tag & MODE_OFFSET == 0 {
                if !stride_ok && offset_ok {
                    e.tag |= MODE_OFFSET;
                }
            } else if !offset_ok && stride_ok {
                e.tag &= !MODE_OFFSET;
            }
            e.stride = a.wrapping_sub(e.last);
            e.last = a;
            if let Some(pa) = prev {
                e.offset = a.wrapping_sub(pa);
            }
        }
        self.last_any = a;
    }
}

#[cfg(test)]
mod tests;
