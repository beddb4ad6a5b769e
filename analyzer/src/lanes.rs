//! The steps of one unit, read from its thread's stream for a SIMT lane.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::scan::{call_push, ChunkStart};
use crate::units::{Pos, Unit};
use tf_trace::{Access, BlockId, EndKind, Event, LockKind, Trace};

/// One step of a lane: the canonical block it runs next.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaneStep {
    /// The canonical block.
    pub cblock: CBlockId,
    /// Instructions it executes.
    pub insns: u32,
    /// How it ends.
    pub end: EndKind,
    /// Operand index offset (see [`Step::first_op`](crate::blocks::Step::first_op)).
    pub first_op: u16,
    /// Its accesses, as a range of [`LaneSource::accesses`].
    acc: (u32, u32),
}

/// Something that happened between two steps of a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneEvent {
    /// The lane took a lock.
    Acquire {
        /// Kind of lock.
        kind: LockKind,
        /// Its address.
        lock: u64,
    },
    /// The lane released a lock.
    Release {
        /// Kind of lock.
        kind: LockKind,
        /// Its address.
        lock: u64,
    },
    /// A signal handler starts with the next step.
    Signal,
    /// A signal handler returned.
    SignalReturn,
}

/// Reads the steps of one unit from its thread's stream.
pub struct UnitReader<'t> {
    reader: tf_trace::ThreadReader<'t>,
    canon: &'t CanonicalBlocks,
    /// Index of the next event the reader returns.
    next_event: u64,
    start: Pos,
    end: Pos,
    /// The block event being split into steps: its block, instructions left
    /// to hand out, completeness and accesses (copied once from the reader).
    block: BlockId,
    event: u64,
    piece: usize,
    left: u32,
    complete: bool,
    accesses: Vec<Access>,
    acc_pos: usize,
    in_block: bool,
    /// The last call's return-address push before the unit's start.
    start_sp: Option<u64>,
    done: bool,
}

impl<'t> UnitReader<'t> {
    /// A reader of `unit`, whose thread's chunks start as in `chunks`,
    /// positioned at the unit's start.
    pub fn open(
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitReader<'t>> {
        let mut reader = trace.read_thread(unit.tid)?;
        reader.set_validate(false);
        // Start at the last chunk that begins before the unit (the event just
        // before the unit, the call that made it, tells its stack pointer).
        let k = chunks.partition_point(|c| c.first_event < unit.start.event);
        let mut next_event = 0;
        if let Some(c) = k.checked_sub(1).map(|k| chunks[k]) {
            reader.seek_chunk(c.offset, c.seq)?;
            next_event = c.first_event;
        }
        let mut r = UnitReader {
            reader,
            canon,
            next_event,
            start: unit.start,
            end: unit.end,
            block: 0,
            event: 0,
            piece: 0,
            left: 0,
            complete: true,
            accesses: Vec::new(),
            acc_pos: 0,
            in_block: false,
            start_sp: None,
            done: false,
        };
        r.skip_to_start()?;
        Ok(r)
    }

