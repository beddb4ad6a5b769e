//! Chunked streams (§4): the 32-byte file header and CRC-32C-framed chunks.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Damage, DecodeError, Error, Result};

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

/// Where a chunk lies in its file and its payload (borrowed from the reader).
///
/// ```no_run
/// # fn main() -> tf_trace::Result<()> {
/// let mut chunks = tf_trace::ChunkReader::open("trace/thread-1.tfc")?;
/// while let Some(chunk) = chunks.next_chunk() {
///     let chunk = chunk?;
///     println!("chunk {} at byte {}: {} bytes", chunk.seq, chunk.offset, chunk.payload.len());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ChunkRef<'a> {
    /// The file it comes from (as named in errors).
    pub file: &'a str,
    /// Byte offset of the chunk header in the file.
    pub offset: u64,
    /// The chunk's sequence number.
    pub seq: u32,
    /// The payload, whose checksum has been verified.
    pub payload: &'a [u8],
}

impl ChunkRef<'_> {
    /// An owned copy, e.g. to hand the chunk to another thread for decoding.
    pub fn to_owned(&self) -> Chunk {
        Chunk {
            file: self.file.to_string(),
            offset: self.offset,
            seq: self.seq,
            payload: self.payload.to_vec(),
        }
    }
}

impl ChunkRef<'_> {
    /// The error that reports this chunk's payload as not decoding.
    ///
    /// ```
    /// let c = tf_trace::ChunkRef { file: "t/thread-2.tfc", offset: 32, seq: 0, payload: &[] };
    /// let e = c.damaged(tf_trace::DecodeError { pos: 3, what: "oops".into() });
    /// assert_eq!(e.to_string(), "t/thread-2.tfc: byte 32: chunk does not decode: payload byte 3: oops");
    /// ```
    pub fn damaged(&self, e: DecodeError) -> Error {
        damaged(self.file, self.offset, e)
    }
}

fn damaged(file: &str, offset: u64, e: DecodeError) -> Error {
    Error::Chunk {
        file: file.to_string(),
        offset,
        damage: Damage::Decode(e),
    }
}

/// An owned chunk (see [`ChunkRef::to_owned`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The file it comes from (as named in errors).
    pub file: String,
    /// Byte offset of the chunk header in the file.
    pub offset: u64,
    /// The chunk's sequence number.
    pub seq: u32,
    /// The verified payload.
    pub payload: Vec<u8>,
}

impl Chunk {
    /// The error that reports this chunk's payload as not decoding.
    pub fn damaged(&self, e: DecodeError) -> Error {
        damaged(&self.file, self.offset, e)
    }
}

/// Reads a chunked stream chunk by chunk, checking framing and checksums.
///
/// Memory use is one chunk, whatever the file size. The reader stops at the
/// first damaged chunk: it returns the error once, then `None`.
pub struct ChunkReader {
    src: BufReader<File>,
    path: PathBuf,
    file: Arc<str>,
    header: StreamHeader,
    file_len: u64,
    offset: u64,
    seq: u32,
    buf: Vec<u8>,
    len: usize,
    done: bool,
}

