//! Runs that go round a loop, decoded from their operands' courses: once a
//! run is seen to go round a loop whose operands all have their address
//! entries (`predict/rounds.rs`), each operand's address in each round is
//! known, so an execution only writes its accesses, without a table
//! lookup. The tables are brought up to date once, when the runs end (or
//! when the state is wanted), with what the executions would have left.

use super::{Core, Step};
use crate::error::DecodeError;
use crate::predict::Round;

/// The runs under way go round `round`: `rounds` whole rounds and the
/// first `phase` blocks of one more decoded so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct Steady {
    round: Round,
    rounds: u64,
    phase: usize,
}

/// A run with fewer rounds left than this is decoded entry by entry:
/// finding a loop's courses and writing them back costs about a round.
const MIN_ROUNDS: u64 = 3;

/// Nor is a run with fewer executions left than this looked at: most runs
/// of code other than loops are a few executions long.
const MIN_EXECUTIONS: u64 = 8;

impl Core<'_> {
    /// Whether the next execution of the run under way is decoded from
    /// the courses: the runs go round a loop already, or are found to now.
    #[inline(always)]
    pub(super) fn decodes_from_courses(&mut self) -> bool {
        self.steady.is_some()
            || (self.run_left + 1 >= MIN_EXECUTIONS
                && self.run_pos != self.not_steady_at
                && self.begin_steady())
    }

    /// Looks for the loop the run under way goes round, and its courses.
    #[inline(never)]
    fn begin_steady(&mut self) -> bool {
        // Tried once per run record.
        self.not_steady_at = self.run_pos;
        let Some(round) = self.pred.round(self.table) else {
            return false;
        };
        if self.run_left + 1 < MIN_ROUNDS * round.blocks().len() as u64
            || !self.pred.courses(self.table, &round, &mut self.courses)
        {
            return false;
        }
        self.steady = Some(Steady {
            round,
            rounds: 0,
            phase: 0,
        });
        true
    }

    /// Decodes the next execution of the run from the courses.
    #[inline(always)]
    pub(super) fn steady_step(&mut self) -> Result<Step, DecodeError> {
        let s = self.steady.as_mut().expect("steady");
        let (i, k) = (s.phase, s.rounds + 1);
        s.phase += 1;
        if s.phase == s.round.blocks().len() {
            (s.phase, s.rounds) = (0, k);
        }
        let (id, first) = (s.round.blocks()[i], s.round.first_operand(i));
        self.count_run_operands(self.table.rec(id).n_ops)?;
        self.ran(id, true, |core, j| core.courses[first + j].at(k));
        Ok(Step::Block)
    }

    /// Brings the prediction state up to date with the executions decoded
    /// from the courses, if any: afterwards the tables decode.
    pub(crate) fn settle(&mut self) {
        if let Some(s) = self.steady.take() {
            let n = s.rounds * s.round.blocks().len() as u64 + s.phase as u64;
            if n > 0 {
                self.pred
                    .went_round(self.table, &s.round, n, true, &self.courses);
            }
        }
    }
}
