//! Memory coalescing, lock serialization and skipped work through the real
//! tracer, against the figures derived in the workloads' header comments.

mod common;

use common::*;
use serde_json::Value;

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A width's lock table as (symbol, kind, acquisitions), sorted.
fn lock_rows(res: &Value) -> Vec<(&str, &str, u64)> {
    let mut rows: Vec<_> = (res["locks"].as_array().unwrap().iter())
        .map(|l| {
            let symbol = l["symbol"].as_str().unwrap_or("");
            let kind = l["kind"].as_str().unwrap();
            (symbol, kind, l["acquisitions"].as_u64().unwrap())
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn coalescing_of_heap_arrays_and_of_one_stack_slot() {
    // workloads/memory.c: 64 threads alive at once, thread i runs each
    // kernel once with item i.
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("memory"), &["64"]);
    for (kernel, per_lane_bytes) in [("load_i32", 4.0), ("load_i64", 8.0), ("load_stride", 32.0)] {
        let r = analyze_json(
            &t,
            &["--unit", &format!("call:{kernel}"), "--warp", "8,16,32"],
        );
        for w in [8u64, 16, 32] {
            let heap = &function(width(&r, w), kernel)["memory"]["heap"];
            // A warp reads W consecutive items of a 128-byte-aligned array:
            // W × bytes / 32 sectors; 128-byte strides give one sector per lane.
            let expected = (w as f64 * per_lane_bytes / 32.0).min(w as f64);
            assert_eq!(
                heap["requests"],
                64 / w,
                "{kernel} W = {w}: one load per warp"
            );
            assert_eq!(
                f64_of(&heap["sectors_per_request"]),
                expected,
                "{kernel} W = {w}"
            );
        }
    }
    let r = analyze_json(&t, &["--unit", "call:stack_slot", "--warp", "8,16,32"]);
    for w in [8u64, 16, 32] {
        let m = &function(width(&r, w), "stack_slot")["memory"];
        // The 4-byte slot written by every lane: one sector per lane on the
        // lanes' own CPU stacks, 4·W contiguous bytes interleaved.
        assert_eq!(m["stack"]["stores"]["requests"], 64 / w);
        assert_eq!(
            f64_of(&m["stack"]["stores"]["sectors_per_request"]),
            w as f64
        );
        assert_eq!(
            f64_of(&m["stack_interleaved"]["stores"]["sectors_per_request"]),
            w as f64 / 8.0
        );
    }
}

#[test]
fn all_of_bss_is_global_and_mmap_served_heap_blocks_are_heap() {
    // workloads/bss.c: pointers in .bss beyond the file-mapped pages, a
    // 1 MiB heap array (served by mmap), 64 threads; at every -O level.
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let dir = tempdir();
        let t = dir.path().join("trace");
        trace_ok(&t, &workload_at("bss", opt), &["64"]);
        for (kernel, per_lane_bytes) in
            [("copy_i32", 4.0), ("copy_i64", 8.0), ("copy_stride", 32.0)]
        {
            let r = analyze_json(
                &t,
                &["--unit", &format!("call:{kernel}"), "--warp", "8,16,32"],
            );
            for w in [8u64, 16, 32] {
                let m = &function(width(&r, w), kernel)["memory"];
                let at = format!("{kernel} {opt} W = {w}");
                let (heap, global) = (&m["heap"], &m["global"]);
                assert_eq!(heap["loads"]["requests"], 64 / w, "{at}");
                assert_eq!(
                    f64_of(&heap["loads"]["sectors_per_request"]),
                    (w as f64 * per_lane_bytes / 32.0).min(w as f64),
                    "{at}: heap loads"
                );
                assert_eq!(heap["stores"]["requests"], 0, "{at}");
                // The pointer: the same 8 bytes in every lane.
                assert_eq!(global["loads"]["requests"], 64 / w, "{at}");
                assert_eq!(f64_of(&global["loads"]["sectors_per_request"]), 1.0, "{at}");
                // g.out[i]: W consecutive 8-byte items.
                assert_eq!(global["stores"]["requests"], 64 / w, "{at}");
                assert_eq!(
                    f64_of(&global["stores"]["sectors_per_request"]),
                    w as f64 / 4.0,
                    "{at}: global stores"
                );
                assert_eq!(m["other"]["requests"], 0, "{at}");
            }
        }
    }
}

#[test]
fn tls_is_the_threads_own_stack_and_another_threads_stack_is_other() {
    // workloads/tls.c: a __thread variable, and slots on main's stack.
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("tls"), &["64"]);
    for kernel in ["bump_tls", "set_slot"] {
        let r = analyze_json(&t, &["--unit", &format!("call:{kernel}"), "--warp", "8,32"]);
        for w in [8u64, 32] {
            let m = &function(width(&r, w), kernel)["memory"];
            let at = format!("{kernel} W = {w}");
            assert_eq!(m["heap"]["requests"], 0, "{at}");
            assert_eq!(m["global"]["requests"], 0, "{at}");
            if kernel == "bump_tls" {
                // `counter += i` writes the TLS block once per lane.
                assert_eq!(m["stack"]["stores"]["requests"], 64 / w, "{at}");
                assert_eq!(m["other"]["requests"], 0, "{at}");
            } else {
                assert_eq!(m["other"]["stores"]["requests"], 64 / w, "{at}");
                assert_eq!(
                    f64_of(&m["other"]["stores"]["sectors_per_request"]),
                    w as f64 / 4.0,
                    "{at}"
                );
            }
        }
    }
}

