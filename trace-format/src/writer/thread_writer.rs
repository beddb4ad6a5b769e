//! [`ThreadWriter`]: one thread's records, written as the canonical
//! procedure of §6.5 says.

use super::BlockSink;
use crate::block_table::BlockId;
use crate::encode::ThreadState;
use crate::error::{Error, Result};
use crate::event::{self, Event, ExitHow, LockKind, LoopChunk, SkipReason, StaticLoop};

/// Writes one thread's stream; see [`TraceWriter::thread`](super::TraceWriter::thread).
///
/// Each method appends one record (or extends a run) following the
/// canonical procedure of §6.5.
pub struct ThreadWriter<'w> {
    pub(super) sink: &'w mut BlockSink,
    pub(super) t: &'w mut ThreadState,
}

impl ThreadWriter<'_> {
    /// A complete execution of `block` whose operands all accessed memory,
    /// at these addresses (one per operand of the block).
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// # let dir = std::env::temp_dir().join(format!("tf-doc-exec-{}", std::process::id()));
    /// let mut w = tf_trace::TraceWriter::create(&dir)?;
    /// let b = w.block(&tf_trace::BlockDef::new(0x40).insn(3).read(8).write(8))?;
    /// w.thread(1)?.exec(b, &[0x1000, 0x2000])?;
    /// assert!(w.thread(1)?.exec(b, &[0x1000]).is_err()); // two operands
    /// # drop(w); std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn exec(&mut self, block: BlockId, addrs: &[u64]) -> Result<()> {
        self.exec_inner(block, None, addrs.len(), |j| Some(addrs[j]))
    }

    /// A complete execution where conditional operands may be absent (`None`).
    pub fn exec_opt(&mut self, block: BlockId, addrs: &[Option<u64>]) -> Result<()> {
        self.exec_inner(block, None, addrs.len(), |j| addrs[j])
    }

    /// A partial execution: the first `n_insns` instructions ran, and the
    /// operands are the first `addrs.len()` of the block.
    pub fn exec_partial(
        &mut self,
        block: BlockId,
        n_insns: u32,
        addrs: &[Option<u64>],
    ) -> Result<()> {
        self.exec_inner(block, Some(n_insns), addrs.len(), |j| addrs[j])
    }

    /// Complete executions of blocks without memory operands, in order.
    pub fn seq(&mut self, blocks: &[BlockId]) -> Result<()> {
        blocks.iter().try_for_each(|&b| self.exec(b, &[]))
    }

    fn exec_inner(
        &mut self,
        id: BlockId,
        partial: Option<u32>,
        n_ops: usize,
        addr: impl Fn(usize) -> Option<u64> + Copy,
    ) -> Result<()> {
        if self.t.failed {
            return Err(Error::Invalid(format!(
                "thread {}: writer failed earlier",
                self.t.summary.tid
            )));
        }
        let table = &self.sink.table;
        let Some(block) = table.block(id) else {
            return Err(Error::Invalid(format!(
                "block {id} not defined ({} blocks)",
                table.len()
            )));
        };
        let ops = block.operands();
        let insns = match partial {
            None if n_ops != ops.len() => {
                return Err(Error::Invalid(format!(
                    "block {id} has {} operands, {n_ops} addresses given",
                    ops.len()
                )))
            }
            None => block.n_insns() as u32,
            Some(ni) if ni == 0 || ni as usize > block.n_insns() || n_ops > ops.len() => {
                return Err(Error::Invalid(format!(
                    "partial execution of {ni} instructions and {n_ops} operands of block {id} ({} and {})",
                    block.n_insns(),
                    ops.len()
                )))
            }
            Some(ni) => ni,
        };
        if let Some(j) = (0..n_ops).find(|&j| addr(j).is_none() && !ops[j].conditional) {
            return Err(Error::Invalid(format!(
                "block {id} operand {j} is not conditional: it needs an address"
            )));
        }
        let r = self.t.exec(self.sink, id, partial, insns, n_ops, addr);
        if r.is_err() {
            self.t.failed = true;
        }
        r
    }

    /// Appends an event record (not [`Event::Block`]).
    pub fn event(&mut self, e: &Event<'_>) -> Result<()> {
        if matches!(e, Event::Block(_)) {
            return Err(Error::Invalid(
                "block executions are written with exec".into(),
            ));
        }
        let t = &mut *self.t;
        t.write_pending_run(self.sink)?;
        event::encode(&mut t.out.buf, e);
        match *e {
            Event::ThreadStart {
                parent,
                stack_lo,
                stack_hi,
                start_routine,
            } => {
                t.summary.parent = parent;
                t.summary.stack_lo = stack_lo;
                t.summary.stack_hi = stack_hi;
                t.summary.start_routine = start_routine;
            }
            Event::Skip { count, .. } => {
                t.summary.skipped_instructions =
                    t.summary.skipped_instructions.saturating_add(count)
            }
            _ => {}
        }
        t.maybe_close(self.sink)?;
        Ok(())
    }

    /// `thread_start` (type 1).
    pub fn thread_start(
        &mut self,
        parent: u64,
        stack_lo: u64,
        stack_hi: u64,
        start_routine: u64,
    ) -> Result<()> {
        self.event(&Event::ThreadStart {
            parent,
            stack_lo,
            stack_hi,
            start_routine,
        })
    }
    /// `thread_exit` (type 2).
    pub fn thread_exit(&mut self, how: ExitHow) -> Result<()> {
        self.event(&Event::ThreadExit { how })
    }
    /// `lock_acquire` (type 3).
    pub fn lock_acquire(&mut self, kind: LockKind, lock: u64) -> Result<()> {
        self.event(&Event::LockAcquire { kind, lock })
    }
    /// `lock_release` (type 4).
    pub fn lock_release(&mut self, kind: LockKind, lock: u64) -> Result<()> {
        self.event(&Event::LockRelease { kind, lock })
    }
    /// `skip` (type 5).
    pub fn skip(&mut self, reason: SkipReason, count: u64) -> Result<()> {
        self.event(&Event::Skip { reason, count })
    }
    /// `syscall` (type 6).
    pub fn syscall(&mut self, number: u64, nanos: u64) -> Result<()> {
        self.event(&Event::Syscall { number, nanos })
    }
    /// `signal` (type 7).
    pub fn signal(&mut self, signo: u64) -> Result<()> {
        self.event(&Event::Signal { signo })
    }
    /// `signal_return` (type 8).
    pub fn signal_return(&mut self, signo: u64) -> Result<()> {
        self.event(&Event::SignalReturn { signo })
    }
    /// `marker` (type 9).
    pub fn marker(&mut self, kind: u64, value: u64) -> Result<()> {
        self.event(&Event::Marker { kind, value })
    }
    /// `loop_chunk` (type 10, FORMAT.md §6.6).
    pub fn loop_chunk(&mut self, chunk: LoopChunk) -> Result<()> {
        self.event(&Event::LoopChunk(chunk))
    }

    /// `static_loop` (type 11, FORMAT.md §6.7).
    pub fn static_loop(&mut self, s: StaticLoop) -> Result<()> {
        self.event(&Event::StaticLoop(s))
    }

    /// `region_entry` (type 12, FORMAT.md §6.4): the thread enters the
    /// `--only` region with stack pointer `sp`.
    pub fn region_entry(&mut self, sp: u64) -> Result<()> {
        self.event(&Event::RegionEntry { sp })
    }
    /// An event of any type with a raw payload (to test readers with
    /// types they do not know). Type 0 (`partial`) is refused.
    pub fn raw_event(&mut self, ty: u64, payload: &[u8]) -> Result<()> {
        if ty == event::PARTIAL || ty > u64::MAX >> 2 {
            return Err(Error::Invalid(format!(
                "event type {ty} cannot be written raw"
            )));
        }
        self.event(&Event::Unknown { ty, payload })
    }

    /// Ends the current chunk (after the pending run), as a tracer does
    /// when the program is about to die or `exec`.
    pub fn flush(&mut self) -> Result<()> {
        self.t.flush(self.sink)
    }
}
