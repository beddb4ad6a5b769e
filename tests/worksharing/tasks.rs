//! OpenMP tasks: their work is counted wherever the runtime runs them, and
//! each is part of the unit it ran in (workloads/omp_tasks.c derives the
//! figures).

use super::*;

#[test]
fn tasks_that_run_inside_the_runtimes_waits_are_work() {
    // workloads/omp_tasks.c: N tasks of the same length, many of which run
    // inside a wait that the tracer skips: the task wait of the thread that
    // made them, the barrier where the team waits, or, nested N deep, the
    // task wait of the task before (64 deep: more than the tracer's skip
    // frames hold). Built with GCC (libgomp) and, where it is installed,
    // with clang (libomp). Each task runs inside the unit of the thread that
    // ran it (its call of the region's function, or the task before it),
    // and a warning says how many did.
    let dir = tempdir();
    let mut programs = vec![workload("omp_tasks")];
    programs.extend(build_with_clang("omp_tasks", "-O1"));
    let modes = ["taskwait", "barrier", "nested"];
    let runs = (programs.iter().enumerate()).flat_map(|(k, p)| modes.map(|m| (k, p, m)));
    for (k, program, wait) in runs {
        let insns_of_work = |n: &str| {
            let t = dir.path().join(format!("trace-{k}-{wait}-{n}"));
            trace_ok(&t, program, &[n, wait]);
            let r = analyze_json(&t, &["--warp", "4"]);
            let warnings = r["warnings"].as_array().unwrap();
            let inside = format!("{n} call(s) that the OpenMP runtime made of unit functions");
            assert!(
                (warnings.iter()).any(|w| w.as_str().unwrap().starts_with(&inside)),
                "{program:?} {wait} {n}: {warnings:?}"
            );
            function(width(&r, 4), "work")["thread_instructions"]
                .as_u64()
                .unwrap()
        };
        let one = insns_of_work("1");
        assert!(one > 1000, "{program:?} {wait}: {one}");
        assert_eq!(insns_of_work("64"), 64 * one, "{program:?} {wait}");
    }
}
