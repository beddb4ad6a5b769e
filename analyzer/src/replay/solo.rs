//! One lane alone in a stack entry: the common case of a warp whose lanes
//! ran apart (a pthreads program's few threads, each in its own code).
//!
//! A lone lane cannot diverge and cannot contend for a lock with another
//! lane of its entry (a region needs two holders), so the stack only follows
//! it, and [`Warp::run_solo`] rewrites the stack in a loop exactly as the
//! general step ([`Warp::diverge`] for a single group or callee, then the
//! main loop's next round) would, without reading the top entry back and
//! regrouping every step:
//! - from block to block of its frame, the entry's `pc` and `func` change
//!   in place;
//! - a call one frame down turns the entry into the call's return site
//!   (reconverging where the entry did) and pushes the callee's entry;
//! - a return to the return site below, when that holds this lane alone,
//!   pops the callee's entry and turns the return site into the block the
//!   lane came back to.
//!
//! The issues are the same, in the same order. Anything else (the entry's
//! reconvergence point, a call or return across several frames, a return
//! site shared with other lanes or missing, as under `--reconverge
//! min-pc`'s frontier, the unit's end, a serialization region's join) goes
//! back to the general step.

use super::lane::Next;
use super::stack::{Entry, Pc};
use super::warp::Warp;
use crate::blocks::CBlockId;

/// Whether a lone lane runs in [`Warp::run_solo`]'s loop: always, but in
/// this crate's tests, which turn it off to check that it changes nothing.
#[inline(always)]
pub(super) fn enabled() -> bool {
    #[cfg(test)]
    return !tests::GENERAL_STEPS_ONLY.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    true
}

impl Warp<'_, '_, '_> {
    /// Moves on lane `i`, the only live lane of the top entry `top`, which
    /// has just issued block `b`: issues its blocks until it leaves the
    /// paths above, and leaves the stack as the general step would have.
    pub(super) fn run_solo(&mut self, i: usize, b: CBlockId, top: Entry) -> tf_trace::Result<()> {
        // The lane's last block and its entry as it stands (the stack's copy
        // is rewritten only at calls and returns, and for the general step).
        let (mut b, mut here) = (b, top);
        loop {
            let next = self.run_path(i, &mut b, &mut here)?;
            if !self.follow(i, &mut b, &mut here, next) {
                return Ok(());
            }
            let issued = self.execute(b, 1 << i, &here);
            debug_assert!(issued, "a lone lane stands at its entry's block");
        }
    }

    /// Issues lane `i`'s blocks while it goes from block to block of the
    /// frame of its entry `here`, having just issued block `b`; keeps both
    /// up to date and gives where the lane went instead.
    // The loop of most steps: on its own, it keeps the entry's depth and
    // reconvergence point in registers.
    #[inline(never)]
    fn run_path(&mut self, i: usize, b: &mut CBlockId, here: &mut Entry) -> tf_trace::Result<Next> {
        let (mut last, mut entry) = (*b, *here);
        loop {
            match self.advance(i, here.depth)? {
                Next::Block { block, func } if Pc::Block(block) != here.rpc => {
                    last = block;
                    entry.pc = Pc::Block(block);
                    entry.func = func;
                    let issued = self.execute(block, 1 << i, &entry);
                    debug_assert!(issued, "a lone lane stands at its entry's block");
                }
                next => {
                    (*b, *here) = (last, entry);
                    return Ok(next);
                }
            }
        }
    }

    /// Lane `i` ran block `b` in entry `here` and goes to `next`, which is
    /// not a block of the same path: at a call or return that the loop
    /// follows, rewrites the stack, moves `b` and `here` to the lane's next
    /// block and its entry, and gives true; otherwise hands the lane to the
    /// general step and gives false.
    // Never inlined: calls and returns are a small part of the steps, and
    // inlined, this made the block-to-block loop slower.
    #[inline(never)]
    fn follow(&mut self, i: usize, b: &mut CBlockId, here: &mut Entry, next: Next) -> bool {
        let lane = 1u64 << i;
        match next {
            Next::Called { block, func } if self.lanes[i].depth() == here.depth + 1 => {
                // The entry becomes the call's return site, which
                // reconverges where the entry did; the callee's entry goes
                // above it.
                let at = self.stack.len() - 1;
                self.stack[at] = Entry {
                    pc: Pc::ReturnSite(*b),
                    mask: lane,
                    ..*here
                };
                *here = Entry::above(here, Pc::Block(block), Pc::Exit, lane, here.depth + 1, func);
                self.stack.push(*here);
                *b = block;
                return true;
            }
            Next::Left => {
                if let Some((block, site)) = self.back_at_return_site(i) {
                    self.stack.pop();
                    let at = self.stack.len() - 1;
                    self.stack[at] = site;
                    (*b, *here) = (block, site);
                    return true;
                }
            }
            _ => {}
        }
        let left = self.place(i, *b, here.depth, next);
        let at = self.stack.len() - 1;
        self.stack[at] = Entry {
            pc: Pc::Block(*b),
            mask: lane,
            ..*here
        };
        self.diverge(Some(*b), self.stack[at], left, true);
        false
    }

    /// Lane `i` has just returned into the entry below the top: when that
    /// is a return site holding this lane alone, the block the lane came
    /// back to and the entry as the general step would leave it (running
    /// that block); `None` when the general step would do anything else.
    fn back_at_return_site(&self, i: usize) -> Option<(CBlockId, Entry)> {
        let below = *self.stack.get(self.stack.len().checked_sub(2)?)?;
        let lane = &self.lanes[i];
        let at_site = matches!(below.pc, Pc::ReturnSite(_)) && below.pc != below.rpc;
        if !at_site || below.mask != 1 << i || lane.depth() != below.depth {
            return None;
        }
        let block = self.block_of(i);
        let site = Entry {
            pc: Pc::Block(block),
            func: lane.tracker.top().entry,
            ..below
        };
        (site.pc != below.rpc).then_some((block, site))
    }
}

#[cfg(test)]
#[path = "solo_tests.rs"]
mod tests;
