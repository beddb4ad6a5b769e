//! Worksharing loops on hand-built traces: iterations cut by the runtime's
//! chunks, in logical order, and the checks that refuse a cut that does not
//! match what the runtime handed out.

mod common;

use common::{Cleanup, Prog};
use tf_analyzer::{analyze, Options, Silent};
use tf_trace::{BlockId, EndKind, LoopChunk, SkipReason, Trace};

/// The outlined function `f._omp_fn.0`, `while (next(&lo, &hi)) for (i =
/// lo; i < hi; i++) body;`: `ask` calls the runtime, `test` looks at its
/// answer (the call's return site), `body` is the loop (4 instructions, its
/// own back edge), `done` returns.
struct Loop {
    ask: BlockId,
    test: BlockId,
    body: BlockId,
    done: BlockId,
}

fn outlined(p: &mut Prog) -> Loop {
    let f = p.func(0x100, "f._omp_fn.0");
    Loop {
        ask: p.block(0x100, 2, EndKind::Call, f),
        test: p.block(0x102, 1, EndKind::Branch, f),
        body: p.block(0x110, 4, EndKind::Branch, f),
        done: p.block(0x120, 1, EndKind::Return, f),
    }
}

/// Thread `tid` takes `chunks` (first, count, ran) of loop 1 (trip 4) and
/// runs the body `ran` times for each.
fn thread(p: &mut Prog, l: &Loop, tid: u64, chunks: &[(u64, u64, u64)]) {
    let mut t = p.w().thread(tid).unwrap();
    for &(first, count, ran) in chunks {
        t.exec(l.ask, &[]).unwrap();
        t.skip(SkipReason::LoopSchedule, 40).unwrap();
        t.loop_chunk(chunk(first, count)).unwrap();
        t.exec(l.test, &[]).unwrap();
        for _ in 0..ran {
            t.exec(l.body, &[]).unwrap();
        }
    }
    t.exec(l.ask, &[]).unwrap();
    t.skip(SkipReason::LoopSchedule, 40).unwrap();
    t.loop_chunk(chunk(0, 0)).unwrap();
    t.exec(l.test, &[]).unwrap();
    t.exec(l.done, &[]).unwrap();
}

/// `count` iterations from `first` of loop 1, which has 4.
fn chunk(first: u64, count: u64) -> LoopChunk {
    LoopChunk {
        loop_id: 1,
        first,
        count,
        stride: 0,
        trip: 4,
    }
}

fn trace(chunks: &[&[(u64, u64, u64)]]) -> (Trace, Cleanup) {
    let mut p = Prog::new();
    let l = outlined(&mut p);
    for (i, c) in chunks.iter().enumerate() {
        thread(&mut p, &l, i as u64 + 1, c);
    }
    p.finish()
}

fn opts(unit: &str, width: usize) -> Options {
    Options {
        widths: vec![width],
        unit: unit.parse().unwrap(),
        ..Options::default()
    }
}

#[test]
fn iterations_are_units_in_logical_order() {
    // thread 1 takes [2, 4) then nothing; thread 2 takes [0, 1) and [1, 2);
    // thread 3 gets nothing (its call is no unit either)
    let (t, _c) = trace(&[&[(2, 2, 2)], &[(0, 1, 1), (1, 1, 1)], &[]]);
    let r = analyze(&t, &opts("auto", 4), &Silent).unwrap();
    assert_eq!(r.results[0].units, 4);
    assert!(
        r.units_are.starts_with("each iteration of 1 OpenMP"),
        "{}",
        r.units_are
    );
    let f = &r.results[0].functions[0];
    assert_eq!(f.name, "f._omp_fn.0");
    // one warp of four iterations: the body's 4 instructions once, all lanes
    assert_eq!((f.warp_instructions, f.thread_instructions), (4, 16));
    let iter = analyze(&t, &opts("iter:f._omp_fn.0", 4), &Silent).unwrap();
    assert_eq!(iter.results[0].functions[0].warp_instructions, 4);
}

#[test]
fn iterations_cut_twice_are_refused() {
    // both threads claim [0, 2): iterations 0 and 1 twice, 2 and 3 never
    let (t, _c) = trace(&[&[(0, 2, 2)], &[(0, 2, 2)]]);
    let e = analyze(&t, &opts("auto", 4), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("loop instance 1: iteration 0 was cut twice"),
        "{e}"
    );
}

#[test]
fn a_loop_with_no_block_per_iteration_is_left_whole_and_said() {
    // the runtime handed out 2 iterations per chunk; the body ran once
    // (as an unrolled loop would)
    let (t, _c) = trace(&[&[(0, 2, 1)], &[(2, 2, 1)]]);
    let r = analyze(&t, &opts("auto", 4), &Silent).unwrap();
    assert_eq!(r.results[0].units, 2, "one unit per call");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("runs several iterations per pass")),
        "{:?}",
        r.warnings
    );
    let e = analyze(&t, &opts("iter:f._omp_fn.0", 4), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("f._omp_fn.0 runs several iterations per pass"),
        "{e}"
    );
}
