//! A `single` whose value the team copies (`copyprivate`): the team's wait
//! for it is skipped (workloads/omp_single.c derives the figures).

use super::*;

/// Built with GCC and, where it is installed, clang.
#[test]
fn the_wait_for_a_singles_copy_is_skipped() {
    for program in &gcc_and_clang("omp_single") {
        let at = format!("{program:?}");
        let dir = tempdir();
        let compute = |rounds: &str| {
            let t = dir.path().join(format!("trace-{rounds}"));
            trace_ok(&t, program, &[rounds]);
            let r = analyze_json(&t, &["--warp", "4"]);
            assert!(r["skipped"]["sync_wait"].as_u64().unwrap() > 0, "{at}");
            let res = width(&r, 4);
            assert_eq!(res["units"], 4, "{at}");
            let f = function(res, "compute");
            assert_eq!(f["simt_efficiency"].as_f64().unwrap(), 0.25, "{at}");
            // libgomp's waits are skipped whole; libomp's too, but for its
            // blocks around the program's copy function, which it calls
            // back from inside the wait
            let functions = res["functions"].as_array().unwrap();
            let gomp: Vec<&Value> = (functions.iter())
                .filter(|f| f["module"].as_str().unwrap().starts_with("libgomp"))
                .collect();
            assert!(gomp.is_empty(), "{at}: {gomp:?}");
            let kmp = functions.iter().find(|f| f["name"] == "__kmpc_copyprivate");
            if let Some(kmp) = kmp {
                let (ran, skipped) = (&kmp["thread_instructions"], &kmp["skipped_instructions"]);
                assert!(skipped.as_u64() > ran.as_u64(), "{at}: {kmp}");
            }
            f["thread_instructions"].as_u64().unwrap()
        };
        let one = compute("1");
        assert!(one > 4096, "{at}: {one}");
        assert_eq!(compute("8"), 8 * one, "{at}");
    }
}
