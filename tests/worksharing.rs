//! OpenMP worksharing loops through the real tracer: one unit per loop
//! iteration in logical order, under every schedule whose chunks the runtime
//! hands out, at -O0..-O3 (workloads/omp_schedules.c derives the figures).

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

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

/// The same loops built by clang run on LLVM's libomp, at every -O level;
/// static schedules there go through the runtime too
/// (`__kmpc_for_static_init`), and so does `target teams distribute
/// parallel for` run on the host. At -O0 clang's outlined function is a
/// wrapper that calls the one holding the loop; a thread that the runtime
/// hands no chunk (guided, dynamic) must not leave the wrapper's call as a
/// unit of its own.
#[test]
fn libomp_schedules() {
    const FORMS_N: u64 = 512;
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let (Some(bin), Some(target), Some(forms)) = (
            build_with_clang("omp_schedules", opt),
            build_with_clang("omp_target", opt),
            build_with_clang("omp_loop_forms", opt),
        ) else {
            eprintln!(
                "skipped: clang with libomp is not installed (apt-get install -y clang libomp-dev)"
            );
            return;
        };
        let dir = tempdir();
        let t = dir.path().join("clang");
        trace_ok(&t, &bin, &[&N.to_string(), "all"]);
        let r = analyze_json(&t, &["--warp", "32"]);
        let res = width(&r, 32);
        // every loop, static5 included, is cut per iteration
        assert_eq!(res["units"], N * 8, "{opt}: units");
        let outlined: Vec<&Value> = res["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["name"].as_str().unwrap().starts_with(".omp_outlined."))
            .collect();
        assert_eq!(outlined.len(), 8, "{opt}");
        for f in outlined {
            assert_eq!(f["simt_efficiency"], 1.0, "{opt} {}", f["name"]);
            let h = &f["memory"]["heap"];
            assert_eq!(
                h["stores"]["sectors_per_request"], 24.0,
                "{opt} {}",
                f["name"]
            );
            assert_eq!(
                h["loads"]["sectors_per_request"], 24.0,
                "{opt} {}",
                f["name"]
            );
        }
        let t = dir.path().join("target");
        trace_ok(&t, &target, &[&N.to_string()]);
        let r = analyze_json(&t, &["--warp", "32"]);
        assert_eq!(width(&r, 32)["units"], N, "{opt} target: units");
        let heap = &width(&r, 32)["memory"]["heap"]["sectors_per_request"];
        assert_eq!(heap, 24.0, "{opt} target");
        // the loop forms (workloads/omp_loop_forms.c): clang vectorizes
        // `vec` from -O1 on, whose calls then stay whole, with a warning
        let t = dir.path().join("forms");
        trace_ok(&t, &forms, &[&FORMS_N.to_string()]);
        let r = analyze_json(&t, &["--warp", "32"]);
        let warnings = r["warnings"].as_array().unwrap();
        let units = width(&r, 32)["units"].as_u64().unwrap();
        if warnings.is_empty() {
            assert_eq!(units, 7 * FORMS_N, "{opt}: forms units");
        } else {
            assert_eq!(warnings.len(), 1, "{opt}: {warnings:?}");
            assert!(warnings[0].as_str().unwrap().contains("vectorized"));
            assert_eq!(units, 6 * FORMS_N + 4, "{opt}: forms units");
        }
    }
}