impl ChunkReader {
    /// Opens a stream file and checks its header.
    pub fn open(path: impl AsRef<Path>) -> Result<ChunkReader> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let (f, file_len) = open_regular(path)?;
        let mut src = BufReader::with_capacity(64 << 10, f);
        let mut h = [0u8; FILE_HEADER_LEN];
        let got = read_full(&mut src, &mut h).map_err(|e| Error::io(&name, e))?;
        let header = StreamHeader::decode(&h[..got], &name)?;
        Ok(ChunkReader {
            src,
            path: path.to_path_buf(),
            file: name.into(),
            header,
            file_len,
            offset: FILE_HEADER_LEN as u64,
            seq: 0,
            buf: Vec::new(),
            len: 0,
            done: false,
        })
    }

    /// Moves to the chunk at byte `offset` (a chunk's offset, as
    /// [`ChunkRef::offset`] gave it), whose sequence number is `seq`: the
    /// next chunk read is that one. Nothing is checked until it is read.
    ///
    /// ```no_run
    /// # fn main() -> tf_trace::Result<()> {
    /// let mut chunks = tf_trace::ChunkReader::open("trace/thread-1.tfc")?;
    /// let (offset, seq) = {
    ///     let c = chunks.next_chunk().unwrap()?;
    ///     (c.offset, c.seq)
    /// };
    /// chunks.seek(offset, seq)?; // read it again
    /// assert_eq!(chunks.next_chunk().unwrap()?.seq, seq);
    /// # Ok(()) }
    /// ```
    pub fn seek(&mut self, offset: u64, seq: u32) -> Result<()> {
        use std::io::Seek;
        self.src
            .seek(io::SeekFrom::Start(offset))
            .map_err(|e| Error::io(&self.file, e))?;
        self.offset = offset;
        self.seq = seq;
        self.len = 0;
        self.done = false;
        Ok(())
    }

    /// A second reader at the same point, with a copy of the current chunk,
    /// reading the file through a handle of its own.
    pub fn try_clone(&self) -> Result<ChunkReader> {
        use std::io::Seek;
        let (f, _) = open_regular(&self.path)?;
        let mut src = BufReader::with_capacity(64 << 10, f);
        src.seek(io::SeekFrom::Start(self.offset))
            .map_err(|e| Error::io(&self.file, e))?;
        Ok(ChunkReader {
            src,
            path: self.path.clone(),
            file: self.file.clone(),
            header: self.header,
            file_len: self.file_len,
            offset: self.offset,
            seq: self.seq,
            buf: self.buf[..self.len].to_vec(),
            len: self.len,
            done: self.done,
        })
    }

    /// The file's header.
    pub fn header(&self) -> &StreamHeader {
        &self.header
    }

    /// The file name used in errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The next chunk, `None` at the clean end of the file or after an error.
    pub fn next_chunk(&mut self) -> Option<Result<ChunkRef<'_>>> {
        match self.advance() {
            Ok(true) => Some(Ok(self.current())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// The payload of the chunk read by the last successful `advance`.
    #[inline]
    pub(crate) fn payload(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The chunk read by the last successful [`advance`](Self::advance).
    #[inline]
    pub(crate) fn current(&self) -> ChunkRef<'_> {
        ChunkRef {
            file: &self.file,
            offset: self.offset - (CHUNK_HEADER_LEN + self.len) as u64,
            seq: self.seq.wrapping_sub(1),
            payload: &self.buf[..self.len],
        }
    }

    /// Reads the next chunk into the buffer; false at the end.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let r = self.read_chunk();
        if !matches!(r, Ok(true)) {
            self.done = true;
        }
        r
    }

    /// Stops reading: later calls return `None`.
    pub(crate) fn stop(&mut self) {
        self.done = true;
    }

    fn damage(&self, damage: Damage) -> Error {
        Error::Chunk {
            file: self.file.to_string(),
            offset: self.offset,
            damage,
        }
    }

    fn read_chunk(&mut self) -> Result<bool> {
        let mut h = [0u8; CHUNK_HEADER_LEN];
        let got = read_full(&mut self.src, &mut h).map_err(|e| Error::io(&self.file, e))?;
        if got == 0 {
            return Ok(false);
        }
        if got < CHUNK_HEADER_LEN {
            return Err(self.damage(Damage::TruncatedHeader { have: got as u64 }));
        }
        if &h[..4] != CHUNK_MAGIC {
            return Err(self.damage(Damage::Magic));
        }
        let length = u32::from_le_bytes(h[4..8].try_into().unwrap());
        let seq = u32::from_le_bytes(h[8..12].try_into().unwrap());
        let crc = u32::from_le_bytes(h[12..16].try_into().unwrap());
        if length == 0 || length > MAX_CHUNK_LEN {
            return Err(self.damage(Damage::Length(length)));
        }
        let n = length as usize;
        let avail = self
            .file_len
            .saturating_sub(self.offset + CHUNK_HEADER_LEN as u64);
        if (n as u64) > avail {
            return Err(self.damage(Damage::Truncated {
                length,
                have: avail,
            }));
        }
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        let got =
            read_full(&mut self.src, &mut self.buf[..n]).map_err(|e| Error::io(&self.file, e))?;
        if got < n {
            return Err(self.damage(Damage::Truncated {
                length,
                have: got as u64,
            }));
        }
        let sum = crc32c::crc32c_append(crc32c::crc32c(&h[4..12]), &self.buf[..n]);
        if sum != crc {
            return Err(self.damage(Damage::Checksum));
        }
        if seq != self.seq {
            return Err(self.damage(Damage::Seq {
                expected: self.seq,
                found: seq,
            }));
        }
        self.seq = self.seq.wrapping_add(1);
        self.len = n;
        self.offset += (CHUNK_HEADER_LEN + n) as u64;
        Ok(true)
    }

    /// The error for the current chunk, whose payload does not decode.
    pub(crate) fn decode_damage(&self, e: DecodeError) -> Error {
        self.current().damaged(e)
    }
}

