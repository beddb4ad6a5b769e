//! Spin-wait loops (loops with a `pause` instruction or a call of
//! `sched_yield`) in units are counted and warned of: workloads/spin_wait.c's
//! header derives the figures.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// What one `tf analyze TRACE ARGS --json --csv` made of a trace.
struct Analysis {
    json: Value,
    /// The text output's stdout and stderr.
    stdout: String,
    stderr: String,
    /// The CSV's rows.
    csv: Vec<HashMap<String, String>>,
}

impl Analysis {
    /// The CSV's spin-wait instructions, by function; checks that every row
    /// names the rule that ran (the JSON's).
    fn csv_spin_wait(&self) -> Vec<(String, u64)> {
        (self.csv.iter())
            .map(|row| {
                assert_eq!(row["spin_wait"], self.json["spin_wait"].as_str().unwrap());
                let spun = row["spin_wait_thread_instructions"].parse().unwrap();
                (row["function"].clone(), spun)
            })
            .collect()
    }
}

/// `tf analyze TRACE ARGS --json --csv` (both beside the trace).
fn analysis(trace: &Path, args: &[&str]) -> Analysis {
    let (json, csv) = (trace.with_extension("json"), trace.with_extension("csv"));
    let out = run_ok(
        tf().arg("analyze")
            .arg(trace)
            .args(args)
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(&csv),
    );
    Analysis {
        json: serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        csv: csv_rows(&csv),
    }
}

/// `spin_wait 4 PAUSES MODE`, traced in `dir`, and its `--warp 4` analysis.
fn spin_wait(dir: &Path, pauses: u64, mode: &str) -> Analysis {
    let t = dir.join(mode);
    trace_ok(
        &t,
        &workload("spin_wait"),
        &["4", &pauses.to_string(), mode],
    );
    analysis(&t, &["--warp", "4"])
}

#[test]
fn a_fixed_back_off_counts_three_instructions_per_pause() {
    let dir = tempdir();
    let pauses = 1000;
    let a = spin_wait(dir.path(), pauses, "backoff");
    let w = width(&a.json, 4);
    // 4 threads, each 1000 rounds of `pause; dec; jnz`, all in backoff(),
    // whether the tracer ends a block at the pause or not
    let spun = 4 * 3 * pauses;
    assert_eq!(w["spin_wait_thread_instructions"], spun);
    assert_eq!(
        function(w, "backoff")["spin_wait_thread_instructions"],
        spun
    );
    assert_eq!(function(w, "work")["spin_wait_thread_instructions"], 0);
    let in_csv: Vec<(String, u64)> = (a.csv_spin_wait().into_iter())
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(
        in_csv,
        [("[all]".to_string(), spun), ("backoff".to_string(), spun)]
    );
    // the text's function table: the spin-wait column after the skipped one
    let row = (a.stdout.lines())
        .find(|l| l.contains(" backoff [spin_wait]"))
        .unwrap_or_else(|| panic!("no row for backoff: {}", a.stdout));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[7], spun.to_string(), "{row}");
    let all = w["thread_instructions"].as_u64().unwrap();
    let said = format!(
        "tf: warning: {spun} of the units' {all} thread instructions ({:.2}%) ran in spin-wait \
         loops (loops with a pause instruction or a call of sched_yield), most in backoff (100.0%): ",
        100.0 * spun as f64 / all as f64
    );
    assert!(a.stderr.contains(&said), "{}", a.stderr);
    // the JSON holds the same warning, without the prefix
    let warning = said.strip_prefix("tf: warning: ").unwrap();
    let warnings = a.json["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|x| x.as_str().unwrap().starts_with(warning)));
    // the waiting is still analysed as work: every instruction replayed
    assert_eq!(w["thread_instructions"], w["recorded_thread_instructions"]);
}

