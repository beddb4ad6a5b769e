//! Lanes counted alone: the warps of width 1 that a wider warp's replay
//! counts as it goes ([`super::Replay::run_with_lanes_alone`]). A lane alone
//! issues each of its blocks by itself: its part of every issue of the
//! warp, in the same order; it never diverges, is never predicated and never
//! waits for another lane's lock, so nothing else a warp of several lanes
//! tells happens to it.

use super::counts::{set_unfinished, WarpStats};
use super::lane::Lane;
use super::tally::{Charged, Tally};
use crate::sink::{IssueSink, LaneIssue};
use tf_trace::LockKind;

/// The lanes of a warp counted alone too, and their tally: of width 1,
/// holding every lane's stack (a lane is the one lane of its own warp
/// there), all of them in one sum.
pub(super) struct LanesAlone<'a> {
    /// Which lanes (a mask).
    lanes: u64,
    tally: Tally<'a>,
}

impl<'a> LanesAlone<'a> {
    /// Counts the lanes of `lanes` (a mask) in `tally`, of width 1.
    pub(super) fn new(lanes: u64, tally: Tally<'a>) -> Self {
        LanesAlone { lanes, tally }
    }

    /// Counts each counted lane of `lanes` issuing the block `charged` by
    /// itself, or leaving it out (`--spin-wait exclude`).
    #[inline(never)]
    pub(super) fn issue(&mut self, charged: Charged<'_>, lanes: &[LaneIssue<'_>], left_out: bool) {
        let counted = self.lanes;
        for l in lanes.iter().filter(|l| counted & (1 << l.lane) != 0) {
            let lane = std::slice::from_ref(l);
            self.tally.issue_part(charged, 1 << l.lane, lane, left_out);
        }
    }

    /// Lane `i` acquired `lock` (lanes alone never contend).
    pub(super) fn lock_acquired(&mut self, i: usize, lock: u64, kind: LockKind) {
        if self.lanes & (1 << i) != 0 {
            self.tally.lock_acquired(i, lock, kind);
        }
    }

    /// What was counted, once the warp's `lanes` are replayed, with the
    /// counted lanes' unfinished units and off-stack calls.
    pub(super) fn finish(mut self, lanes: &[Lane<'_>]) -> WarpStats {
        let mut stats = self.tally.finish();
        set_unfinished(&mut stats, lanes, self.lanes);
        stats.remove(0)
    }
}
