//! Lock serialization on hand-built traces.

mod common;

use common::Prog;
use tf_analyzer::results::Report;
use tf_analyzer::{analyze, Options, Silent};
use tf_trace::{BlockId, EndKind, LockKind, SkipReason, Trace};

fn report(trace: &Trace, width: usize, locks: bool) -> Report {
    report_at(trace, &[width], locks)
}

/// The analysis of `trace` at `widths`, which must be complete.
fn report_at(trace: &Trace, widths: &[usize], locks: bool) -> Report {
    let opts = Options {
        widths: widths.to_vec(),
        unit: "thread".parse().unwrap(),
        locks,
        ..Options::default()
    };
    let r = analyze(trace, &opts, &Silent).unwrap();
    assert!(r.incomplete.is_empty(), "{:?}", r.incomplete);
    r
}

/// (warp, thread) instructions of function `name`.
fn func(r: &Report, name: &str) -> (u64, u64) {
    let f = r.results[0]
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap();
    (f.warp_instructions, f.thread_instructions)
}

/// The blocks of: main calls lock(m) through a PLT stub, calls crit (5
/// instructions), calls unlock(m) through a PLT stub, then runs 2 more.
struct Locked {
    m0: BlockId,
    plt_lock: BlockId,
    m1: BlockId,
    crit: BlockId,
    m2: BlockId,
    plt_unlock: BlockId,
    m3: BlockId,
}

fn locked(p: &mut Prog) -> Locked {
    let main = p.func(0x100, "main");
    let crit = p.func(0x200, "crit");
    Locked {
        m0: p.block(0x100, 1, EndKind::Call, main),
        m1: p.block(0x101, 1, EndKind::Call, main),
        m2: p.block(0x102, 1, EndKind::Call, main),
        m3: p.block(0x103, 2, EndKind::Return, main),
        crit: p.block(0x200, 5, EndKind::Return, crit),
        plt_lock: p.block(0x300, 1, EndKind::IndirectJump, 0),
        plt_unlock: p.block(0x310, 1, EndKind::IndirectJump, 0),
    }
}

/// One thread running the locked sequence on mutex `lock`.
fn run_locked(p: &mut Prog, tid: u64, b: &Locked, lock: u64) {
    run_locked_kind(p, tid, b, lock, LockKind::Mutex)
}

fn run_locked_kind(p: &mut Prog, tid: u64, b: &Locked, lock: u64, kind: LockKind) {
    let mut t = p.w().thread(tid).unwrap();
    t.exec(b.m0, &[]).unwrap();
    t.exec(b.plt_lock, &[]).unwrap();
    t.skip(SkipReason::LockRuntime, 30).unwrap();
    t.lock_acquire(kind, lock).unwrap();
    t.exec(b.m1, &[]).unwrap();
    t.exec(b.crit, &[]).unwrap();
    t.exec(b.m2, &[]).unwrap();
    t.exec(b.plt_unlock, &[]).unwrap();
    t.lock_release(kind, lock).unwrap();
    t.skip(SkipReason::LockRuntime, 20).unwrap();
    t.exec(b.m3, &[]).unwrap();
}

/// Four threads running the locked sequence on mutex 0x5000.
fn one_global_mutex() -> (Trace, common::Cleanup) {
    let mut p = Prog::new();
    let b = locked(&mut p);
    for tid in 1..=4 {
        run_locked(&mut p, tid, &b, 0x5000);
    }
    p.finish()
}

