//! The replay on hand-built traces whose warp and thread instruction counts
//! are worked out by hand in each test's comment.

mod common;

use common::Prog;
use tf_analyzer::{analyze, Options, Silent};
use tf_trace::{EndKind, Trace};

/// (warp instructions, thread instructions) of the whole program at `width`,
/// one unit per thread.
fn counts(trace: &Trace, width: usize) -> (u64, u64) {
    let r = &analyze_as(trace, width, "thread").results[0];
    (r.warp_instructions, r.thread_instructions)
}

/// The analysis at one `width` with units `unit`.
fn analyze_as(trace: &Trace, width: usize, unit: &str) -> tf_analyzer::results::Report {
    let r = analyze(
        trace,
        &Options {
            widths: vec![width],
            unit: unit.parse().unwrap(),
            ..Options::default()
        },
        &Silent,
    )
    .unwrap();
    assert!(r.incomplete.is_empty(), "{:?}", r.incomplete);
    r
}

/// Function `name` of the analysis at one `width` with units `unit`.
fn function_as(
    trace: &Trace,
    width: usize,
    unit: &str,
    name: &str,
) -> tf_analyzer::results::FunctionResult {
    analyze_as(trace, width, unit).results[0]
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}

fn function(trace: &Trace, width: usize, name: &str) -> (u64, u64, f64) {
    let f = function_as(trace, width, "thread", name);
    (
        f.warp_instructions,
        f.thread_instructions,
        f.simt_efficiency,
    )
}

#[test]
fn paper_figure_2_two_threads_diverge_and_reconverge() {
    // ThreadFuser Fig. 2: thread 0 runs BBL1 BBL2 BBL4, thread 1 BBL1 BBL3
    // BBL4; lengths 3, 2, 4, 2. W = 2: BBL1 and BBL4 with both lanes, BBL2
    // and BBL3 with one each: warp = 3 + 2 + 4 + 2 = 11, thread = 6 + 2 + 4 + 4 = 16.
    let (t, _c) = common::paper_figure_2();
    assert_eq!(counts(&t, 2), (11, 16));
    let (_, _, eff) = function(&t, 2, "kernel");
    assert!((eff - 16.0 / 22.0).abs() < 1e-12);
}

#[test]
fn diamond_of_the_reference() {
    // docs/reconvergence.md §6.7: 4 lanes split 2/2, lengths 2/3/5/1:
    // warp = 11, thread = 28, efficiency 28 / 44.
    let mut p = Prog::new();
    let f = p.func(0x100, "f");
    let b0 = p.block(0x100, 2, EndKind::Branch, f);
    let b1 = p.block(0x102, 3, EndKind::Jump, f);
    let b2 = p.block(0x105, 5, EndKind::Fallthrough, f);
    let b3 = p.block(0x10a, 1, EndKind::Return, f);
    for tid in 1..=2 {
        p.thread(tid, &[b0, b1, b3]);
    }
    for tid in 3..=4 {
        p.thread(tid, &[b0, b2, b3]);
    }
    let (t, _c) = p.finish();
    assert_eq!(counts(&t, 4), (11, 28));
    // W = 8: the same 11 warp instructions, half the lanes idle.
    assert_eq!(counts(&t, 8), (11, 28));
    // W = 1: no lock-step at all, every thread instruction is a warp instruction.
    assert_eq!(counts(&t, 1), (28, 28));
}

#[test]
fn recursion_reconverges_level_by_level() {
    // r: R0 (2, branch) → R1 (3, call r) → R2 (1, return) | R3 (4, return).
    // Lane i recurses i times. Per level k, R0 runs with lanes {i ≥ k}, R1
    // with {i > k}, R2 (after the return) with {i > k}; R3 once per lane at
    // its own depth. W = 4:
    //   R0: warp 4·2 = 8,  thread 2·(4+3+2+1) = 20
    //   R1: warp 3·3 = 9,  thread 3·(3+2+1) = 18
    //   R2: warp 3·1 = 3,  thread 3+2+1 = 6
    //   R3: warp 4·4 = 16, thread 16
    // total warp 36, thread 60.
    let mut p = Prog::new();
    let r = p.func(0x200, "r");
    let r0 = p.block(0x200, 2, EndKind::Branch, r);
    let r1 = p.block(0x202, 3, EndKind::Call, r);
    let r2 = p.block(0x205, 1, EndKind::Return, r);
    let r3 = p.block(0x206, 4, EndKind::Return, r);
    for lane in 0..4u64 {
        let mut seq = Vec::new();
        for _ in 0..lane {
            seq.extend([r0, r1]);
        }
        seq.extend([r0, r3]);
        seq.extend(std::iter::repeat_n(r2, lane as usize));
        p.thread(lane + 1, &seq);
    }
    let (t, _c) = p.finish();
    assert_eq!(counts(&t, 4), (36, 60));
}

