//! The steps of one unit, read from its thread's stream for a SIMT lane.

use crate::blocks::{CBlockId, CanonicalBlocks, PieceCursor};
use crate::scan::{call_push, ChunkStart};
use crate::units::{Pos, Unit};
use tf_trace::{Access, EndKind, Event, LockKind, Trace};

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
    /// Its accesses, as a range of [`LaneSource::accesses`](crate::lane_source::LaneSource::accesses).
    pub(crate) acc: (u32, u32),
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
    pub(crate) next_event: u64,
    start: Pos,
    end: Pos,
    /// The block event being split into steps: its index and where its
    /// split stands (its accesses are the reader's last, which stay until
    /// the reader is asked for the next event).
    event: u64,
    cursor: PieceCursor,
    in_block: bool,
    /// The last call's return-address push before the unit's start (or the
    /// stack pointer where the `--only` region was entered).
    start_sp: Option<u64>,
    done: bool,
}

/// Where a long unit's reader starts: its thread reader's place at the
/// unit's first event and what the walk there found, kept by the first
/// pass ([`crate::unit_starts`]) so that a lane's reader need not walk
/// there through the units before it (decoding them twice in all).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct UnitStart {
    pub(crate) reader: tf_trace::ReaderState,
    pub(crate) next_event: u64,
    pub(crate) start_sp: Option<u64>,
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
        UnitReader::at(reader, canon, unit, next_event, None)
    }

    /// A reader of `unit` whose thread reader's next event is `next_event`,
    /// with `start_sp` found so far, moved on to the unit's start.
    fn at(
        reader: tf_trace::ThreadReader<'t>,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        next_event: u64,
        start_sp: Option<u64>,
    ) -> tf_trace::Result<UnitReader<'t>> {
        let mut r = UnitReader {
            reader,
            canon,
            next_event,
            start: unit.start,
            end: unit.end,
            event: 0,
            cursor: PieceCursor::default(),
            in_block: false,
            start_sp,
            done: false,
        };
        r.skip_to_start()?;
        Ok(r)
    }

    /// A reader of `unit`, whose thread's chunks start as in `chunks`,
    /// positioned at its start: `kept` (a reader of the same thread) moved
    /// on when the unit lies ahead of it, past the start of the unit's
    /// chunk, else a new one at that chunk.
    pub fn reach(
        kept: Option<UnitReader<'t>>,
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<UnitReader<'t>> {
        // The first event of the chunk that `UnitReader::open` would seek
        // to: a reader behind it is better off seeking there.
        let k = chunks.partition_point(|c| c.first_event < unit.start.event);
        let chunk_start = k.checked_sub(1).map_or(0, |k| chunks[k].first_event);
        if let Some(mut r) = kept {
            if r.next_event >= chunk_start && r.retarget(unit)? {
                return Ok(r);
            }
        }
        UnitReader::open(trace, canon, unit, chunks)
    }

    /// Where this reader, just positioned at its unit's start, stands, for
    /// [`UnitReader::resume`]; `None` inside a block event or before the
    /// thread's first event (where opening a reader costs nothing).
    pub fn place(&mut self) -> Option<UnitStart> {
        if self.in_block || self.done {
            return None;
        }
        Some(UnitStart {
            reader: self.reader.state()?,
            next_event: self.next_event,
            start_sp: self.start_sp,
        })
    }

    /// A reader of `unit` where another one stood at its start ([`UnitReader::place`]).
    pub fn resume(
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        start: &UnitStart,
    ) -> tf_trace::Result<UnitReader<'t>> {
        let mut reader = trace.read_thread(unit.tid)?;
        reader.set_validate(false);
        reader.resume(&start.reader)?;
        UnitReader::at(reader, canon, unit, start.next_event, start.start_sp)
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
            event: self.event,
            cursor: self.cursor,
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
            // Read in place, as `next_step` reads (most of a long unit's
            // walk to its start comes through here).
            let read = self.reader.advance();
            if matches!(read, Ok(false)) {
                self.done = true;
                return Ok(());
            }
            self.next_event += 1;
            read?;
            match self.reader.current() {
                Some(Event::Block(x)) => self.start_sp = call_push(x.accesses()).or(self.start_sp),
                // the call into the --only region, which the trace lacks
                Some(Event::RegionEntry { sp }) => self.start_sp = Some(sp),
                _ => {}
            }
            // Whole rounds of a loop on the way are skipped, not decoded one
            // by one; a round is left to be read after them, so the last
            // push before the start is still seen above.
            self.next_event += self.reader.skip_rounds(self.start.event - self.next_event);
        }
        Ok(())
    }

    /// The thread whose stream this reads.
    pub fn tid(&self) -> u64 {
        self.reader.tid()
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
        let here = if self.in_block && self.cursor.has_more() {
            Pos {
                event: self.event,
                piece: self.cursor.piece() as u16,
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
        &self.reader.last_accesses()[step.acc.0 as usize..step.acc.1 as usize]
    }

    /// Fills `out` with the next step and `events` with what happened since
    /// the previous one; false at the end of the unit.
    // Always inlined: a lane's every step comes through here, and left out of
    // line its call saved and restored registers on every block.
    #[inline(always)]
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
                    piece: self.cursor.piece() as u16,
                };
                if self.cursor.has_more() && pos >= self.end {
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
            // Events before the unit's start were read by `skip_to_start`.
            // Read in place: the event is not built and returned through
            // memory, and only its fields that matter here are read.
            match self.reader.advance() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(false);
                }
                Err(e) => {
                    self.next_event += 1;
                    return Err(e);
                }
            }
            match self.reader.current().expect("advance read an event") {
                Event::Block(x) => {
                    self.event = event;
                    self.cursor = PieceCursor::new(x.block, x.insns, x.complete);
                    self.in_block = true;
                    self.next_event += 1;
                    // Strictly inside the unit (most events), neither of its
                    // bounds can cut this block: its first piece is the step.
                    if event > self.start.event && event < self.end.event {
                        if let Some(step) = self.next_piece() {
                            // a block of one piece (most) is done with
                            self.in_block = self.cursor.has_more();
                            *out = step;
                            return Ok(true);
                        }
                    }
                    continue;
                }
                Event::LockAcquire { kind, lock } => events.push(LaneEvent::Acquire { kind, lock }),
                Event::LockRelease { kind, lock } => events.push(LaneEvent::Release { kind, lock }),
                Event::Signal { .. } => events.push(LaneEvent::Signal),
                Event::SignalReturn { .. } => events.push(LaneEvent::SignalReturn),
                _ => {}
            }
            self.next_event += 1;
        }
    }

    /// The next piece of the current block event.
    // Always inlined: called for every step, and left out of line (as the
    // compiler chose once it read the accesses from the thread reader), it
    // cost a tenth of a one-warp replay.
    #[inline(always)]
    fn next_piece(&mut self) -> Option<LaneStep> {
        let (s, acc) = self
            .cursor
            .next_step(self.canon, self.reader.last_accesses())?;
        Some(LaneStep {
            cblock: s.cblock,
            insns: s.insns,
            end: s.end,
            first_op: s.first_op,
            acc: (acc.start as u32, acc.end as u32),
        })
    }
}
