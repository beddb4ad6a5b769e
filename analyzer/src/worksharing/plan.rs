//! What the census of worksharing loops decides: each loop's iteration
//! block and reach ([`IterationPlan`]), each unit's place in its loop
//! ([`Iteration`]), and the check that every instance's iterations were cut
//! exactly once ([`check_numbering`]).

use super::LoopSite;
use crate::blocks::CBlockId;
use crate::static_schedule::StaticPlan;
use std::collections::{HashMap, HashSet};

/// A loop whose iterations are units: where an iteration begins and which
/// blocks it may run (`--unit iter:FN` and worksharing loops alike).
#[derive(Clone, Debug)]
pub struct IterationLoop {
    /// The iteration block: each arrival starts an iteration.
    pub block: CBlockId,
    /// The blocks of its loop: leaving them ends an iteration.
    pub reach: HashSet<CBlockId>,
    /// The iteration blocks of the loops that each chunk runs after this one
    /// (GCC splits the static loops of a region that share an iteration
    /// space once for all): each arrival starts an iteration of that loop.
    pub siblings: Vec<CBlockId>,
}

/// Every loop's [`IterationLoop`].
#[derive(Clone, Debug, Default)]
pub struct IterationPlan {
    /// By loop.
    pub loops: HashMap<LoopSite, IterationLoop>,
    /// Loops whose chunks ran no block once per iteration.
    pub failed: Vec<LoopSite>,
    /// Inline static schedules: the chunk each thread's part stands for.
    pub statics: StaticPlan,
    /// The loop each instance is (of the runtime's and static schedules).
    pub runs_in: HashMap<u64, LoopSite>,
}

impl IterationPlan {
    /// Whether a loop of the function at `entry` is cut into iterations.
    pub fn cuts(&self, entry: u64) -> bool {
        self.loops.keys().any(|s| s.entry == entry)
    }

    /// Whether loop instance `loop_id` is cut into iterations.
    pub fn cuts_instance(&self, loop_id: u64) -> bool {
        self.runs_in
            .get(&loop_id)
            .is_some_and(|s| self.loops.contains_key(s))
    }
}

/// A unit's place in its loop: instance and logical iteration number.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Iteration {
    /// The loop instance.
    pub loop_id: u64,
    /// Which of the loops that one inline static schedule's split runs
    /// (0 for the first, and for every other loop).
    pub sibling: u32,
    /// The logical iteration number.
    pub number: u64,
}

/// Checks that each loop instance's iterations (of each of its sibling
/// loops) are numbered exactly `0..trip`, given every unit's iteration (any
/// order) and the trip count of each (instance, sibling); returns the first
/// problem.
///
/// ```
/// use tf_analyzer::worksharing::{check_numbering, Iteration};
/// let it = |loop_id, number| Iteration { loop_id, sibling: 0, number };
/// let trips = [((1, 0), 2)].into_iter().collect();
/// assert!(check_numbering(&[it(1, 1), it(1, 0)], &trips).is_ok());
/// assert!(check_numbering(&[it(1, 1), it(1, 1)], &trips).is_err());
/// // one static split that runs two loops: the second one's are missing
/// let trips = [((1, 0), 2), ((1, 1), 2)].into_iter().collect();
/// assert!(check_numbering(&[it(1, 1), it(1, 0)], &trips).is_err());
/// ```
pub fn check_numbering(
    iterations: &[Iteration],
    trips: &HashMap<(u64, u32), u64>,
) -> Result<(), String> {
    let mut sorted = iterations.to_vec();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        if w[0] == w[1] {
            return Err(format!(
                "loop instance {}: iteration {} was cut twice",
                w[0].loop_id, w[0].number
            ));
        }
    }
    let mut by_loop: HashMap<(u64, u32), (u64, u64)> = HashMap::new();
    for it in &sorted {
        let (n, max) = by_loop.entry((it.loop_id, it.sibling)).or_default();
        *n += 1;
        *max = (*max).max(it.number + 1);
    }
    for (&(l, sibling), &trip) in trips {
        let (n, max) = by_loop.get(&(l, sibling)).copied().unwrap_or_default();
        if n != trip || max != trip {
            let which = match sibling {
                0 => String::new(),
                k => format!(" (its loop {} of one static split)", k + 1),
            };
            return Err(format!(
                "loop instance {l}{which}: the runtime handed out {trip} iterations, {n} were cut"
            ));
        }
    }
    Ok(())
}
