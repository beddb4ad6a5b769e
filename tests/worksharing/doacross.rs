//! Doacross loops (`ordered(n)` with `depend(sink)` and `depend(source)`):
//! each iteration is a unit, the part from its first wait to its post runs
//! one lane at a time, and the runtime's waiting is skipped
//! (workloads/omp_doacross.c derives the figures).

use super::*;

/// A chain (one sink) and a grid (two sinks per cell), built with GCC and,
/// where it is installed, clang.
#[test]
fn doacross_iterations_are_units_and_their_dependent_part_a_lock() {
    const N: u64 = 16;
    for (k, program) in gcc_and_clang("omp_doacross").iter().enumerate() {
        let gcc = k == 0;
        // (mode, units, the function between wait and post, acquisitions:
        // GCC calls no wait where every sink is outside the loop)
        let pairs = (N - 1) * (N - 1);
        for (mode, units, part, taken) in [
            ("chain", N, "append", if gcc { N - 1 } else { N }),
            ("grid", N - 1, "update", if gcc { pairs - 1 } else { pairs }),
        ] {
            let at = format!("{program:?} {mode}");
            let dir = tempdir();
            let t = dir.path().join("trace");
            trace_ok(&t, program, &[&N.to_string(), mode]);
            let r = analyze_json(&t, &["--warp", "4,8"]);
            let warnings = r["warnings"].as_array().unwrap();
            assert!(warnings.is_empty(), "{at}: {warnings:?}");
            assert!(r["skipped"]["lock_runtime"].as_u64().unwrap() > 0, "{at}");
            for w in [4u64, 8] {
                let res = width(&r, w);
                assert_eq!(res["units"], units, "{at} W={w}");
                let eff = |f: &str| function(res, f)["simt_efficiency"].as_f64().unwrap();
                assert_eq!(eff(part), 1.0 / w as f64, "{at} W={w}");
                if mode == "chain" {
                    assert_eq!(eff("work"), 1.0, "{at} W={w}");
                }
                let locks = res["locks"].as_array().unwrap();
                assert_eq!(locks.len(), 1, "{at} W={w}: {locks:?}");
                assert_eq!(locks[0]["kind"], "omp-critical", "{at} W={w}");
                assert_eq!(locks[0]["acquisitions"], taken, "{at} W={w}");
                let symbol = locks[0]["symbol"].as_str().unwrap();
                assert!(symbol.ends_with("doacross_wait"), "{at} W={w}: {symbol}");
                let runtime = library_functions(res);
                assert!(runtime.is_empty(), "{at} W={w}: {runtime:?}");
            }
        }
    }
}