#[test]
fn longjmp_lands_in_the_frame_that_called_setjmp() {
    // main: M0 (2, branch) → M1 (3, call a) | M3 (4) → M2 (1, return).
    // a: A0 (2, call longjmp); longjmp: L0 (3, indirect jump to M2).
    // Lane 0: M0 M3 M2. Lane 1: M0 M1 A0 L0 M2 (two frames unwound).
    // ipdom(M0) = M2. W = 2: M0 both (2, 4), M1 (3, 3), A0 (2, 2), L0 (3, 3),
    // M3 (4, 4), M2 both (1, 2): warp 15, thread 18.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let a = p.func(0x200, "a");
    let lj = p.func(0x300, "longjmp");
    let m0 = p.block(0x100, 2, EndKind::Branch, main);
    let m1 = p.block(0x102, 3, EndKind::Call, main);
    let m3 = p.block(0x105, 4, EndKind::Fallthrough, main);
    let m2 = p.block(0x109, 1, EndKind::Return, main);
    let a0 = p.block(0x200, 2, EndKind::Call, a);
    let l0 = p.block(0x300, 3, EndKind::IndirectJump, lj);
    p.thread(1, &[m0, m3, m2]);
    p.thread(2, &[m0, m1, a0, l0, m2]);
    let (t, _c) = p.finish();
    assert_eq!(counts(&t, 2), (15, 18));
}

#[test]
fn tail_call_returns_to_the_original_caller() {
    // main: M0 (1, call f) → M1 (2, return).
    // f: F0 (2, branch) → F1 (3, jmp g) | F2 (2, return); g: G0 (4, return).
    // Lane 0: M0 F0 F1 G0 M1; lane 1: M0 F0 F2 M1. W = 2:
    // M0 (1, 2), F0 (2, 4), F1 (3, 3), G0 (4, 4), F2 (2, 2), M1 (2, 4):
    // warp 14, thread 19.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let f = p.func(0x200, "f");
    let g = p.func(0x300, "g");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 2, EndKind::Return, main);
    let f0 = p.block(0x200, 2, EndKind::Branch, f);
    let f1 = p.block(0x202, 3, EndKind::Jump, f);
    let f2 = p.block(0x205, 2, EndKind::Return, f);
    let g0 = p.block(0x300, 4, EndKind::Return, g);
    p.thread(1, &[m0, f0, f1, g0, m1]);
    p.thread(2, &[m0, f0, f2, m1]);
    let (t, _c) = p.finish();
    assert_eq!(counts(&t, 2), (14, 19));
    assert_eq!(function(&t, 2, "g").0, 4);
    assert_eq!(function(&t, 2, "main"), (3, 6, 1.0));
}

#[test]
fn indirect_call_with_different_targets_reconverges_at_the_return_site() {
    // main: M0 (2, indirect call) → f: F0 (3, return) or g: G0 (5, return)
    // → M1 (1, return). Lanes 0, 1 call f; lanes 2, 3 call g. W = 4:
    // M0 (2, 8), F0 (3, 6), G0 (5, 10), M1 (1, 4): warp 11, thread 28.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let f = p.func(0x200, "f");
    let g = p.func(0x300, "g");
    let m0 = p.block(0x100, 2, EndKind::IndirectCall, main);
    let m1 = p.block(0x102, 1, EndKind::Return, main);
    let f0 = p.block(0x200, 3, EndKind::Return, f);
    let g0 = p.block(0x300, 5, EndKind::Return, g);
    p.thread(1, &[m0, f0, m1]);
    p.thread(2, &[m0, f0, m1]);
    p.thread(3, &[m0, g0, m1]);
    p.thread(4, &[m0, g0, m1]);
    let (t, _c) = p.finish();
    assert_eq!(counts(&t, 4), (11, 28));
    assert_eq!(function(&t, 4, "main"), (3, 12, 1.0));
}