    /// A second reader at the same point, going on independently (see
    /// [`tf_trace::ThreadReader::try_clone`]).
    pub fn try_clone(&self) -> tf_trace::Result<UnitReader<'t>> {
        Ok(UnitReader {
            reader: self.reader.try_clone()?,
            canon: self.canon,
            next_event: self.next_event,
            start: self.start,
            end: self.end,
            block: self.block,
            event: self.event,
            piece: self.piece,
            left: self.left,
            complete: self.complete,
            accesses: self.accesses.clone(),
            acc_pos: self.acc_pos,
            in_block: self.in_block,
            start_sp: self.start_sp,
            done: self.done,
        })
    }

    /// Reads what lies before the unit's start, so that the next step is
    /// the unit's first (or, when the unit starts inside a block event,
    /// that event's pieces are next); notes the last call's push on the way.
    fn skip_to_start(&mut self) -> tf_trace::Result<()> {
        while !self.done {
            if self.in_block {
                if self.event >= self.start.event {
                    return Ok(());
                }
                while let Some(step) = self.next_piece() {
                    self.start_sp = call_push(self.accesses(&step)).or(self.start_sp);
                }
                self.in_block = false;
            }
            if self.next_event >= self.start.event {
                return Ok(());
            }
            let Some(ev) = self.reader.next_event() else {
                self.done = true;
                return Ok(());
            };
            self.next_event += 1;
            if let Event::Block(x) = ev? {
                self.start_sp = call_push(x.accesses()).or(self.start_sp);
            }
        }
        Ok(())
    }

    /// The stack pointer at the unit's start, if a call just before it
    /// pushed its return address (known once the first step is read).
    pub fn start_sp(&self) -> Option<u64> {
        self.start_sp
    }

    /// Moves on to read `unit` instead, positioned at its start, if it lies
    /// ahead in the same thread (as the next units of a warp usually do);
    /// false if it does not.
    pub fn retarget(&mut self, unit: &Unit) -> tf_trace::Result<bool> {
        let here = if self.in_block && self.left > 0 {
            Pos {
                event: self.event,
                piece: self.piece as u16,
            }
        } else {
            Pos {
                event: self.next_event,
                piece: 0,
            }
        };
        if unit.tid != self.reader.tid() || unit.start < here {
            return Ok(false);
        }
        self.start = unit.start;
        self.end = unit.end;
        self.start_sp = None;
        self.done = false;
        self.skip_to_start()?;
        Ok(true)
    }

    /// The accesses of `step`, the step last returned.
    #[inline]
    pub fn accesses(&self, step: &LaneStep) -> &[Access] {
        &self.accesses[step.acc.0 as usize..step.acc.1 as usize]
    }

    /// Fills `out` with the next step and `events` with what happened since
    /// the previous one; false at the end of the unit.
    pub fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        events.clear();
        loop {
            if self.done {
                return Ok(false);
            }
            if self.in_block {
                let pos = Pos {
                    event: self.event,
                    piece: self.piece as u16,
                };
                if self.left > 0 && pos >= self.end {
                    // Not consumed: it may start the next unit.
                    self.done = true;
                    return Ok(false);
                }
                if let Some(step) = self.next_piece() {
                    if pos < self.start {
                        self.start_sp = call_push(self.accesses(&step)).or(self.start_sp);
                        continue;
                    }
                    *out = step;
                    return Ok(true);
                }
                self.in_block = false;
            }
            let event = self.next_event;
            if (Pos { event, piece: 0 }) >= self.end {
                self.done = true;
                return Ok(false);
            }
            let Some(ev) = self.reader.next_event() else {
                self.done = true;
                return Ok(false);
            };
            self.next_event += 1;
            // Events before the unit's start were read by `skip_to_start`.
            match ev? {
                Event::Block(x) => {
                    self.block = x.block;
                    self.event = event;
                    self.piece = 0;
                    self.left = x.insns;
                    self.complete = x.complete;
                    self.accesses.clear();
                    self.accesses.extend_from_slice(x.accesses());
                    self.acc_pos = 0;
                    self.in_block = true;
                }
                Event::LockAcquire { kind, lock } => events.push(LaneEvent::Acquire { kind, lock }),
                Event::LockRelease { kind, lock } => events.push(LaneEvent::Release { kind, lock }),
                Event::Signal { .. } => events.push(LaneEvent::Signal),
                Event::SignalReturn { .. } => events.push(LaneEvent::SignalReturn),
                _ => {}
            }
        }
    }

    /// The next piece of the current block event (see [`crate::blocks::steps`]).
    #[inline]
    fn next_piece(&mut self) -> Option<LaneStep> {
        if self.left == 0 {
            return None;
        }
        let p = *self.canon.pieces(self.block).get(self.piece)?;
        self.piece += 1;
        let (ran, end, end_op) = p.cut(self.canon, &mut self.left, self.complete);
        let lo = self.acc_pos;
        let hi = lo
            + self.accesses[lo..]
                .iter()
                .take_while(|a| a.operand < end_op)
                .count();
        self.acc_pos = hi;
        Some(LaneStep {
            cblock: p.cblock,
            insns: ran,
            end,
            first_op: p.first_op,
            acc: (lo as u32, hi as u32),
        })
    }
}