#[test]
fn one_global_mutex_serializes_the_critical_section() {
    // W = 4, all lanes lock 0x5000. They land together after the lock call,
    // then run in 4 rounds of one lane each up to the release, which comes
    // after the unlock stub: per round m1 (1), crit (5), m2 (1), the stub
    // (1). After the release they continue together: m3 (2).
    // crit: warp 4 × 5 = 20, thread 20: efficiency 1/4.
    let (t, _c) = one_global_mutex();
    let r = report(&t, 4, true);
    assert_eq!(func(&r, "crit"), (20, 20));
    // main: m0 together (1 warp), m1 and m2 per lane (8), m3 together (2).
    assert_eq!(func(&r, "main"), (1 + 8 + 2, 4 + 8 + 8));
    let lock = &r.results[0].locks[0];
    assert_eq!(lock.address, "0x5000");
    assert_eq!(
        (lock.acquisitions, lock.contentions, lock.serialized_lanes),
        (4, 1, 3)
    );
    // Rounds 1..3 issue m1, crit, m2 and the stub: 3 × 8 warp instructions.
    assert_eq!(lock.serialized_warp_instructions, 24);
    // Without serialization the critical section runs in lock-step.
    let off = report(&t, 4, false);
    assert_eq!(func(&off, "crit"), (5, 20));
    assert_eq!(off.results[0].locks[0].serialized_lanes, 0);
}