/// `tf trace --only FN` of a function entered many times (three launches on
/// four threads) analyzes as the full trace does: per iteration under every
/// kind of schedule (the runtime's chunks, GCC's inline static blocks and
/// chunks), under `--unit auto` as under `iter:FN`, and per call under
/// `call:FN` (the region's root frame returns where no traced call was: each
/// entry is a call of its own, whose stack pointer the trace records).
#[test]
fn only_traces_analyze_like_full_traces() {
    let dir = tempdir();
    let program = workload("omp_schedules");
    let full = dir.path().join("full");
    trace_ok(&full, &program, &["256", "all", "3"]);
    let only_dir = dir.path().join("only");
    let fns = [
        "fill_dynamic3._omp_fn.0",
        "fill_static._omp_fn.0",
        "fill_static5._omp_fn.0",
    ];
    let only: Vec<&str> = fns.iter().flat_map(|f| ["--only", f]).collect();
    let out = trace_with(&only_dir, &only, &program, &["256", "all", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let auto = analyze_json(&only_dir, &["--warp", "32"]);
    assert_eq!(width(&auto, 32)["units"], 3 * 768, "auto");
    for f in fns {
        for (unit, units) in [(format!("iter:{f}"), 768), (format!("call:{f}"), 12)] {
            let a = analyze_json(&full, &["--warp", "32", "--unit", &unit]);
            let b = analyze_json(&only_dir, &["--warp", "32", "--unit", &unit]);
            // three launches of 256 iterations on four threads
            assert_eq!(width(&a, 32)["units"], units, "{unit}");
            assert_eq!(width(&b, 32)["units"], units, "{unit}");
            if unit.starts_with("iter") {
                same_function(&a, &b, f);
                same_function(&auto, &b, f);
            } else if f.contains("static") {
                // which thread runs which of a dynamic loop's chunks changes
                // from run to run, and with it what a call unit holds
                same_function(&a, &b, f);
            }
        }
    }
}

/// GCC's `schedule(static, 1)` is a stride by the team's size, which nothing
/// tells from a program's own, and which deals the iterations out round
/// robin: `--unit auto` cuts it per iteration in logical order, exactly as
/// `iter:FN` does, and says so in its header line
/// (workloads/omp_schedules.c derives the figures).
#[test]
fn gcc_static1_is_cut_per_iteration() {
    let f = "fill_static1._omp_fn.0";
    for opt in ["-O0", "-O2"] {
        let dir = tempdir();
        let t = dir.path().join("static1");
        trace_ok(
            &t,
            &workload_at("omp_schedules", opt),
            &[&N.to_string(), "static1"],
        );
        let auto = analyze_json(&t, &["--warp", "8,32"]);
        let warnings = auto["warnings"].as_array().unwrap();
        assert!(warnings.is_empty(), "{opt}: {warnings:?}");
        let about = auto["units_are"].as_str().unwrap();
        assert!(
            about.starts_with(
                "each iteration of 1 OpenMP worksharing loop instance(s) (1 of them GCC's inline \
                 static schedule, 1 of which stride by the team's size"
            ),
            "{opt}: {about}"
        );
        let iter = analyze_json(&t, &["--warp", "8,32", "--unit", &format!("iter:{f}")]);
        for w in [8u64, 32] {
            for r in [&auto, &iter] {
                assert_eq!(width(r, w)["units"], N, "{opt} W={w}: units");
                assert_eq!(
                    function(width(r, w), f)["simt_efficiency"],
                    1.0,
                    "{opt} W={w}"
                );
                let want = (w * 24 / 32) as f64;
                assert_eq!(heap(r, w, f), (want, want), "{opt} W={w}: heap sectors");
            }
            assert_eq!(
                function(width(&auto, w), f),
                function(width(&iter, w), f),
                "{opt} W={w}: auto and iter:FN"
            );
        }
    }
}

/// GCC's inline static loops unrolled (`-funroll-loops`: eight iterations
/// per pass) are not cut by passes: a warning names each function, and its
/// calls stay whole.
#[test]
fn unrolled_static_loops_are_refused() {
    let dir = tempdir();
    let bin = dir.path().join("omp_schedules_unrolled");
    let src = root().join("workloads/omp_schedules.c");
    let flags = ["gcc", "-O2", "-funroll-loops", "-g", "-fopenmp"];
    compile(&flags, &[src], &bin, &[]);
    for (schedule, f) in [
        ("static", "fill_static._omp_fn.0"),
        ("static5", "fill_static5._omp_fn.0"),
    ] {
        let t = dir.path().join(schedule);
        trace_ok(&t, &bin, &[&N.to_string(), schedule]);
        let r = analyze_json(&t, &["--warp", "32"]);
        assert_eq!(width(&r, 32)["units"], 4, "{schedule}");
        let warnings = r["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{schedule}: {warnings:?}");
        let w = warnings[0].as_str().unwrap();
        assert!(w.contains(f) && w.contains("unrolled"), "{w}");
    }
}

/// Loops the runtime sees in other forms: counting down, by 3, with an
/// unsigned long long index, with a reduction, two `omp for` loops in one
/// parallel region, and one GCC vectorizes at -O3 (workloads/omp_loop_forms.c
/// derives the figures).
#[test]
fn loop_forms_at_every_level() {
    const N: u64 = 512;
    let loops = ["down", "step3", "ull", "red", "two", "vec"];
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let dir = tempdir();
        let t = dir.path().join("forms");
        trace_ok(&t, &workload_at("omp_loop_forms", opt), &[&N.to_string()]);
        let r = analyze_json(&t, &["--warp", "8,32"]);
        let warnings = r["warnings"].as_array().unwrap();
        let vectorized = opt == "-O3";
        if vectorized {
            // two iterations per pass: said, and each call is one unit
            assert_eq!(width(&r, 32)["units"], 6 * N + 4, "{opt}: units");
            assert_eq!(warnings.len(), 1, "{opt}: {warnings:?}");
            let w = warnings[0].as_str().unwrap();
            assert!(
                w.contains("vec._omp_fn.0 runs several iterations per pass"),
                "{w}"
            );
        } else {
            assert_eq!(width(&r, 32)["units"], 7 * N, "{opt}: units");
            assert!(warnings.is_empty(), "{opt}: {warnings:?}");
        }
        for w in [8u64, 32] {
            for l in loops.iter().filter(|&&l| !(vectorized && l == "vec")) {
                let f = function(width(&r, w), &format!("{l}._omp_fn.0"));
                assert_eq!(f["simt_efficiency"], 1.0, "{opt} W={w} {l}: SIMT");
                let h = &f["memory"]["heap"];
                for kind in ["loads", "stores"] {
                    let spr = h[kind]["sectors_per_request"].as_f64().unwrap();
                    assert_eq!(spr, (w * 24 / 32) as f64, "{opt} W={w} {l} {kind}");
                }
            }
        }
    }
}

/// A program's own questions about its place in the team: a parallel
/// region that strides through its items by the team's size deals them out
/// round robin, as GCC's `schedule(static, 1)` does, and is cut per item,
/// named or not; a dynamic loop whose iterations ask is still cut per
/// iteration. Two static loops of one region are both cut, also when GCC
/// splits them once for both (from -O1 on); vectorized ones (-O3) are left
/// whole, with a warning each, and the stride GCC unrolls there is left
/// whole by auto and refused by iter: (workloads/omp_place.c derives the
/// figures).
#[test]
fn own_place_questions() {
    const N: u64 = 256;
    let vectorized = |f| (f, "vectorized");
    for (opt, units, instances, warned) in [
        ("-O0", 4 * N, 4, vec![]),
        ("-O1", 4 * N, 4, vec![]),
        ("-O2", 4 * N, 4, vec![]),
        (
            "-O3",
            12,
            0,
            // the stride loop is unrolled: left whole, without a word
            vec![vectorized("tagged._omp_fn.0"), vectorized("both._omp_fn.0")],
        ),
    ] {
        let dir = tempdir();
        let t = dir.path().join("place");
        trace_ok(&t, &workload_at("omp_place", opt), &[&N.to_string()]);
        let r = analyze_json(&t, &["--warp", "32"]);
        assert_eq!(width(&r, 32)["units"], units, "{opt}: units");
        let warnings = r["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), warned.len(), "{opt}: {warnings:?}");
        for (w, (f, why)) in warnings.iter().zip(&warned) {
            let w = w.as_str().unwrap();
            assert!(w.contains(f) && w.contains(why), "{opt}: {w}");
        }
        let about = r["units_are"].as_str().unwrap();
        let want = format!("each iteration of {instances} OpenMP worksharing loop instance(s)");
        assert!(about.starts_with(&want), "{opt}: {about}");
        // named, the stride region is cut per item, in item order (at -O0
        // its loop is tested at the top: one run more per thread); at -O3
        // GCC unrolls it (two items per pass), which is refused, not cut
        // by passes
        let named = ["--warp", "32", "--unit", "iter:stride._omp_fn.0"];
        if opt == "-O3" {
            let out = tf().arg("analyze").arg(&t).args(named).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{opt}: {err}");
            assert!(err.contains("unrolled or vectorized"), "{opt}: {err}");
        } else {
            let iter = analyze_json(&t, &named);
            assert_eq!(width(&iter, 32)["units"], N, "{opt}: stride units");
            let f = function(width(&iter, 32), "stride._omp_fn.0");
            assert_eq!(f["memory"]["heap"]["sectors_per_request"], 8.0, "{opt}");
            // the same figures under auto (its share of the run differs:
            // the other functions are in it)
            let mut auto = function(width(&r, 32), "stride._omp_fn.0").clone();
            auto["share"] = f["share"].clone();
            assert_eq!(f, &auto, "{opt}");
        }
        if instances == 4 {
            // both loops of `both`: consecutive 8-byte words, 8 sectors
            let f = function(width(&r, 32), "both._omp_fn.0");
            assert_eq!(f["memory"]["heap"]["sectors_per_request"], 8.0, "{opt}");
            assert_eq!(f["simt_efficiency"], 1.0, "{opt}");
        }
    }
}

/// A program without symbols (as Debian's libraries ship): its outlined
/// functions have no names, and tf finds them as the functions the OpenMP
/// runtime calls through a pointer. Units and figures are those of the same
/// program with its symbols.
#[test]
fn stripped_openmp_programs_are_cut_alike() {
    let dir = tempdir();
    let program = workload_at("omp_schedules", "-O2");
    let stripped = dir.path().join("omp_schedules_stripped");
    std::fs::copy(&program, &stripped).unwrap();
    let strip = Command::new("strip")
        .arg("--strip-all")
        .arg(&stripped)
        .status()
        .unwrap();
    assert!(strip.success());
    let (named, bare) = (dir.path().join("named"), dir.path().join("bare"));
    trace_ok(&named, &program, &[&N.to_string(), "all"]);
    trace_ok(&bare, &stripped, &[&N.to_string(), "all"]);
    let a = analyze_json(&named, &["--warp", "8,32"]);
    let b = analyze_json(&bare, &["--warp", "8,32"]);
    for w in [8u64, 32] {
        let (x, y) = (width(&a, w), width(&b, w));
        assert_eq!(x["units"], N * LOOPS.len() as u64, "W={w}");
        for key in [
            "units",
            "warps",
            "thread_instructions",
            "warp_instructions",
            "simt_efficiency",
            "memory",
        ] {
            assert_eq!(x[key], y[key], "W={w}: {key}");
        }
    }
    let about = b["units_are"].as_str().unwrap();
    assert!(
        about.starts_with("each iteration of 8 OpenMP") && about.contains("no symbol names them"),
        "{about}"
    );
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
