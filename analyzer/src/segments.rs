//! Which memory segment an address lies in, and the GPU local-memory layout
//! of stack addresses.
//!
//! The rule, for a lane of thread T:
//! - **stack**: T's range of its `thread_start` event: its stack and, for
//!   threads that `pthread_create` started, the static TLS block and thread
//!   descriptor glibc keeps above it (memory private to T; FORMAT.md §6.4);
//! - **other**: any other thread's such range;
//! - **global**: a module's image `[base, base + size)` of the block table:
//!   every `PT_LOAD` segment up to `p_vaddr + p_memsz`, so .data and all of
//!   .bss (FORMAT.md §5);
//! - **heap**: everything else: `malloc` blocks, also those glibc serves with
//!   `mmap`, other anonymous mappings, and the first thread's TLS block,
//!   which the dynamic loader allocates apart from its stack.

use crate::stats::Segment;

/// The address ranges that decide segments.
#[derive(Clone, Debug, Default)]
pub struct Segments {
    /// Module images and thread stacks `[lo, hi)`, sorted, not overlapping
    /// (overlapping stacks, as reused ones are, merged into one).
    ranges: Vec<(u64, u64, Segment)>,
}

/// The last range [`Segments::classify`] looked up: `[lo, hi)` and what lies
/// there for lanes whose stack it is not. Consecutive requests mostly fall in
/// the same range, which spares the search.
#[derive(Clone, Copy, Debug)]
pub struct SegmentCache(u64, u64, Segment);

impl Default for SegmentCache {
    fn default() -> Self {
        SegmentCache(1, 0, Segment::Heap)
    }
}

impl Segments {
    /// Segments from module images (`[base, base + size)` of the block
    /// table's modules) and thread stacks (empty ranges are ignored).
    pub fn new(
        modules: impl IntoIterator<Item = (u64, u64)>,
        stacks: impl IntoIterator<Item = (u64, u64)>,
    ) -> Segments {
        let mut stacks: Vec<(u64, u64)> = stacks.into_iter().filter(|(lo, hi)| lo < hi).collect();
        stacks.sort_unstable();
        let mut merged: Vec<(u64, u64, Segment)> = Vec::new();
        for (lo, hi) in stacks {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi, Segment::Other)),
            }
        }
        merged.extend(
            modules
                .into_iter()
                .filter(|(lo, hi)| lo < hi)
                .map(|(lo, hi)| (lo, hi, Segment::Global)),
        );
        merged.sort_unstable_by_key(|r| r.0);
        Segments { ranges: merged }
    }

    /// The segment of `addr` for a lane whose thread's stack is `own_stack`.
    ///
    /// ```
    /// use tf_analyzer::segments::{SegmentCache, Segments};
    /// use tf_analyzer::stats::Segment;
    /// let s = Segments::new([(0x400000, 0x500000)], [(0x7000, 0x8000), (0x9000, 0xa000)]);
    /// let mut c = SegmentCache::default();
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x7ff0, &mut c), Segment::Stack);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x9ff0, &mut c), Segment::Other);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x401000, &mut c), Segment::Global);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x1_0000_0000, &mut c), Segment::Heap);
    /// assert_eq!(s.classify((0x9000, 0xa000), 0x9ff0, &mut c), Segment::Stack);
    /// ```
    #[inline]
    pub fn classify(&self, own_stack: (u64, u64), addr: u64, cache: &mut SegmentCache) -> Segment {
        if addr >= own_stack.0 && addr < own_stack.1 {
            return Segment::Stack;
        }
        if addr >= cache.0 && addr < cache.1 {
            return cache.2;
        }
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        *cache = match i.checked_sub(1).map(|k| self.ranges[k]) {
            Some((lo, hi, seg)) if addr < hi => SegmentCache(lo, hi, seg),
            before => SegmentCache(
                before.map_or(0, |r| r.1),
                self.ranges.get(i).map_or(u64::MAX, |r| r.0),
                Segment::Heap,
            ),
        };
        cache.2
    }
}

/// Where GPU local memory would put a stack access: word `k` (4 bytes) of
/// lane `lane`'s frame-relative stack at `base + 4·(k·W + lane)`, with `k`
/// counted from the lane's stack pointer at its unit's start. Returns the
/// sectors (32-byte) the access `[addr, addr + size)` touches, appended to `out`.
///
/// ```
/// use tf_analyzer::segments::interleaved_sectors;
/// // The same 4-byte slot in 32 lanes: 128 contiguous bytes, 4 sectors.
/// let mut s = Vec::new();
/// for lane in 0..32 {
///     interleaved_sectors(0x7000 + lane * 0x10000 - 16, 4, 0x7000 + lane * 0x10000, lane as u32, 32, &mut s);
/// }
/// s.sort(); s.dedup();
/// assert_eq!(s.len(), 4);
/// ```
#[inline]
pub fn interleaved_sectors(
    addr: u64,
    size: u16,
    sp: u64,
    lane: u32,
    width: usize,
    out: &mut Vec<u64>,
) {
    // Pushed one by one: `extend` over this iterator is not inlined here
    // and costs the many-lane coalescing a seventh of its time.
    for s in interleaved_words(addr, size, sp, lane, width) {
        out.push(s);
    }
}

