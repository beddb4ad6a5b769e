//! `tf trace` through the real Valgrind tracer on small workloads whose
//! traces are known from their source.

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::collections::HashMap;
use std::path::Path;
use tf_analyzer::blocks::{steps, CanonicalBlocks};
use tf_analyzer::symbols::Symbols;
use tf_trace::{Event, LockKind, Trace};

mod command_line;
mod processes;

/// One lock event: (acquire, kind, lock address).
type LockEvent = (bool, LockKind, u64);

/// Per thread: (start routine name, its lock events).
fn lock_events(trace: &Trace) -> HashMap<u64, (String, Vec<LockEvent>)> {
    let symbols = Symbols::new(trace.blocks());
    let mut out = HashMap::new();
    for t in trace.threads() {
        let mut r = trace.read_thread(t.tid).unwrap();
        let mut start = String::new();
        let mut events = Vec::new();
        while let Some(ev) = r.next_event() {
            match ev.unwrap() {
                Event::ThreadStart { start_routine, .. } => {
                    start = symbols
                        .at_entry(start_routine)
                        .map(|f| symbols.name(f).to_string())
                        .unwrap_or_default();
                }
                Event::LockAcquire { kind, lock } => events.push((true, kind, lock)),
                Event::LockRelease { kind, lock } => events.push((false, kind, lock)),
                _ => {}
            }
        }
        out.insert(t.tid, (start, events));
    }
    out
}

/// Executions of each canonical block of function `name` in thread `tid`
/// (a tracer's block may run into the loop body; canonical blocks split it).
fn block_counts(trace: &Trace, tid: u64, name: &str) -> HashMap<u32, u64> {
    let symbols = Symbols::new(trace.blocks());
    let canon = CanonicalBlocks::build(trace.blocks());
    let mut counts = HashMap::new();
    let mut r = trace.read_thread(tid).unwrap();
    while let Some(ev) = r.next_event() {
        if let Event::Block(x) = ev.unwrap() {
            for s in steps(&canon, x.block, x.insns, x.complete, x.accesses()) {
                if symbols.name(canon.block(s.cblock).function) == name {
                    *counts.entry(s.cblock).or_default() += 1;
                }
            }
        }
    }
    counts
}

#[test]
fn a_loop_of_n_iterations_shows_its_block_n_times() {
    for n in [1000u64, 1777] {
        let dir = tempdir();
        let out = trace_ok(dir.path(), &workload("loop"), &[&n.to_string()]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            (3 * n * (n - 1) / 2).to_string()
        );
        let trace = Trace::open(dir.path()).unwrap();
        let counts = block_counts(&trace, 1, "loop_n");
        assert!(
            counts.values().any(|&c| c == n),
            "no block of loop_n ran {n} times: {counts:?}"
        );
        assert!(counts.values().all(|&c| c <= n), "{counts:?}");
    }
}