/// Steps decoded ahead by a reader thread.
struct Batch {
    /// Steps, each with the end of its events in `events`.
    steps: Vec<(LaneStep, u32)>,
    events: Vec<LaneEvent>,
    accesses: Vec<Access>,
    start_sp: Option<u64>,
    /// The unit ends after these steps (with this error, if it failed).
    end: bool,
    error: Option<tf_trace::Error>,
}

/// Steps per batch: large enough that handing batches over costs nothing,
/// small enough that the reader thread keeps only a little ahead.
const BATCH_STEPS: usize = 8192;

impl Batch {
    fn new() -> Batch {
        Batch {
            steps: Vec::with_capacity(BATCH_STEPS),
            events: Vec::new(),
            accesses: Vec::new(),
            start_sp: None,
            end: false,
            error: None,
        }
    }
}

/// Reads steps of `reader` into `batch` until it holds `max` steps or the
/// unit ends (then `batch.end` is set, with the error if reading failed).
fn fill(reader: &mut UnitReader<'_>, batch: &mut Batch, max: usize) {
    let mut step = LaneStep::default();
    let mut events = Vec::new();
    while batch.steps.len() < max {
        match reader.next_step(&mut step, &mut events) {
            Ok(true) => {
                batch.events.extend_from_slice(&events);
                let acc = reader.accesses(&step);
                let lo = batch.accesses.len() as u32;
                batch.accesses.extend_from_slice(acc);
                let mut s = step;
                s.acc = (lo, lo + acc.len() as u32);
                batch.steps.push((s, batch.events.len() as u32));
            }
            Ok(false) => {
                batch.end = true;
                break;
            }
            Err(e) => {
                batch.end = true;
                batch.error = Some(e);
                break;
            }
        }
    }
    batch.start_sp = reader.start_sp();
}

/// Runs `reader` to the end of its unit, sending batches of steps.
fn decode_ahead(mut reader: UnitReader<'_>, tx: std::sync::mpsc::SyncSender<Batch>) {
    loop {
        let mut batch = Batch::new();
        fill(&mut reader, &mut batch, BATCH_STEPS);
        let end = batch.end;
        if tx.send(batch).is_err() || end {
            return;
        }
    }
}

/// The consuming side of [`decode_ahead`].
struct Prefetched {
    rx: std::sync::mpsc::Receiver<Batch>,
    batch: Batch,
    pos: usize,
    events_pos: usize,
}

impl Prefetched {
    fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        loop {
            if let Some(&(step, events_end)) = self.batch.steps.get(self.pos) {
                events.clear();
                events.extend_from_slice(&self.batch.events[self.events_pos..events_end as usize]);
                self.events_pos = events_end as usize;
                self.pos += 1;
                *out = step;
                return Ok(true);
            }
            if self.batch.end {
                return match self.batch.error.take() {
                    Some(e) => Err(e),
                    None => Ok(false),
                };
            }
            match self.rx.recv() {
                Ok(b) => {
                    self.batch = b;
                    self.pos = 0;
                    self.events_pos = 0;
                }
                Err(_) => return Ok(false),
            }
        }
    }
}

/// Where a lane's steps come from: read as the lane needs them, or decoded
/// ahead on a thread of their own (when there are fewer warps than cores,
/// this puts the decoding of a warp's lanes on the idle cores).
pub enum LaneSource<'t> {
    /// Read on demand.
    Direct(Box<UnitReader<'t>>),
    /// Decoded ahead by another thread.
    Prefetched(PrefetchedSource),
}

/// The state of a [`LaneSource::Prefetched`].
pub struct PrefetchedSource(Prefetched);

