//! Which memory segment an address lies in, and the GPU local-memory layout
//! of stack addresses.

use crate::stats::Segment;

/// The address ranges that decide segments.
#[derive(Clone, Debug, Default)]
pub struct Segments {
    /// Module images `[lo, hi)`, sorted.
    modules: Vec<(u64, u64)>,
    /// Thread stacks `[lo, hi)`.
    stacks: Vec<(u64, u64)>,
}

impl Segments {
    /// Segments from module images and thread stacks (empty ranges are ignored).
    pub fn new(
        modules: impl IntoIterator<Item = (u64, u64)>,
        stacks: impl IntoIterator<Item = (u64, u64)>,
    ) -> Segments {
        let mut modules: Vec<_> = modules.into_iter().filter(|(lo, hi)| lo < hi).collect();
        modules.sort_unstable();
        let stacks = stacks.into_iter().filter(|(lo, hi)| lo < hi).collect();
        Segments { modules, stacks }
    }

    /// The segment of `addr` for a lane whose thread's stack is `own_stack`.
    ///
    /// ```
    /// use tf_analyzer::segments::Segments;
    /// use tf_analyzer::stats::Segment;
    /// let s = Segments::new([(0x400000, 0x500000)], [(0x7000, 0x8000), (0x9000, 0xa000)]);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x7ff0), Segment::Stack);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x9ff0), Segment::Other);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x401000), Segment::Global);
    /// assert_eq!(s.classify((0x7000, 0x8000), 0x1_0000_0000), Segment::Heap);
    /// ```
    #[inline]
    pub fn classify(&self, own_stack: (u64, u64), addr: u64) -> Segment {
        if addr >= own_stack.0 && addr < own_stack.1 {
            return Segment::Stack;
        }
        let i = self.modules.partition_point(|&(lo, _)| lo <= addr);
        if i > 0 && addr < self.modules[i - 1].1 {
            return Segment::Global;
        }
        if self.stacks.iter().any(|&(lo, hi)| addr >= lo && addr < hi) {
            return Segment::Other;
        }
        Segment::Heap
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
    const BASE: i64 = 1 << 60;
    let d = addr.wrapping_sub(sp) as i64;
    let first = d.div_euclid(4);
    let last = (d + i64::from(size.max(1)) - 1).div_euclid(4);
    for k in first..=last {
        let word = BASE.wrapping_add(4 * (k * width as i64 + i64::from(lane)));
        out.push((word as u64) / 32);
    }
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
    let first = addr / 32;
    let last = addr.saturating_add(u64::from(size.max(1)) - 1) / 32;
    out.extend(first..=last);
}
