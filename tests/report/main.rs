//! `tf report` end to end: the divergence workload traced through the real
//! tracer, its report's figures checked against the values derived by hand
//! in `workloads/divergence.c` and against `tf analyze --json`; then the
//! pages opened in headless Chromium.

#[path = "../common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

mod run_table;
mod skipped;
mod spin_wait;
mod tables;
mod whole;

/// A traced `divergence KERNEL 64` and its report (`--unit call:worker --warp 8,16,32`).
struct Traced {
    trace: PathBuf,
    report: PathBuf,
}

const OPTIONS: [&str; 4] = ["--unit", "call:worker", "--warp", "8,16,32"];

fn traced(kernel: &'static str) -> &'static Traced {
    static ODD_EVEN: OnceLock<Traced> = OnceLock::new();
    static TRIANGLE: OnceLock<Traced> = OnceLock::new();
    let cell = if kernel == "oddeven" {
        &ODD_EVEN
    } else {
        &TRIANGLE
    };
    cell.get_or_init(|| {
        let dir = made_once(&format!("report/{kernel}"), |dir| {
            let trace = dir.join("trace");
            trace_ok(&trace, &workload("divergence"), &[kernel, "64"]);
            let report = dir.join("html");
            let out = run_ok(
                tf().arg("report")
                    .arg(&trace)
                    .arg("-o")
                    .arg(&report)
                    .args(OPTIONS),
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains(&report.join("index.html").display().to_string()),
                "tf report names its index page: {stderr}"
            );
        });
        Traced {
            trace: dir.join("trace"),
            report: dir.join("html"),
        }
    })
}

/// Asserts that each cell `class` of `row` in `html` shows the count `key` of
/// `obj` (a `tf analyze --json` object at width `w`), for each `(class, key)`
/// of `cells`; `what` starts the failure message.
fn assert_counts(html: &str, row: &str, obj: &Value, cells: &[(&str, &str)], what: &str, w: u64) {
    for &(class, key) in cells {
        assert_eq!(
            num(html, row, class) as u64,
            obj[key].as_u64().unwrap(),
            "{what}{key} at W = {w}"
        );
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `data-v` value of the cell of class `class` in the row whose opening
/// tag contains `row` (e.g. `data-fn="body"`).
fn cell(html: &str, row: &str, class: &str) -> String {
    let start = html
        .find(&format!("<tr {row}"))
        .unwrap_or_else(|| panic!("no row {row}"));
    let end = start + html[start..].find("</tr>").unwrap();
    let tr = &html[start..end];
    let at = tr
        .find(&format!("class=\"num {class}\" data-v=\""))
        .unwrap_or_else(|| panic!("no cell {class} in row {row}: {tr}"));
    let value = &tr[at..];
    let value = &value[value.find("data-v=\"").unwrap() + 8..];
    value[..value.find('"').unwrap()].to_string()
}

fn num(html: &str, row: &str, class: &str) -> f64 {
    cell(html, row, class).parse().unwrap()
}

/// The page of `name`, from the index's link.
fn page_of(report: &Path, index: &str, name: &str) -> PathBuf {
    let row = index
        .find(&format!("<tr data-fn=\"{name}\""))
        .unwrap_or_else(|| panic!("no row for {name}"));
    let href = &index[row..];
    let href = &href[href.find("href=\"").unwrap() + 6..];
    report.join(&href[..href.find('"').unwrap()])
}

/// The warp widths of a report's results, in order.
fn warp_sizes(report: &Value) -> Vec<u64> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["warp_size"].as_u64().unwrap())
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn odd_and_even_arms_are_at_half_efficiency_on_both_pages() {
    let t = traced("oddeven");
    let index = read(&t.report.join("index.html"));
    let json = analyze_json(&t.trace, &OPTIONS);
    for name in ["odd_work", "even_work"] {
        let page = read(&page_of(&t.report, &index, name));
        for w in [8u64, 16, 32] {
            // Hand-derived: W/2 lanes run each arm, 50% at every even W.
            assert!(close(
                num(&index, &format!("data-fn=\"{name}\""), &format!("eff-w{w}")),
                0.5
            ));
            let row = format!("data-w=\"{w}\"");
            assert!(close(num(&page, &row, "eff"), 0.5), "{name} at W = {w}");
            // The same numbers as tf analyze --json with the same options.
            let f = function(width(&json, w), name);
            let cells = [
                ("thread", "thread_instructions"),
                ("warp", "warp_instructions"),
            ];
            assert_counts(&page, &row, f, &cells, &format!("{name} "), w);
            assert_eq!(num(&page, &row, "share"), f["share"].as_f64().unwrap());
        }
        assert!(page.contains("50.0%"));
    }
}

#[test]
fn the_triangle_body_is_at_w_plus_1_over_2w_and_the_whole_program_matches_analyze() {
    let t = traced("triangle");
    let index = read(&t.report.join("index.html"));
    // W = 32: body runs 32 rounds with 32, 31, …, 1 lanes: 33/64 = (W+1)/(2W).
    // W = 16: warps alternate trips 1..=16 and 17..=32: 11/16 (see
    // tests/analyze_workloads.rs); W = 8: warps of trips 8k+1..=8k+8 give
    // sum over k of (36 + 64k) lane-calls in (8 + 8k) rounds of 8 lanes:
    // (144 + 384) / ((8 + 16 + 24 + 32) × 8) = 528 / 640.
    let body = "data-fn=\"body\"";
    assert!(close(num(&index, body, "eff-w32"), 33.0 / 64.0));
    assert!(close(num(&index, body, "eff-w16"), 11.0 / 16.0));
    assert!(close(num(&index, body, "eff-w8"), 528.0 / 640.0));
    let page = read(&page_of(&t.report, &index, "body"));
    assert!(close(num(&page, "data-w=\"32\"", "eff"), 33.0 / 64.0));
    assert!(page.contains("51.6%"), "33/64 shown as a percentage");

    // Whole program and memory: as tf analyze --json, width by width.
    let json = analyze_json(&t.trace, &OPTIONS);
    for w in [8u64, 16, 32] {
        let r = width(&json, w);
        let row = format!("data-w=\"{w}\"");
        let cells = [
            ("thread", "thread_instructions"),
            ("warp", "warp_instructions"),
            ("divergent", "divergent_branches"),
            ("units", "units"),
            ("warps", "warps"),
        ];
        assert_counts(&index, &row, r, &cells, "", w);
        assert_eq!(
            num(&index, &row, "eff"),
            r["simt_efficiency"].as_f64().unwrap()
        );
        for seg in ["stack", "heap", "global"] {
            let m = &r["memory"][seg];
            let row = format!("data-w=\"{w}\" data-seg=\"{seg}\"");
            assert_eq!(
                num(&index, &row, "requests") as u64,
                m["requests"].as_u64().unwrap()
            );
            assert_eq!(
                num(&index, &row, "load-spr"),
                m["loads"]["sectors_per_request"].as_f64().unwrap()
            );
            assert_eq!(
                num(&index, &row, "store-spr"),
                m["stores"]["sectors_per_request"].as_f64().unwrap()
            );
        }
    }
    // The sweep's widths were replayed in the same run.
    let full: Value = serde_json::from_str(&read(&t.report.join("report.json"))).unwrap();
    assert_eq!(warp_sizes(&full), [1, 2, 4, 8, 16, 24, 32, 48, 64]);
    // W = 1: every lane is its own warp.
    assert_eq!(width(&full, 1)["simt_efficiency"].as_f64().unwrap(), 1.0);
}

#[test]
fn analyze_html_writes_the_report_and_keeps_its_own_widths() {
    let t = traced("triangle");
    let dir = tempdir();
    let json = dir.path().join("a.json");
    let html = dir.path().join("html");
    run_ok(
        tf().arg("analyze")
            .arg(&t.trace)
            .args(OPTIONS)
            .arg("--json")
            .arg(&json)
            .arg("--html")
            .arg(&html),
    );
    let with_html: Value = serde_json::from_str(&read(&json)).unwrap();
    let plain = analyze_json(&t.trace, &OPTIONS);
    assert_eq!(with_html["results"], plain["results"]);
    assert_eq!(
        read(&html.join("index.html")),
        read(&t.report.join("index.html")),
        "the same page as tf report writes"
    );
}