/// How many distinct sectors one lane's access touches in the layout of
/// [`interleaved_sectors`] (what sorting and counting its sectors gives).
///
/// ```
/// use tf_analyzer::segments::interleaved_sector_count;
/// // 8 bytes are two words: W·4 bytes apart, in one sector only when W < 8.
/// assert_eq!(interleaved_sector_count(0x6ff0, 8, 0x7000, 3, 32), 2);
/// assert_eq!(interleaved_sector_count(0x6ff0, 8, 0x7000, 0, 4), 1);
/// ```
#[inline]
pub fn interleaved_sector_count(addr: u64, size: u16, sp: u64, lane: u32, width: usize) -> u64 {
    let (first, last) = word_span(addr, size, sp);
    if width >= 8 {
        // The lane's words lie 4·W ≥ 32 bytes apart: one sector each.
        return (last - first + 1) as u64;
    }
    // The lane's words go up 4·W < 32 bytes apart: they touch every sector
    // from the first word's to the last's.
    let sector = |k: i64| in_lane(lane0_word(k, width), lane);
    sector(last) - sector(first) + 1
}

/// How many distinct sectors the same access by `lanes` (in increasing
/// order, each below `width`), all from stack pointer `sp`, touches in the
/// layout of [`interleaved_sectors`] (what gathering every lane's sectors,
/// sorting and counting them gives).
///
/// ```
/// use tf_analyzer::segments::interleaved_sector_count_of_lanes;
/// // The same 4-byte slot in 32 lanes: 128 contiguous bytes, 4 sectors;
/// // 8 bytes are two words, each 128 bytes of the 32 lanes.
/// assert_eq!(interleaved_sector_count_of_lanes(0x6ff0, 4, 0x7000, 0..32, 32), 4);
/// assert_eq!(interleaved_sector_count_of_lanes(0x6ff0, 8, 0x7000, 0..32, 32), 8);
/// assert_eq!(interleaved_sector_count_of_lanes(0x6ff0, 8, 0x7000, [0, 9].into_iter(), 32), 4);
/// ```
#[inline]
pub fn interleaved_sector_count_of_lanes(
    addr: u64,
    size: u16,
    sp: u64,
    lanes: impl Iterator<Item = u32> + Clone,
    width: usize,
) -> u64 {
    // Word k of lane l lies at 4·(k·W + l): word by word, lane by lane,
    // the sectors only go up, so equal ones are adjacent.
    let mut last = None;
    let mut n = 0;
    for word in interleaved_lane0_words(addr, size, sp, width) {
        for lane in lanes.clone() {
            let s = in_lane(word, lane);
            n += u64::from(last != Some(s));
            last = Some(s);
        }
    }
    n
}

/// The sector of each word of `[addr, addr + size)` in the layout of
/// [`interleaved_sectors`], in increasing order.
#[inline]
fn interleaved_words(
    addr: u64,
    size: u16,
    sp: u64,
    lane: u32,
    width: usize,
) -> impl Iterator<Item = u64> {
    interleaved_lane0_words(addr, size, sp, width).map(move |word| in_lane(word, lane))
}

/// Where lane 0's copy of each word of `[addr, addr + size)` lies in the
/// layout of [`interleaved_sectors`], in increasing order.
#[inline]
fn interleaved_lane0_words(
    addr: u64,
    size: u16,
    sp: u64,
    width: usize,
) -> impl Iterator<Item = i64> {
    let (first, last) = word_span(addr, size, sp);
    (first..=last).map(move |k| lane0_word(k, width))
}

/// Where lane 0's copy of word `k` (counted from the stack pointer) lies in
/// the layout of [`interleaved_sectors`].
#[inline]
fn lane0_word(k: i64, width: usize) -> i64 {
    const BASE: i64 = 1 << 60;
    BASE.wrapping_add(4 * k * width as i64)
}

/// The first and last 4-byte words, counted from `sp`, of `[addr, addr + size)`.
#[inline]
fn word_span(addr: u64, size: u16, sp: u64) -> (i64, i64) {
    let d = addr.wrapping_sub(sp) as i64;
    let first = d.div_euclid(4);
    let last = (d + i64::from(size.max(1)) - 1).div_euclid(4);
    (first, last)
}

/// The sector of lane `lane`'s copy of the word whose lane-0 copy is at `word`.
#[inline]
fn in_lane(word: i64, lane: u32) -> u64 {
    (word.wrapping_add(4 * i64::from(lane)) as u64) / 32
}

/// The sectors the access `[addr, addr + size)` touches, appended to `out`.
///
/// ```
/// let mut s = Vec::new();
/// tf_analyzer::segments::sectors(30, 4, &mut s); // straddles a boundary
/// assert_eq!(s, [0, 1]);
/// ```
#[inline]
pub fn sectors(addr: u64, size: u16, out: &mut Vec<u64>) {
    out.extend(sector_range(addr, size));
}

/// The sectors the access `[addr, addr + size)` touches, first to last.
///
/// ```
/// assert_eq!(tf_analyzer::segments::sector_range(30, 4).count(), 2);
/// ```
#[inline]
pub fn sector_range(addr: u64, size: u16) -> std::ops::RangeInclusive<u64> {
    addr / 32..=addr.saturating_add(u64::from(size.max(1)) - 1) / 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lane_count_is_its_distinct_sectors() {
        let mut next = crate::testutil::numbers(0x2545_f491);
        for _ in 0..20_000 {
            let width = [1, 2, 4, 7, 8, 12, 16, 32, 64][next(9) as usize];
            let lane = next(width as u64) as u32;
            let sp = 0x7fff_0000 + next(64);
            let addr = sp - 256 + next(512);
            let size = [1, 2, 3, 4, 8, 16, 32, 64][next(8) as usize];
            let mut all = Vec::new();
            interleaved_sectors(addr, size, sp, lane, width, &mut all);
            all.sort_unstable();
            all.dedup();
            assert_eq!(
                interleaved_sector_count(addr, size, sp, lane, width),
                all.len() as u64,
                "{addr:#x}+{size} sp {sp:#x} lane {lane} W={width}"
            );
        }
    }
}
