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
