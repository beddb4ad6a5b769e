//! A worksharing loop whose latch the compiler duplicates (each arm of an
//! `if` with its own increment, test and back edge, the loop entered in the
//! middle: GCC from -O2 on) is cut into one unit per iteration, with the
//! figures workloads/omp_latch.c derives: through the real tracer, built
//! with clang and libomp at -O0..-O3 (the validation suite checks the GCC
//! builds at every level: `latch` in workloads/expectations.toml).

mod common;

use common::*;

const N: u64 = 1024;

#[test]
fn duplicated_latches_with_clang_at_every_level() {
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let Some(bin) = build_with_clang("omp_latch", opt) else {
            eprintln!(
                "skipped: clang with libomp is not installed (apt-get install -y clang libomp-dev)"
            );
            return;
        };
        let dir = tempdir();
        let t = dir.path().join("latch");
        trace_ok(&t, &bin, &[&N.to_string()]);
        let r = analyze_json(&t, &["--warp", "8,32"]);
        assert!(r["warnings"].as_array().unwrap().is_empty(), "{opt}: {r}");
        for (w, heavy_loads, heavy_stores, light_stores) in [
            (8, 4.65625, 4.6640625, 2.671875),
            (32, 18.625, 18.65625, 10.6875),
        ] {
            let res = width(&r, w);
            assert_eq!(res["units"], N, "{opt} W={w}: units");
            let heavy = function(res, "heavy");
            let light = function(res, "light");
            assert_eq!(heavy["simt_efficiency"], 682.0 / 1024.0, "{opt} W={w}");
            assert_eq!(light["simt_efficiency"], 342.0 / 1024.0, "{opt} W={w}");
            let spr = |f: &serde_json::Value, kind: &str| {
                f["memory"]["heap"][kind]["sectors_per_request"]
                    .as_f64()
                    .unwrap()
            };
            assert_eq!(spr(heavy, "loads"), heavy_loads, "{opt} W={w}");
            assert_eq!(spr(heavy, "stores"), heavy_stores, "{opt} W={w}");
            assert_eq!(spr(light, "stores"), light_stores, "{opt} W={w}");
        }
    }
}

/// `--merge-tails` on GCC's builds: the copies of the loop's latch that GCC
/// gives each arm from -O2 on (and, at -O0, the arms' copies of the jump to
/// the latch) issue as one block, so the arms' lanes reconverge there;
/// workloads/omp_latch.c derives the loop function's warp instructions per
/// warp with and without. The called functions' figures, every thread
/// instruction and every memory figure stay as they are, and -O1, whose loop
/// has one latch, is unchanged.
#[test]
fn merged_tails_issue_the_latch_copies_once_with_gcc() {
    // -O level: the loop function's thread instructions (the shape of the
    // code GCC made), its warp instructions per warp without and with
    // --merge-tails.
    for (opt, thread, apart, merged) in [
        ("-O0", 18_774, 23, 22),
        ("-O1", 12_970, 15, 15),
        ("-O2", 10_240, 16, 14),
        ("-O3", 10_240, 16, 14),
    ] {
        let dir = tempdir();
        let t = dir.path().join("latch");
        trace_ok(&t, &workload_at("omp_latch", opt), &[&N.to_string()]);
        let plain = analyze_json(&t, &["--warp", "8,32"]);
        let r = analyze_json(&t, &["--warp", "8,32", "--merge-tails"]);
        assert_eq!(r["merge_tails"], true, "{opt}");
        assert_eq!(plain["merge_tails"], false, "{opt}");
        for w in [8u64, 32] {
            let (before, after) = (width(&plain, w), width(&r, w));
            let warps = N / w;
            for (res, per_warp) in [(before, apart), (after, merged)] {
                let walk = function(res, "walk._omp_fn.0");
                assert_eq!(walk["thread_instructions"], thread, "{opt} W={w}");
                assert_eq!(
                    walk["warp_instructions"],
                    per_warp * warps,
                    "{opt} W={w}: the loop's warp instructions"
                );
                assert_eq!(
                    walk["simt_efficiency"],
                    thread as f64 / (per_warp * warps * w) as f64,
                    "{opt} W={w}"
                );
                for name in ["heavy", "light"] {
                    for key in ["thread_instructions", "warp_instructions", "memory"] {
                        let (f, g) = (function(res, name), function(before, name));
                        assert_eq!(f[key], g[key], "{opt} W={w}: {name} {key}");
                    }
                }
            }
            for key in ["thread_instructions", "units", "memory"] {
                assert_eq!(after[key], before[key], "{opt} W={w}: {key}");
            }
        }
    }
}
