//! Loops in other shapes: GCC's `schedule(static, 1)` and a program's own
//! stride by the team's size, unrolled and vectorized static loops, and the
//! loop forms the runtime sees (counting down, by 3, reductions, two loops
//! of one region).

use super::*;

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
