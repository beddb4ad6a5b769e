//! The steps of one unit, read from its thread's stream for a SIMT lane.

use crate::blocks::{steps, CBlockId, CanonicalBlocks};
use crate::scan::ChunkStart;
use crate::units::{Pos, Unit};
use tf_trace::{Access, EndKind, Event, LockKind, Trace};

/// One step owned by its lane: the block it runs next.
#[derive(Clone, Debug, Default)]
pub struct LaneStep {
    /// The canonical block.
    pub cblock: CBlockId,
    /// Instructions it executes.
    pub insns: u32,
    /// How it ends.
    pub end: EndKind,
    /// Operand index offset (see [`Step::first_op`](crate::blocks::Step::first_op)).
    pub first_op: u16,
    /// Its memory accesses.
    pub accesses: Vec<Access>,
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

/// Reads the steps of one unit.
pub struct LaneSource<'t> {
    reader: tf_trace::ThreadReader<'t>,
    canon: &'t CanonicalBlocks,
    /// Index of the next event the reader returns.
    next_event: u64,
    end: Pos,
    /// The block event being split: its steps, owned (`n_pieces` of them
    /// are valid; the rest keep their buffers for reuse).
    pieces: Vec<LaneStep>,
    n_pieces: usize,
    /// Index of the next piece of `pieces` to hand out, and the event they
    /// belong to.
    piece: usize,
    pieces_event: u64,
    start: Pos,
    done: bool,
}

impl<'t> LaneSource<'t> {
    /// A source for `unit`, whose thread's chunks start as in `chunks`.
    pub fn open(
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<LaneSource<'t>> {
        let reader = trace.read_thread(unit.tid)?;
        let _ = chunks;
        Ok(LaneSource {
            reader,
            canon,
            next_event: 0,
            end: unit.end,
            pieces: Vec::new(),
            n_pieces: 0,
            piece: 0,
            pieces_event: 0,
            start: unit.start,
            done: false,
        })
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
            if self.piece < self.n_pieces {
                let pos = Pos {
                    event: self.pieces_event,
                    piece: self.piece as u16,
                };
                if pos >= self.end {
                    self.done = true;
                    return Ok(false);
                }
                self.piece += 1;
                if pos < self.start {
                    continue;
                }
                let p = &self.pieces[self.piece - 1];
                out.cblock = p.cblock;
                out.insns = p.insns;
                out.end = p.end;
                out.first_op = p.first_op;
                out.accesses.clear();
                out.accesses.extend_from_slice(&p.accesses);
                return Ok(true);
            }
            if (Pos {
                event: self.next_event,
                piece: 0,
            }) >= self.end
            {
                self.done = true;
                return Ok(false);
            }
            let event = self.next_event;
            let Some(ev) = self.reader.next_event() else {
                self.done = true;
                return Ok(false);
            };
            self.next_event += 1;
            let ev = ev?;
            let before_start = event < self.start.event;
            match ev {
                Event::Block(x) => {
                    if event < self.start.event {
                        continue;
                    }
                    let mut n = 0;
                    for s in steps(self.canon, x.block, x.insns, x.complete, x.accesses()) {
                        if n == self.pieces.len() {
                            self.pieces.push(LaneStep::default());
                        }
                        let p = &mut self.pieces[n];
                        p.cblock = s.cblock;
                        p.insns = s.insns;
                        p.end = s.end;
                        p.first_op = s.first_op;
                        p.accesses.clear();
                        p.accesses.extend_from_slice(s.accesses);
                        n += 1;
                    }
                    self.n_pieces = n;
                    self.piece = 0;
                    self.pieces_event = event;
                }
                _ if before_start => {}
                Event::LockAcquire { kind, lock } => events.push(LaneEvent::Acquire { kind, lock }),
                Event::LockRelease { kind, lock } => events.push(LaneEvent::Release { kind, lock }),
                Event::Signal { .. } => events.push(LaneEvent::Signal),
                Event::SignalReturn { .. } => events.push(LaneEvent::SignalReturn),
                _ => {}
            }
        }
    }
}
