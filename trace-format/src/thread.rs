//! Thread streams (§6): decoding chunks into block executions and events.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::block_table::{BlockId, BlockTable};
use crate::error::{DecodeError, Error, Result};
use crate::event::{self, Access, BlockExec, Event, Via};
use crate::limits;
use crate::predict::{Predictor, NONE};
use crate::stream::{ChunkReader, StreamKind, TableParams};
use crate::varint::{unzigzag, Cursor};

/// Counts of what one chunk holds, for `tf info`.
///
/// ```no_run
/// # fn main() -> tf_trace::Result<()> {
/// let trace = tf_trace::Trace::open("trace")?;
/// let (chunks, damage) = trace.thread_stats(1)?;
/// let total: u64 = chunks.iter().map(|c| c.insns).sum();
/// println!("{total} instructions in {} chunks{}", chunks.len(),
///          if damage.is_some() { " (damaged)" } else { "" });
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Byte offset of the chunk in its file.
    pub offset: u64,
    /// Sequence number.
    pub seq: u32,
    /// Payload bytes.
    pub payload_bytes: u64,
    /// Run records.
    pub run_records: u64,
    /// Block records with a run prefix (§6.1, version 4).
    pub run_prefixes: u64,
    /// Block executions given by run records and run prefixes.
    pub run_blocks: u64,
    /// Block records.
    pub block_records: u64,
    /// Block records with an explicit id.
    pub explicit: u64,
    /// Block records with addresses.
    pub with_addresses: u64,
    /// Partial executions.
    pub partial: u64,
    /// Event records other than `partial` (unknown types included).
    pub events: u64,
    /// Event records of unknown types.
    pub unknown_events: u64,
    /// Block executions (run and block records).
    pub block_execs: u64,
    /// Instructions executed.
    pub insns: u64,
    /// Memory accesses (present operands).
    pub accesses: u64,
    /// Instructions reported by `skip` events (saturating).
    pub skipped_insns: u64,
}

impl ChunkStats {
    /// Adds another chunk's counts to these (offset and seq are kept).
    pub fn add(&mut self, o: &ChunkStats) {
        self.payload_bytes += o.payload_bytes;
        self.run_records += o.run_records;
        self.run_prefixes += o.run_prefixes;
        self.run_blocks += o.run_blocks;
        self.block_records += o.block_records;
        self.explicit += o.explicit;
        self.with_addresses += o.with_addresses;
        self.partial += o.partial;
        self.events += o.events;
        self.unknown_events += o.unknown_events;
        self.block_execs += o.block_execs;
        self.insns += o.insns;
        self.accesses += o.accesses;
        self.skipped_insns = self.skipped_insns.saturating_add(o.skipped_insns);
    }
}

/// One decoding step, owned so that callers can loop without borrowing.
#[derive(Clone, Copy)]
enum Step {
    End,
    Block {
        block: BlockId,
        insns: u32,
        operands: u32,
        complete: bool,
        via: Via,
    },
    Event(Event<'static>),
    Unknown {
        ty: u64,
        start: usize,
        end: usize,
    },
}

/// The decoder of one chunk payload. `ADDR = false` decodes structure and
/// control flow only (validation and statistics), `true` also addresses.
#[derive(Clone)]
struct Core<'t> {
    table: &'t BlockTable,
    pred: Predictor,
    /// Where a block record's successor code starts: bit 5 when block
    /// records carry a run prefix (version 4), else bit 3. With
    /// `prefix_mask`, both precomputed from the version: the record loop
    /// reads them for every block record.
    succ_shift: u32,
    /// The run prefix's mask (after a shift by 3): 3 in version 4, else 0.
    prefix_mask: u64,
    /// The block record at `pos` has had its run prefix: its header is read
    /// again for the record itself.
    prefix_done: bool,
    run_left: u64,
    run_pos: usize,
    /// Operands of the current run's executions so far (§9).
    run_ops: u64,
    pos: usize,
    /// Room for the accesses of the largest block; the first `n_acc` are
    /// those of the last execution.
    accesses: Vec<Access>,
    n_acc: usize,
    stats: ChunkStats,
}

