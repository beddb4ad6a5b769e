//! Primitive encodings (§3): LEB128 varints, zigzag, length-prefixed bytes.

use crate::error::DecodeError;

/// Appends `v` as an unsigned LEB128 varint in its shortest form.
///
/// ```
/// let mut out = Vec::new();
/// tf_trace::varint::put(&mut out, 300);
/// assert_eq!(out, [0xac, 0x02]);
/// ```
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the length of `bytes` as a varint, then the bytes.
///
/// ```
/// let mut out = Vec::new();
/// tf_trace::varint::put_bytes(&mut out, b"ab");
/// assert_eq!(out, [2, b'a', b'b']);
/// ```
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `zigzag(v) = (v << 1) ^ (v >> 63)`: small magnitudes of either sign become small.
///
/// ```
/// use tf_trace::varint::{zigzag, unzigzag};
/// assert_eq!([zigzag(0), zigzag(-1), zigzag(1), zigzag(-2)], [0, 1, 2, 3]);
/// assert_eq!(unzigzag(zigzag(i64::MIN)), i64::MIN);
/// ```
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// A read position in a payload.
///
/// ```
/// use tf_trace::varint::Cursor;
/// let mut c = Cursor::new(&[0xac, 0x02, 1, b'x']);
/// assert_eq!(c.varint().unwrap(), 300);
/// assert_eq!(c.bytes().unwrap(), b"x");
/// assert!(c.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// A cursor at `pos` in `buf`.
    pub fn at(buf: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor { buf, pos }
    }

    /// The current offset.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads one varint (§3): at most 10 bytes, the tenth at most 1.
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        if let Some(&w) = self
            .buf
            .get(self.pos..self.pos.wrapping_add(10))
            .and_then(|s| <&[u8; 10]>::try_from(s).ok())
        {
            // Ten bytes at hand: no end-of-buffer checks.
            let mut v = 0u64;
            for (i, &b) in w.iter().enumerate() {
                v |= ((b & 0x7f) as u64) << (7 * i);
                if b < 0x80 {
                    if i == 9 && b > 1 {
                        break;
                    }
                    self.pos += i + 1;
                    return Ok(v);
                }
            }
            return Err(DecodeError::new(self.pos, "varint longer than 64 bits"));
        }
        self.varint_slow()
    }

    /// Reads one varint, as [`varint`](Self::varint) does, and says whether
    /// it is not zero: cheaper where the value itself is not wanted (a
    /// one-byte varint, the common case, is zero when its byte is).
    #[inline(always)]
    pub fn varint_nonzero(&mut self) -> Result<bool, DecodeError> {
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b != 0);
            }
        }
        Ok(self.varint()? != 0)
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(DecodeError::new(
                    start,
                    "record cut short by the end of the chunk",
                ));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(DecodeError::new(start, "varint longer than 64 bits"));
            }
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        unreachable!("the tenth byte ends the varint or fails")
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(DecodeError::new(
                self.pos,
                "record cut short by the end of the chunk",
            )),
        }
    }

    /// Reads `n` raw bytes.
    #[inline]
    pub fn raw(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        let left = (self.buf.len() - self.pos.min(self.buf.len())) as u64;
        if n > left {
            return Err(DecodeError::new(
                self.pos,
                format!("{n} bytes announced, {left} left in the chunk"),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    /// Reads a varint length and that many bytes.
    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        let n = self.varint()?;
        self.raw(n).map_err(|e| DecodeError { pos: start, ..e })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_forms() {
        for (v, enc) in [
            (0u64, vec![0u8]),
            (127, vec![0x7f]),
            (128, vec![0x80, 1]),
            (16383, vec![0xff, 0x7f]),
            (16384, vec![0x80, 0x80, 1]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1],
            ),
        ] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out, enc, "{v}");
            let mut c = Cursor::new(&out);
            assert_eq!(c.varint().unwrap(), v);
            assert!(c.is_empty());
        }
    }

    #[test]
    fn overlong_and_cut() {
        let ten_two = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 2];
        assert!(Cursor::new(&ten_two).varint().is_err());
        let eleven = [0xff; 11];
        assert!(Cursor::new(&eleven).varint().is_err());
        let cut = [0x80, 0x80];
        let e = Cursor::new(&cut).varint().unwrap_err();
        assert_eq!(e.pos, 0);
        // A non-shortest form still decodes: the checksum guards the bytes.
        assert_eq!(Cursor::new(&[0x80, 0]).varint().unwrap(), 0);
    }

    #[test]
    fn zigzag_values() {
        for v in [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        assert_eq!(zigzag(i64::MAX), u64::MAX - 1);
    }

    #[test]
    fn bytes_past_end() {
        let e = Cursor::new(&[5, 1, 2]).bytes().unwrap_err();
        assert!(e.what.contains("5 bytes announced"), "{e}");
    }
}
