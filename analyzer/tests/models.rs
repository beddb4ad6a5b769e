//! Reconvergence, predication and lock models on hand-built traces; the
//! figures are worked out in each test's comment.

mod common;

use common::Prog;
use tf_analyzer::replay::{LockModel, Reconvergence};
use tf_analyzer::results::{Report, WidthResult};
use tf_analyzer::{analyze, Options, Silent};
use tf_trace::{EndKind, LockKind, SkipReason, Trace};

fn run(trace: &Trace, width: usize, opts: Options) -> Report {
    let r = analyze(
        trace,
        &Options {
            widths: vec![width],
            unit: "thread".parse().unwrap(),
            ..opts
        },
        &Silent,
    )
    .unwrap();
    // Every model replays every recorded instruction.
    assert!(r.incomplete.is_empty(), "{:?}", r.incomplete);
    r
}

fn model(m: Reconvergence) -> Options {
    Options {
        reconvergence: m,
        ..Options::default()
    }
}

fn counts(r: &Report) -> (u64, u64) {
    let w: &WidthResult = &r.results[0];
    (w.warp_instructions, w.thread_instructions)
}

#[test]
fn paper_figure_2_under_each_model() {
    // Lane 0: BBL1 (3) BBL2 (2) BBL4 (2); lane 1: BBL1 BBL3 (4) BBL4. W = 2.
    // ipdom: BBL4 together: warp 3 + 2 + 4 + 2 = 11, thread 16.
    // none: BBL4 once per lane: warp 13.
    // min-pc: BBL2 (lower address) runs, then BBL3, and the lanes meet at
    // BBL4: warp 11, as ipdom.
    let (t, _c) = common::paper_figure_2();
    assert_eq!(counts(&run(&t, 2, model(Reconvergence::Ipdom))), (11, 16));
    assert_eq!(counts(&run(&t, 2, model(Reconvergence::None))), (13, 16));
    assert_eq!(counts(&run(&t, 2, model(Reconvergence::MinPc))), (11, 16));
    let none = run(&t, 2, model(Reconvergence::None));
    assert_eq!(none.reconverge, "none");
}

#[test]
fn a_loop_with_lane_dependent_trip_counts_under_each_model() {
    // Lane i (0..4) runs E (1), then H (1) and B (2) i + 1 times, then H and X (1).
    // ipdom (X post-dominates H): E 1, H 5 (4, 4, 3, 2, 1 lanes), B 4 × 2
    // (4, 3, 2, 1 lanes), X once with all: warp 1 + 5 + 8 + 1 = 15; thread
    // 4 + 14 + 20 + 4 = 42.
    // none: each lane runs X when it leaves the loop: warp 1 + 5 + 8 + 4 = 18.
    // min-pc: B (0x102) lies below X (0x104): the looping lanes run first and
    // all meet at X: 15.
    let mut p = Prog::new();
    let f = p.func(0x100, "kernel");
    let e = p.block(0x100, 1, EndKind::Fallthrough, f);
    let h = p.block(0x101, 1, EndKind::Branch, f);
    let b = p.block(0x102, 2, EndKind::Jump, f);
    let x = p.block(0x104, 1, EndKind::Return, f);
    for tid in 1..=4u64 {
        let mut blocks = vec![e];
        for _ in 0..tid {
            blocks.extend([h, b]);
        }
        blocks.extend([h, x]);
        p.thread(tid, &blocks);
    }
    let (t, _c) = p.finish();
    assert_eq!(counts(&run(&t, 4, model(Reconvergence::Ipdom))), (15, 42));
    assert_eq!(counts(&run(&t, 4, model(Reconvergence::None))), (18, 42));
    assert_eq!(counts(&run(&t, 4, model(Reconvergence::MinPc))), (15, 42));
}