impl<'t> Core<'t> {
    fn new(table: &'t BlockTable, params: TableParams) -> Core<'t> {
        Core {
            table,
            pred: Predictor::new(params),
            succ_shift: if params.run_prefix { 5 } else { 3 },
            prefix_mask: if params.run_prefix { 3 } else { 0 },
            prefix_done: false,
            run_left: 0,
            run_pos: 0,
            run_ops: 0,
            pos: 0,
            accesses: vec![Access::default(); table.max_ops()],
            n_acc: 0,
            stats: ChunkStats::default(),
        }
    }

    fn start(&mut self) {
        self.pred.reset();
        self.prefix_done = false;
        self.run_left = 0;
        self.pos = 0;
        self.n_acc = 0;
        self.stats = ChunkStats::default();
    }

    /// Decodes the whole payload without addresses: checks that it decodes.
    fn validate(&mut self, payload: &[u8]) -> Result<ChunkStats, DecodeError> {
        self.start();
        while !matches!(self.step::<false>(payload)?, Step::End) {}
        let mut s = self.stats;
        s.payload_bytes = payload.len() as u64;
        self.start();
        Ok(s)
    }

    #[inline]
    fn step<const ADDR: bool>(&mut self, payload: &[u8]) -> Result<Step, DecodeError> {
        if self.run_left > 0 {
            self.run_left -= 1;
            return self.run_step::<ADDR>();
        }
        let mut cur = Cursor::at(payload, self.pos);
        let mut partial: Option<(u64, u64, usize)> = None;
        loop {
            if cur.is_empty() {
                if let Some((_, _, p)) = partial {
                    return Err(DecodeError::new(p, "partial event at the end of the chunk"));
                }
                self.pos = cur.pos();
                return Ok(Step::End);
            }
            let rpos = cur.pos();
            let h = cur.varint()?;
            match h & 3 {
                0 => {
                    let r = (h >> 3) & self.prefix_mask;
                    if r != 0 && !std::mem::take(&mut self.prefix_done) {
                        if let Some((_, _, p)) = partial {
                            return Err(DecodeError::new(
                                p,
                                "partial event followed by a block record with a run prefix",
                            ));
                        }
                        self.stats.run_prefixes += 1;
                        // the record's header is read again once the run is over
                        self.pos = rpos;
                        self.prefix_done = true;
                        return self.begin_run::<ADDR>(rpos, r);
                    }
                    let s = h >> self.succ_shift;
                    let has_addr = h & 4 != 0;
                    let cand = self.pred.candidates();
                    let (id, via) = match s {
                        0 => (cand[0], Via::Candidate0),
                        1 => (cand[1], Via::Candidate1),
                        _ => {
                            let id = s - 2;
                            if id >= self.table.len() as u64 {
                                return Err(DecodeError::new(
                                    rpos,
                                    format!(
                                        "block {id} not in the block table ({} blocks)",
                                        self.table.len()
                                    ),
                                ));
                            }
                            (id as BlockId, Via::Explicit)
                        }
                    };
                    if id == NONE {
                        return Err(DecodeError::new(
                            rpos,
                            format!("successor candidate {s} does not exist"),
                        ));
                    }
                    let rec = self.table.rec(id);
                    let (insns, n_ops) = match partial {
                        None => (rec.n_insns, rec.n_ops),
                        Some((ni, no, p)) => {
                            if ni == 0 || ni > rec.n_insns as u64 || no > rec.n_ops as u64 {
                                return Err(DecodeError::new(
                                    p,
                                    format!(
                                        "partial execution of {ni} instructions and {no} operands of block {id} ({} and {})",
                                        rec.n_insns, rec.n_ops
                                    ),
                                ));
                            }
                            (ni as u32, no as u32)
                        }
                    };
                    self.stats.block_records += 1;
                    self.stats.explicit += (via == Via::Explicit) as u64;
                    self.stats.with_addresses += has_addr as u64;
                    self.stats.partial += partial.is_some() as u64;
                    self.exec::<ADDR>(id, insns, n_ops, partial.is_none(), has_addr, &mut cur)?;
                    self.pos = cur.pos();
                    return Ok(Step::Block {
                        block: id,
                        insns,
                        operands: n_ops,
                        complete: partial.is_none(),
                        via,
                    });
                }
                2 => {
                    let ty = h >> 2;
                    let body = cur.bytes()?;
                    if let Some((_, _, p)) = partial {
                        return Err(DecodeError::new(
                            p,
                            "partial event not followed by a block record",
                        ));
                    }
                    if ty == event::PARTIAL {
                        let mut c = Cursor::new(body);
                        let bad = |_| DecodeError::new(rpos, "partial event: payload too short");
                        let ni = c.varint().map_err(bad)?;
                        let no = c.varint().map_err(bad)?;
                        if !c.is_empty() {
                            return Err(DecodeError::new(
                                rpos,
                                "partial event: bytes left over in payload",
                            ));
                        }
                        partial = Some((ni, no, rpos));
                        continue;
                    }
                    self.pos = cur.pos();
                    self.stats.events += 1;
                    return match event::decode(ty, body, rpos)? {
                        Some(e) => {
                            if let Event::Skip { count, .. } = e {
                                self.stats.skipped_insns =
                                    self.stats.skipped_insns.saturating_add(count);
                            }
                            Ok(Step::Event(e))
                        }
                        None => {
                            self.stats.unknown_events += 1;
                            Ok(Step::Unknown {
                                ty,
                                start: self.pos - body.len(),
                                end: self.pos,
                            })
                        }
                    };
                }
                _ => {
                    if let Some((_, _, p)) = partial {
                        return Err(DecodeError::new(p, "partial event followed by a run"));
                    }
                    // k = (h >> 1) + 1 executions; this call makes the first.
                    if h >> 1 >= limits::MAX_RUN {
                        return Err(DecodeError::new(
                            rpos,
                            format!(
                                "run of {} executions, above the limit of {}",
                                (h >> 1) as u128 + 1,
                                limits::MAX_RUN
                            ),
                        ));
                    }
                    self.pos = cur.pos();
                    self.stats.run_records += 1;
                    return self.begin_run::<ADDR>(rpos, (h >> 1) + 1);
                }
            }
        }
    }

    /// A run of `k` executions whose record (or whose block record, for a
    /// run prefix) starts at `rpos`: its first execution.
    #[inline(always)]
    fn begin_run<const ADDR: bool>(&mut self, rpos: usize, k: u64) -> Result<Step, DecodeError> {
        self.run_pos = rpos;
        self.run_ops = 0;
        self.run_left = k - 1;
        self.run_step::<ADDR>()
    }

    #[inline(always)]
    fn run_step<const ADDR: bool>(&mut self) -> Result<Step, DecodeError> {
        let id = self.pred.candidates()[0];
        if id == NONE {
            return Err(DecodeError::new(
                self.run_pos,
                "run: successor candidate 0 does not exist",
            ));
        }
        let rec = self.table.rec(id);
        let (insns, n_ops) = (rec.n_insns, rec.n_ops);
        if self.run_ops >= limits::RUN_OPERANDS {
            return Err(DecodeError::new(
                self.run_pos,
                format!(
                    "run goes on after {} operands, above the limit of {}",
                    self.run_ops,
                    limits::RUN_OPERANDS
                ),
            ));
        }
        self.run_ops += u64::from(n_ops);
        if !ADDR {
            self.stats.run_blocks += 1;
        }
        let mut none = Cursor::new(&[]);
        self.exec::<ADDR>(id, insns, n_ops, true, false, &mut none)?;
        Ok(Step::Block {
            block: id,
            insns,
            operands: n_ops,
            complete: true,
            via: Via::Run,
        })
    }

    #[inline(always)]
    fn exec<const ADDR: bool>(
        &mut self,
        id: BlockId,
        insns: u32,
        n_ops: u32,
        complete: bool,
        has_addr: bool,
        cur: &mut Cursor<'_>,
    ) -> Result<(), DecodeError> {
        let table = self.table;
        let rec = table.rec(id);
        self.pred.arrive(id, rec.address);
        if !ADDR {
            self.stats.block_execs += 1;
            self.stats.insns += insns as u64;
        }
        let ops = &table.ops[rec.ops_start as usize..][..n_ops as usize];
        if ADDR {
            let mut prev: Option<u64> = None;
            let mut k = 0;
            let acc = &mut self.accesses[..ops.len()];
            for (j, op) in ops.iter().enumerate() {
                let p = self.pred.predict(id, j as u32, prev);
                let a = if has_addr {
                    let v = cur.varint()?;
                    if op.conditional {
                        if v == 0 {
                            continue;
                        }
                        p.addr.wrapping_add(unzigzag(v - 1) as u64)
                    } else {
                        p.addr.wrapping_add(unzigzag(v) as u64)
                    }
                } else {
                    p.addr
                };
                self.pred.update(p, a, prev);
                prev = Some(a);
                acc[k] = Access {
                    operand: j as u16,
                    size: op.size,
                    write: op.write,
                    addr: a,
                };
                k += 1;
            }
            self.n_acc = k;
        } else if has_addr {
            let mut present = 0;
            for op in ops {
                let v = cur.varint()?;
                present += (v != 0 || !op.conditional) as u64;
            }
            self.stats.accesses += present;
        } else {
            self.stats.accesses += n_ops as u64;
        }
        self.pred.depart(id, rec, complete, table);
        Ok(())
    }

    #[inline(always)]
    fn event<'p>(&'p self, step: Step, payload: &'p [u8]) -> Option<Event<'p>> {
        match step {
            Step::End => None,
            Step::Block {
                block,
                insns,
                operands,
                complete,
                via,
            } => Some(Event::Block(BlockExec {
                block,
                insns,
                operands,
                complete,
                via,
                accesses: &self.accesses[..self.n_acc],
            })),
            Step::Event(e) => Some(e),
            Step::Unknown { ty, start, end } => Some(Event::Unknown {
                ty,
                payload: &payload[start..end],
            }),
        }
    }
}

/// Decodes single chunk payloads of one thread stream, e.g. in parallel
/// (one decoder per worker). Every chunk is self-contained (§4.2).
///
/// ```no_run
/// # fn main() -> tf_trace::Result<()> {
/// let trace = tf_trace::Trace::open("trace")?;
/// let mut chunks = trace.chunks(1)?;
/// let mut decoder = tf_trace::ChunkDecoder::new(trace.blocks(), chunks.header().params);
/// while let Some(chunk) = chunks.next_chunk() {
///     let chunk = chunk?.to_owned(); // could be sent to another thread
///     let mut events = decoder.decode(&chunk.payload).expect("damaged chunk");
///     while let Some(ev) = events.next_event() {
///         println!("{:?}", ev.unwrap());
///     }
/// }
/// # Ok(()) }
/// ```
pub struct ChunkDecoder<'t> {
    core: Core<'t>,
}