#[test]
fn units_on_a_stack_of_the_programs_own_making_are_warned_of() {
    // workloads/coroutine.c: 8 workers, each runs a coroutine on a stack
    // from malloc, which tf cannot tell from the heap.
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("coroutine"), &["8"]);
    let warned = |r: &Value, what: &str| {
        let warnings = r["warnings"].as_array().unwrap();
        assert!(
            warnings
                .iter()
                .any(|w| w.as_str().unwrap().starts_with(what)),
            "no warning {what:?} in {warnings:?}"
        );
    };
    // Threads as units: the 8 workers made 2 calls each on the coroutine's
    // stack (sum_local, swapcontext); main's unit never left its stack.
    let r = analyze_json(&t, &["--warp", "8"]);
    let off = &width(&r, 8)["off_stack"];
    assert_eq!(
        (&off["units"], &off["off_stack_calls"]),
        (&8.into(), &16.into())
    );
    warned(&r, "8 of the 9 units ran on a stack outside their thread's");
    // Each call of sum_local a unit: the 8 made by the coroutines start on
    // their stacks, and make no call there.
    let r = analyze_json(&t, &["--unit", "call:sum_local", "--warp", "8"]);
    let off = &width(&r, 8)["off_stack"];
    let counts = (&off["units"], &off["off_stack_calls"], &off["calls"]);
    assert_eq!(counts, (&8.into(), &0.into(), &0.into()));
    warned(
        &r,
        "8 of the 16 units ran on a stack outside their thread's",
    );
}

#[test]
fn a_global_mutex_serializes_and_per_item_mutexes_do_not() {
    let dir = tempdir();
    for mode in ["global", "per-item", "main-stack"] {
        let t = dir.path().join(mode);
        trace_ok(&t, &workload("critical"), &[mode, "64"]);
        let on = analyze_json(&t, &["--unit", "call:update", "--warp", "8,32"]);
        let off = analyze_json(
            &t,
            &["--unit", "call:update", "--warp", "8,32", "--locks", "off"],
        );
        for w in [8u64, 32] {
            let eff = f64_of(&function(width(&on, w), "critical")["simt_efficiency"]);
            let lock_free = f64_of(&function(width(&off, w), "critical")["simt_efficiency"]);
            assert_eq!(lock_free, 1.0, "{mode} W = {w} without serialization");
            let locks = width(&on, w)["locks"].as_array().unwrap();
            if mode != "per-item" {
                // One lane at a time through the critical section.
                assert!(
                    (eff - 1.0 / w as f64).abs() < 1e-12,
                    "{mode} W = {w}: {eff}"
                );
                assert_eq!(locks.len(), 1, "{mode}");
                let lock = &locks[0];
                if mode == "global" {
                    // the static variable `global`, in the program's image
                    assert_eq!(lock["symbol"], "global");
                    assert_eq!(lock["location"], "global");
                } else {
                    // in main()'s frame: no symbol
                    assert_eq!(lock["symbol"], Value::Null);
                    assert_eq!(lock["location"], "stack of thread 1");
                }
                assert_eq!(lock["kind"], "mutex");
                assert_eq!(lock["acquisitions"], 64);
                assert_eq!(lock["serialized_lanes"], 64 - 64 / w);
                assert!(
                    width(&on, w)["serialized_warp_instructions"]
                        .as_u64()
                        .unwrap()
                        > 0
                );
            } else {
                assert_eq!(eff, lock_free, "{mode} W = {w}");
                assert_eq!(width(&on, w)["serialized_warp_instructions"], 0);
                // 64 mutexes from malloc(), each taken once
                assert_eq!(locks.len(), 64);
                for lock in locks {
                    assert_eq!(lock["location"], "heap");
                    assert_eq!(lock["acquisitions"], 1);
                }
            }
        }
    }
}

