//! The per-function page's tables: block and source-line figures derived
//! by hand, blocks that add up to their function, and the sweep's widths.

use super::*;

/// The cells of the row whose opening tag contains `row`, as text.
fn row_text(html: &str, row: &str) -> String {
    let start = html
        .find(&format!("<tr {row}"))
        .unwrap_or_else(|| panic!("no row {row}"));
    let end = start + html[start..].find("</tr>").unwrap();
    html[start..end].to_string()
}

#[test]
fn block_and_line_tables_show_the_hand_derived_figures() {
    let t = traced("triangle");
    let index = read(&t.report.join("index.html"));
    let body = read(&page_of(&t.report, &index, "body"));
    // body is straight-line code on one line: every block and its line run
    // at 33/64, and its blocks add up to its figures.
    assert!(body.contains("<tr data-block="), "a block table");
    for (i, _) in body.match_indices("<tr data-block=") {
        let row = &body[i..i + body[i..].find("</tr>").unwrap()];
        let tag = &row[4..row.find('>').unwrap()];
        assert!(close(num(&body, tag, "eff"), 33.0 / 64.0), "{row}");
    }
    let line = row_text(&body, "data-line=\"divergence.c:35\"");
    assert!(
        line.contains("sink[k &amp; (WORK - 1)] += k;"),
        "source text: {line}"
    );
    assert!(close(
        num(&body, "data-line=\"divergence.c:35\"", "eff"),
        33.0 / 64.0
    ));
    for class in ["thread", "warp"] {
        assert_eq!(
            num(&body, "data-total=\"blocks\"", class),
            num(&body, "data-w=\"32\"", class),
            "{class}: blocks add up to the function"
        );
    }
    // worker's loop branch: in a warp of trips 1..=32 the lanes leave one
    // round at a time, 31 splits into 2 paths per warp, 2 warps: 62.
    let worker = read(&page_of(&t.report, &index, "worker"));
    assert_eq!(num(&worker, "data-total=\"blocks\"", "divergent"), 62.0);
    let (at, _) = worker
        .match_indices("<tr data-block=")
        .find(|(i, _)| {
            let row = &worker[*i..*i + worker[*i..].find("</tr>").unwrap()];
            row.contains("class=\"num divergent\" data-v=\"62\"")
        })
        .expect("the loop branch's block");
    let row = &worker[at..at + worker[at..].find("</tr>").unwrap()];
    assert!(row.contains("class=\"num paths\" data-v=\"2\""), "{row}");
    let block = &row[row.find("data-block=\"").unwrap() + 12..];
    let block = &block[..block.find('"').unwrap()];
    // Marked in the CFG and disassembled.
    assert!(worker.contains(&format!("class=\"cfg-block\" data-block=\"{block}\"")));
    assert!(worker.contains(&format!("<pre class=\"asm\" data-block=\"{block}\">")));
    assert!(worker.contains("reconvergence point"));
    // Callees: body, called sum(1..=32) = 528 times per 32 items.
    let callees = &worker[worker.find("<table class=\"callees\">").unwrap()..];
    assert!(callees.contains(">body</a>"));
    let callees = &callees[..callees.find("</table>").unwrap()];
    assert!(
        callees.contains("class=\"num calls\" data-v=\"1056\""),
        "{callees}"
    );
}

#[test]
fn blocks_add_up_to_every_function_of_the_report() {
    use tf_reports::observe::Collector;
    for kernel in ["oddeven", "triangle"] {
        let trace = tf_trace::Trace::open(&traced(kernel).trace).unwrap();
        let widths = [8, 16, 32];
        let collector = Collector::new(&widths);
        let opts = tf_analyzer::Options {
            widths: widths.to_vec(),
            unit: "call:worker".parse().unwrap(),
            ..Default::default()
        };
        let report =
            tf_analyzer::analyze_observed(&trace, &opts, &tf_analyzer::Silent, &collector).unwrap();
        let details = collector.finish();
        for r in &report.results {
            let d = &details.widths[&r.warp_size];
            let all: u64 = d.blocks.values().map(|b| b.insns.thread_instructions).sum();
            assert_eq!(all, r.thread_instructions);
            let div: u64 = d.blocks.values().map(|b| b.divergences).sum();
            assert_eq!(div, r.divergent_branches, "{kernel} W = {}", r.warp_size);
            for f in &r.functions {
                let mut insns = tf_analyzer::stats::Insns::default();
                let mut memory = tf_analyzer::stats::Memory::default();
                let mut serialized = 0;
                for (&(id, _), b) in &d.blocks {
                    let n = &details.functions[&id];
                    if n.name == f.name && n.module == f.module {
                        insns.add(&b.insns);
                        memory.add(&b.memory);
                        serialized += b.serialized;
                    }
                }
                let what = format!("{kernel} {} W = {}", f.name, r.warp_size);
                assert_eq!(insns.thread_instructions, f.thread_instructions, "{what}");
                assert_eq!(insns.warp_instructions, f.warp_instructions, "{what}");
                assert_eq!(serialized, f.serialized_warp_instructions, "{what}");
                let mine = tf_analyzer::results::MemoryReport::from(&memory);
                assert_eq!(
                    serde_json::to_value(mine).unwrap(),
                    serde_json::to_value(f.memory).unwrap(),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn sweep_widths_are_chosen_with_sweep_and_checked() {
    let t = traced("triangle");
    let dir = tempdir();
    let html = dir.path().join("html");
    let run = |sweep: &str| {
        tf().arg("report")
            .arg(&t.trace)
            .arg("-o")
            .arg(&html)
            .args(["--unit", "call:worker", "--warp", "32", "--sweep", sweep])
            .output()
            .unwrap()
    };
    let out = run("1,64");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let full: Value = serde_json::from_str(&read(&html.join("report.json"))).unwrap();
    assert_eq!(warp_sizes(&full), [1, 32, 64]);
    let out = run("65");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "tf: --sweep 65: warp widths must be 1..=64"
    );
}
