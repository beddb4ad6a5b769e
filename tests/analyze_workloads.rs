//! `tf analyze` on workloads traced with the real tracer, against
//! efficiencies derived by hand from the programs' structure (see the comment
//! at the top of `workloads/divergence.c`).

mod common;

use common::*;

/// Traces `divergence KERNEL N` and analyses it with `args`.
fn divergence(kernel: &str, n: u64, args: &[&str]) -> serde_json::Value {
    let dir = tempdir();
    let trace_dir = dir.path().join("trace");
    trace_ok(
        &trace_dir,
        &workload("divergence"),
        &[kernel, &n.to_string()],
    );
    analyze_json(&trace_dir, args)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn odd_and_even_lanes_each_run_at_half_efficiency() {
    // 64 items; in a warp of W consecutive items W/2 call odd_work and W/2
    // call even_work: thread = W/2 × warp for both, 50% exactly.
    let r = divergence(
        "oddeven",
        64,
        &["--unit", "call:worker", "--warp", "8,16,32"],
    );
    for w in [8u64, 16, 32] {
        let res = width(&r, w);
        assert_eq!(res["units"], 64);
        assert_eq!(res["warps"], 64 / w);
        for name in ["odd_work", "even_work"] {
            let f = function(res, name);
            let (t, wi) = (
                f["thread_instructions"].as_u64().unwrap(),
                f["warp_instructions"].as_u64().unwrap(),
            );
            assert_eq!(t, wi * w / 2, "{name} at W = {w}");
            assert!(close(f["simt_efficiency"].as_f64().unwrap(), 0.5));
        }
    }
}

#[test]
fn trip_count_equal_to_the_lane_index() {
    // Item i calls body() (i mod 32) + 1 times. W = 32: every warp holds
    // items with trip counts 1..=32, so body runs 32 times with 32, 31, …, 1
    // lanes: efficiency 528 / (32 × 32) = (W+1)/(2W) = 33/64.
    // W = 16: warps alternate trips 1..=16 (16 rounds, 136 lane-calls) and
    // 17..=32 (32 rounds, 392 lane-calls): (136 + 392) / ((16 + 32) × 16) = 11/16.
    let r = divergence(
        "triangle",
        64,
        &["--unit", "call:worker", "--warp", "16,32"],
    );
    let body32 = function(width(&r, 32), "body");
    assert!(
        close(body32["simt_efficiency"].as_f64().unwrap(), 33.0 / 64.0),
        "{body32}"
    );
    let body16 = function(width(&r, 16), "body");
    assert!(
        close(body16["simt_efficiency"].as_f64().unwrap(), 11.0 / 16.0),
        "{body16}"
    );
    // body is straight-line: the same instructions per call in both cases.
    let per_call = body32["thread_instructions"].as_u64().unwrap() / (2 * 528);
    assert_eq!(
        body16["thread_instructions"].as_u64().unwrap(),
        per_call * 2 * 528
    );
    assert_eq!(
        body32["warp_instructions"].as_u64().unwrap(),
        per_call * 2 * 32
    );
}

#[test]
fn uniform_work_is_fully_efficient_and_auto_units_with_by_function_batching_agree() {
    // Every item calls body() 8 times: 100% at every width dividing 64.
    let r = divergence("uniform", 64, &["--unit", "call:worker", "--warp", "8,32"]);
    for w in [8, 32] {
        let res = width(&r, w);
        assert!(close(
            function(res, "body")["simt_efficiency"].as_f64().unwrap(),
            1.0
        ));
        assert!(close(
            function(res, "worker")["simt_efficiency"].as_f64().unwrap(),
            1.0
        ));
    }
    // --unit auto: each thread's start routine call (main for the first
    // thread); by-function batching keeps main's unit out of the workers' warps.
    let r = divergence("uniform", 64, &["--batch", "by-function", "--warp", "32"]);
    let res = width(&r, 32);
    assert_eq!(res["units"], 65);
    assert_eq!(res["warps"], 3);
    assert!(close(
        function(res, "body")["simt_efficiency"].as_f64().unwrap(),
        1.0
    ));
}

#[test]
fn csv_has_the_json_numbers() {
    let dir = tempdir();
    let trace_dir = dir.path().join("trace");
    trace_ok(&trace_dir, &workload("divergence"), &["oddeven", "32"]);
    let csv = dir.path().join("out.csv");
    let out = tf()
        .arg("analyze")
        .arg(&trace_dir)
        .args(["--unit", "call:worker", "--warp", "8,32", "--csv"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success());
    let json = analyze_json(&trace_dir, &["--unit", "call:worker", "--warp", "8,32"]);
    assert_eq!(json["unrecorded"], serde_json::json!([]));
    for row in csv_rows(&csv) {
        assert_eq!(row["complete"], "true", "a whole trace, wholly replayed");
        let w: u64 = row["warp_size"].parse().unwrap();
        let (name, module) = (row["function"].as_str(), row["module"].as_str());
        let (thread, warp) = if name == "[all]" {
            let r = width(&json, w);
            (
                r["thread_instructions"].as_u64().unwrap(),
                r["warp_instructions"].as_u64().unwrap(),
            )
        } else {
            // Names repeat across modules (strcmp in ld.so and in libc).
            let functions = width(&json, w)["functions"].as_array().unwrap();
            let f = functions
                .iter()
                .find(|f| f["name"] == name && f["module"] == module)
                .unwrap();
            (
                f["thread_instructions"].as_u64().unwrap(),
                f["warp_instructions"].as_u64().unwrap(),
            )
        };
        assert_eq!(
            row["thread_instructions"].parse::<u64>().unwrap(),
            thread,
            "{row:?}"
        );
        assert_eq!(
            row["warp_instructions"].parse::<u64>().unwrap(),
            warp,
            "{row:?}"
        );
    }
}

#[test]
fn bad_options_get_one_line_errors() {
    let dir = tempdir();
    let trace_dir = dir.path().join("trace");
    trace_ok(&trace_dir, &workload("divergence"), &["uniform", "2"]);
    for (args, needle) in [
        (vec!["--warp", "65"], "invalid value '65' for '--warp <W>'"),
        (vec!["--warp", "0"], "invalid value '0' for '--warp <W>'"),
        (vec!["--unit", "call:no_such_function"], "no_such_function"),
        (vec!["--unit", "loop:x"], "--unit"),
        (vec!["--batch", "random"], "--batch"),
    ] {
        let out = tf()
            .arg("analyze")
            .arg(&trace_dir)
            .args(&args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let out = tf()
        .args(["analyze", "/nonexistent/trace"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/trace"), "{err}");
}

#[test]
fn loop_iterations_and_openmp_outlined_functions_as_units() {
    let dir = tempdir();
    // One thread: process()'s loop handles item i in iteration i.
    let t = dir.path().join("loop");
    trace_ok(&t, &workload("iterations"), &["256"]);
    let r = analyze_json(&t, &["--unit", "iter:process", "--warp", "8,32"]);
    for w in [8u64, 32] {
        let res = width(&r, w);
        assert_eq!(res["units"], 256);
        for name in ["odd_item", "even_item"] {
            assert!(
                close(
                    function(res, name)["simt_efficiency"].as_f64().unwrap(),
                    0.5
                ),
                "{name} W = {w}"
            );
        }
    }
    // The same loop under OpenMP on 4 threads (GCC's inline static schedule):
    // auto units are its iterations (each thread's block inferred), back to
    // 50%; the same as one unit per iteration of the outlined body.
    let t = dir.path().join("omp");
    trace_ok(&t, &workload("omp_iterations"), &["256"]);
    for args in [&[][..], &["--unit", "iter:main._omp_fn.0"]] {
        let r = analyze_json(&t, &[args, &["--warp", "8,32"]].concat());
        for w in [8u64, 32] {
            let res = width(&r, w);
            assert_eq!(res["units"], 256, "{args:?}");
            let eff = function(res, "odd_item")["simt_efficiency"]
                .as_f64()
                .unwrap();
            assert!(close(eff, 0.5), "{args:?} W = {w}: {eff}");
        }
    }
    // One unit per call of the outlined body: each runs 64 items in the
    // same parity order, so odd_item runs with all 4 lanes: 4/W.
    let r = analyze_json(&t, &["--unit", "call:main._omp_fn.0", "--warp", "8,32"]);
    for w in [8u64, 32] {
        let res = width(&r, w);
        assert_eq!(res["units"], 4);
        let eff = function(res, "odd_item")["simt_efficiency"]
            .as_f64()
            .unwrap();
        assert!(close(eff, 4.0 / w as f64), "W = {w}: {eff}");
    }
}

#[test]
fn lazy_binding_is_skipped_not_traced() {
    // In yield mode the first thread to call sched_yield does so through
    // the dynamic linker's lazy binding, inside its unit: the tracer skips
    // the binding (reason other), from the PLT's jump into the dynamic
    // linker to its jump on to sched_yield. With LD_BIND_NOW=1 every
    // symbol is bound at start-up and nothing is skipped so.
    let dir = tempdir();
    let analysis = |env: Option<&str>| {
        let t = dir.path().join(format!("trace-{}", env.unwrap_or("lazy")));
        let mut cmd = trace_command(&t, &[], &workload("spin_wait"), &["4", "10", "yield"]);
        if let Some(v) = env {
            cmd.env("LD_BIND_NOW", v);
        } else {
            cmd.env_remove("LD_BIND_NOW");
        }
        run_ok(&mut cmd);
        analyze_json(&t, &["--warp", "4"])
    };
    // The units' rows of the dynamic linker's binding functions.
    let binding = |r: &serde_json::Value| -> Vec<String> {
        (width(r, 4)["functions"].as_array().unwrap().iter())
            .filter(|f| f["module"].as_str().unwrap().starts_with("ld-linux"))
            .map(|f| f["name"].as_str().unwrap().to_string())
            .filter(|name| {
                name.starts_with("_dl_runtime_resolve")
                    || [
                        "_dl_fixup",
                        "_dl_lookup_symbol_x",
                        "do_lookup_x",
                        "check_match",
                    ]
                    .contains(&name.as_str())
            })
            .collect()
    };
    let other = |r: &serde_json::Value| r["skipped"]["other"].as_u64().unwrap();
    let warned = |r: &serde_json::Value| {
        (r["warnings"].as_array().unwrap().iter()).any(|w| w.as_str().unwrap().contains("lazy"))
    };

    let (lazy, now) = (analysis(None), analysis(Some("1")));
    assert_eq!(binding(&lazy), Vec::<String>::new());
    // the program's bindings (start-up's and sched_yield's), each a lookup
    // of hundreds of instructions
    assert!(other(&lazy) > 1000, "{}", lazy["skipped"]);
    assert_eq!(other(&now), 0);
    assert!(!warned(&lazy) && !warned(&now));
    // work() makes no call: the same either way
    for key in ["thread_instructions", "warp_instructions", "memory"] {
        let of = |r| function(width(r, 4), "work")[key].clone();
        assert_eq!(of(&lazy), of(&now), "{key}");
    }
}
