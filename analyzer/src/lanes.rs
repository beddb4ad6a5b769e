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

/// Reads the steps of one unit.
pub struct LaneSource<'t> {
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

impl<'t> LaneSource<'t> {
    /// A source for `unit`, whose thread's chunks start as in `chunks`.
    pub fn open(
        trace: &'t Trace,
        canon: &'t CanonicalBlocks,
        unit: &Unit,
        chunks: &[ChunkStart],
    ) -> tf_trace::Result<LaneSource<'t>> {
        let mut reader = trace.read_thread(unit.tid)?;
        reader.set_validate(false);
        let _ = chunks;
        Ok(LaneSource {
            reader,
            canon,
            next_event: 0,
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
        })
    }

    /// The stack pointer at the unit's start, if a call just before it
    /// pushed its return address (known once the first step is read).
    pub fn start_sp(&self) -> Option<u64> {
        self.start_sp
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
                if let Some(step) = self.next_piece() {
                    let pos = Pos {
                        event: self.event,
                        piece: (self.piece - 1) as u16,
                    };
                    if pos >= self.end {
                        self.done = true;
                        return Ok(false);
                    }
                    if pos < self.start {
                        self.start_sp =
                            call_push(&self.accesses[step.acc.0 as usize..step.acc.1 as usize])
                                .or(self.start_sp);
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
            let before_start = event < self.start.event;
            match ev? {
                Event::Block(x) => {
                    if before_start {
                        self.start_sp = call_push(x.accesses()).or(self.start_sp);
                        continue;
                    }
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
                _ if before_start => {}
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
        let ran = self.left.min(u32::from(p.n_insns));
        self.left -= ran;
        let end_op = p.first_op + p.n_ops;
        let lo = self.acc_pos;
        let hi = lo
            + self.accesses[lo..]
                .iter()
                .take_while(|a| a.operand < end_op)
                .count();
        self.acc_pos = hi;
        let whole = ran == u32::from(p.n_insns) && (self.left > 0 || self.complete);
        Some(LaneStep {
            cblock: p.cblock,
            insns: ran,
            end: if whole {
                self.canon.block(p.cblock).end
            } else {
                EndKind::Other
            },
            first_op: p.first_op,
            acc: (lo as u32, hi as u32),
        })
    }
}
