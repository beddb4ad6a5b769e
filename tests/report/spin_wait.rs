//! Spin-wait loops in the report: the index page carries the analysis'
//! warning, and a function's page its spin-wait instructions
//! (workloads/spin_wait.c's header derives them).

use super::*;

#[test]
fn a_back_off_shows_on_its_function_page_and_its_warning_on_the_index() {
    let dir = tempdir();
    let trace = dir.path().join("trace");
    trace_ok(&trace, &workload("spin_wait"), &["4", "1000", "backoff"]);
    let report = dir.path().join("html");
    let options = ["--warp", "4,8"];
    run_ok(
        tf().arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&report)
            .args(options),
    );
    let index = read(&report.join("index.html"));
    assert!(index.contains("ran in spin-wait loops"), "the warning");
    let json = analyze_json(&trace, &options);
    for (name, spun) in [("backoff", 4 * 3 * 1000), ("work", 0)] {
        let page = read(&page_of(&report, &index, name));
        for w in [4u64, 8] {
            let row = format!("data-w=\"{w}\"");
            // 4 threads of 1000 rounds of `pause; dec; jnz`, at every width
            assert_eq!(num(&page, &row, "spin") as u64, spun, "{name} at W = {w}");
            let f = function(width(&json, w), name);
            let cells = [("spin", "spin_wait_thread_instructions")];
            assert_counts(&page, &row, f, &cells, &format!("{name} "), w);
        }
    }
}
