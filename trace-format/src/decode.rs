//! Decoding one thread-stream chunk (§6): block records, runs and events,
//! with or without the addresses of memory operands.
//! [`ThreadReader`](crate::ThreadReader) goes through a file's chunks with
//! it; [`ChunkDecoder`] decodes chunks handed to it one by one.

use crate::block_table::{BlockId, BlockTable};
use crate::error::{DecodeError, Result};
use crate::event::{Access, BlockExec, Event, Via};
use crate::limits;
use crate::predict::{Course, Predictor, NONE};
use crate::stream::TableParams;
use crate::varint::Cursor;

mod chunk_decoder;
mod events;
mod operands;
mod rounds;
mod runs;
mod state;
mod stats;
mod steady;
pub use chunk_decoder::{ChunkDecoder, ChunkEvents};
pub(crate) use state::CoreState;
pub use stats::ChunkStats;

/// What one decoding step found; what it decoded stays in the [`Core`]
/// ([`Core::event`] lends it). Without fields, a step is returned in a
/// register: returned with the block's fields, it was written to memory in
/// parts and read back in words, and the reads stalled (store forwarding
/// fails) at every block execution.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    End,
    Block,
    Event,
    Unknown,
}

/// The last block execution decoded.
#[derive(Clone, Copy)]
struct BlockStep {
    block: BlockId,
    insns: u32,
    operands: u32,
    complete: bool,
    via: Via,
}

/// The decoder of one chunk payload. `ADDR = false` decodes structure and
/// control flow only (validation, statistics and the scan), `true` also
/// addresses; `COUNT` keeps [`ChunkStats`] (validation only: counting costs
/// every other reading a few stores per record).
#[derive(Clone)]
pub(crate) struct Core<'t> {
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
    pub(crate) accesses: Vec<Access>,
    pub(crate) n_acc: usize,
    /// The last execution's present operands (`n_acc` when decoding
    /// addresses; counted from the record otherwise).
    present: u32,
    /// The last [`Step::Block`].
    block: BlockStep,
    /// The last [`Step::Event`].
    event: Event<'static>,
    /// The last [`Step::Unknown`]: its type and its payload's range.
    unknown: (u64, usize, usize),
    stats: ChunkStats,
    /// The courses of the operands of the loop that runs go round, for
    /// [`Core::skip_rounds`] and the runs decoded from them.
    courses: Vec<Course>,
    /// The runs under way are decoded from `courses`.
    steady: Option<steady::Steady>,
    /// The run record (its position) found not to go round a loop.
    not_steady_at: usize,
}

impl<'t> Core<'t> {
    pub(crate) fn new(table: &'t BlockTable, params: TableParams) -> Core<'t> {
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
            present: 0,
            block: BlockStep {
                block: 0,
                insns: 0,
                operands: 0,
                complete: false,
                via: Via::Explicit,
            },
            event: Event::Unknown {
                ty: 0,
                payload: &[],
            },
            unknown: (0, 0, 0),
            stats: ChunkStats::default(),
            courses: Vec::new(),
            steady: None,
            not_steady_at: usize::MAX,
        }
    }

    pub(crate) fn start(&mut self) {
        self.pred.reset();
        self.prefix_done = false;
        self.run_left = 0;
        self.pos = 0;
        self.n_acc = 0;
        self.stats = ChunkStats::default();
        self.steady = None;
        self.not_steady_at = usize::MAX;
    }

    /// Decodes the whole payload without addresses: checks that it decodes.
    pub(crate) fn validate(&mut self, payload: &[u8]) -> Result<ChunkStats, DecodeError> {
        self.start();
        while !matches!(self.step::<false, true>(payload)?, Step::End) {}
        let mut s = self.stats;
        s.payload_bytes = payload.len() as u64;
        self.start();
        Ok(s)
    }

    #[inline]
    pub(crate) fn step<const ADDR: bool, const COUNT: bool>(
        &mut self,
        payload: &[u8],
    ) -> Result<Step, DecodeError> {
        if self.run_left > 0 {
            self.run_left -= 1;
            return self.run_step::<ADDR, COUNT>();
        }
        let mut cur = Cursor::at(payload, self.pos);
        if cur.is_empty() {
            return Ok(Step::End);
        }
        let rpos = cur.pos();
        let h = cur.varint()?;
        match h & 3 {
            0 => self.block_record::<ADDR, COUNT>(h, rpos, None, &mut cur),
            2 => self.event_record::<ADDR, COUNT>(h, rpos, &mut cur),
            _ => {
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
                if COUNT {
                    self.stats.run_records += 1;
                }
                self.begin_run::<ADDR, COUNT>(rpos, (h >> 1) + 1)
            }
        }
    }

