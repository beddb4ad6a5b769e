//! Spin-wait loops (loops with a `pause` instruction) in units are counted
//! and warned of: workloads/spin_wait.c's header derives the figures.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The analysis at W = 4 of `spin_wait 4 PAUSES MODE`, and its text output's
/// stderr.
fn spin_wait(dir: &Path, pauses: u64, mode: &str) -> (Value, String) {
    let t = dir.join(mode);
    trace_ok(
        &t,
        &workload("spin_wait"),
        &["4", &pauses.to_string(), mode],
    );
    let json = analyze_json(&t, &["--warp", "4"]);
    let out = run_ok(tf().arg("analyze").arg(&t).args(["--warp", "4"]));
    (json, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_fixed_back_off_counts_three_instructions_per_pause() {
    let dir = tempdir();
    let pauses = 1000;
    let (r, stderr) = spin_wait(dir.path(), pauses, "backoff");
    let w = width(&r, 4);
    // 4 threads, each 1000 rounds of `pause; dec; jnz`, all in backoff(),
    // whether the tracer ends a block at the pause or not
    let spun = 4 * 3 * pauses;
    assert_eq!(w["spin_wait_thread_instructions"], spun);
    assert_eq!(
        function(w, "backoff")["spin_wait_thread_instructions"],
        spun
    );
    assert_eq!(function(w, "work")["spin_wait_thread_instructions"], 0);
    let all = w["thread_instructions"].as_u64().unwrap();
    let said = format!(
        "tf: warning: {spun} of the units' {all} thread instructions ({:.2}%) ran in spin-wait \
         loops (loops with a pause instruction), most in backoff (100.0%): ",
        100.0 * spun as f64 / all as f64
    );
    assert!(stderr.contains(&said), "{stderr}");
    // the JSON holds the same warning, without the prefix
    let warning = said.strip_prefix("tf: warning: ").unwrap();
    let warnings = r["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|x| x.as_str().unwrap().starts_with(warning)));
    // the waiting is still analysed as work: every instruction replayed
    assert_eq!(w["thread_instructions"], w["recorded_thread_instructions"]);
}

#[test]
fn a_barrier_built_from_atomics_is_spin_wait_and_no_wait_is_none() {
    let dir = tempdir();
    let (r, stderr) = spin_wait(dir.path(), 0, "flag");
    let w = width(&r, 4);
    // how long each thread spins depends on the others' arrival, but every
    // thread but the last spins at least one round, all in spin_barrier()
    let spun = w["spin_wait_thread_instructions"].as_u64().unwrap();
    assert!(spun >= 3, "{spun}");
    assert_eq!(
        function(w, "spin_barrier")["spin_wait_thread_instructions"],
        spun
    );
    assert!(stderr.contains("most in spin_barrier (100.0%)"), "{stderr}");

    let (r, stderr) = spin_wait(dir.path(), 1000, "none");
    assert_eq!(width(&r, 4)["spin_wait_thread_instructions"], 0);
    assert!(!stderr.contains("spin-wait"), "{stderr}");
    assert!(r["warnings"].as_array().unwrap().is_empty(), "{r}");
}
