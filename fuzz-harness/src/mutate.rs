//! Mutations of packed traces, with checksums recomputed afterwards.

/// A small, fixed-seed pseudo-random generator (SplitMix64), so that the
/// mutation test makes the same inputs on every machine.
///
/// ```
/// let mut a = tf_fuzz_harness::Rng::new(7);
/// let mut b = tf_fuzz_harness::Rng::new(7);
/// assert_eq!(a.next(), b.next());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Where each file's bytes lie in a packed trace: (start, length).
fn spans(packed: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < packed.len() {
        let n = packed[pos] as usize;
        let len_at = pos + 1 + n;
        let Some(len) = packed.get(len_at..len_at + 4) else {
            break;
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let start = len_at + 4;
        let len = len.min(packed.len() - start);
        out.push((start, len));
        pos = start + len;
    }
    out
}

/// Recomputes the header checksum and the checksum of every chunk that the
/// framing still finds, in each stream file of a packed trace.
///
/// ```
/// use tf_fuzz_harness::{fix_checksums, pack_files};
/// let mut header = b"TFSTREAM".to_vec();
/// header.resize(32, 0);
/// let mut packed = pack_files(&[("blocks.tfc", header)]);
/// fix_checksums(&mut packed);
/// let n = packed.len();
/// assert_eq!(&packed[n - 4..], &crc32c::crc32c(&packed[n - 32..n - 4]).to_le_bytes());
/// ```
pub fn fix_checksums(packed: &mut [u8]) {
    for (start, len) in spans(packed) {
        let f = &mut packed[start..start + len];
        if f.len() < 32 || &f[..8] != b"TFSTREAM" {
            continue;
        }
        let crc = crc32c::crc32c(&f[..28]);
        f[28..32].copy_from_slice(&crc.to_le_bytes());
        let mut pos = 32;
        while pos + 16 <= f.len() && &f[pos..pos + 4] == b"TFCK" {
            let n = u32::from_le_bytes(f[pos + 4..pos + 8].try_into().expect("4 bytes")) as usize;
            if n == 0 || pos + 16 + n > f.len() {
                break;
            }
            let crc = crc32c::crc32c_append(
                crc32c::crc32c(&f[pos + 4..pos + 12]),
                &f[pos + 16..pos + 16 + n],
            );
            f[pos + 12..pos + 16].copy_from_slice(&crc.to_le_bytes());
            pos += 16 + n;
        }
    }
}

/// Values that often sit on a boundary.
const INTERESTING: [u8; 8] = [0, 1, 0x7f, 0x80, 0xfe, 0xff, 0x40, 0x3f];

/// A mutant of a packed trace: one to four changes inside one of its files
/// (bit flips, bytes set, inserted, deleted or repeated, varints of every
/// length written), the file lengths kept consistent, then the checksums
/// recomputed.
pub fn mutate(packed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let spans = spans(packed);
    if spans.is_empty() {
        return packed.to_vec();
    }
    let (start, len) = spans[rng.below(spans.len())];
    let mut file = packed[start..start + len].to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(file.len() + 1);
        match rng.below(7) {
            0 if at < file.len() => file[at] ^= 1 << rng.below(8),
            1 if at < file.len() => file[at] = INTERESTING[rng.below(INTERESTING.len())],
            2 => {
                let n = 1 + rng.below(9);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                file.splice(at..at, bytes);
            }
            3 if at < file.len() => {
                let n = (1 + rng.below(16)).min(file.len() - at);
                file.drain(at..at + n);
            }
            4 if at < file.len() => {
                let n = (1 + rng.below(64)).min(file.len() - at);
                let piece = file[at..at + n].to_vec();
                let to = rng.below(file.len() + 1);
                file.splice(to..to, piece);
            }
            5 => {
                // A varint of 1..=10 bytes with a large value.
                let bits = 1 + rng.below(64);
                let mut v = rng.next() >> (64 - bits);
                let mut bytes = Vec::new();
                loop {
                    let b = (v & 0x7f) as u8;
                    v >>= 7;
                    if v == 0 {
                        bytes.push(b);
                        break;
                    }
                    bytes.push(b | 0x80);
                }
                let end = (at + bytes.len()).min(file.len());
                file.splice(at..end, bytes);
            }
            _ => {
                if !file.is_empty() {
                    file.truncate(rng.below(file.len()));
                }
            }
        }
    }
    let mut out = packed[..start - 4].to_vec();
    out.extend_from_slice(&(file.len() as u32).to_le_bytes());
    out.extend_from_slice(&file);
    out.extend_from_slice(&packed[start + len..]);
    fix_checksums(&mut out);
    out
}