#[test]
fn a_short_hammock_is_predicated_when_its_arms_fit() {
    // E (1) branches: lanes 0, 1 run A (2), lanes 2, 3 run B (3); both
    // rejoin at J (1). W = 4.
    // Without predication: warp 1 + 2 + 3 + 1 = 7, thread 4 + 4 + 6 + 4 = 18.
    // --predicate 3: both arms fit; every lane counts in both: thread
    // 4 + 8 + 12 + 4 = 28 = 7 × 4 (100%); 10 of them predicated off.
    // --predicate 2: B is too long: as without.
    let mut p = Prog::new();
    let f = p.func(0x100, "kernel");
    let e = p.block(0x100, 1, EndKind::Branch, f);
    let a = p.block(0x101, 2, EndKind::Jump, f);
    let b = p.block(0x103, 3, EndKind::Fallthrough, f);
    let j = p.block(0x106, 1, EndKind::Return, f);
    for tid in 1..=4 {
        p.thread(tid, &[e, if tid <= 2 { a } else { b }, j]);
    }
    let (t, _c) = p.finish();
    let with = |n: u32| Options {
        predicate: n,
        ..Options::default()
    };
    let off = run(&t, 4, with(0));
    assert_eq!(counts(&off), (7, 18));
    assert_eq!(off.results[0].divergent_branches, 1);
    let on = run(&t, 4, with(3));
    assert_eq!(counts(&on), (7, 28));
    let w = &on.results[0];
    assert_eq!(w.simt_efficiency, 1.0);
    assert_eq!(w.predicated_off_thread_instructions, 10);
    assert_eq!((w.predicated_branches, w.divergent_branches), (1, 0));
    assert_eq!(w.recorded_thread_instructions, 18);
    assert_eq!(counts(&run(&t, 4, with(2))), (7, 18));
}

#[test]
fn lanes_spinning_on_a_contended_lock_count_as_active() {
    // main: m0 calls the lock stub; m1 calls crit (5); m2 calls the unlock
    // stub; m3 (2) returns. W = 4, one mutex: 4 rounds of one lane, each
    // issuing m1, crit, m2 and the stub (8 warp instructions).
    // serialize: crit warp 20, thread 20.
    // spin: while round k runs, the 3 - k lanes of later rounds spin:
    // 8 × (3 + 2 + 1) = 48 more thread instructions, 5 × 6 = 30 in crit:
    // crit thread 50 of 80 lane slots.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let crit_f = p.func(0x200, "crit");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 1, EndKind::Call, main);
    let m2 = p.block(0x102, 1, EndKind::Call, main);
    let m3 = p.block(0x103, 2, EndKind::Return, main);
    let crit = p.block(0x200, 5, EndKind::Return, crit_f);
    let plt_lock = p.block(0x300, 1, EndKind::IndirectJump, 0);
    let plt_unlock = p.block(0x310, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(m0, &[]).unwrap();
        t.exec(plt_lock, &[]).unwrap();
        t.skip(SkipReason::LockRuntime, 30).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m1, &[]).unwrap();
        t.exec(crit, &[]).unwrap();
        t.exec(m2, &[]).unwrap();
        t.exec(plt_unlock, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m3, &[]).unwrap();
    }
    let (t, _c) = p.finish();
    let with = |m: LockModel| Options {
        lock_model: m,
        ..Options::default()
    };
    let crit_of = |r: &Report| {
        let f = r.results[0]
            .functions
            .iter()
            .find(|f| f.name == "crit")
            .unwrap();
        (f.warp_instructions, f.thread_instructions)
    };
    let serialize = run(&t, 4, with(LockModel::Serialize));
    assert_eq!(crit_of(&serialize), (20, 20));
    let spin = run(&t, 4, with(LockModel::Spin));
    assert_eq!(crit_of(&spin), (20, 50));
    let w = &spin.results[0];
    assert_eq!(w.spinning_thread_instructions, 48);
    assert_eq!(
        w.thread_instructions,
        serialize.results[0].thread_instructions + 48
    );
    assert_eq!(w.warp_instructions, serialize.results[0].warp_instructions);
    assert_eq!(spin.lock_model, "spin");
}
