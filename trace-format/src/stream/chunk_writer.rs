//! Writing a chunked stream: each chunk framed and appended with one write.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::{StreamHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC, MAX_CHUNK_LEN};
use crate::error::{Error, Result};

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