impl<'t> ChunkDecoder<'t> {
    /// A decoder for chunks of a stream with these table parameters (from
    /// its [`StreamHeader`](crate::StreamHeader)); panics if they are out of range.
    pub fn new(blocks: &'t BlockTable, params: TableParams) -> ChunkDecoder<'t> {
        params.check().expect("table parameters out of range");
        ChunkDecoder {
            core: Core::new(blocks, params),
        }
    }

    /// Checks that `payload` decodes and counts what it holds (without
    /// computing addresses). `offset` and `seq` of the result are 0.
    pub fn stats(&mut self, payload: &[u8]) -> Result<ChunkStats, DecodeError> {
        self.core.validate(payload)
    }

    /// Checks that `payload` decodes, then returns its events. Nothing is
    /// returned from a payload that does not decode.
    pub fn decode<'c>(&'c mut self, payload: &'c [u8]) -> Result<ChunkEvents<'c, 't>, DecodeError> {
        self.core.validate(payload)?;
        Ok(ChunkEvents {
            core: &mut self.core,
            payload,
        })
    }
}

/// The events of one chunk (see [`ChunkDecoder::decode`]).
pub struct ChunkEvents<'c, 't> {
    core: &'c mut Core<'t>,
    payload: &'c [u8],
}

impl ChunkEvents<'_, '_> {
    /// The next event; `None` at the end of the chunk. Events borrow the
    /// decoder until the next call.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_>, DecodeError>> {
        match self.core.step::<true>(self.payload) {
            Ok(step) => self.core.event(step, self.payload).map(Ok),
            Err(e) => Some(Err(e)),
        }
    }
}

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
    chunk_stats: ChunkStats,
    addresses: bool,
    validate: bool,
    /// Return a chunk's events as they decode (see [`set_check_ahead`](Self::set_check_ahead)).
    stream_unchecked: bool,
    /// The chunk being streamed unchecked: its offset and end.
    unchecked: Option<(u64, u64)>,
    /// An unchecked chunk returned events and then failed to decode.
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
            chunk_stats: ChunkStats::default(),
            addresses: true,
            validate: true,
            stream_unchecked: false,
            unchecked: None,
            returned_damaged: false,
            known_good: None,
        })
    }

    /// Shares with other readers of the same file the knowledge of which of
    /// its first chunks decode (see [`set_validate`](Self::set_validate)).
    pub(crate) fn share_validation(&mut self, known_good: &'t AtomicU64) {
        self.known_good = Some(known_good);
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
        self.addresses = on;
        self.core.n_acc = 0;
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
        self.validate = on;
    }

    /// Whether a chunk that no reader has found to decode yet is decoded
    /// completely before its first event is returned (the default), or its
    /// events are returned as they decode (`false`, with
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
        self.stream_unchecked = !on;
    }

    /// Whether a chunk read without checking ahead failed to decode (after
    /// returning some of its events, perhaps) (see [`set_check_ahead`](Self::set_check_ahead)).
    pub fn returned_damaged_events(&self) -> bool {
        self.returned_damaged
    }

    /// Continues at the chunk at byte `offset` with sequence number `seq`
    /// (from [`chunk_stats`](Self::chunk_stats) of an earlier reading): the
    /// next event is that chunk's first.
    pub fn seek_chunk(&mut self, offset: u64, seq: u32) -> Result<()> {
        self.chunks.seek(offset, seq)?;
        self.in_chunk = false;
        self.unchecked = None;
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
            chunk_stats: self.chunk_stats,
            addresses: self.addresses,
            validate: self.validate,
            stream_unchecked: self.stream_unchecked,
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
        let step = loop {
            if !self.in_chunk {
                match self.chunks.advance() {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => return Some(Err(e)),
                }
                let c = self.chunks.current();
                let end = c.offset + (crate::stream::CHUNK_HEADER_LEN + c.payload.len()) as u64;
                let known = !self.validate
                    && self
                        .known_good
                        .is_some_and(|k| end <= k.load(Ordering::Acquire));
                let stream = !known && !self.validate && self.stream_unchecked;
                self.unchecked = stream.then_some((c.offset, end));
                let checked = if !known && !stream {
                    let r = self.core.validate(c.payload);
                    if let (Ok(_), Some(k)) = (&r, self.known_good) {
                        // Extends the known-good prefix when this chunk
                        // continues it (readers go through files in order).
                        let _ =
                            k.compare_exchange(c.offset, end, Ordering::AcqRel, Ordering::Acquire);
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
                        s.offset = c.offset;
                        s.seq = c.seq;
                        self.chunk_stats = s;
                    }
                    Err(e) => {
                        let err = self.chunks.decode_damage(e);
                        // Stop at the first damaged chunk.
                        self.chunks.stop();
                        return Some(Err(err));
                    }
                }
                self.in_chunk = true;
            }
            let step = if self.addresses {
                self.core.step::<true>(self.chunks.payload())
            } else {
                self.core.step::<false>(self.chunks.payload())
            };
            match step {
                Ok(Step::End) => {
                    self.in_chunk = false;
                    if let (Some((offset, end)), Some(k)) = (self.unchecked.take(), self.known_good)
                    {
                        // Decoded to its end: checked, as validation would have.
                        let _ =
                            k.compare_exchange(offset, end, Ordering::AcqRel, Ordering::Acquire);
                    }
                }
                Ok(step) => break step,
                Err(e) => {
                    self.in_chunk = false;
                    self.returned_damaged |= self.unchecked.take().is_some();
                    let err = self.chunks.decode_damage(e);
                    self.chunks.stop();
                    return Some(Err(err));
                }
            }
        };
        self.core.event(step, self.chunks.payload()).map(Ok)
    }
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
