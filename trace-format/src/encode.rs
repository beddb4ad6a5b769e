//! The canonical encoder of one thread stream (§6.5): block executions
//! into block records, with runs folded and addresses predicted, and events,
//! into chunks of about the writer's target size.

use crate::block_table::{BlockId, BlockTable};
use crate::error::{Error, Result};
use crate::event;
use crate::limits;
use crate::manifest::ThreadSummary;
use crate::predict::Predictor;
use crate::stream::ChunkWriter;
use crate::varint::{self, zigzag};
use crate::writer::BlockSink;

/// What the writer keeps of one thread: its chunk being filled, its
/// predictor, the run of one block not written yet, its summary.
pub(crate) struct ThreadState {
    pub(crate) out: ChunkWriter,
    pub(crate) pred: Predictor,
    pub(crate) pending: u64,
    /// Operands of the executions in the pending run.
    pub(crate) pending_ops: u64,
    pub(crate) scratch: Vec<u8>,
    pub(crate) target: usize,
    pub(crate) summary: ThreadSummary,
    pub(crate) failed: bool,
}

impl ThreadState {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn exec(
        &mut self,
        sink: &mut BlockSink,
        id: BlockId,
        partial: Option<u32>,
        insns: u32,
        n_ops: usize,
        addr: impl Fn(usize) -> Option<u64> + Copy,
    ) -> Result<()> {
        let complete = partial.is_none();
        let rec = *sink.table.rec(id);
        self.summary.traced_instructions += insns as u64;
        // Operand values are encoded into `scratch` under the current
        // state (which they update); `surprise` = has_addresses.
        let mut surprise = None;
        if complete && self.pred.candidates()[0] == id {
            let s = self.encode_ops(&sink.table, id, n_ops, addr)?;
            if !s {
                self.pred.arrive(id, rec.address);
                self.pred.depart(id, &rec, true, &sink.table);
                self.pending += 1;
                self.pending_ops += n_ops as u64;
                // The limits of §9: a run ends at 64 executions, or once
                // its executions have 256 operands.
                if self.pending == limits::MAX_RUN || self.pending_ops >= limits::RUN_OPERANDS {
                    self.write_pending_run(sink)?;
                }
                return Ok(());
            }
            surprise = Some(s);
        }
        // A complete execution carries a short pending run as its prefix
        // (§6.1); otherwise the run is a record of its own.
        let prefix = if complete && self.pending <= limits::MAX_RUN_PREFIX {
            self.pending_ops = 0;
            std::mem::take(&mut self.pending)
        } else {
            if self.write_pending_run(sink)? {
                surprise = None; // the state was reset: encode again
            }
            0
        };
        let cand = self.pred.candidates();
        let code = if cand[0] == id {
            0
        } else if cand[1] == id {
            1
        } else {
            id as u64 + 2
        };
        let has_addr = match surprise {
            Some(s) => s,
            None => self.encode_ops(&sink.table, id, n_ops, addr)?,
        };
        let buf = &mut self.out.buf;
        if let Some(ni) = partial {
            event::encode_fields(buf, event::PARTIAL, &[ni as u64, n_ops as u64]);
        }
        varint::put(buf, code << 5 | prefix << 3 | (has_addr as u64) << 2);
        if has_addr {
            buf.extend_from_slice(&self.scratch);
        }
        self.pred.arrive(id, rec.address);
        self.pred.depart(id, &rec, complete, &sink.table);
        self.maybe_close(sink)?;
        Ok(())
    }

    /// Predicts, encodes and applies the operands of one execution; returns
    /// whether any is absent or mispredicted.
    pub(crate) fn encode_ops(
        &mut self,
        table: &BlockTable,
        id: BlockId,
        n_ops: usize,
        addr: impl Fn(usize) -> Option<u64>,
    ) -> Result<bool> {
        self.scratch.clear();
        let ops = table.block(id).unwrap().operands();
        let mut surprise = false;
        let mut prev = None;
        for (j, op) in ops.iter().enumerate().take(n_ops) {
            let p = self.pred.predict(id, j as u32, prev);
            let Some(a) = addr(j) else {
                self.scratch.push(0);
                surprise = true;
                continue;
            };
            let d = a.wrapping_sub(p.addr) as i64;
            if op.conditional {
                if d == i64::MIN {
                    return Err(Error::Invalid(format!(
                        "block {id} operand {j}: address {a:#x} is 2^63 from its prediction, which a conditional operand cannot express"
                    )));
                }
                varint::put(&mut self.scratch, zigzag(d) + 1);
            } else {
                varint::put(&mut self.scratch, zigzag(d));
            }
            surprise |= d != 0;
            self.pred.update(p, a, prev);
            prev = Some(a);
        }
        Ok(surprise)
    }

    /// Writes the pending run, if any; returns whether the chunk was closed.
    pub(crate) fn write_pending_run(&mut self, sink: &mut BlockSink) -> Result<bool> {
        if self.pending == 0 {
            return Ok(false);
        }
        varint::put(&mut self.out.buf, (self.pending - 1) << 1 | 1);
        self.pending = 0;
        self.pending_ops = 0;
        self.maybe_close(sink)
    }

    pub(crate) fn maybe_close(&mut self, sink: &mut BlockSink) -> Result<bool> {
        if self.out.payload_len() < self.target {
            return Ok(false);
        }
        self.close(sink)?;
        Ok(true)
    }

    pub(crate) fn close(&mut self, sink: &mut BlockSink) -> Result<()> {
        if self.out.payload_len() == 0 {
            return Ok(());
        }
        // Block definitions reach the disk before the chunks that use them.
        sink.out.close_chunk()?;
        self.out.close_chunk()?;
        self.pred.reset();
        Ok(())
    }

    pub(crate) fn flush(&mut self, sink: &mut BlockSink) -> Result<()> {
        self.write_pending_run(sink)?;
        self.close(sink)
    }
}
