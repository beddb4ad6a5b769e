//! Tests of the frame tracker on hand-built block sequences.

use super::*;
use crate::blocks::steps;
use crate::blocks::CanonicalBlocks;
use crate::testutil::TempTrace;
use tf_trace::{BlockDef, BlockId, EndKind as E};

/// Runs `seq` (dynamic block ids, all complete) through a tracker and
/// returns the transitions and depths.
fn replay(t: &tf_trace::Trace, seq: &[BlockId]) -> Vec<(Transition, usize)> {
    let canon = CanonicalBlocks::build(t.blocks());
    let entries = |f: FunctionId| t.blocks().function(f).map(|f| f.entry);
    let first = canon.pieces(seq[0])[0].cblock;
    let mut tracker = FrameTracker::new(FrameTracker::root_for(&canon, &entries, first));
    let mut out = Vec::new();
    let mut prev: Option<(CBlockId, EndKind)> = None;
    for &b in seq {
        for s in steps(
            &canon,
            b,
            t.blocks().block(b).unwrap().n_insns() as u32,
            true,
            &[],
        ) {
            if let Some(p) = prev {
                let tr = tracker.advance(&canon, p.0, p.1, s.cblock);
                out.push((tr, tracker.depth()));
            }
            prev = Some((s.cblock, s.end));
        }
    }
    out
}

#[test]
fn call_return_recursion_and_tail_call() {
    let mut tt = TempTrace::new();
    let w = tt.writer();
    let main = w.function(0x100, 0, "main").unwrap();
    let f = w.function(0x200, 0, "f").unwrap();
    let g = w.function(0x300, 0, "g").unwrap();
    // main: call f; after: ret
    let m0 = w
        .block(&BlockDef::new(0x100).insn(5).end(E::Call).function(main))
        .unwrap();
    let m1 = w
        .block(&BlockDef::new(0x105).insn(1).end(E::Return).function(main))
        .unwrap();
    // f: if (...) call f (recursion) else jmp g (tail call)
    let f0 = w
        .block(&BlockDef::new(0x200).insn(2).end(E::Branch).function(f))
        .unwrap();
    let f1 = w
        .block(&BlockDef::new(0x202).insn(5).end(E::Call).function(f))
        .unwrap();
    let f2 = w
        .block(&BlockDef::new(0x207).insn(1).end(E::Return).function(f))
        .unwrap();
    let f3 = w
        .block(&BlockDef::new(0x208).insn(5).end(E::Jump).function(f))
        .unwrap();
    let g0 = w
        .block(&BlockDef::new(0x300).insn(1).end(E::Return).function(g))
        .unwrap();
    let t = tt.finish();
    let seq = [m0, f0, f1, f0, f3, g0, f2, m1];
    let got = replay(&t, &seq);
    use Transition::*;
    assert_eq!(
        got,
        [
            (Call, 1),      // main -> f
            (Same, 1),      // f0 -> f1
            (Call, 2),      // f -> f (recursion)
            (Same, 2),      // f0 -> f3
            (TailCall, 2),  // jmp g
            (Return(1), 1), // g returns to the outer f's return site
            (Return(1), 0), // f returns to main
        ]
    );
}

#[test]
fn longjmp_and_skipped_calls_return_several_frames() {
    let mut tt = TempTrace::new();
    let w = tt.writer();
    let main = w.function(0x100, 0, "main").unwrap();
    let a = w.function(0x200, 0, "a").unwrap();
    let lj = w.function(0x300, 0, "longjmp").unwrap();
    let m0 = w
        .block(&BlockDef::new(0x100).insn(5).end(E::Call).function(main))
        .unwrap(); // call setjmp-ish site: call a
    let m1 = w
        .block(&BlockDef::new(0x105).insn(1).end(E::Return).function(main))
        .unwrap();
    let m2 = w
        .block(&BlockDef::new(0x110).insn(1).end(E::Return).function(main))
        .unwrap(); // the setjmp landing
    let a0 = w
        .block(&BlockDef::new(0x200).insn(5).end(E::Call).function(a))
        .unwrap(); // call longjmp
    let l0 = w
        .block(
            &BlockDef::new(0x300)
                .insn(3)
                .end(E::IndirectJump)
                .function(lj),
        )
        .unwrap();
    // A PLT stub (no symbol) whose callee was skipped: lands on the return site.
    let plt = w
        .block(&BlockDef::new(0x400).insn(6).end(E::IndirectJump))
        .unwrap();
    let m3 = w
        .block(&BlockDef::new(0x120).insn(5).end(E::Call).function(main))
        .unwrap();
    let m4 = w
        .block(&BlockDef::new(0x125).insn(1).end(E::Return).function(main))
        .unwrap();
    let t = tt.finish();
    use Transition::*;
    // main calls a, a calls longjmp, longjmp jumps into main (at 0x110).
    assert_eq!(
        replay(&t, &[m0, a0, l0, m2]),
        [(Call, 1), (Call, 2), (Return(2), 0)]
    );
    // main calls a PLT stub, whose target was skipped, landing at the return site.
    assert_eq!(replay(&t, &[m3, plt, m4]), [(Call, 1), (Return(1), 0)]);
    let _ = m1;
}

#[test]
fn jumps_to_the_callers_return_site_inside_recursion_stay() {
    let mut tt = TempTrace::new();
    let w = tt.writer();
    let f = w.function(0x200, 0, "f").unwrap();
    let f0 = w
        .block(&BlockDef::new(0x200).insn(5).end(E::Call).function(f))
        .unwrap(); // call f
    let f1 = w
        .block(&BlockDef::new(0x205).insn(2).end(E::Jump).function(f))
        .unwrap(); // return site
    let f2 = w
        .block(&BlockDef::new(0x210).insn(2).end(E::Jump).function(f))
        .unwrap(); // jumps to 0x205
    let t = tt.finish();
    use Transition::*;
    // f calls f; the inner f jumps to 0x205 (its caller's return site) without returning.
    assert_eq!(replay(&t, &[f0, f2, f1]), [(Call, 1), (Same, 1)]);
}

#[test]
fn return_sites_are_counted_through_deep_stacks_and_unwinding() {
    let site = |k: u64| 0x1005 + 0x10 * k;
    let mut t = FrameTracker::new(Frame::root(0x1000, 1, 0));
    for k in 0..200u32 {
        t.call(k, site(u64::from(k)), 0x2000, 2, 7);
    }
    let counted = |t: &FrameTracker| t.sites.iter().sum::<u32>() as usize;
    assert_eq!(counted(&t), 200);
    // No frame returns here: a jump's arrival is no return.
    assert_eq!(t.arrive(false, 0x1006, 3), None);
    // Unwinding (longjmp) to the 100th call's return site pops 101 frames.
    assert_eq!(t.arrive(false, site(99), 3), Some(101));
    assert_eq!((t.depth(), counted(&t)), (99, 99));
    // Popped return sites are no longer found; those below still are.
    assert_eq!(t.arrive(true, site(150), 3), None);
    assert_eq!(t.arrive(true, site(98), 3), Some(1));
    assert_eq!(t.arrive(true, site(0), 3), Some(98));
    assert_eq!((t.depth(), counted(&t)), (0, 0));
}
