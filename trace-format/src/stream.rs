//! Chunked streams (§4): the 32-byte file header and CRC-32C-framed chunks.

use crate::error::{Error, Result};

mod chunk_writer;
mod reader;
pub(crate) use chunk_writer::ChunkWriter;
pub use reader::{open_regular, Chunk, ChunkReader, ChunkRef};

/// `TFSTREAM`, the first 8 bytes of every stream file.
pub const STREAM_MAGIC: &[u8; 8] = b"TFSTREAM";
/// `TFCK`, the first 4 bytes of every chunk.
pub const CHUNK_MAGIC: &[u8; 4] = b"TFCK";
/// The format version this crate writes.
pub const VERSION: u32 = 4;
/// The oldest format version this crate reads (version 2 is version 3
/// without `loop_chunk` and `static_loop` events).
pub const OLDEST_VERSION: u32 = 2;
/// Size of the file header.
pub const FILE_HEADER_LEN: usize = 32;
/// Size of a chunk header.
pub const CHUNK_HEADER_LEN: usize = 16;
/// The largest chunk payload (64 MiB).
pub const MAX_CHUNK_LEN: u32 = 64 << 20;

/// CRC-32C (Castagnoli) as the format uses it.
///
/// ```
/// assert_eq!(tf_trace::stream::crc32c(b"123456789"), 0xE306_9283);
/// ```
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Which stream a file holds (header field `kind`).
///
/// ```
/// assert_eq!(tf_trace::StreamKind::Thread as u32, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// `blocks.tfc`: modules, functions and blocks (§5).
    BlockTable = 1,
    /// `thread-<tid>.tfc`: what one thread executed (§6).
    Thread = 2,
}

/// The prediction-table parameters of a thread stream (§4.1).
///
/// ```
/// let p = tf_trace::TableParams::default();
/// assert_eq!((p.addr_table_bits, p.succ_table_bits, p.ret_stack_depth), (14, 12, 64));
/// assert!(p.run_prefix); // the current version's record layout
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableParams {
    /// log2 of the address-table size, 8..=16.
    pub addr_table_bits: u8,
    /// log2 of the successor-table size, 8..=16.
    pub succ_table_bits: u8,
    /// Return-stack capacity, 1..=255.
    pub ret_stack_depth: u8,
    /// Block records carry a run prefix (§6.1): true for a version 4
    /// stream, false for version 2 and 3 (the header's `version` says which).
    pub run_prefix: bool,
}

impl Default for TableParams {
    fn default() -> Self {
        TableParams {
            addr_table_bits: 14,
            succ_table_bits: 12,
            ret_stack_depth: 64,
            run_prefix: true,
        }
    }
}

impl TableParams {
    /// Checks the ranges of §4.1; the error names the field.
    ///
    /// ```
    /// let mut p = tf_trace::TableParams::default();
    /// p.succ_table_bits = 17;
    /// assert_eq!(p.check().unwrap_err(), "succ_table_bits 17 out of range 8..=16");
    /// ```
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("addr_table_bits", self.addr_table_bits),
            ("succ_table_bits", self.succ_table_bits),
        ] {
            let (lo, hi) = (crate::limits::MIN_TABLE_BITS, crate::limits::MAX_TABLE_BITS);
            if !(lo..=hi).contains(&v) {
                return Err(format!("{name} {v} out of range {lo}..={hi}"));
            }
        }
        if self.ret_stack_depth == 0 {
            return Err("ret_stack_depth 0 out of range 1..=255".into());
        }
        Ok(())
    }
}

/// The 32-byte file header of a chunked stream (§4.1).
///
/// ```
/// use tf_trace::{StreamHeader, StreamKind, TableParams};
/// let h = StreamHeader { kind: StreamKind::Thread, tid: 3, params: TableParams::default() };
/// let bytes = h.encode();
/// assert_eq!(&bytes[..8], b"TFSTREAM");
/// assert_eq!(StreamHeader::decode(&bytes, "thread-3.tfc").unwrap(), h);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamHeader {
    /// Block table or thread stream.
    pub kind: StreamKind,
    /// The thread id (0 for the block table).
    pub tid: u64,
    /// Table parameters (all zero for the block table).
    pub params: TableParams,
}

impl StreamHeader {
    /// The header of `blocks.tfc`.
    pub fn block_table() -> StreamHeader {
        StreamHeader {
            kind: StreamKind::BlockTable,
            tid: 0,
            params: TableParams {
                addr_table_bits: 0,
                succ_table_bits: 0,
                ret_stack_depth: 0,
                run_prefix: true,
            },
        }
    }

    /// The header's 32 bytes, `header_crc` included. A thread stream
    /// without [`run_prefix`](TableParams::run_prefix) is version 3.
    pub fn encode(&self) -> [u8; FILE_HEADER_LEN] {
        let mut h = [0u8; FILE_HEADER_LEN];
        h[..8].copy_from_slice(STREAM_MAGIC);
        let version = if self.kind == StreamKind::Thread && !self.params.run_prefix {
            3
        } else {
            VERSION
        };
        h[8..12].copy_from_slice(&version.to_le_bytes());
        h[12..16].copy_from_slice(&(self.kind as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.tid.to_le_bytes());
        h[24] = self.params.addr_table_bits;
        h[25] = self.params.succ_table_bits;
        h[26] = self.params.ret_stack_depth;
        let crc = crc32c(&h[..28]);
        h[28..32].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parses and checks a header; `file` names the file in errors.
    pub fn decode(h: &[u8], file: &str) -> Result<StreamHeader> {
        let bad = |what: String| Err(Error::header(file, what));
        if h.len() < FILE_HEADER_LEN {
            return bad(format!(
                "file is {} bytes, shorter than the 32-byte header",
                h.len()
            ));
        }
        if &h[..8] != STREAM_MAGIC {
            return bad("magic is not TFSTREAM: not a tf stream".into());
        }
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
        let version = u32_at(8);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return bad(format!(
                "version {version}, this reader knows {OLDEST_VERSION} to {VERSION}"
            ));
        }
        let kind = match u32_at(12) {
            1 => StreamKind::BlockTable,
            2 => StreamKind::Thread,
            k => return bad(format!("kind {k}, expected 1 or 2")),
        };
        let crc = u32_at(28);
        if crc != crc32c(&h[..28]) {
            return bad("header_crc mismatch".into());
        }
        let tid = u64::from_le_bytes(h[16..24].try_into().unwrap());
        let params = TableParams {
            addr_table_bits: h[24],
            succ_table_bits: h[25],
            ret_stack_depth: h[26],
            run_prefix: version >= 4,
        };
        if h[27] != 0 {
            return bad(format!("reserved byte 27 is {}, expected 0", h[27]));
        }
        match kind {
            StreamKind::BlockTable => {
                if tid != 0 {
                    return bad(format!("tid {tid} in a block table, expected 0"));
                }
                if (
                    params.addr_table_bits,
                    params.succ_table_bits,
                    params.ret_stack_depth,
                ) != (0, 0, 0)
                {
                    return bad("table parameters in a block table, expected 0".into());
                }
            }
            StreamKind::Thread => {
                if let Err(what) = params.check() {
                    return bad(what);
                }
            }
        }
        Ok(StreamHeader { kind, tid, params })
    }
}
