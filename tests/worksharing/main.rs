//! OpenMP worksharing loops through the real tracer: one unit per loop
//! iteration in logical order, under every schedule whose chunks the runtime
//! hands out, at -O0..-O3 (workloads/omp_schedules.c derives the figures);
//! sections, doacross loops and tasks.

#[path = "../common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

mod builds;
mod doacross;
mod forms;
mod sections;
mod single;
mod tasks;

const N: u64 = 1024;
/// The loops whose chunks libgomp hands out or whose static block the
/// analyzer infers, and their outlined functions.
const LOOPS: [&str; 8] = [
    "fill_dynamic._omp_fn.0",
    "fill_dynamic3._omp_fn.0",
    "fill_guided._omp_fn.0",
    "fill_runtime._omp_fn.0",
    "fill_static._omp_fn.0",
    "fill_plain._omp_fn.0",
    "fill_static5._omp_fn.0",
    "fill_collapse._omp_fn.0",
];

/// Heap sectors per load and per store request of function `f` at width `w`.
fn heap(r: &Value, w: u64, f: &str) -> (f64, f64) {
    let h = &function(width(r, w), f)["memory"]["heap"];
    (
        h["loads"]["sectors_per_request"].as_f64().unwrap(),
        h["stores"]["sectors_per_request"].as_f64().unwrap(),
    )
}

fn check_level(opt: &str) {
    let dir = tempdir();
    let t = dir.path().join("sched");
    trace_ok(
        &t,
        &workload_at("omp_schedules", opt),
        &[&N.to_string(), "all"],
    );
    let r = analyze_json(&t, &["--warp", "8,16,32"]);
    // N iterations per loop, whether the runtime handed out its chunks or
    // its static blocks or chunks were inferred
    let units = N * LOOPS.len() as u64;
    for w in [8u64, 16, 32] {
        let res = width(&r, w);
        assert_eq!(res["units"], units, "{opt} W={w}: units");
        for f in LOOPS {
            let (loads, stores) = heap(&r, w, f);
            // consecutive iterations: W doubles 24 bytes apart
            let want = (w * 24 / 32) as f64;
            assert_eq!(
                (loads, stores),
                (want, want),
                "{opt} W={w} {f}: heap sectors"
            );
            if f != "fill_collapse._omp_fn.0" {
                let simt = function(res, f)["simt_efficiency"].as_f64().unwrap();
                assert_eq!(simt, 1.0, "{opt} W={w} {f}: SIMT efficiency");
            }
        }
    }
    let about = r["units_are"].as_str().unwrap();
    assert!(
        about.starts_with(
            "each iteration of 8 OpenMP worksharing loop instance(s) (3 of them GCC's inline \
             static schedule)"
        ),
        "{about}"
    );
}

#[test]
fn every_schedule_at_o0() {
    check_level("-O0");
}

#[test]
fn every_schedule_at_o1() {
    check_level("-O1");
}

#[test]
fn every_schedule_at_o2() {
    check_level("-O2");
}

#[test]
fn every_schedule_at_o3() {
    check_level("-O3");
}

/// Function `f`'s figures at W = 32 are the same in reports `a` and `b`.
fn same_function(a: &Value, b: &Value, f: &str) {
    for key in [
        "thread_instructions",
        "warp_instructions",
        "simt_efficiency",
        "memory",
    ] {
        assert_eq!(
            function(width(a, 32), f)[key],
            function(width(b, 32), f)[key],
            "{f} {key}"
        );
    }
}

/// `--unit auto` gives, function by function, what `--unit iter:FN` gives.
#[test]
fn auto_equals_iter_fn() {
    let dir = tempdir();
    let t = dir.path().join("dyn3");
    trace_ok(&t, &workload("omp_schedules"), &["256", "dynamic3"]);
    let auto = analyze_json(&t, &["--warp", "32"]);
    let iter = analyze_json(
        &t,
        &["--warp", "32", "--unit", "iter:fill_dynamic3._omp_fn.0"],
    );
    let f = "fill_dynamic3._omp_fn.0";
    same_function(&auto, &iter, f);
    assert_eq!(width(&iter, 32)["units"], 256);
    assert_eq!(width(&auto, 32)["units"], 256);
}

/// A trace without worksharing events, as the Pin tool writes them (the
/// Valgrind tool's `--tf-worksharing=no` records the run the same way):
/// `auto` keeps each call of an outlined function whole and says why, and
/// `iter:FN` of an outlined function is refused rather than cut at the
/// runtime's chunk loop or in thread order.
#[test]
fn traces_without_worksharing_events_say_so() {
    let dir = tempdir();
    let t = dir.path().join("unrecorded");
    common::accelsim::trace_env(
        &t,
        &workload_at("omp_schedules", "-O2"),
        &[&N.to_string(), "all"],
        &[("TF_TRACER_ARGS", "--tf-worksharing=no")],
    );
    let trace = tf_trace::Trace::open(&t).unwrap();
    assert!(!trace.manifest().unwrap().worksharing);
    let info = tf().arg("info").arg(&t).output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.lines().any(|l| l.starts_with("tracer    tf-valgrind")
            && l.ends_with(
                "(records no OpenMP worksharing loops: units of OpenMP programs are calls)"
            )),
        "{info}"
    );
    let r = analyze_json(&t, &["--warp", "32"]);
    // 8 parallel regions of 4 threads, one unit per call
    assert_eq!(width(&r, 32)["units"], 8 * 4);
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        [
            "the tracer (tf-valgrind) did not record which iterations the OpenMP runtime handed \
          each thread: each call of an OpenMP outlined function is one unit, not each \
          iteration (tf trace --backend valgrind records them)"
        ]
    );
    for f in ["fill_dynamic3._omp_fn.0", "fill_static._omp_fn.0"] {
        let out = tf()
            .arg("analyze")
            .arg(&t)
            .args(["--unit", &format!("iter:{f}")])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{f}: {err}");
        assert!(
            err.contains(&format!(
                "{f} is an OpenMP outlined function and the tracer"
            )),
            "{f}: {err}"
        );
    }
}

/// A combined `parallel for` started in one runtime call
/// (GOMP_parallel_loop_dynamic, as older GCCs compiled it): the tracer
/// learns the loop's bounds from the master, and each iteration is a unit
/// (workloads/omp_combined.c derives the figures).
#[test]
fn combined_parallel_loops() {
    for opt in ["-O0", "-O2"] {
        let dir = tempdir();
        let t = dir.path().join("combined");
        trace_ok(&t, &workload_at("omp_combined", opt), &["256"]);
        let r = analyze_json(&t, &["--warp", "32"]);
        let res = width(&r, 32);
        assert_eq!(res["units"], 384, "{opt}: units");
        assert_eq!(res["simt_efficiency"], 1.0, "{opt}");
        let heap = &res["memory"]["heap"];
        assert_eq!(
            (&heap["requests"], &heap["sectors"]),
            (&24.into(), &256.into()),
            "{opt}"
        );
    }
}
