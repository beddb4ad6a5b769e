//! Runs that go round a loop, skipped whole rounds at a time (see
//! `predict/rounds.rs` for why the state after them is known).

use super::operands::access;
use super::{BlockStep, Core};
use crate::block_table::BlockId;
use crate::event::Via;
use crate::limits;
use crate::varint::Cursor;

impl Core<'_> {
    /// Skips block executions of the run under way, and of the run records
    /// right after it, while they go round a loop, at most `max`; leaves
    /// the state (the address entries too when `addresses`) as decoding
    /// them one by one would, and returns how many it skipped (0 when they
    /// do not go round a loop it can skip). The last round before `max`,
    /// and the last of the runs before a record of another kind, are left
    /// to be decoded, so that a reader that looks at each execution still
    /// sees every block of the loop at its place.
    pub(crate) fn skip_rounds(&mut self, payload: &[u8], max: u64, addresses: bool) -> u64 {
        self.settle();
        let mut skipped = 0;
        loop {
            // The run to skip in: the one under way, or the run record
            // that comes next, begun only if some of it is skipped (so that
            // the state stays the one decoding leaves).
            let (run_left, run_ops, begun_at) = if self.run_left > 0 {
                (self.run_left, self.run_ops, None)
            } else {
                match self.run_at(payload, self.pos) {
                    Some((k, after)) => (k, 0, Some(after)),
                    None => return skipped,
                }
            };
            let Some(round) = self.pred.round(self.table) else {
                return skipped;
            };
            let per_round = round.blocks().len() as u64;
            // A round of run executions is left right after the skipped
            // ones, before `max`: in this run, or in the next when this one
            // is skipped to its end.
            let mut n = run_left.min((max - skipped).saturating_sub(per_round));
            if run_left - n < per_round {
                let after = begun_at.unwrap_or(self.pos);
                let next_holds_one = n == run_left
                    && self
                        .run_at(payload, after)
                        .is_some_and(|(k, _)| k >= per_round);
                if !next_holds_one {
                    n = run_left.saturating_sub(per_round);
                }
            }
            // Every execution of a run checks the run's operands so far
            // against the limit (§9): the last one skipped must pass.
            let (k, partial) = (n / per_round, (n % per_round) as usize);
            let operands = k * round.operands + round.first_operand(partial) as u64;
            let last_ops = n.checked_sub(1).map_or(0, |i| {
                let b = round.blocks()[(i % per_round) as usize];
                u64::from(self.table.rec(b).n_ops)
            });
            if n == 0
                || run_ops + operands - last_ops >= limits::RUN_OPERANDS
                || !self
                    .pred
                    .go_round(self.table, &round, n, addresses, &mut self.courses)
            {
                return skipped;
            }
            if let Some(after) = begun_at {
                (self.run_pos, self.pos) = (self.pos, after);
            }
            self.run_left = run_left - n;
            self.run_ops = run_ops + operands;
            skipped += n;
            let last = round.blocks()[((n - 1) % per_round) as usize];
            self.ran(last, addresses, |core, j| {
                core.pred.last_address(last, j as u32)
            });
            if self.run_left > 0 {
                return skipped;
            }
        }
    }

    /// The run record at `pos`, if one is there: its executions, and where
    /// the record after it starts. (A block record's run prefix is no run
    /// record: the block record follows it at `pos`.)
    fn run_at(&self, payload: &[u8], pos: usize) -> Option<(u64, usize)> {
        let mut cur = Cursor::at(payload, pos);
        let h = cur.varint().ok()?;
        (h & 1 == 1 && h >> 1 < limits::MAX_RUN).then(|| ((h >> 1) + 1, cur.pos()))
    }

    /// Block `id`'s execution in a run, whose operand `j` accessed
    /// `addr(self, j)`, is the last one decoded: what [`Core::event`] and
    /// the accesses (when `addresses`) give.
    #[inline(always)]
    pub(super) fn ran(&mut self, id: BlockId, addresses: bool, addr: impl Fn(&Self, usize) -> u64) {
        let table = self.table;
        let rec = table.rec(id);
        self.block = BlockStep {
            block: id,
            insns: rec.n_insns,
            operands: rec.n_ops,
            complete: true,
            via: Via::Run,
        };
        self.present = rec.n_ops;
        if addresses {
            let ops = &table.ops[rec.ops_start as usize..][..rec.n_ops as usize];
            for (j, op) in ops.iter().enumerate() {
                let a = addr(self, j);
                self.accesses[j] = access(j, op, a);
            }
            self.n_acc = ops.len();
        }
    }
}