#[test]
fn an_openmp_lock_serializes_its_critical_section() {
    // workloads/omp_lock_api.c: each iteration a unit; every lane of a warp
    // takes `lock` around update_sum, which then runs one lane at a time.
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("omp_lock_api"), &["64"]);
    let r = analyze_json(&t, &["--warp", "4,8"]);
    for w in [4u64, 8] {
        let res = width(&r, w);
        let eff = f64_of(&function(res, "update_sum")["simt_efficiency"]);
        assert_eq!(eff, 1.0 / w as f64, "W = {w}");
        let locks = lock_rows(res);
        for (name, n) in [("lock", 64), ("nest", 128), ("tested", 64)] {
            assert!(
                locks.iter().any(|&(s, _, a)| (s, a) == (name, n)),
                "W = {w}: {locks:?}"
            );
        }
    }
}

#[test]
fn an_ordered_region_is_a_lock_and_the_runtimes_waits_are_skipped() {
    // workloads/omp_ordered.c, built with GCC (libgomp) and, where it is
    // installed, with clang (libomp).
    for program in gcc_and_clang("omp_ordered") {
        let dir = tempdir();
        let t = dir.path().join("trace");
        trace_ok(&t, &program, &["64"]);
        let r = analyze_json(&t, &["--warp", "4,8"]);
        // The end of the loop waits for the team: skipped as a wait.
        let waits = r["skipped"]["sync_wait"].as_u64().unwrap();
        assert!(waits > 0, "{program:?}");
        for w in [4u64, 8] {
            let res = width(&r, w);
            let at = format!("{program:?} W = {w}");
            assert_eq!(res["units"], 64, "{at}: each iteration a unit");
            let eff = |f: &str| f64_of(&function(res, f)["simt_efficiency"]);
            assert_eq!(eff("work"), 1.0, "{at}");
            assert_eq!(eff("append"), 1.0 / w as f64, "{at}");
            let locks = res["locks"].as_array().unwrap();
            assert_eq!(locks.len(), 1, "{at}: {locks:?}");
            assert_eq!(locks[0]["kind"], "omp-critical", "{at}");
            assert_eq!(locks[0]["acquisitions"], 64, "{at}");
            let symbol = locks[0]["symbol"].as_str().unwrap();
            assert!(
                symbol.ends_with("ordered_start") || symbol == "__kmpc_ordered",
                "{at}"
            );
            // No instruction of the runtime (its waits) is in the units.
            let runtime = library_functions(res);
            assert!(runtime.is_empty(), "{at}: {runtime:?}");
        }
    }
}

#[test]
fn glibs_locks_are_locks() {
    // workloads/glib_locks.c: 8 threads, each a unit; GMutex (futexes, not
    // pthread mutexes), GRecMutex taken twice, GRWLock, g_mutex_trylock.
    let dir = tempdir();
    let t = dir.path().join("trace");
    let out = trace(&t, &workload("glib_locks"), &["8"]);
    if out.status.code() == Some(77) {
        eprintln!("skipped: GLib is not installed (apt-get install -y libglib2.0-0)");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = analyze_json(&t, &["--unit", "call:worker", "--warp", "4,8"]);
    for w in [4u64, 8] {
        let res = width(&r, w);
        let eff = f64_of(&function(res, "update_sum")["simt_efficiency"]);
        assert_eq!(eff, 1.0 / w as f64, "W = {w}: update_sum holds `mutex`");
        let locks = lock_rows(res);
        let want = [
            ("mutex", "mutex", 8),
            ("rec", "mutex", 16),
            ("rw", "rwlock-write", 8),
            ("tried", "mutex", 8),
        ];
        assert_eq!(locks, want, "W = {w}");
    }
}

#[test]
fn excluded_functions_and_system_calls_are_skipped_not_traced() {
    let dir = tempdir();
    let full = dir.path().join("full");
    let excluded = dir.path().join("excluded");
    trace_ok(&full, &workload("skipwork"), &["10"]);
    let out = trace_with(
        &excluded,
        &["--exclude", "heavy"],
        &workload("skipwork"),
        &["10"],
    );
    assert!(out.status.success());
    let full = analyze_json(&full, &["--unit", "thread"]);
    let excl = analyze_json(&excluded, &["--unit", "thread"]);
    // heavy() and its instructions: traced in the first run, skipped (and
    // charged to main, which called it) in the second.
    let heavy = function(width(&full, 32), "heavy")["thread_instructions"]
        .as_u64()
        .unwrap();
    assert_eq!(heavy, 10 * (heavy / 10));
    assert_eq!(excl["skipped"]["excluded"], heavy);
    assert_eq!(
        function(width(&excl, 32), "main")["skipped_instructions"],
        heavy
    );
    assert!(width(&excl, 32)["functions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["name"] != "heavy"));
    let traced = |r: &Value| r["threads"][0]["traced_instructions"].as_u64().unwrap();
    assert_eq!(traced(&full), traced(&excl) + heavy);
    // Ten write(2) calls, each a system call with its time in the kernel.
    for r in [&full, &excl] {
        let writes = &r["skipped"]["syscalls_by_number"]["1"];
        assert_eq!(writes["calls"], 10);
        assert!(writes["nanos"].as_u64().unwrap() > 0);
    }
}
