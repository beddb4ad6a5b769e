//! How a reader checks the chunks it reads: each one decoded completely
//! before its first event is returned, or only once per trace, or as its
//! events are returned (see [`ThreadReader::set_validate`] and
//! [`ThreadReader::set_check_ahead`]).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::ThreadReader;
use crate::block_table::BlockTable;
use crate::decode::{ChunkStats, Core};
use crate::error::{Error, Result};
use crate::stream::{ChunkReader, StreamKind};

impl<'t> ThreadReader<'t> {
    /// Shares with other readers of the same file the knowledge of which of
    /// its first chunks decode (see [`set_validate`](Self::set_validate)).
    pub(crate) fn share_validation(&mut self, known_good: &'t AtomicU64) {
        self.known_good = Some(known_good);
    }

    /// Whether each chunk is decoded completely before its first event is
    /// returned every time it is read (the default). Either way nothing is
    /// ever returned from a chunk that does not decode: with this off, a
    /// reader made by [`Trace::read_thread`](crate::Trace::read_thread) skips
    /// the check only for chunks that a reader of the same [`Trace`](crate::Trace)
    /// has already decoded completely (readers that go over the same chunks
    /// again, as the analyzer's lanes do, then pay for the check once).
    /// [`chunk_stats`](Self::chunk_stats) holds only the offset, sequence
    /// number and size of a chunk whose check was skipped.
    pub fn set_validate(&mut self, on: bool) {
        self.checking = match (on, self.checking) {
            (true, _) => Checking::Always,
            (false, Checking::Always) => Checking::UnlessKnown,
            (false, other) => other,
        };
    }

    /// Whether a chunk that no reader has found to decode yet is decoded
    /// completely before its first event is returned (the default), or its
    /// events are returned as they decode (`false`, which turns
    /// [`set_validate`](Self::set_validate) off): each chunk is then decoded
    /// once instead of twice, and a chunk that decodes to its end counts as
    /// checked for the other readers of the trace. The price: a chunk whose
    /// checksum holds but whose records do not decode (a tracer's bug, or a
    /// crafted file) may have returned some events before its error, and
    /// [`returned_damaged_events`](Self::returned_damaged_events) says so; a
    /// caller must then drop what it made of them and read again checking
    /// ahead. The analyzer's first pass does that: damage is rare, and the
    /// pass runs twice only then.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-stream-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(4))?;
    /// w.thread(1)?.exec(b, &[])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// r.set_validate(false);
    /// r.set_check_ahead(false);
    /// let mut n = 0;
    /// while let Some(ev) = r.next_event() {
    ///     ev?;
    ///     n += 1;
    /// }
    /// assert!(n > 0 && !r.returned_damaged_events());
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn set_check_ahead(&mut self, on: bool) {
        self.checking = match (on, self.checking) {
            (false, _) => Checking::AsRead,
            (true, Checking::AsRead) => Checking::UnlessKnown,
            (true, other) => other,
        };
    }

    /// Whether a chunk read without checking ahead failed to decode (after
    /// returning some of its events, perhaps) (see [`set_check_ahead`](Self::set_check_ahead)).
    pub fn returned_damaged_events(&self) -> bool {
        self.returned_damaged
    }

    /// Reads the next chunk and checks it as this reader's checking says;
    /// false at the end. A chunk that does not decode stops the reader.
    pub(super) fn enter_next_chunk(&mut self) -> Result<bool> {
        if !self.chunks.advance()? {
            return Ok(false);
        }
        let end = self.chunk_end();
        let known = self.checking != Checking::Always
            && self
                .known_good
                .is_some_and(|k| end <= k.load(Ordering::Acquire));
        self.unchecked = !known && self.checking == Checking::AsRead;
        let c = self.chunks.current();
        let checked = if !known && !self.unchecked {
            let r = self.core.validate(c.payload);
            if r.is_ok() {
                self.mark_decoded();
            }
            r
        } else {
            self.core.start();
            Ok(ChunkStats {
                payload_bytes: c.payload.len() as u64,
                ..ChunkStats::default()
            })
        };
        match checked {
            Ok(mut s) => {
                let c = self.chunks.current();
                s.offset = c.offset;
                s.seq = c.seq;
                self.chunk_stats = s;
                self.in_chunk = true;
                Ok(true)
            }
            Err(e) => {
                let err = self.chunks.decode_damage(e);
                // Stop at the first damaged chunk.
                self.chunks.stop();
                Err(err)
            }
        }
    }

    /// The byte offset just past the current chunk.
    fn chunk_end(&self) -> u64 {
        let c = self.chunks.current();
        c.offset + (crate::stream::CHUNK_HEADER_LEN + c.payload.len()) as u64
    }

    /// The current chunk decodes: extends the trace's known-good prefix of
    /// this file when the chunk continues it (readers go through files in
    /// order).
    pub(super) fn mark_decoded(&self) {
        if let Some(k) = self.known_good {
            let offset = self.chunks.current().offset;
            let _ = k.compare_exchange(
                offset,
                self.chunk_end(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }
}

/// When a reader decodes a chunk completely before returning its first
/// event (see [`ThreadReader::set_validate`] and
/// [`ThreadReader::set_check_ahead`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Checking {
    /// Every time the chunk is read (the default).
    Always,
    /// Unless a reader of the same trace has found it to decode.
    UnlessKnown,
    /// Never ahead, unless known: its events are returned as they decode.
    AsRead,
}

/// Reads every chunk of a thread file for statistics only; stops at the
/// first damaged chunk and returns its error beside the good chunks' counts.
pub(crate) fn thread_stats(
    path: &Path,
    blocks: &BlockTable,
) -> Result<(Vec<ChunkStats>, Option<Error>)> {
    let mut chunks = ChunkReader::open(path)?;
    let params = chunks.header().params;
    if chunks.header().kind != StreamKind::Thread {
        return Err(Error::header(
            chunks.file(),
            "kind 1 (block table), expected 2 (thread)",
        ));
    }
    let mut core = Core::new(blocks, params);
    let mut out = Vec::new();
    loop {
        match chunks.advance() {
            Ok(true) => {}
            Ok(false) => return Ok((out, None)),
            Err(e) => return Ok((out, Some(e))),
        }
        let c = chunks.current();
        match core.validate(c.payload) {
            Ok(mut s) => {
                s.offset = c.offset;
                s.seq = c.seq;
                out.push(s);
            }
            Err(e) => return Ok((out, Some(chunks.decode_damage(e)))),
        }
    }
}
