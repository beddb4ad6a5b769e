//! Random programs for the replay's tests: threads that call four
//! functions at random from a loop in main, recursing, branching, loading,
//! taking a lock (function 2) and handling signals (function 3).

use crate::replay::{LockModel, Reconvergence};
use crate::testutil::{numbers, TempTrace};
use crate::Options;
use tf_trace::{BlockDef, BlockId, EndKind as E, LockKind, ThreadWriter};

/// The blocks of a function: `e` branches to the call `c` or to the arm
/// `a`, which loads 8 bytes; both go on at `r` (the call's return site,
/// where the branch reconverges), which jumps to `x`, which returns.
struct Func {
    e: BlockId,
    c: BlockId,
    r: BlockId,
    a: BlockId,
    x: BlockId,
}

/// Runs function `f` of `funcs` at call depth `depth`; function 2's arm
/// holds lock 0x5000, and a signal handler (`funcs`' last entry, `e` and
/// `x` only) may interrupt function 3's arm.
fn walk(
    t: &mut ThreadWriter<'_>,
    funcs: &[Func],
    f: usize,
    depth: u32,
    next: &mut impl FnMut(u64) -> u64,
) {
    let b = &funcs[f];
    t.exec(b.e, &[]).unwrap();
    if depth < 5 && next(3) != 0 {
        t.exec(b.c, &[]).unwrap();
        walk(t, funcs, next(4) as usize, depth + 1, next);
    } else {
        if f == 2 {
            t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        }
        if f == 3 && next(2) == 0 {
            let handler = &funcs[funcs.len() - 1];
            t.signal(10).unwrap();
            t.exec(handler.e, &[]).unwrap();
            t.exec(handler.x, &[]).unwrap();
            t.signal_return(10).unwrap();
        }
        t.exec(b.a, &[0x10_0000 + 8 * next(64)]).unwrap();
        if f == 2 {
            t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        }
    }
    t.exec(b.r, &[]).unwrap();
    t.exec(b.x, &[]).unwrap();
}

/// A trace of `threads` threads, each calling random functions from a
/// loop in main.
pub(super) fn program(seed: u64, threads: u64) -> crate::testutil::OpenTrace {
    let mut next = numbers(seed);
    let mut tt = TempTrace::new();
    let w = tt.writer();
    let block = |w: &mut tf_trace::TraceWriter, addr: u64, n: usize, end: E, f| {
        w.block(&BlockDef::new(addr).insns(&vec![1; n]).end(end).function(f))
            .unwrap()
    };
    let main = w.function(0x100, 0, "main").unwrap();
    let m0 = block(w, 0x100, 1, E::Call, main);
    let m1 = block(w, 0x101, 1, E::Branch, main);
    let m2 = block(w, 0x102, 1, E::Return, main);
    // Four functions and a signal handler.
    let funcs: Vec<Func> = (0..5u64)
        .map(|k| {
            let base = 0x1000 * (k + 1);
            let f = w.function(base, 0, format!("f{k}")).unwrap();
            let a = w
                .block(
                    &BlockDef::new(base + 0x20)
                        .insns(&[1, 1, 1])
                        .read(8)
                        .end(E::Jump)
                        .function(f),
                )
                .unwrap();
            Func {
                e: block(w, base, 2, E::Branch, f),
                c: block(w, base + 2, 1, E::Call, f),
                r: block(w, base + 3, 2, E::Jump, f),
                a,
                x: block(w, base + 0x30, 1, E::Return, f),
            }
        })
        .collect();
    for tid in 1..=threads {
        let mut t = w.thread(tid).unwrap();
        for _ in 0..1 + next(4) {
            t.exec(m0, &[]).unwrap();
            walk(&mut t, &funcs, next(4) as usize, 1, &mut next);
            t.exec(m1, &[]).unwrap();
        }
        t.exec(m2, &[]).unwrap();
    }
    tt.finish()
}

/// The analyses the tests compare, one unit per thread at `widths`: the
/// defaults, `min-pc`, `--lock-model spin` with `--predicate 8`, locks off,
/// and each call of f1 a unit (lanes start and end inside calls).
pub(super) fn variants(widths: &[usize]) -> Vec<Options> {
    let base = Options {
        widths: widths.to_vec(),
        unit: "thread".parse().unwrap(),
        index: false,
        ..Options::default()
    };
    vec![
        base.clone(),
        Options {
            reconvergence: Reconvergence::MinPc,
            ..base.clone()
        },
        Options {
            lock_model: LockModel::Spin,
            predicate: 8,
            ..base.clone()
        },
        Options {
            locks: false,
            ..base.clone()
        },
        Options {
            unit: "call:f1".parse().unwrap(),
            ..base
        },
    ]
}
