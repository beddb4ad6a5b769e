//! Thread streams (§6): a file's chunks, read in order, checked and decoded
//! into block executions and events (the decoding of one chunk is
//! `decode.rs`).

use std::path::Path;
use std::sync::atomic::AtomicU64;

use crate::block_table::BlockTable;
use crate::decode::{Core, Step};
use crate::error::{Error, Result};
use crate::event::{Access, Event};
use crate::stream::{ChunkReader, StreamKind, TableParams};

pub use crate::decode::{ChunkDecoder, ChunkEvents, ChunkStats};
pub(crate) use checking::thread_stats;
use checking::Checking;
pub use resume::{ReaderState, ReaderStateDelta};

mod checking;
mod resume;

/// Streams the events of one thread file, chunk by chunk.
///
/// Memory use is one chunk whatever the file size, and no memory is
/// allocated per record: events borrow the reader's buffers until the next
/// call. Each chunk is checked completely (checksum and decoding) before
/// its first event is returned, so nothing from a damaged chunk is ever
/// returned (unless the caller asks otherwise with
/// [`set_check_ahead`](Self::set_check_ahead)); the reader returns the
/// damage as one error and then `None`.
///
/// ```
/// # fn main() -> tf_trace::Result<()> {
/// use tf_trace::{BlockDef, Event, EndKind, Trace, TraceWriter};
/// let dir = std::env::temp_dir().join(format!("tf-doc-reader-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// let body = w.block(&BlockDef::new(0x1000).insn(4).read(8).insn(2).end(EndKind::Branch))?;
/// let mut t = w.thread(1)?;
/// for i in 0..100u64 {
///     t.exec(body, &[0x10000 + 8 * i])?;
/// }
/// w.finish()?;
///
/// let trace = Trace::open(&dir)?;
/// let mut r = trace.read_thread(1)?;
/// let (mut n, mut sum) = (0, 0);
/// while let Some(ev) = r.next_event() {
///     if let Event::Block(x) = ev? {
///         n += x.insns;
///         sum += x.accesses()[0].addr - 0x10000;
///     }
/// }
/// assert_eq!((n, sum), (200, 8 * 4950));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
pub struct ThreadReader<'t> {
    chunks: ChunkReader,
    core: Core<'t>,
    in_chunk: bool,
    /// What the last [`advance`](Self::advance) read (`End` before the
    /// first, and after a seek or the end).
    last: Step,
    chunk_stats: ChunkStats,
    addresses: bool,
    checking: Checking,
    /// The current chunk's events are returned as they decode, unchecked.
    unchecked: bool,
    /// An unchecked chunk failed to decode.
    returned_damaged: bool,
    /// For a reader made by [`Trace::read_thread`](crate::Trace::read_thread):
    /// the end of the file's first chunks that some reader of the same trace
    /// has decoded completely.
    known_good: Option<&'t AtomicU64>,
}

