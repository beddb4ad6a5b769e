//! The index page's traced and skipped work: a row for every reason a
//! tracer skips for, with `tf analyze --json`'s counts, whose shares make
//! the whole.

use super::*;

/// An OpenMP loop whose iterations the runtime hands out (skipped as loop
/// scheduling: the reason the table once left out).
#[test]
fn every_skip_reason_has_its_row_and_the_shares_make_the_whole() {
    let dir = tempdir();
    let t = dir.path().join("trace");
    let mut cmd = trace_command(&t, &[], &workload("omp_schedules"), &["1024", "dynamic"]);
    run_ok(cmd.env("OMP_WAIT_POLICY", "passive"));
    let html = dir.path().join("html");
    run_ok(
        tf().arg("report")
            .arg(&t)
            .arg("-o")
            .arg(&html)
            .args(["--warp", "8"]),
    );
    let index = read(&html.join("index.html"));
    let json = analyze_json(&t, &["--warp", "8"]);
    let skipped = &json["skipped"];
    let row = |kind: &str| format!("data-kind=\"{kind}\"");
    let mut shares = num(&index, &row("traced"), "share");
    for (kind, key) in [
        ("lock runtime", "lock_runtime"),
        ("waits", "sync_wait"),
        ("loop scheduling", "loop_schedule"),
        ("excluded", "excluded"),
        ("outside --only", "outside_only"),
        ("other", "other"),
    ] {
        let n = num(&index, &row(kind), "instructions") as u64;
        assert_eq!(n, skipped[key].as_u64().unwrap(), "{kind}");
        shares += num(&index, &row(kind), "share");
    }
    assert!(skipped["loop_schedule"].as_u64().unwrap() > 0, "{skipped}");
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}