#[test]
fn loop_whose_trip_count_is_the_lane_index() {
    // k: K0 (2, branch: loop test) → K1 (1, call body) → K3 (1, jump K0),
    // or → K2 (1, return). body: B0 (5, return). Lane l (0-based) runs l + 1
    // iterations. body runs W times with lanes {l ≥ it}: thread = W(W+1)/2
    // executions, warp = W: efficiency (W+1)/(2W).
    for width in [4usize, 8, 32] {
        let mut p = Prog::new();
        let k = p.func(0x100, "k");
        let body = p.func(0x200, "body");
        let k0 = p.block(0x100, 2, EndKind::Branch, k);
        let k1 = p.block(0x102, 1, EndKind::Call, k);
        let k3 = p.block(0x103, 1, EndKind::Jump, k);
        let k2 = p.block(0x104, 1, EndKind::Return, k);
        let b0 = p.block(0x200, 5, EndKind::Return, body);
        for lane in 0..width as u64 {
            let mut seq = Vec::new();
            for _ in 0..=lane {
                seq.extend([k0, k1, b0, k3]);
            }
            seq.extend([k0, k2]);
            p.thread(lane + 1, &seq);
        }
        let (t, _c) = p.finish();
        let w = width as u64;
        let (warp, thread, eff) = function(&t, width, "body");
        assert_eq!((warp, thread), (5 * w, 5 * w * (w + 1) / 2), "W = {width}");
        assert!((eff - (w + 1) as f64 / (2 * w) as f64).abs() < 1e-12);
    }
}

#[test]
fn long_units_of_one_thread_read_from_the_middle_of_a_chunk() {
    // One thread calls work(i) for i = 0..64; work(i) loops T_i = 10000 + i
    // times: W0 (2 insns, loop test) → W1 (3 insns, reads 4 bytes at
    // 0x10000 + 4i, jumps back), then W2 (1, return). Each call is a unit of
    // 2·T_i + 2 events, long enough that lanes read it as they go; with one
    // chunk for the whole thread (default chunk size) every lane but the
    // first starts in the middle of a chunk, and with 256-byte chunks units
    // span chunks. W = 32: two warps, units 0..31 (T = b .. b+31 with
    // b = 10000) and 32..63 (b = 10032).
    //   work's warp instructions, per warp: W0 b+32 times, W1 b+31 times,
    //     W2 once: 2(b+32) + 3(b+31) + 1 = 5b + 158.
    //   thread instructions, per unit: 2(T+1) + 3T + 1 = 5T + 3.
    //   W1's requests: b+31 per warp. Its first b iterations have all 32
    //     lanes, reading 128 aligned bytes: 4 sectors. Iteration b+j (j = 0..30)
    //     has lanes j+1..31: 4 − ⌊(j+1)/8⌋ sectors, 124 − 48 = 76 in all.
    for chunk_target in [1 << 20, 256] {
        let mut p = Prog::with_options(tf_trace::WriterOptions {
            chunk_target,
            ..Default::default()
        });
        let main = p.func(0x100, "main");
        let work = p.func(0x200, "work");
        let m0 = p.block(0x100, 1, EndKind::Call, main);
        let m1 = p.block(0x101, 1, EndKind::Branch, main);
        let m2 = p.block(0x102, 1, EndKind::Return, main);
        let w0 = p.block(0x200, 2, EndKind::Branch, work);
        let w1 = p
            .w()
            .block(
                &tf_trace::BlockDef::new(0x202)
                    .insns(&[1, 1, 1])
                    .read(4)
                    .end(EndKind::Jump)
                    .function(work),
            )
            .unwrap();
        let w2 = p.block(0x205, 1, EndKind::Return, work);
        {
            let mut t = p.w().thread(1).unwrap();
            for i in 0..64u64 {
                t.exec(m0, &[]).unwrap();
                for _ in 0..10000 + i {
                    t.exec(w0, &[]).unwrap();
                    t.exec(w1, &[0x10000 + 4 * i]).unwrap();
                }
                t.exec(w0, &[]).unwrap();
                t.exec(w2, &[]).unwrap();
                t.exec(m1, &[]).unwrap();
            }
            t.exec(m2, &[]).unwrap();
        }
        let (t, _c) = p.finish();
        let f = function_as(&t, 32, "call:work", "work");
        let bases = [10000u64, 10032];
        let warp: u64 = bases.iter().map(|b| 5 * b + 158).sum();
        let thread: u64 = (0..64u64).map(|i| 5 * (10000 + i) + 3).sum();
        assert_eq!(
            (f.warp_instructions, f.thread_instructions),
            (warp, thread),
            "chunk target {chunk_target}"
        );
        let heap = f.memory.heap;
        assert_eq!(
            (heap.requests, heap.sectors),
            (
                bases.iter().map(|b| b + 31).sum::<u64>(),
                bases.iter().map(|b| 4 * b + 76).sum::<u64>()
            ),
            "chunk target {chunk_target}"
        );
    }
}
