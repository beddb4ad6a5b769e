//! Instruction lines of a `kernel-N.traceg` file (tracer line format 4).
//!
//! `PC MASK DCOUNT [Rd] OPCODE SCOUNT [Rs…] MEM`, where `MEM` is `0` for a
//! non-memory instruction, else `WIDTH MODE ADDRESSES`: mode 1 is a base and
//! a stride (active lanes one contiguous run with a constant stride), mode 2
//! a base and one signed delta per further active lane.
//!
//! ```
//! use tf_accelsim::line::write_line;
//! let mut out = Vec::new();
//! write_line(&mut out, 0x20, 0xf, Some(2), &[4], "LDG.E.64", Some((8, &[0x1000, 0x1008, 0x1010, 0x1018])));
//! write_line(&mut out, 0x30, 0x5, None, &[4, 2], "STG.E", Some((4, &[0x2000, 0x1000])));
//! assert_eq!(String::from_utf8(out).unwrap(),
//!     "0020 0000000f 1 R2 LDG.E.64 1 R4 8 1 0x1000 8\n0030 00000005 0 STG.E 2 R4 R2 4 2 0x2000 -4096\n");
//! ```

use crate::translate::MemKind;
use std::borrow::Cow;

/// The opcode of a memory operation: `LDG`/`STG` (global) or `LDL`/`STL`
/// (local, the unit's own stack), with the width as its modifier.
///
/// ```
/// use tf_accelsim::{line::mem_opcode, translate::MemKind};
/// assert_eq!(mem_opcode(MemKind::Load, false, 8), "LDG.E.64");
/// assert_eq!(mem_opcode(MemKind::Store, true, 1), "STL.U8");
/// let cas = MemKind::Atomic("ATOMG.E.CAS.STRONG.GPU");
/// assert_eq!(mem_opcode(cas, false, 8), "ATOMG.E.CAS.64.STRONG.GPU");
/// assert_eq!(mem_opcode(cas, false, 4), "ATOMG.E.CAS.STRONG.GPU");
/// ```
pub fn mem_opcode(kind: MemKind, local: bool, width: u8) -> Cow<'static, str> {
    const LDG: [&str; 5] = ["LDG.E.U8", "LDG.E.U16", "LDG.E", "LDG.E.64", "LDG.E.128"];
    const STG: [&str; 5] = ["STG.E.U8", "STG.E.U16", "STG.E", "STG.E.64", "STG.E.128"];
    const LDL: [&str; 5] = ["LDL.U8", "LDL.U16", "LDL", "LDL.64", "LDL.128"];
    const STL: [&str; 5] = ["STL.U8", "STL.U16", "STL", "STL.64", "STL.128"];
    let k = (width.max(1).trailing_zeros() as usize).min(4);
    Cow::Borrowed(match (kind, local) {
        (MemKind::Atomic(op), false) => {
            // ATOMG.E.ADD.STRONG.GPU → ATOMG.E.ADD.64.STRONG.GPU for 8 bytes.
            const W: [&str; 5] = [".U8", ".U16", "", ".64", ".128"];
            return match op.match_indices('.').nth(2) {
                Some((at, _)) if k != 2 => {
                    Cow::Owned(format!("{}{}{}", &op[..at], W[k], &op[at..]))
                }
                _ => Cow::Borrowed(op),
            };
        }
        (MemKind::Load, false) => LDG[k],
        (MemKind::Store | MemKind::AtomicWrite, false) => STG[k],
        (MemKind::Load | MemKind::Atomic(_), true) => LDL[k],
        (MemKind::Store | MemKind::AtomicWrite, true) => STL[k],
    })
}

/// Appends `v` in lowercase hexadecimal, with leading zeros up to `digits`
/// digits (at most 16). A line has a few numbers and an export tens of
/// millions of lines: written by hand (and decimals with `itoa`), they cost
/// a third of what `write!` took.
fn put_hex(out: &mut Vec<u8>, v: u64, digits: u32) {
    let n = (64 - v.leading_zeros()).div_ceil(4).max(digits).max(1);
    for i in (0..n).rev() {
        out.push(b"0123456789abcdef"[(v >> (4 * i) & 0xf) as usize]);
    }
}