impl<'t> LaneSource<'t> {
    /// Reads `reader` on demand.
    pub fn direct(reader: UnitReader<'t>) -> LaneSource<'t> {
        LaneSource::Direct(Box::new(reader))
    }

    /// Decodes `reader` ahead on a thread of `scope`.
    pub fn prefetched<'scope>(
        reader: UnitReader<'t>,
        scope: &'scope std::thread::Scope<'scope, '_>,
    ) -> LaneSource<'t>
    where
        't: 'scope,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        scope.spawn(move || decode_ahead(reader, tx));
        let empty = Batch::new();
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            batch: empty,
            pos: 0,
            events_pos: 0,
        }))
    }

    /// A source for a unit already read whole into `batch`.
    fn whole(batch: Batch) -> LaneSource<'t> {
        let (_, rx) = std::sync::mpsc::sync_channel(0);
        LaneSource::Prefetched(PrefetchedSource(Prefetched {
            rx,
            batch,
            pos: 0,
            events_pos: 0,
        }))
    }

    /// See [`UnitReader::next_step`].
    #[inline]
    pub fn next_step(
        &mut self,
        out: &mut LaneStep,
        events: &mut Vec<LaneEvent>,
    ) -> tf_trace::Result<bool> {
        match self {
            LaneSource::Direct(r) => r.next_step(out, events),
            LaneSource::Prefetched(p) => p.0.next_step(out, events),
        }
    }

    /// See [`UnitReader::accesses`].
    #[inline]
    pub fn accesses(&self, step: &LaneStep) -> &[Access] {
        match self {
            LaneSource::Direct(r) => r.accesses(step),
            LaneSource::Prefetched(p) => {
                &p.0.batch.accesses[step.acc.0 as usize..step.acc.1 as usize]
            }
        }
    }

    /// See [`UnitReader::start_sp`] (known once the first step is read).
    pub fn start_sp(&self) -> Option<u64> {
        match self {
            LaneSource::Direct(r) => r.start_sp(),
            LaneSource::Prefetched(p) => p.0.batch.start_sp,
        }
    }
}

/// Units of at most this many events are read whole when their warp starts.
pub const SMALL_UNIT_EVENTS: u64 = 1 << 14;

/// Readers kept from one warp to the next by one worker: small units that
/// follow each other in a thread (loop iterations, calls of a function) are
/// read in one pass over the thread, not one pass from its start each.
#[derive(Default)]
pub struct UnitCache<'t> {
    /// Most recently used last; at most [`UnitCache::KEEP`].
    readers: Vec<UnitReader<'t>>,
}

impl<'t> UnitCache<'t> {
    /// Readers kept.
    const KEEP: usize = 4;

    /// The source of `unit`'s lane: read whole now when the unit is small
    /// (continuing the reader of its thread when the unit lies ahead of it),
    /// else read as the lane goes, on a thread of `scope` when `ahead`.
    pub fn source<'scope>(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
        ahead: Option<&'scope std::thread::Scope<'scope, '_>>,
    ) -> tf_trace::Result<LaneSource<'t>>
    where
        't: 'scope,
    {
        let mut reader = self.reader_for(trace, canon, unit, chunks)?;
        if unit.end.event.saturating_sub(unit.start.event) > SMALL_UNIT_EVENTS {
            // A long unit is read as the lane goes, by a copy of the reader
            // (which stands at its start); the kept reader goes on from there to the
            // next unit of the thread, so that the lanes of consecutive
            // units of one thread decode it about twice in all, not once per
            // lane from the start of a chunk (which may hold the whole thread).
            let lane = reader.try_clone()?;
            self.keep(reader);
            return Ok(match ahead {
                Some(scope) => LaneSource::prefetched(lane, scope),
                None => LaneSource::direct(lane),
            });
        }
        let mut batch = Batch::new();
        fill(&mut reader, &mut batch, usize::MAX);
        self.keep(reader);
        Ok(LaneSource::whole(batch))
    }

    /// A reader of `unit`: the kept reader of its thread when the unit lies
    /// ahead of it in the same chunk, else a new one at the unit's chunk.
    fn reader_for(
        &mut self,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitReader<'t>> {
        // The first event of the chunk that `UnitReader::open` would seek
        // to: a reader behind it is better off seeking there.
        let k = chunks.partition_point(|c| c.first_event < unit.start.event);
        let chunk_start = k.checked_sub(1).map_or(0, |k| chunks[k].first_event);
        if let Some(i) = self.readers.iter().position(|r| r.reader.tid() == unit.tid) {
            let mut r = self.readers.remove(i);
            if r.next_event >= chunk_start && r.retarget(unit)? {
                return Ok(r);
            }
        }
        UnitReader::open(trace, canon, unit, chunks)
    }

    /// Keeps `reader` for later units of its thread.
    fn keep(&mut self, reader: UnitReader<'t>) {
        self.readers.push(reader);
        if self.readers.len() > Self::KEEP {
            self.readers.remove(0);
        }
    }
}