    /// The block record with header `h` at `rpos` (the rest at `cur`), a
    /// partial execution when `partial` gives its instructions, operands
    /// and the partial event's offset.
    #[inline(always)]
    fn block_record<const ADDR: bool, const COUNT: bool>(
        &mut self,
        h: u64,
        rpos: usize,
        partial: Option<(u64, u64, usize)>,
        cur: &mut Cursor<'_>,
    ) -> Result<Step, DecodeError> {
        // Runs that went round a loop end at a block record (events do not
        // change the prediction state).
        if self.steady.is_some() {
            self.settle();
        }
        let r = (h >> 3) & self.prefix_mask;
        if r != 0 && !std::mem::take(&mut self.prefix_done) {
            if let Some((_, _, p)) = partial {
                return Err(DecodeError::new(
                    p,
                    "partial event followed by a block record with a run prefix",
                ));
            }
            if COUNT {
                self.stats.run_prefixes += 1;
            }
            // the record's header is read again once the run is over
            self.pos = rpos;
            self.prefix_done = true;
            return self.begin_run::<ADDR, COUNT>(rpos, r);
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
        if COUNT {
            self.stats.block_records += 1;
            self.stats.explicit += (via == Via::Explicit) as u64;
            self.stats.with_addresses += has_addr as u64;
            self.stats.partial += partial.is_some() as u64;
        }
        let step = BlockStep {
            block: id,
            insns,
            operands: n_ops,
            complete: partial.is_none(),
            via,
        };
        self.exec::<ADDR, COUNT>(step, has_addr, cur)?;
        self.pos = cur.pos();
        Ok(Step::Block)
    }

    /// Executes `step`, reading its operands' values from `cur` when the
    /// record has addresses. It becomes the last block execution at once
    /// (read only after a step that succeeded).
    #[inline(always)]
    fn exec<const ADDR: bool, const COUNT: bool>(
        &mut self,
        step: BlockStep,
        has_addr: bool,
        cur: &mut Cursor<'_>,
    ) -> Result<(), DecodeError> {
        let BlockStep {
            block: id,
            insns,
            operands: n_ops,
            complete,
            ..
        } = step;
        self.block = step;
        let table = self.table;
        let rec = table.rec(id);
        self.pred.arrive(id, rec.address);
        if COUNT {
            self.stats.block_execs += 1;
            self.stats.insns += insns as u64;
        }
        let ops = &table.ops[rec.ops_start as usize..][..n_ops as usize];
        if ADDR {
            self.n_acc = self.operands(id, ops, has_addr, cur)?;
            self.present = self.n_acc as u32;
        } else if has_addr && rec.conditional {
            let mut present = 0;
            for op in ops {
                present += (cur.varint_nonzero()? || !op.conditional) as u32;
            }
            self.present = present;
        } else {
            // Every operand is present: only a conditional one may be
            // absent. The values are not wanted, only skipped.
            if has_addr {
                for _ in ops {
                    cur.varint()?;
                }
            }
            self.present = n_ops;
        }
        if COUNT && !ADDR {
            self.stats.accesses += u64::from(self.present);
        }
        self.pred.depart(id, rec, complete, table);
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn event<'p>(&'p self, step: Step, payload: &'p [u8]) -> Option<Event<'p>> {
        match step {
            Step::End => None,
            Step::Block => {
                let b = self.block;
                Some(Event::Block(BlockExec {
                    block: b.block,
                    insns: b.insns,
                    operands: b.operands,
                    complete: b.complete,
                    via: b.via,
                    present: self.present,
                    accesses: &self.accesses[..self.n_acc],
                }))
            }
            Step::Event => Some(self.event),
            Step::Unknown => {
                let (ty, start, end) = self.unknown;
                Some(Event::Unknown {
                    ty,
                    payload: &payload[start..end],
                })
            }
        }
    }
}
