//! Narrower warps counted from a wider warp's replay: under consecutive
//! batching a warp of 32 holds the lanes of two warps of 16 and four of 8,
//! each a run of its lanes. While the wide warp's stack only splits lanes
//! at branches, calls and returns and rejoins them at immediate
//! post-dominators, a narrower warp's lanes issue exactly the wide warp's
//! issues restricted to them (those that hold none of them left out),
//! in another order maybe, which no figure depends on:
//! - where the wide warp splits its entry, a narrower warp splits its part
//!   of it into the groups that hold its lanes, with the same reconvergence
//!   point when there are several; when there is one, its lanes go on to
//!   that point in their own entry, as the wide warp's lanes do in theirs;
//! - groups run in an order set by their blocks' addresses, never by their
//!   lanes;
//! - a narrower warp diverges where its lanes go to two or more of the
//!   wide warp's targets.
//!
//! Anything else may make the narrower warps differ: lock serialization
//! (which lanes contend depends on which lanes share a warp), predicated
//! branches, lanes regrouped without a branch, reconvergence other than at
//! immediate post-dominators. When the wide warp's replay does any of
//! those, the narrower counts are void ([`Narrower::void`]), and the
//! caller replays the narrower warps themselves.
//!
//! The progress bar is told the narrower warps' instructions with the wide
//! warp's, as they are counted: a void narrower warp's replay of its own
//! leaves out what was told already ([`Void::told`]).

use super::counts::{set_unfinished, WarpStats};
use super::lane::Lane;
use super::tally::{Charged, Tally};
use crate::blocks::CBlockId;
use crate::segments::Segments;
use crate::sink::{IssueSink, LaneIssue};
use crate::spin_wait::SpinWait;
use arrayvec::ArrayVec;
use std::ops::Range;
use tf_trace::LockKind;

/// A narrower warp to count: a run of the wide warp's lanes, and the widths
/// whose warps hold exactly those lanes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NarrowerWarp {
    /// Its lanes, by their place in the wide warp.
    pub lanes: Range<usize>,
    /// The widths it is counted at (each at least its number of lanes).
    pub widths: Vec<usize>,
}

/// The narrower warps of one wide warp, counted as it replays.
pub(super) struct Narrower<'a> {
    warps: Vec<Counted<'a>>,
    /// Whether the counts are void.
    void: bool,
}

/// One narrower warp and its tally.
struct Counted<'a> {
    /// Its lanes, as a mask of the wide warp's.
    mask: u64,
    /// Its first lane's place in the wide warp.
    first: usize,
    tally: Tally<'a>,
    /// Thread instructions counted, which the progress bar was told.
    told: u64,
}

/// The narrower warps' counts are void: how many thread instructions of
/// each the progress bar was told before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Void {
    /// Per narrower warp, in their order: thread instructions told.
    pub told: Vec<u64>,
}

impl<'a> Narrower<'a> {
    /// Counts `warps`, narrower warps of a warp whose lanes have these
    /// stacks (per lane: its range and its stack pointer at its unit's
    /// start), charging instructions to `functions` function ids.
    pub(super) fn new(
        warps: &[NarrowerWarp],
        segments: &'a Segments,
        spin_wait: &'a SpinWait,
        stacks: &[((u64, u64), u64)],
        functions: usize,
    ) -> Self {
        let warps = warps
            .iter()
            .map(|w| {
                let stacks = stacks[w.lanes.clone()].to_vec();
                Counted {
                    mask: mask_of(&w.lanes),
                    first: w.lanes.start,
                    tally: Tally::new(segments, spin_wait, &w.widths, stacks, functions),
                    told: 0,
                }
            })
            .collect();
        Narrower { warps, void: false }
    }

    /// The wide warp did something its narrower warps may not have done
    /// alike: their counts are void.
    #[cold]
    pub(super) fn void(&mut self) {
        self.void = true;
    }

    /// Each narrower warp's part of the wide warp's issue of the block
    /// `charged` by the lanes of `live`, which ran
    /// `lanes`; or its lanes' instructions left out (`--spin-wait
    /// exclude`). Gives the thread instructions counted, for the progress
    /// bar.
    #[inline(never)]
    pub(super) fn issue(
        &mut self,
        charged: Charged<'_>,
        live: u64,
        lanes: &[LaneIssue<'_>],
        left_out: bool,
    ) -> u64 {
        if self.void {
            return 0;
        }
        let mut counted = 0;
        for w in self.warps.iter_mut().filter(|w| w.mask & live != 0) {
            // its lanes, numbered from its first
            let part: ArrayVec<LaneIssue<'_>, 64> = (lanes.iter())
                .filter(|l| w.mask & (1 << l.lane) != 0)
                .map(|l| LaneIssue {
                    lane: l.lane - w.first,
                    ..*l
                })
                .collect();
            let active = (live & w.mask) >> w.first;
            let thread = w.tally.issue_part(charged, active, &part, left_out);
            w.told += thread;
            counted += thread;
        }
        counted
    }

    /// The wide warp's lanes split at the end of `cb` into `targets` (each
    /// a mask of lanes): each narrower warp whose lanes went to two or
    /// more of them diverged there.
    pub(super) fn diverged(
        &mut self,
        cb: CBlockId,
        targets: impl Iterator<Item = u64> + Clone,
        reconverge: Option<CBlockId>,
    ) {
        for w in &mut self.warps {
            let paths = targets.clone().filter(|&t| t & w.mask != 0).count();
            if paths > 1 {
                let active = targets.clone().fold(0, |m, t| m | t) & w.mask;
                w.tally.diverged(cb, active >> w.first, paths, reconverge);
            }
        }
    }

    /// Lane `i` acquired `lock` (never contended: a contention voids the
    /// counts).
    pub(super) fn lock_acquired(&mut self, i: usize, lock: u64, kind: LockKind) {
        for w in self.warps.iter_mut().filter(|w| w.mask & (1 << i) != 0) {
            w.tally.lock_acquired(i - w.first, lock, kind);
        }
    }

    /// How many thread instructions of each warp the progress bar was told,
    /// once the counts are void (none are counted after).
    pub(super) fn void_told(&self) -> Option<Void> {
        self.void.then(|| Void {
            told: self.warps.iter().map(|w| w.told).collect(),
        })
    }

    /// Each narrower warp's counts at each of its widths, once the wide
    /// warp's `lanes` are replayed, with their unfinished lanes and
    /// off-stack calls; `Err` when void.
    pub(super) fn finish(self, lanes: &[Lane<'_>]) -> Result<Vec<Vec<WarpStats>>, Void> {
        if let Some(void) = self.void_told() {
            return Err(void);
        }
        Ok(self
            .warps
            .into_iter()
            .map(|mut w| {
                let mut all = w.tally.finish();
                set_unfinished(&mut all, lanes, w.mask);
                all
            })
            .collect())
    }
}

/// The lanes of `r` as a mask.
fn mask_of(r: &Range<usize>) -> u64 {
    let ones = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    ones(r.end) & !ones(r.start)
}

#[cfg(test)]
#[path = "narrower_tests.rs"]
mod tests;