#[test]
fn an_array_walk_shows_base_plus_i_times_size() {
    let n = 1000u64;
    let dir = tempdir();
    let out = trace_ok(dir.path(), &workload("array_walk"), &[&n.to_string()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let base = u64::from_str_radix(
        stdout
            .split("base=0x")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap(),
        16,
    )
    .unwrap();
    let trace = Trace::open(dir.path()).unwrap();
    let symbols = Symbols::new(trace.blocks());
    let mut reads = Vec::new();
    let mut stack = (0, 0);
    let mut r = trace.read_thread(1).unwrap();
    while let Some(ev) = r.next_event() {
        match ev.unwrap() {
            Event::ThreadStart {
                stack_lo, stack_hi, ..
            } => stack = (stack_lo, stack_hi),
            Event::Block(x) => {
                let b = trace.blocks().block(x.block).unwrap();
                if symbols.name(b.function()) == "walk" {
                    // Reads that are not on the stack (walk's `ret` pops one there).
                    let heap = x
                        .accesses()
                        .iter()
                        .filter(|a| !a.write && !(stack.0..stack.1).contains(&a.addr));
                    reads.extend(heap.map(|a| (a.addr, a.size)));
                }
            }
            _ => {}
        }
    }
    assert_eq!(reads.len(), n as usize, "one 8-byte read per element");
    for (i, &(addr, size)) in reads.iter().enumerate() {
        assert_eq!((addr, size), (base + 8 * i as u64, 8), "element {i}");
    }
}

#[test]
fn lock_events_match_the_programs_calls() {
    let (threads, iters) = (3usize, 5usize);
    let dir = tempdir();
    let out = trace_ok(
        dir.path(),
        &workload("locks"),
        &[&threads.to_string(), &iters.to_string()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let addr = |name: &str| {
        let v = stdout
            .split(&format!("{name}=0x"))
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        u64::from_str_radix(v, 16).unwrap()
    };
    let (mutex, held, cv_mutex, spin, rwlock, sem) = (
        addr("mutex"),
        addr("held"),
        addr("cv_mutex"),
        addr("spin"),
        addr("rwlock"),
        addr("sem"),
    );
    let trace = Trace::open(dir.path()).unwrap();
    let by_thread = lock_events(&trace);
    assert_eq!(by_thread.len(), 1 + 2 + threads);
    let count = |evs: &[LockEvent], acquire: bool, kind: LockKind, lock: u64| {
        evs.iter().filter(|e| **e == (acquire, kind, lock)).count()
    };
    let mut workers = 0;
    for (start, evs) in by_thread.values() {
        match start.as_str() {
            "worker" => {
                workers += 1;
                // ITERS rounds plus one successful trylock at the end.
                assert_eq!(count(evs, true, LockKind::Mutex, mutex), iters + 1);
                assert_eq!(count(evs, false, LockKind::Mutex, mutex), iters + 1);
                assert_eq!(count(evs, true, LockKind::Spin, spin), iters);
                assert_eq!(count(evs, false, LockKind::Spin, spin), iters);
                assert_eq!(count(evs, true, LockKind::RwRead, rwlock), iters);
                assert_eq!(count(evs, true, LockKind::RwWrite, rwlock), iters);
                assert_eq!(
                    evs.iter().filter(|e| !e.0 && e.2 == rwlock).count(),
                    2 * iters
                );
                assert_eq!(count(evs, true, LockKind::Semaphore, sem), iters);
                assert_eq!(count(evs, false, LockKind::Semaphore, sem), iters);
                assert_eq!(evs.len(), 10 * iters + 2);
                // Every release follows the acquire of the same lock.
                for pair in evs.chunks(2) {
                    assert!(
                        pair[0].0 && !pair[1].0 && pair[0].2 == pair[1].2,
                        "{pair:?}"
                    );
                }
            }
            "try_held" => assert!(evs.is_empty(), "a failed trylock acquires nothing: {evs:?}"),
            "waiter" => {
                // lock; cond_wait (release + re-acquire) at least once; unlock.
                let acquires = count(evs, true, LockKind::Mutex, cv_mutex);
                assert!(acquires >= 2, "{evs:?}");
                assert_eq!(count(evs, false, LockKind::Mutex, cv_mutex), acquires);
                assert_eq!(evs.len(), 2 * acquires);
            }
            "" => {
                // main: held once, cv_mutex at least once.
                assert_eq!(count(evs, true, LockKind::Mutex, held), 1);
                assert_eq!(count(evs, false, LockKind::Mutex, held), 1);
                assert!(count(evs, true, LockKind::Mutex, cv_mutex) >= 1);
            }
            other => panic!("unexpected start routine {other}"),
        }
    }
    assert_eq!(workers, threads);
}

#[test]
fn openmp_critical_and_atomic_are_locks() {
    let n = 64;
    let dir = tempdir();
    trace_ok(dir.path(), &workload("omp_locks"), &[&n.to_string()]);
    let mut counts: HashMap<(bool, LockKind), usize> = HashMap::new();
    for ((acq, kind, _), k) in lock_counts(&Trace::open(dir.path()).unwrap()) {
        *counts.entry((acq, kind)).or_default() += k;
    }
    for kind in [
        LockKind::OmpCritical,
        LockKind::OmpCriticalNamed,
        LockKind::OmpAtomic,
    ] {
        assert_eq!(counts.get(&(true, kind)), Some(&n), "{kind:?}: {counts:?}");
        assert_eq!(counts.get(&(false, kind)), Some(&n), "{kind:?}: {counts:?}");
    }
}

#[test]
fn the_openmp_lock_api_takes_mutexes() {
    lock_api_takes_mutexes(&workload("omp_lock_api"));
}

/// workloads/omp_lock_api.c built as `program`: per iteration, `lock`
/// once, `nest` twice (nested), `tested` once however many tests failed.
fn lock_api_takes_mutexes(program: &Path) {
    let n = 64;
    let dir = tempdir();
    let out = trace_ok(dir.path(), program, &[&n.to_string()]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let addr = |name: &str| {
        let v = stdout.split(&format!("{name}=0x")).nth(1).unwrap();
        let v = v.split_whitespace().next().unwrap();
        u64::from_str_radix(v, 16).unwrap()
    };
    let counts = lock_counts(&Trace::open(dir.path()).unwrap());
    for (name, times) in [("lock", n), ("nest", 2 * n), ("tested", n)] {
        for acquire in [true, false] {
            let key = (acquire, LockKind::Mutex, addr(name));
            assert_eq!(counts.get(&key), Some(&times), "{name}: {counts:?}");
        }
    }
}

/// Lock events of all threads, counted by (acquire, kind, lock).
fn lock_counts(trace: &Trace) -> HashMap<LockEvent, usize> {
    let mut counts = HashMap::new();
    for (_, evs) in lock_events(trace).values() {
        for &e in evs {
            *counts.entry(e).or_default() += 1;
        }
    }
    counts
}

#[test]
fn llvms_critical_sections_and_lock_api_are_locks() {
    let n = 64;
    let (Some(critical), Some(api)) = (
        build_with_clang("omp_locks", "-O1"),
        build_with_clang("omp_lock_api", "-O1"),
    ) else {
        eprintln!(
            "skipped: clang with libomp is not installed (apt-get install -y clang libomp-dev)"
        );
        return;
    };
    lock_api_takes_mutexes(&api);
    // Under libomp every critical section, the unnamed one too, has a lock
    // variable of its own: two locks, each taken once per iteration.
    let dir = tempdir();
    trace_ok(dir.path(), &critical, &[&n.to_string()]);
    let counts = lock_counts(&Trace::open(dir.path()).unwrap());
    let critical: Vec<(&LockEvent, &usize)> = (counts.iter())
        .filter(|((_, kind, _), _)| *kind == LockKind::OmpCriticalNamed)
        .collect();
    assert_eq!(critical.len(), 4, "{counts:?}");
    assert!(critical.iter().all(|(_, &k)| k == n), "{counts:?}");
}

#[test]
fn threads_have_unique_ids_parents_and_start_routines() {
    let t = 4;
    let dir = tempdir();
    trace_ok(dir.path(), &workload("threads"), &[&t.to_string()]);
    let trace = Trace::open(dir.path()).unwrap();
    let symbols = Symbols::new(trace.blocks());
    let tids: Vec<u64> = trace.threads().iter().map(|t| t.tid).collect();
    assert_eq!(tids, (1..=1 + 2 * t as u64).collect::<Vec<_>>());
    let mut parent = HashMap::new();
    let mut routine = HashMap::new();
    for &tid in &tids {
        let mut r = trace.read_thread(tid).unwrap();
        match r.next_event().unwrap().unwrap() {
            Event::ThreadStart {
                parent: p,
                start_routine,
                stack_lo,
                stack_hi,
            } => {
                assert!(stack_lo < stack_hi, "thread {tid} has no stack range");
                parent.insert(tid, p);
                routine.insert(
                    tid,
                    symbols
                        .at_entry(start_routine)
                        .map(|f| symbols.name(f).to_string())
                        .unwrap_or_default(),
                );
            }
            other => panic!("thread {tid} starts with {other:?}"),
        }
    }
    assert_eq!(parent[&1], 0);
    let workers: Vec<u64> = tids
        .iter()
        .copied()
        .filter(|t| routine[t] == "worker")
        .collect();
    let helpers: Vec<u64> = tids
        .iter()
        .copied()
        .filter(|t| routine[t] == "helper")
        .collect();
    assert_eq!((workers.len(), helpers.len()), (t, t));
    assert!(workers.iter().all(|w| parent[w] == 1));
    let mut helper_parents: Vec<u64> = helpers.iter().map(|h| parent[h]).collect();
    helper_parents.sort();
    assert_eq!(helper_parents, workers);
    let m = trace.manifest().unwrap();
    assert!(m.complete);
    assert_eq!(m.threads.len(), 1 + 2 * t);
}

#[test]
fn a_thread_that_never_ran_has_its_parent_and_start_routine() {
    // The threads start as the process ends. The tracer runs one thread at
    // a time, and most runs end before the last of them ran an instruction:
    // its stream has no thread_start event, and the manifest says whose it
    // was. On an idle machine the scheduler lets every thread run first
    // about one run in eight; with every core busy, in up to two runs of
    // three (13 of 20 with one thread, 12 of 20 with three): then the
    // program is traced again, up to 40 times. With one thread, mostly no
    // code of its start routine ran at all: the tracer names the routine
    // when the thread is created.
    for n in [1u64, 3] {
        let runs = 40;
        let tids = 2..=n + 1;
        let (dir, info) = (0..runs)
            .find_map(|_| {
                let dir = tempdir();
                trace_ok(dir.path(), &workload("never_ran"), &[&n.to_string()]);
                let out = run_ok(tf().arg("info").arg(dir.path()));
                let info = String::from_utf8_lossy(&out.stdout).into_owned();
                let never_ran = tids
                    .clone()
                    .any(|tid| info_thread_row(&info, tid)[3] == "0");
                never_ran.then_some((dir, info))
            })
            .unwrap_or_else(|| panic!("in {runs} runs, every thread ran before the process ended"));
        for tid in tids {
            let r = info_thread_row(&info, tid);
            assert_eq!((r[1], r[2]), ("1", "idle"), "{info}");
        }
        let report = analyze_json(dir.path(), &[]);
        let threads = report["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 1 + n as usize);
        for t in &threads[1..] {
            assert_eq!(
                (t["parent"].as_u64(), t["start_routine"].as_str()),
                (Some(1), Some("idle"))
            );
        }
    }
}

#[test]
fn a_crash_leaves_a_readable_trace_and_exit_status_139() {
    let dir = tempdir();
    let out = trace(dir.path(), &workload("crash"), &[]);
    assert_eq!(
        out.status.code(),
        Some(139),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "threads done\n");
    let trace = Trace::open(dir.path()).unwrap();
    assert!(trace.problems().is_empty(), "{:?}", trace.problems());
    assert_eq!(trace.threads().len(), 4);
    let m = trace.manifest().unwrap();
    assert_eq!(m.exit_signal, Some(11));
    let symbols = Symbols::new(trace.blocks());
    let mut last_main = None;
    for t in trace.threads() {
        let mut r = trace.read_thread(t.tid).unwrap();
        let mut blocks = 0;
        while let Some(ev) = r.next_event() {
            if let Event::Block(x) = ev.expect("no damage") {
                blocks += 1;
                if t.tid == 1 {
                    last_main = Some((x.block, x.complete, x.insns));
                }
            }
        }
        assert!(blocks > 0);
    }
    // The last block of the main thread is the one that faulted in main():
    // the load from address 0 did not complete.
    let (block, complete, insns) = last_main.unwrap();
    let b = trace.blocks().block(block).unwrap();
    assert_eq!(symbols.name(b.function()), "main");
    assert!(
        !complete && (insns as usize) < b.n_insns(),
        "the faulting block must be partial"
    );
}
