//! An instruction line in the form `tf export` writes it (fields one space
//! apart, lowercase hex, plain decimals, no line number or immediate), read
//! in one pass over its bytes. The checks' general reading of a line
//! ([`super::insn`]) splits it into tokens and parses each with its own
//! error; on the lines of an export that was most of the validator's time.
//! A line in this form reads here to the same fields as there (tested on
//! random lines and damaged copies of them), and then goes through the same
//! checks; any other line, and any line with a field out of this form,
//! goes the general way.

use super::insn::{strided, LineContext};
use arrayvec::ArrayVec;

/// The fields of a line in the exporter's form.
pub(super) struct Canonical<'a> {
    pub pc: u32,
    /// The PC as the line writes it.
    pub pc_t: &'a str,
    pub mask: u32,
    /// The destination register, if any.
    pub dst: Option<u32>,
    /// The highest register named.
    pub max_reg: Option<u32>,
    pub opcode: &'a str,
    /// The memory width (0: not a memory line).
    pub width: u32,
}

/// The fields of `text` (a trimmed line) when it is in the exporter's form
/// under `ctx`, its active lanes' addresses in `addrs` (emptied first);
/// `None` otherwise (also for a mode-1 line whose lanes are not one run,
/// which the general reading names). The addresses are the caller's: moved
/// around with the fields, they were copied three times a line.
pub(super) fn read<'a>(
    text: &'a str,
    ctx: &LineContext,
    addrs: &mut ArrayVec<u64, 32>,
) -> Option<Canonical<'a>> {
    if ctx.lineinfo || ctx.immediate {
        return None;
    }
    let mut c = Fields { text, at: 0 };
    let pc = u32::try_from(c.hex(8)?).ok()?;
    let pc_t = text[..c.at].trim_end();
    let mask = u32::try_from(c.hex(8)?).ok()?;
    let mut max_reg = None;
    let dst = match c.decimal(1)? {
        0 => None,
        1 => Some(c.register(&mut max_reg)?),
        _ => return None,
    };
    let opcode = c.token()?;
    let sources = c.decimal(1)?;
    if sources > 4 {
        return None;
    }
    for _ in 0..sources {
        c.register(&mut max_reg)?;
    }
    let width = u32::try_from(c.decimal(9)?).ok()?;
    addrs.clear();
    if width > 0 {
        let k = mask.count_ones() as usize;
        match c.decimal(1)? {
            0 => {
                for _ in 0..k {
                    addrs.push(c.address()?);
                }
            }
            1 => {
                let run = mask.checked_shr(mask.trailing_zeros()).unwrap_or(0);
                if k < 1 || run & run.wrapping_add(1) != 0 {
                    return None;
                }
                let base = c.address()?;
                let stride = i32::try_from(c.signed()?).ok()?;
                strided(base, stride, k, addrs);
            }
            2 if k > 0 => {
                let mut a = c.address()?;
                addrs.push(a);
                for _ in 1..k {
                    a = a.wrapping_add(c.signed()? as u64);
                    addrs.push(a);
                }
            }
            _ => return None,
        }
    }
    (c.at == text.len()).then_some(Canonical {
        pc,
        pc_t,
        mask,
        dst,
        max_reg,
        opcode,
        width,
    })
}

/// The fields of a line, one space apart, each read in one pass over its
/// bytes.
struct Fields<'a> {
    text: &'a str,
    /// Where the next field starts.
    at: usize,
}

impl<'a> Fields<'a> {
    /// Ends the field that ran to `end`, not empty: at the line's end, or
    /// at a single space before the next field.
    #[inline]
    fn end(&mut self, end: usize) -> Option<()> {
        let b = self.text.as_bytes();
        if end == self.at {
            return None;
        }
        self.at = match b.get(end) {
            None => end,
            Some(b' ') if end + 1 < b.len() => end + 1,
            Some(_) => return None,
        };
        Some(())
    }

    /// A field of 1 to `most` lowercase hex digits.
    #[inline]
    fn hex(&mut self, most: usize) -> Option<u64> {
        let b = self.text.as_bytes();
        let mut v = 0u64;
        let mut i = self.at;
        while let Some(&c) = b.get(i) {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                _ => break,
            };
            v = v << 4 | u64::from(d);
            i += 1;
        }
        if i - self.at > most {
            return None;
        }
        self.end(i)?;
        Some(v)
    }

    /// A field of 1 to `most` (at most 19) decimal digits.
    #[inline]
    fn decimal(&mut self, most: usize) -> Option<u64> {
        let b = self.text.as_bytes();
        let mut v = 0u64;
        let mut i = self.at;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            i += 1;
        }
        if i - self.at > most.min(19) {
            return None;
        }
        self.end(i)?;
        Some(v)
    }

    /// A decimal of 1 to 19 digits, with a `-` sign or none, in `i64`.
    #[inline]
    fn signed(&mut self) -> Option<i64> {
        if self.text.as_bytes().get(self.at) == Some(&b'-') {
            self.at += 1;
            // (down to -2^63, whose magnitude is not an i64)
            let m = self.decimal(19).filter(|&m| m <= 1 << 63)?;
            return Some((m as i64).wrapping_neg());
        }
        i64::try_from(self.decimal(19)?).ok()
    }

    /// An address: `0x` and 1 to 16 lowercase hex digits, or the digits
    /// alone.
    #[inline]
    fn address(&mut self) -> Option<u64> {
        if self.text.as_bytes()[self.at..].starts_with(b"0x") {
            self.at += 2;
        }
        self.hex(16)
    }

    /// A register field, `R` and its number, kept as the highest so far
    /// in `max`.
    #[inline]
    fn register(&mut self, max: &mut Option<u32>) -> Option<u32> {
        if self.text.as_bytes().get(self.at) != Some(&b'R') {
            return None;
        }
        self.at += 1;
        let x = u32::try_from(self.decimal(9)?).ok()?;
        *max = Some(max.map_or(x, |m: u32| m.max(x)));
        Some(x)
    }

    /// A field of printable ASCII characters.
    #[inline]
    fn token(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        while let Some(b'!'..=b'~') = b.get(i) {
            i += 1;
        }
        self.end(i)?;
        Some(&self.text[start..i])
    }
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
