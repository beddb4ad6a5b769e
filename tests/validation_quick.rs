//! The fast subset of the validation suite (workloads marked `quick` in
//! `workloads/expectations.toml`), at every -O level, through the real
//! tracer and this build's `tf`: every hand-derived expectation must hold
//! within the file's tolerances. `cargo run --release -p tf-validate` runs
//! the whole suite and writes `docs/validation.md`.

use tf_validate::compare::Summary;
use tf_validate::expect::Expectations;
use tf_validate::measure::{build_workloads, Tracer};
use tf_validate::suite::run_workload;

#[test]
fn quick_workloads_meet_their_hand_derived_expectations_at_every_level() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let workloads = root.join("workloads");
    let e = Expectations::load(&workloads.join("expectations.toml")).unwrap();
    let quick: Vec<_> = e.workloads.iter().filter(|w| w.quick).collect();
    assert!(quick.len() >= 5, "the quick subset lost its workloads");
    build_workloads(&workloads, &e.levels).unwrap();
    let work = tempfile::tempdir().unwrap();
    let tracer = Tracer {
        tf: env!("CARGO_BIN_EXE_tf").into(),
        work: work.path().to_path_buf(),
        keep: false,
        analyze_args: Vec::new(),
    };
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    for w in quick {
        let out = run_workload(w, &e, &e.levels, &workloads.join("build"), &tracer);
        failures.extend(
            out.failures
                .iter()
                .map(|(l, why)| format!("{} -{l}: {why}", w.name)),
        );
        rows.extend(out.rows);
    }
    assert!(failures.is_empty(), "runs failed: {failures:#?}");
    let missed: Vec<_> = rows
        .iter()
        .filter(|r| r.passes(&e.tolerance) == Some(false))
        .map(|r| {
            format!(
                "{} -{} W={} {} {:?}: measured {:?}, expected {:?}",
                r.workload, r.level, r.width, r.function, r.metric, r.measured, r.expected
            )
        })
        .collect();
    assert!(missed.is_empty(), "missed expectations: {missed:#?}");
    let s = Summary::of(&rows, &e.tolerance);
    // 6 quick workloads × 4 levels × 3 widths, several metrics each.
    assert!(s.count >= 300, "only {} figures were checked", s.count);
    assert_eq!(s.passed, s.count);
    assert!(s.simt_mae_pp.unwrap() <= e.tolerance.simt_pp);
}
