//! One lane alone in a stack entry: the common case of a warp whose lanes
//! ran apart (a pthreads program's few threads, each in its own code).
//!
//! A lone lane cannot diverge and cannot contend for a lock with another
//! lane of its entry, so while it goes from block to block of its frame the
//! stack only follows it: the entry's `pc`, `func` and `mask` are rewritten
//! in place, exactly as [`Warp::diverge`] does for a single group. Running
//! those steps in a loop, without reading the entry back and regrouping
//! every step, gives the same issues in the same order; anything else (a
//! call, a return, the entry's reconvergence point, the unit's end, a
//! serialization region's join) goes back to the general step.

use super::lane::Next;
use super::stack::{Entry, Pc};
use super::warp::Warp;
use crate::blocks::CBlockId;

impl Warp<'_, '_, '_> {
    /// Moves on lane `i`, the only live lane of the top entry `top`, which
    /// has just issued block `b`: issues its blocks until it leaves the
    /// entry's plain block-to-block path, and leaves the stack as the
    /// general step would have.
    pub(super) fn run_solo(&mut self, i: usize, b: CBlockId, top: Entry) -> tf_trace::Result<()> {
        let (mut b, mut here) = (b, top);
        loop {
            match self.advance(i, top.depth)? {
                Next::Block { block, func } if Pc::Block(block) != top.rpc => {
                    b = block;
                    here.pc = Pc::Block(block);
                    here.func = func;
                    let issued = self.execute(b, 1 << i, &here);
                    debug_assert!(issued, "a lone lane stands at its entry's block");
                }
                next => {
                    let left = self.place(i, b, top.depth, next);
                    let at = self.stack.len() - 1;
                    self.stack[at] = Entry {
                        pc: Pc::Block(b),
                        mask: 1 << i,
                        ..here
                    };
                    self.diverge(Some(b), self.stack[at], left, true);
                    return Ok(());
                }
            }
        }
    }
}
