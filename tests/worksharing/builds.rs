//! The same loops built or traced otherwise: by clang on LLVM's libomp,
//! traced with `--only`, and stripped of their symbols.

use super::*;

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