#[test]
fn a_barrier_built_from_atomics_is_spin_wait_pausing_or_yielding_and_no_wait_is_none() {
    let dir = tempdir();
    let a = spin_wait(dir.path(), 0, "flag");
    let w = width(&a.json, 4);
    // how long each thread spins depends on the others' arrival, but every
    // thread but the last spins at least one round, all in spin_barrier()
    let spun = w["spin_wait_thread_instructions"].as_u64().unwrap();
    assert!(spun >= 3, "{spun}");
    assert_eq!(
        function(w, "spin_barrier")["spin_wait_thread_instructions"],
        spun
    );
    assert!(
        a.stderr.contains("most in spin_barrier (100.0%)"),
        "{}",
        a.stderr
    );

    let a = spin_wait(dir.path(), 0, "yield");
    let w = width(&a.json, 4);
    // the same loop, calling sched_yield: the loop and sched_yield() itself
    // wait, and nothing else (not the dynamic linker, which resolved the
    // first call and jumped on to sched_yield)
    let in_loop = function(w, "yield_barrier")["spin_wait_thread_instructions"].as_u64();
    let sched_yield = function(w, "sched_yield");
    assert!(in_loop.unwrap() >= 3, "{in_loop:?}");
    assert_eq!(
        sched_yield["spin_wait_thread_instructions"],
        sched_yield["thread_instructions"]
    );
    let spun = w["spin_wait_thread_instructions"].as_u64().unwrap();
    let yielded = sched_yield["thread_instructions"].as_u64().unwrap();
    assert_eq!(spun, in_loop.unwrap() + yielded);
    assert!(
        a.stderr.contains("or a call of sched_yield"),
        "{}",
        a.stderr
    );

    let a = spin_wait(dir.path(), 1000, "none");
    assert_eq!(width(&a.json, 4)["spin_wait_thread_instructions"], 0);
    assert!(!a.stderr.contains("spin-wait"), "{}", a.stderr);
    assert!(a.json["warnings"].as_array().unwrap().is_empty());
    assert!(a.csv_spin_wait().iter().all(|(_, n)| *n == 0));
}

#[test]
fn excluded_spin_wait_is_replayed_but_left_out_of_every_figure_and_of_the_export() {
    let dir = tempdir();
    let t = dir.path().join("backoff");
    trace_ok(&t, &workload("spin_wait"), &["4", "1000", "backoff"]);
    let widths = ["--warp", "1,4,8"];
    let counted = analyze_json(&t, &widths);
    let excl = analysis(&t, &[&widths[..], &["--spin-wait", "exclude"]].concat());
    let excluded = &excl.json;
    assert_eq!(excluded["spin_wait"], "exclude");
    assert_eq!(counted["spin_wait"], "count");
    // The 4 threads' units are units 1 to 4 (the main thread's is unit 0),
    // each 1000 rounds of backoff()'s `pause; dec; jnz`, the 4 lanes in step:
    // at W = 1 each lane issues its own 3000 warp instructions; at W = 4
    // the warps hold units 0-3 and 4, so three lanes go round together in
    // one and one alone in the other (2 × 3000); at W = 8 all four together.
    let spun = 4 * 3 * 1000u64;
    for (w, warp_spun) in [(1, spun), (4, 2 * 3000), (8, 3000)] {
        let (c, x) = (width(&counted, w), width(excluded, w));
        let at = |r: &Value, key: &str| r[key].as_u64().unwrap();
        assert_eq!(left_out(c, x, "thread_instructions"), spun);
        assert_eq!(left_out(c, x, "warp_instructions"), warp_spun, "W = {w}");
        // the loop has no memory operand: every request is as before
        assert_eq!(c["memory"], x["memory"]);
        // counted apart alike, and every recorded instruction replayed
        assert_eq!(x["spin_wait_thread_instructions"], spun);
        assert_eq!(x["excluded_thread_instructions"], spun);
        assert_eq!(c["excluded_thread_instructions"], 0);
        assert_eq!(
            at(x, "thread_instructions") + spun,
            at(x, "recorded_thread_instructions")
        );
        let (cb, xb) = (function(c, "backoff"), function(x, "backoff"));
        assert_eq!(left_out(cb, xb, "thread_instructions"), spun);
        assert_eq!(xb["spin_wait_thread_instructions"], spun);
        // work() is as it was, but for its share of a smaller whole
        let (cw, xw) = (function(c, "work"), function(x, "work"));
        for key in ["thread_instructions", "warp_instructions", "memory"] {
            assert_eq!(cw[key], xw[key], "{key}");
        }
    }
    assert!(excluded["incomplete"].as_array().unwrap().is_empty());
    let (stdout, stderr) = (&excl.stdout, &excl.stderr);
    assert!(stdout.contains("   spin-wait: exclude   "), "{stdout}");
    let all = width(&counted, 4)["thread_instructions"].as_u64().unwrap();
    let share = 100.0 * spun as f64 / all as f64;
    let said = format!(
        "tf: warning: {spun} of the units' {all} thread instructions ({share:.2}%) ran in spin-wait \
         loops (loops with a pause instruction or a call of sched_yield), most in backoff \
         (100.0%): the program waits by spinning on a lock or flag it builds from atomic \
         instructions, which tf does not recognize: the waiting is left out of every figure \
         (--spin-wait exclude), but what it guards is not serialized"
    );
    assert!(stderr.contains(&said), "{stderr}");
    // the CSV has the JSON's numbers
    let backoff_at_4 = (excl.csv.iter())
        .find(|r| r["warp_size"] == "4" && r["function"] == "backoff")
        .unwrap();
    let xb = function(width(excluded, 4), "backoff");
    assert_eq!(
        backoff_at_4["thread_instructions"],
        xb["thread_instructions"].to_string()
    );
    // and says that the spinning is not in thread_instructions
    let in_csv = excl.csv_spin_wait();
    assert!(
        in_csv.contains(&("backoff".to_string(), spun)),
        "{in_csv:?}"
    );
    assert_eq!(backoff_at_4["spin_wait"], "exclude");

    // A function that only ran spin-wait code still has its row: sched_yield
    // in yield mode, where its every instruction is left out.
    let y = dir.path().join("yield");
    trace_ok(&y, &workload("spin_wait"), &["4", "0", "yield"]);
    let r = analyze_json(&y, &["--warp", "4", "--spin-wait", "exclude"]);
    let w = width(&r, 4);
    let sched_yield = function(w, "sched_yield");
    assert_eq!(sched_yield["thread_instructions"], 0);
    let yielded = sched_yield["spin_wait_thread_instructions"]
        .as_u64()
        .unwrap();
    let in_loop = function(w, "yield_barrier")["spin_wait_thread_instructions"].as_u64();
    assert!(yielded > 0 && in_loop > Some(0), "{yielded} {in_loop:?}");
    assert_eq!(
        w["spin_wait_thread_instructions"],
        yielded + in_loop.unwrap()
    );

    // The Accel-Sim export leaves out what the figures leave out.
    for (figures, rule) in [(&counted, "count"), (excluded, "exclude")] {
        let out = dir.path().join(format!("export-{rule}"));
        let s = common::accelsim::export(&t, &out, &["--warp", "4", "--spin-wait", rule]);
        let r = width(figures, 4);
        assert_eq!(
            s["total"]["x86_thread_instructions"],
            r["thread_instructions"]
        );
        assert_eq!(s["total"]["x86_warp_instructions"], r["warp_instructions"]);
    }
}

