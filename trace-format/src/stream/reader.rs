//! Reading a chunked stream: chunk by chunk, each checked for its framing,
//! checksum and sequence number.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{StreamHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC, FILE_HEADER_LEN, MAX_CHUNK_LEN};
use crate::error::{Damage, DecodeError, Error, Result};

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
