//! How a lane moves between blocks, for the observer ([`super::Collector`]):
//! each lane's walk through its functions' blocks, and what each step of it
//! was: an edge within a function (a return is one), a call, or a start.

use super::block_slots::Slot;
use tf_trace::FunctionId;

/// A block of a function, as a function and the block's slot in the
/// warp's [`super::BlockSlots`].
type At = (FunctionId, Slot);

/// What one lane of a warp is running: its functions' last blocks, innermost last.
pub(super) type LaneWalk = Vec<At>;

/// How a lane came to a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// From another block of the same function (`(function, from, to)`).
    Edge((FunctionId, Slot, Slot)),
    /// Called from a function (`(caller, callee)`).
    Call((FunctionId, FunctionId)),
    /// The unit's first block, or a jump into another function's middle.
    Start,
}

/// Follows one lane into `key`: an edge when it stays in its function, a
/// call when it enters a function's first block, a return (an edge from the
/// call site) when it comes back to a function it was running.
pub(super) fn walk(lane: &mut LaneWalk, key: At, is_entry: bool) -> Step {
    let (f, b) = key;
    match lane.last_mut() {
        Some(top) if top.0 == f && !is_entry => {
            let from = std::mem::replace(&mut top.1, b);
            Step::Edge((f, from, b))
        }
        Some(top) if is_entry => {
            let caller = top.0;
            lane.push(key);
            Step::Call((caller, f))
        }
        Some(_) => match lane.iter().rposition(|k| k.0 == f) {
            Some(i) => {
                lane.truncate(i + 1);
                let top = lane.last_mut().expect("kept");
                let from = std::mem::replace(&mut top.1, b);
                Step::Edge((f, from, b))
            }
            // Jumped into another function's middle (a cold part, a tail
            // jump): follow it there.
            None => {
                lane.push(key);
                Step::Start
            }
        },
        None => {
            lane.push(key);
            Step::Start
        }
    }
}