/// Opens a file of a trace for reading, only if it is a regular file (never
/// a FIFO, which would block, nor a device, which may never end); returns it
/// with its size. The error names the file.
///
/// ```
/// let e = tf_trace::stream::open_regular("/dev/null".as_ref()).unwrap_err();
/// assert_eq!(e.to_string(), "/dev/null: not a regular file");
/// ```
pub fn open_regular(path: &Path) -> Result<(File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let name = || path.display().to_string();
    // Non-blocking, so that opening a FIFO returns at once; it changes
    // nothing for a regular file.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Error::io(name(), e))?;
    let meta = f.metadata().map_err(|e| Error::io(name(), e))?;
    if !meta.is_file() {
        return Err(Error::io(
            name(),
            io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
        ));
    }
    Ok((f, meta.len()))
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(src: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Appends chunks to a stream file, each with one write.
///
/// The payload is gathered in a buffer whose first 16 bytes are kept for the
/// chunk header, so closing a chunk copies nothing.
pub(crate) struct ChunkWriter {
    out: File,
    pub(crate) file: String,
    seq: u32,
    /// Chunk header space followed by the payload gathered so far.
    pub(crate) buf: Vec<u8>,
}

impl ChunkWriter {
    pub(crate) fn create(path: &Path, header: &StreamHeader) -> Result<ChunkWriter> {
        let file = path.display().to_string();
        let mut out = File::create(path).map_err(|e| Error::io(&file, e))?;
        out.write_all(&header.encode())
            .map_err(|e| Error::io(&file, e))?;
        let mut buf = Vec::with_capacity(CHUNK_HEADER_LEN + 4096);
        buf.resize(CHUNK_HEADER_LEN, 0);
        Ok(ChunkWriter {
            out,
            file,
            seq: 0,
            buf,
        })
    }

    /// Bytes of payload gathered so far.
    #[inline]
    pub(crate) fn payload_len(&self) -> usize {
        self.buf.len() - CHUNK_HEADER_LEN
    }

    /// Writes the gathered payload as one chunk (nothing if it is empty).
    pub(crate) fn close_chunk(&mut self) -> Result<()> {
        let n = self.payload_len();
        if n == 0 {
            return Ok(());
        }
        if n > MAX_CHUNK_LEN as usize {
            return Err(Error::Invalid(format!(
                "{}: chunk payload of {n} bytes exceeds 64 MiB",
                self.file
            )));
        }
        self.buf[..4].copy_from_slice(CHUNK_MAGIC);
        self.buf[4..8].copy_from_slice(&(n as u32).to_le_bytes());
        self.buf[8..12].copy_from_slice(&self.seq.to_le_bytes());
        let crc = crc32c::crc32c_append(
            crc32c::crc32c(&self.buf[4..12]),
            &self.buf[CHUNK_HEADER_LEN..],
        );
        self.buf[12..16].copy_from_slice(&crc.to_le_bytes());
        self.out
            .write_all(&self.buf)
            .map_err(|e| Error::io(&self.file, e))?;
        self.seq = self
            .seq
            .checked_add(1)
            .ok_or_else(|| Error::Invalid(format!("{}: more than 2^32 chunks", self.file)))?;
        self.buf.truncate(CHUNK_HEADER_LEN);
        Ok(())
    }
}