#[test]
fn per_item_mutexes_do_not_serialize() {
    let mut p = Prog::new();
    let b = locked(&mut p);
    for tid in 1..=4 {
        run_locked(&mut p, tid, &b, 0x5000 + 64 * tid);
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    assert_eq!(func(&r, "crit"), (5, 20));
    assert_eq!(r.results[0].serialized_warp_instructions, 0);
    assert_eq!(r.results[0].locks.len(), 4);
}

#[test]
fn two_locks_in_one_warp_run_in_parallel_rounds() {
    // Lanes 0, 1 lock A; lanes 2, 3 lock B: round 0 = {0, 2}, round 1 = {1, 3}.
    // crit: 2 rounds × 5 = 10 warp, 20 thread: efficiency 1/2.
    let mut p = Prog::new();
    let b = locked(&mut p);
    for tid in 1..=4 {
        run_locked(&mut p, tid, &b, if tid <= 2 { 0xa000 } else { 0xb000 });
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    assert_eq!(func(&r, "crit"), (10, 20));
}

#[test]
fn a_lock_taken_in_a_wrapper_still_serializes_the_callers_critical_section() {
    // Like pigz's possess()/release(): main calls possess, which calls the
    // lock; main then calls crit; main calls release, which unlocks.
    // possess: q0 (1, call lock stub) … q1 (1, ret); release: s0 (1, call
    // unlock stub) … s1 (1, ret). crit must still run one lane at a time.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let crit_f = p.func(0x200, "crit");
    let possess = p.func(0x400, "possess");
    let release = p.func(0x500, "release");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 1, EndKind::Call, main);
    let m2 = p.block(0x102, 1, EndKind::Call, main);
    let m3 = p.block(0x103, 2, EndKind::Return, main);
    let crit = p.block(0x200, 5, EndKind::Return, crit_f);
    let q0 = p.block(0x400, 1, EndKind::Call, possess);
    let q1 = p.block(0x401, 1, EndKind::Return, possess);
    let s0 = p.block(0x500, 1, EndKind::Call, release);
    let s1 = p.block(0x501, 1, EndKind::Return, release);
    let plt_lock = p.block(0x300, 1, EndKind::IndirectJump, 0);
    let plt_unlock = p.block(0x310, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(m0, &[]).unwrap();
        t.exec(q0, &[]).unwrap();
        t.exec(plt_lock, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(q1, &[]).unwrap();
        t.exec(m1, &[]).unwrap();
        t.exec(crit, &[]).unwrap();
        t.exec(m2, &[]).unwrap();
        t.exec(s0, &[]).unwrap();
        t.exec(plt_unlock, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(s1, &[]).unwrap();
        t.exec(m3, &[]).unwrap();
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    assert_eq!(func(&r, "crit"), (20, 20));
    // release's tail (s1) runs after the join, all lanes together.
    assert_eq!(func(&r, "release"), (4 + 1, 8));
    // main's m3 runs together.
    let (main_warp, main_thread) = func(&r, "main");
    assert_eq!(main_thread, 4 * 5);
    assert_eq!(main_warp, 1 + 4 * 2 + 2);
}

#[test]
fn readers_share_a_rwlock_and_a_writer_excludes_them() {
    let mut p = Prog::new();
    let b = locked(&mut p);
    for tid in 1..=4 {
        run_locked_kind(&mut p, tid, &b, 0x6000, LockKind::RwRead);
    }
    let (t, _c) = p.finish();
    assert_eq!(func(&report(&t, 4, true), "crit"), (5, 20));

    let mut p = Prog::new();
    let b = locked(&mut p);
    for tid in 1..=4 {
        let kind = if tid == 4 {
            LockKind::RwWrite
        } else {
            LockKind::RwRead
        };
        run_locked_kind(&mut p, tid, &b, 0x6000, kind);
    }
    let (t, _c) = p.finish();
    assert_eq!(func(&report(&t, 4, true), "crit"), (20, 20));
}

#[test]
fn a_lock_still_held_after_the_join_makes_progress() {
    // A recursive mutex: each lane takes L twice, releases it once inside f
    // and never again. The replay must end, and (as under every model)
    // thread instructions are exactly the lanes' own.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let f = p.func(0x200, "f");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 1, EndKind::Call, main);
    let m2 = p.block(0x102, 1, EndKind::Call, main);
    let m3 = p.block(0x103, 3, EndKind::Return, main);
    let f0 = p.block(0x200, 1, EndKind::Call, f);
    let f1 = p.block(0x201, 2, EndKind::Return, f);
    let stub = p.block(0x300, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(m0, &[]).unwrap();
        t.exec(stub, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m1, &[]).unwrap();
        t.exec(stub, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m2, &[]).unwrap();
        t.exec(f0, &[]).unwrap();
        t.exec(stub, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(f1, &[]).unwrap();
        t.exec(m3, &[]).unwrap();
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    // m0, stub, m1, stub, m2, f0, stub: 1 each; f1: 2; m3: 3.
    let per_lane = 7 + 2 + 3;
    assert_eq!(r.results[0].thread_instructions, 4 * per_lane);
    assert!(r.results[0].serialized_warp_instructions > 0);
}

#[test]
fn a_lock_released_two_calls_down_rejoins_every_lane() {
    // worker locks, runs crit, calls unlock1, which calls unlock2, which
    // calls the unlock stub. W = 4, one mutex.
    // Before the rounds: w0 and the lock stub together (1 + 1 warp, 4 + 4 thread).
    // Each of the 4 rounds runs one lane: w1, crit (5), w2, u1a, u2a, stub = 10.
    // After the join all lanes stand in unlock2, two calls below worker, and
    // go on together: u2b (2), u1b (2), w3 (2).
    // Warp: 2 + 40 + 6 = 48; thread: 8 + 40 + 24 = 72 = 4 lanes × 18, all of them.
    let mut p = Prog::new();
    let worker = p.func(0x100, "worker");
    let crit_f = p.func(0x200, "crit");
    let unlock1 = p.func(0x400, "unlock1");
    let unlock2 = p.func(0x500, "unlock2");
    let w0 = p.block(0x100, 1, EndKind::Call, worker);
    let w1 = p.block(0x101, 1, EndKind::Call, worker);
    let w2 = p.block(0x102, 1, EndKind::Call, worker);
    let w3 = p.block(0x103, 2, EndKind::Return, worker);
    let crit = p.block(0x200, 5, EndKind::Return, crit_f);
    let u1a = p.block(0x400, 1, EndKind::Call, unlock1);
    let u1b = p.block(0x401, 2, EndKind::Return, unlock1);
    let u2a = p.block(0x500, 1, EndKind::Call, unlock2);
    let u2b = p.block(0x501, 2, EndKind::Return, unlock2);
    let plt_lock = p.block(0x300, 1, EndKind::IndirectJump, 0);
    let plt_unlock = p.block(0x310, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(w0, &[]).unwrap();
        t.exec(plt_lock, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(w1, &[]).unwrap();
        t.exec(crit, &[]).unwrap();
        t.exec(w2, &[]).unwrap();
        t.exec(u1a, &[]).unwrap();
        t.exec(u2a, &[]).unwrap();
        t.exec(plt_unlock, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(u2b, &[]).unwrap();
        t.exec(u1b, &[]).unwrap();
        t.exec(w3, &[]).unwrap();
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    let all = &r.results[0];
    assert_eq!((all.warp_instructions, all.thread_instructions), (48, 72));
    assert_eq!(all.recorded_thread_instructions, 72);
    assert_eq!(all.unfinished_units, 0);
    assert_eq!(func(&r, "crit"), (20, 20));
    assert_eq!(func(&r, "worker"), (1 + 4 * 2 + 2, 4 + 8 + 8));
    assert_eq!(func(&r, "unlock1"), (4 + 2, 4 + 8));
    assert_eq!(func(&r, "unlock2"), (4 + 2, 4 + 8));
    assert_eq!(r.results[0].locks[0].serialized_lanes, 3);
    assert!(r.incomplete.is_empty(), "{:?}", r.incomplete);
}

#[test]
fn lanes_leaving_a_contended_lock_at_different_places_reconverge() {
    // main locks, then lanes 0 and 1 unlock on path A (a0: 2, stub, a1: 1),
    // lanes 2 and 3 on path B (b0: 3, stub, b1: 1); both paths meet at M,
    // which calls work: a loop L (3 instructions) run 5 times, then X (1).
    // Rounds: one lane each, m1, then a0 or b0, then the stub: 4, 4, 5, 5.
    // After the join the lanes stand at a1 and b1, whose post-dominator is M:
    // a1 and b1 run apart (1 + 1), and from M on all four run together, so
    // work runs at 100%: warp 5 × 3 + 1 = 16, thread 64.
    // Whole program: m0, stub (2 warp, 8 thread), rounds 18 (18), a1 and b1
    // 2 (4), M 1 (4), work 16 (64), E 1 (4): warp 40, thread 102.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let work = p.func(0x200, "work");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 1, EndKind::Branch, main);
    let a0 = p.block(0x110, 2, EndKind::Call, main);
    let a1 = p.block(0x112, 1, EndKind::Jump, main);
    let b0 = p.block(0x120, 3, EndKind::Call, main);
    let b1 = p.block(0x123, 1, EndKind::Jump, main);
    let m = p.block(0x130, 1, EndKind::Call, main);
    let e = p.block(0x131, 1, EndKind::Return, main);
    let l = p.block(0x200, 3, EndKind::Branch, work);
    let x = p.block(0x203, 1, EndKind::Return, work);
    let plt_lock = p.block(0x300, 1, EndKind::IndirectJump, 0);
    let plt_unlock = p.block(0x310, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4u64 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(m0, &[]).unwrap();
        t.exec(plt_lock, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m1, &[]).unwrap();
        let (first, then) = if tid <= 2 { (a0, a1) } else { (b0, b1) };
        t.exec(first, &[]).unwrap();
        t.exec(plt_unlock, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(then, &[]).unwrap();
        t.exec(m, &[]).unwrap();
        for _ in 0..5 {
            t.exec(l, &[]).unwrap();
        }
        t.exec(x, &[]).unwrap();
        t.exec(e, &[]).unwrap();
    }
    let (t, _c) = p.finish();
    let r = report(&t, 4, true);
    assert_eq!(func(&r, "work"), (16, 64));
    let all = &r.results[0];
    assert_eq!((all.warp_instructions, all.thread_instructions), (40, 102));
    assert_eq!(all.recorded_thread_instructions, 102);
}

#[test]
fn lanes_counted_alone_by_a_warp_that_serializes_them_never_wait() {
    // The four lanes of one global mutex serialize at W = 4; at W = 1, as a
    // wider replay counts each lane alone too, no lane waits for another.
    let (t, _c) = one_global_mutex();
    let both = report_at(&t, &[4, 1], true);
    assert_eq!(both.results[0].serialized_warp_instructions, 24);
    let one = report(&t, 1, true);
    assert_eq!(both.results[1], one.results[0]);
    let lock = &one.results[0].locks[0];
    assert_eq!((lock.acquisitions, lock.contentions), (4, 0));
    assert_eq!(one.results[0].serialized_warp_instructions, 0);
    // crit: 5 instructions per lane, each lane its own warp.
    assert_eq!(func(&one, "crit"), (20, 20));
}