#[test]
fn lanes_leaving_an_excluded_spin_loop_one_by_one_diverge_in_no_figure() {
    let dir = tempdir();
    let t = dir.path().join("stagger");
    let pauses = 100u64;
    trace_ok(
        &t,
        &workload("spin_wait"),
        &["4", &pauses.to_string(), "stagger"],
    );
    // thread k backs off (k + 1) * 100 rounds of 3 instructions; at W = 8
    // the four lanes go round together and leave one by one: 3 divergent
    // branches, 400 rounds of 3 warp instructions
    let spun = 3 * pauses * (1 + 2 + 3 + 4);
    let counted = analyze_json(&t, &["--warp", "1,8"]);
    let excluded = analyze_json(&t, &["--warp", "1,8", "--spin-wait", "exclude"]);
    for (w, warp_spun, divergent) in [(1, spun, 0), (8, 3 * 4 * pauses, 3)] {
        let (c, x) = (width(&counted, w), width(&excluded, w));
        let at = |r: &Value, key: &str| r[key].as_u64().unwrap();
        assert_eq!(at(c, "spin_wait_thread_instructions"), spun);
        assert_eq!(left_out(c, x, "thread_instructions"), spun);
        assert_eq!(left_out(c, x, "warp_instructions"), warp_spun);
        assert_eq!(left_out(c, x, "divergent_branches"), divergent, "W = {w}");
        assert_eq!(at(x, "excluded_thread_instructions"), spun);
    }
}

/// How much smaller count `key` is in result `excluded` (`--spin-wait
/// exclude`) than in `counted`, the same width's without the option.
fn left_out(counted: &Value, excluded: &Value, key: &str) -> u64 {
    counted[key].as_u64().unwrap() - excluded[key].as_u64().unwrap()
}