/// Appends the decimal of `v`.
fn put_dec(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes one instruction line; `mem` is the width and the addresses of the
/// active lanes, in lane order (as many as `mask` has bits).
pub fn write_line(
    out: &mut Vec<u8>,
    pc: u32,
    mask: u32,
    dst: Option<u8>,
    srcs: &[u8],
    opcode: &str,
    mem: Option<(u8, &[u64])>,
) {
    put_hex(out, u64::from(pc), 4);
    out.push(b' ');
    put_hex(out, u64::from(mask), 8);
    match dst {
        Some(d) => {
            out.extend_from_slice(b" 1 R");
            put_dec(out, d);
            out.push(b' ');
        }
        None => out.extend_from_slice(b" 0 "),
    }
    out.extend_from_slice(opcode.as_bytes());
    out.push(b' ');
    put_dec(out, srcs.len());
    for &s in srcs {
        out.extend_from_slice(b" R");
        put_dec(out, s);
    }
    match mem {
        None => out.extend_from_slice(b" 0\n"),
        Some((width, addrs)) => {
            out.push(b' ');
            put_dec(out, width);
            out.push(b' ');
            write_addresses(out, mask, addrs);
            out.push(b'\n');
        }
    }
}

/// The compression mode and payload for the addresses of `mask`'s lanes.
fn write_addresses(out: &mut Vec<u8>, mask: u32, addrs: &[u64]) {
    debug_assert_eq!(addrs.len(), mask.count_ones() as usize);
    let Some((&base, rest)) = addrs.split_first() else {
        out.extend_from_slice(b"0");
        return;
    };
    let contiguous = (mask >> mask.trailing_zeros()).count_ones()
        == 32 - (mask >> mask.trailing_zeros()).leading_zeros();
    let stride = addrs
        .get(1)
        .map(|&a| a.wrapping_sub(base) as i64)
        .filter(|&s| i32::try_from(s).is_ok());
    if let (true, Some(s)) = (contiguous, stride) {
        if addrs
            .windows(2)
            .all(|w| w[1].wrapping_sub(w[0]) as i64 == s)
        {
            out.extend_from_slice(b"1 0x");
            put_hex(out, base, 1);
            out.push(b' ');
            put_dec(out, s);
            return;
        }
    }
    out.extend_from_slice(b"2 0x");
    put_hex(out, base, 1);
    let mut prev = base;
    for &a in rest {
        out.push(b' ');
        put_dec(out, a.wrapping_sub(prev) as i64);
        prev = a;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mask: u32, addrs: &[u64]) -> String {
        let mut out = Vec::new();
        write_line(&mut out, 0, mask, None, &[], "LDG.E", Some((4, addrs)));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn numbers_read_as_write_writes_them() {
        let mut next = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..2000 {
            next = next.rotate_left(7).wrapping_mul(0x2545_f491_4f6c_dd1d);
            let v = next >> (i % 64);
            for digits in [1, 4, 8] {
                let mut out = Vec::new();
                put_hex(&mut out, v, digits);
                let want = format!("{v:0w$x}", w = digits as usize);
                assert_eq!(String::from_utf8(out).unwrap(), want);
            }
            let mut out = Vec::new();
            put_dec(&mut out, v as i64);
            assert_eq!(String::from_utf8(out).unwrap(), (v as i64).to_string());
        }
        let mut out = Vec::new();
        put_hex(&mut out, 0, 1);
        put_hex(&mut out, u64::MAX, 4);
        assert_eq!(out, b"0ffffffffffffffff");
    }

    #[test]
    fn modes() {
        // One lane: mode 2 without deltas.
        assert!(line(0x10, &[0x40]).ends_with("4 2 0x40\n"));
        // A hole in the mask: mode 2 even with a constant stride.
        assert!(line(0b101, &[0x40, 0x48]).ends_with("4 2 0x40 8\n"));
        // Contiguous, constant stride (negative too).
        assert!(line(0b1110, &[0x48, 0x44, 0x40]).ends_with("4 1 0x48 -4\n"));
        // A stride past 32 bits: deltas.
        assert!(line(0b11, &[0, 1 << 33]).ends_with(&format!("4 2 0x0 {}\n", 1u64 << 33)));
        // Descending below the base wraps into a negative delta.
        assert!(line(0b111, &[0x100, 0x80, 0x90]).ends_with("4 2 0x100 -128 16\n"));
    }
}
