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
use super::stack::{add_callee, add_group, Entry, Pc};
use super::warp::Warp;
use crate::blocks::CBlockId;

impl Warp<'_, '_, '_> {
    /// Runs lane `i`, the only live lane of the top entry `top`, from block
    /// `b` until it leaves the entry's plain block-to-block path; leaves
    /// the stack as the general step would have.
    pub(super) fn run_solo(&mut self, i: usize, b: CBlockId, top: Entry) -> tf_trace::Result<()> {
        let (mut b, mut here) = (b, top);
        loop {
            let issued = self.execute(b, 1 << i, &here);
            debug_assert!(issued, "a lone lane stands at its entry's block");
            match self.advance(i, top.depth)? {
                Next::Block { block, func } if Pc::Block(block) != top.rpc => {
                    b = block;
                    here.pc = Pc::Block(block);
                    here.func = func;
                }
                next => {
                    // What the general step does after one lane ran `b`.
                    self.groups.clear();
                    self.callees.clear();
                    let mut left = 0u64;
                    match next {
                        Next::Done | Next::Parked => {}
                        Next::Left => left = 1 << i,
                        Next::Called { block, func } => {
                            add_callee(&mut self.callees, (b, block, func, 0, top.depth + 1, 0), i)
                        }
                        Next::Block { block, func } => add_group(&mut self.groups, block, func, i),
                    }
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
