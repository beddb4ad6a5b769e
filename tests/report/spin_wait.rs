//! Spin-wait loops in the report: the index page carries the analysis'
//! warning and the `--spin-wait` rule, and a function's page its spin-wait
//! instructions, counted in its figures or left out of them
//! (workloads/spin_wait.c's header derives them).

use super::*;

#[test]
fn a_back_off_shows_on_its_function_page_and_its_warning_on_the_index() {
    let dir = tempdir();
    let trace = dir.path().join("trace");
    trace_ok(&trace, &workload("spin_wait"), &["4", "1000", "backoff"]);
    let widths = ["--warp", "4,8"];
    let mut thread_instructions = Vec::new();
    for rule in ["count", "exclude"] {
        let report = dir.path().join(format!("html-{rule}"));
        let options = [&widths[..], &["--spin-wait", rule]].concat();
        // --all: left out, backoff's few instructions earn it no page
        run_ok(
            tf().arg("report")
                .arg(&trace)
                .arg("-o")
                .arg(&report)
                .args(&options)
                .arg("--all"),
        );
        let index = read(&report.join("index.html"));
        assert!(index.contains("ran in spin-wait loops"), "the warning");
        let run = format!("<dt>--spin-wait</dt><dd>{rule}</dd>");
        assert!(index.contains(&run), "{rule}: the run's rule");
        let json = analyze_json(&trace, &options);
        for (name, spun) in [("backoff", 4 * 3 * 1000), ("work", 0)] {
            // the index's table, at the widest width
            let row = format!("data-fn=\"{name}\"");
            assert_eq!(num(&index, &row, "spin") as u64, spun, "{rule}: {name}");
            let page = read(&page_of(&report, &index, name));
            let note = match rule {
                "count" => "waiting that tf counts as work",
                _ => "waiting left out of the other figures (--spin-wait exclude)",
            };
            assert!(page.contains(note), "{rule}: {name}'s note");
            for w in [4u64, 8] {
                let row = format!("data-w=\"{w}\"");
                // 4 threads of 1000 rounds of `pause; dec; jnz`, at every
                // width, whichever the rule
                assert_eq!(num(&page, &row, "spin") as u64, spun, "{name} at W = {w}");
                let f = function(width(&json, w), name);
                let cells = [
                    ("spin", "spin_wait_thread_instructions"),
                    ("thread", "thread_instructions"),
                    ("warp", "warp_instructions"),
                ];
                assert_counts(&page, &row, f, &cells, &format!("{rule}: {name} "), w);
                if name == "backoff" {
                    thread_instructions.push(num(&page, &row, "thread") as u64);
                }
            }
        }
    }
    // left out, backoff's loop is no longer in its thread instructions
    let (counted, excluded) = thread_instructions.split_at(2);
    for (c, x) in counted.iter().zip(excluded) {
        assert_eq!(c - x, 4 * 3 * 1000);
    }
}
