//! Runs (§6.1) in the chunk decoder: a run record, or a block record's
//! run prefix, stands for executions that each follow successor candidate
//! 0; each is decoded here one at a time, its operands counted against the
//! limit (§9).

use super::{BlockStep, Core, Step};
use crate::error::DecodeError;
use crate::event::Via;
use crate::limits;
use crate::predict::NONE;
use crate::varint::Cursor;

impl Core<'_> {
    /// A run of `k` executions whose record (or whose block record, for a
    /// run prefix) starts at `rpos`: its first execution.
    #[inline(always)]
    pub(super) fn begin_run<const ADDR: bool, const COUNT: bool>(
        &mut self,
        rpos: usize,
        k: u64,
    ) -> Result<Step, DecodeError> {
        self.run_pos = rpos;
        self.run_ops = 0;
        self.run_left = k - 1;
        self.run_step::<ADDR, COUNT>()
    }

    /// One execution of the run under way (the next of candidate 0).
    #[inline(always)]
    pub(super) fn run_step<const ADDR: bool, const COUNT: bool>(
        &mut self,
    ) -> Result<Step, DecodeError> {
        if ADDR && !COUNT && self.decodes_from_courses() {
            return self.steady_step();
        }
        let id = self.pred.candidates()[0];
        if id == NONE {
            return Err(DecodeError::new(
                self.run_pos,
                "run: successor candidate 0 does not exist",
            ));
        }
        let rec = self.table.rec(id);
        let (insns, n_ops) = (rec.n_insns, rec.n_ops);
        self.count_run_operands(n_ops)?;
        if COUNT {
            self.stats.run_blocks += 1;
        }
        let step = BlockStep {
            block: id,
            insns,
            operands: n_ops,
            complete: true,
            via: Via::Run,
        };
        self.exec::<ADDR, COUNT>(step, false, &mut Cursor::new(&[]))?;
        Ok(Step::Block)
    }

    /// Counts the operands of the run's next execution, which must not go
    /// on past the limit (§9).
    #[inline(always)]
    pub(super) fn count_run_operands(&mut self, n_ops: u32) -> Result<(), DecodeError> {
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
        Ok(())
    }
}
