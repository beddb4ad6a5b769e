//! OpenMP tasks and nested regions: a task's work is counted wherever the
//! runtime runs it, each task is a unit, and a task run inside another task
//! is part of it; a nested region's inner calls are the units
//! (workloads/omp_tasks.c and omp_nested.c derive the figures).

use super::*;

#[test]
fn tasks_that_run_inside_the_runtimes_waits_are_work_and_units() {
    // workloads/omp_tasks.c: N tasks of the same length, many of which run
    // inside a wait that the tracer skips: the task wait of the thread that
    // made them, the barrier where the team waits, or, nested N deep, the
    // task wait of the task before (64 deep: more than the tracer's skip
    // frames hold); or a taskloop, whose tasks hold several iterations each.
    // Built with GCC (libgomp) and, where it is installed, with clang
    // (libomp).
    let dir = tempdir();
    let programs = gcc_and_clang("omp_tasks");
    let modes = ["taskwait", "barrier", "nested", "taskloop"];
    let runs = (programs.iter().enumerate()).flat_map(|(k, p)| modes.map(|m| (k, p, m)));
    for (k, program, wait) in runs {
        let insns_of_work = |n: u64| {
            let at = format!("{program:?} {wait} {n}");
            let t = dir.path().join(format!("trace-{k}-{wait}-{n}"));
            trace_ok(&t, program, &[&n.to_string(), wait]);
            let r = analyze_json(&t, &["--warp", "4"]);
            let about = r["units_are"].as_str().unwrap();
            let tasks = "outlined function(s) that the OpenMP runtime ran inside the calls of";
            assert!(about.contains(tasks), "{at}: {about}");
            let res = width(&r, 4);
            let units = res["units"].as_u64().unwrap();
            let warnings = r["warnings"].as_array().unwrap();
            let warned = |what: &str| (warnings.iter()).any(|w| w.as_str().unwrap().contains(what));
            let inside = warned("the OpenMP runtime made of unit functions");
            assert_eq!(
                warned("ran OpenMP taskloops"),
                wait == "taskloop",
                "{at}: {warnings:?}"
            );
            let work = function(res, "work");
            if wait == "taskloop" {
                // the runtime's tasks, of several iterations each
                assert!(units < n || n == 1, "{at}: {units} units");
                assert!(!inside, "{at}: {warnings:?}");
            } else if wait == "nested" {
                // a chain: each task runs inside the one before it
                assert!(units < n || n == 1, "{at}: {units} units");
                assert_eq!(inside, n > 1 && units < n, "{at}: {warnings:?}");
            } else {
                assert_eq!(units, n, "{at}: a unit per task");
                assert!(!inside, "{at}: {warnings:?}");
                // full warps of tasks of the same length
                let eff = work["simt_efficiency"].as_f64().unwrap();
                assert_eq!(
                    eff,
                    if n.is_multiple_of(4) {
                        1.0
                    } else {
                        n as f64 / 4.0
                    },
                    "{at}"
                );
            }
            work["thread_instructions"].as_u64().unwrap()
        };
        let one = insns_of_work(1);
        assert!(one > 1000, "{program:?} {wait}: {one}");
        assert_eq!(insns_of_work(64), 64 * one, "{program:?} {wait}");
    }
}

/// Nested parallel regions (workloads/omp_nested.c): the inner region's
/// calls are the units, wherever the runtime makes them, and the outer
/// region's calls none. Built with GCC and, where it is installed, clang.
#[test]
fn nested_regions_are_cut_into_their_inner_calls() {
    for program in &gcc_and_clang("omp_nested") {
        let dir = tempdir();
        let t = dir.path().join("trace");
        trace_ok(&t, program, &[]);
        let r = analyze_json(&t, &["--warp", "4"]);
        let warnings = r["warnings"].as_array().unwrap();
        assert!(warnings.is_empty(), "{program:?}: {warnings:?}");
        let res = width(&r, 4);
        assert_eq!(res["units"], 4, "{program:?}");
        let f = function(res, "inner_work");
        assert_eq!(f["simt_efficiency"].as_f64().unwrap(), 1.0, "{program:?}");
    }
}
