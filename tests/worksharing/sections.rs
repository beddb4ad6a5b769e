//! `sections` constructs: each section is a unit, as an iteration of a
//! worksharing loop is (workloads/omp_sections.c derives the figures).

use super::*;

/// Eight sections, three constructs, in one parallel region and as three
/// `parallel sections`, built with GCC (libgomp hands the sections out one
/// at a time) and, where it is installed, clang (a static loop over them).
#[test]
fn every_section_is_a_unit() {
    for program in &gcc_and_clang("omp_sections") {
        for form in ["separate", "combined"] {
            let at = format!("{program:?} {form}");
            let dir = tempdir();
            let t = dir.path().join("trace");
            trace_ok(&t, program, &[form, "3"]);
            let r = analyze_json(&t, &["--warp", "4,8"]);
            let warnings = r["warnings"].as_array().unwrap();
            assert!(warnings.is_empty(), "{at}: {warnings:?}");
            let about = r["units_are"].as_str().unwrap();
            assert!(
                about.starts_with("each iteration of 3 OpenMP worksharing loop instance(s)"),
                "{at}: {about}"
            );
            for w in [4u64, 8] {
                let res = width(&r, w);
                assert_eq!(res["units"], 24, "{at} W={w}: a unit per section");
                let part = |k: usize| function(res, &format!("part_{k}"));
                let once = part(0)["thread_instructions"].as_u64().unwrap();
                assert!(once > 0 && once % 3 == 0, "{at} W={w}: {once}");
                for k in 0..8 {
                    let f = part(k);
                    assert_eq!(f["thread_instructions"], once, "{at} W={w} part_{k}");
                    let eff = f["simt_efficiency"].as_f64().unwrap();
                    assert_eq!(eff, 1.0 / w as f64, "{at} W={w} part_{k}");
                }
                let runtime = library_functions(res);
                assert!(runtime.is_empty(), "{at} W={w}: {runtime:?}");
            }
        }
    }
}