impl<'t> ThreadReader<'t> {
    /// Opens a thread stream file, decoding against `blocks`. If the file
    /// name is `thread-<tid>.tfc`, the header's tid must match it.
    pub fn open(path: impl AsRef<Path>, blocks: &'t BlockTable) -> Result<ThreadReader<'t>> {
        let path = path.as_ref();
        let chunks = ChunkReader::open(path)?;
        let h = *chunks.header();
        if h.kind != StreamKind::Thread {
            return Err(Error::header(
                chunks.file(),
                "kind 1 (block table), expected 2 (thread)",
            ));
        }
        if let Some(tid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(crate::trace::parse_thread_file_name)
        {
            if tid != h.tid {
                return Err(Error::header(
                    chunks.file(),
                    format!("tid {} does not match the file name", h.tid),
                ));
            }
        }
        Ok(ThreadReader {
            core: Core::new(blocks, h.params),
            chunks,
            in_chunk: false,
            last: Step::End,
            chunk_stats: ChunkStats::default(),
            addresses: true,
            checking: Checking::Always,
            unchecked: false,
            returned_damaged: false,
            known_good: None,
        })
    }

    /// Whether block executions carry their memory accesses (the default).
    /// Without them decoding skips all address prediction, which is most of
    /// its work: a reader that only follows control flow runs much faster.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-noaddr-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(4).read(8))?;
    /// w.thread(1)?.exec(b, &[0x5000])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// r.set_addresses(false);
    /// match r.next_event().unwrap()? {
    ///     Event::Block(x) => assert!(x.accesses().is_empty() && x.insns == 1),
    ///     e => panic!("{e:?}"),
    /// }
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn set_addresses(&mut self, on: bool) {
        self.core.settle();
        self.addresses = on;
        self.core.n_acc = 0;
    }

    /// Continues at the chunk at byte `offset` with sequence number `seq`
    /// (from [`chunk_stats`](Self::chunk_stats) of an earlier reading): the
    /// next event is that chunk's first.
    pub fn seek_chunk(&mut self, offset: u64, seq: u32) -> Result<()> {
        self.chunks.seek(offset, seq)?;
        self.in_chunk = false;
        self.last = Step::End;
        self.unchecked = false;
        Ok(())
    }

    /// A second reader at the same point of the stream, which goes on
    /// independently: its next event is this one's next event. This is how
    /// to read from the middle of a long chunk more than once without
    /// decoding it from the chunk's start each time (the analyzer's lanes
    /// that run consecutive units of one thread). It costs a copy of the
    /// decoding state and of the current chunk, and opens the file again.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-clone-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(4).read(8))?;
    /// let mut t = w.thread(1)?;
    /// for i in 0..10u64 {
    ///     t.exec(b, &[0x5000 + 8 * i])?;
    /// }
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let addr = |r: &mut tf_trace::ThreadReader| match r.next_event().unwrap().unwrap() {
    ///     Event::Block(x) => x.accesses()[0].addr,
    ///     e => panic!("{e:?}"),
    /// };
    /// let mut r = trace.read_thread(1)?;
    /// for _ in 0..4 {
    ///     addr(&mut r);
    /// }
    /// let mut second = r.try_clone()?;
    /// assert_eq!(addr(&mut r), 0x5020);
    /// assert_eq!(addr(&mut second), 0x5020);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn try_clone(&self) -> Result<ThreadReader<'t>> {
        Ok(ThreadReader {
            chunks: self.chunks.try_clone()?,
            core: self.core.clone(),
            in_chunk: self.in_chunk,
            last: self.last,
            chunk_stats: self.chunk_stats,
            addresses: self.addresses,
            checking: self.checking,
            unchecked: self.unchecked,
            returned_damaged: self.returned_damaged,
            known_good: self.known_good,
        })
    }

    /// The thread id from the file header.
    pub fn tid(&self) -> u64 {
        self.chunks.header().tid
    }

    /// The table parameters from the file header.
    pub fn params(&self) -> TableParams {
        self.chunks.header().params
    }

    /// Counts of the chunk that the last event came from.
    pub fn chunk_stats(&self) -> &ChunkStats {
        &self.chunk_stats
    }

    /// The next event, `None` at the end of the stream or after an error.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_>>> {
        match self.advance() {
            Ok(true) => self.current().map(Ok),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Reads the next event without handing it out: true, and the event is
    /// [`current`](Self::current) until the next call; false at the end of
    /// the stream or after an error. [`next_event`](Self::next_event) in
    /// two steps, for a caller that reads a few fields of most events: the
    /// event is not built and returned through memory.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, EndKind, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-advance-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(4).insn(2).insn(3).end(EndKind::Branch))?;
    /// let mut t = w.thread(1)?;
    /// t.exec(b, &[])?;
    /// t.exec(b, &[])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// let mut insns = 0;
    /// while r.advance()? {
    ///     if let Some(Event::Block(x)) = r.current() {
    ///         insns += x.insns;
    ///     }
    /// }
    /// assert_eq!(insns, 6);
    /// assert!(r.current().is_none()); // at the end
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    // Always inlined: readers call it once per event, in their hottest loops
    // (the analyzer's scan and lanes); the decoding it calls stays out of line.
    #[inline(always)]
    pub fn advance(&mut self) -> Result<bool> {
        self.last = Step::End;
        loop {
            if !self.in_chunk {
                // A match rather than `?`: `?` here cost 0.4% more
                // instructions in the replay (its code laid out otherwise).
                match self.enter_next_chunk() {
                    Ok(true) => {}
                    Ok(false) => return Ok(false),
                    Err(e) => return Err(e),
                }
            }
            let step = if self.addresses {
                self.core.step::<true, false>(self.chunks.payload())
            } else {
                self.core.step::<false, false>(self.chunks.payload())
            };
            match step {
                Ok(Step::End) => {
                    self.in_chunk = false;
                    if std::mem::take(&mut self.unchecked) {
                        // Decoded to its end: checked, as validation would have.
                        self.mark_decoded();
                    }
                }
                Ok(step) => {
                    self.last = step;
                    return Ok(true);
                }
                Err(e) => {
                    self.in_chunk = false;
                    self.returned_damaged |= std::mem::take(&mut self.unchecked);
                    let err = self.chunks.decode_damage(e);
                    self.chunks.stop();
                    return Err(err);
                }
            }
        }
    }

    /// The event the last [`advance`](Self::advance) read: `Some` whenever
    /// it returned true, `None` if it read none.
    #[inline]
    pub fn current(&self) -> Option<Event<'_>> {
        self.core.event(self.last, self.chunks.payload())
    }

    /// The memory accesses of the last block execution read (by
    /// [`next_event`](Self::next_event) or [`advance`](Self::advance)), as
    /// its event gives them,
    /// until the next call: a caller that goes on using them after the
    /// event (the analyzer's lanes, which split a block into pieces) need
    /// not copy them.
    #[inline]
    pub fn last_accesses(&self) -> &[Access] {
        &self.core.accesses[..self.core.n_acc]
    }

    /// Skips up to `max` of the next events when they are block executions
    /// of runs (§6.1) that go round a loop, and returns how many it skipped
    /// (0 when they are not). The reader is left as reading them would
    /// leave it: a reader that goes on, or its [`state`](Self::state),
    /// cannot tell. A round of the loop is left to be read right after the
    /// skipped executions (before `max`, and before a record other than a
    /// run), so that a caller who looks at every execution still sees each
    /// block of the loop, with the addresses its last execution has. This
    /// is how to move to a place far into a loop without decoding every
    /// execution on the way (the analyzer, to reach where a unit starts).
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, EndKind, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-rounds-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let body = w.block(&BlockDef::new(0x1000).insn(4).read(8).end(EndKind::Branch))?;
    /// let mut t = w.thread(1)?;
    /// for i in 0..40u64 {
    ///     t.exec(body, &[0x5000 + 8 * i])?;
    /// }
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// let mut read = 0;
    /// while read < 30 {
    ///     r.advance()?;
    ///     read += 1 + r.skip_rounds(30 - read - 1);
    /// }
    /// match r.next_event().unwrap()? {
    ///     Event::Block(x) => assert_eq!(x.accesses()[0].addr, 0x5000 + 8 * 30),
    ///     e => panic!("{e:?}"),
    /// }
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn skip_rounds(&mut self, max: u64) -> u64 {
        if !self.in_chunk {
            return 0;
        }
        let skipped = self
            .core
            .skip_rounds(self.chunks.payload(), max, self.addresses);
        if skipped > 0 {
            self.last = Step::Block;
        }
        skipped
    }
}
