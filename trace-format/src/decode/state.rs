//! A chunk decoder's state between two events, written out and read back
//! (see [`ReaderState`](crate::thread::ReaderState)).

use super::Core;
use crate::predict::PredictorState;
use serde::{Deserialize, Serialize};

/// Where a [`Core`] stands in its chunk, and what it has learnt there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CoreState {
    at: Place,
    pred: PredictorState,
}

/// Where in the chunk, and in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Place {
    pos: u64,
    prefix_done: bool,
    run_left: u64,
    run_pos: u64,
    run_ops: u64,
}

#[cfg(test)]
impl CoreState {
    /// This state at another position (to test states that do not fit).
    pub(crate) fn with_pos(mut self, pos: u64) -> CoreState {
        self.at.pos = pos;
        self
    }
}

impl CoreState {
    /// See [`PredictorState::since`].
    pub(crate) fn since(&self, earlier: &CoreState) -> Option<CoreState> {
        Some(CoreState {
            at: self.at,
            pred: self.pred.since(&earlier.pred)?,
        })
    }

    /// See [`PredictorState::after`].
    pub(crate) fn after(earlier: &CoreState, delta: &CoreState) -> CoreState {
        CoreState {
            at: delta.at,
            pred: PredictorState::after(&earlier.pred, &delta.pred),
        }
    }
}

impl Core<'_> {
    /// The state, for [`Core::restore`].
    pub(crate) fn save(&self) -> CoreState {
        debug_assert!(self.steady.is_none(), "settled before it is saved");
        CoreState {
            at: Place {
                pos: self.pos as u64,
                prefix_done: self.prefix_done,
                run_left: self.run_left,
                run_pos: self.run_pos as u64,
                run_ops: self.run_ops,
            },
            pred: self.pred.save(),
        }
    }

    /// Takes state `s`, saved in a chunk of `payload_len` bytes; an error
    /// names what does not fit.
    pub(crate) fn restore(&mut self, s: &CoreState, payload_len: usize) -> Result<(), String> {
        self.start();
        let (at, len) = (s.at, payload_len as u64);
        if at.pos > len || at.run_pos > len {
            return Err(format!("position past the chunk's {len} bytes"));
        }
        self.pred.restore(&s.pred, self.table.len() as u32)?;
        self.pos = at.pos as usize;
        self.prefix_done = at.prefix_done;
        self.run_left = at.run_left;
        self.run_pos = at.run_pos as usize;
        self.run_ops = at.run_ops;
        Ok(())
    }
}
