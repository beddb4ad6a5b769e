//! `tf report` end to end: the divergence workload traced through the real
//! tracer, its report's figures checked against the values derived by hand
//! in `workloads/divergence.c` and against `tf analyze --json`; then the
//! pages opened in headless Chromium.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

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
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("report")
            .join(kernel);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("trace");
        trace_ok(&trace, &workload("divergence"), &[kernel, "64"]);
        let report = dir.join("html");
        let out = tf()
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&report)
            .args(OPTIONS)
            .output()
            .expect("run tf report");
        assert!(
            out.status.success(),
            "tf report failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&report.join("index.html").display().to_string()),
            "tf report names its index page: {stderr}"
        );
        Traced { trace, report }
    })
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
            for (class, key) in [
                ("thread", "thread_instructions"),
                ("warp", "warp_instructions"),
            ] {
                assert_eq!(
                    num(&page, &row, class) as u64,
                    f[key].as_u64().unwrap(),
                    "{name} {key} at W = {w}"
                );
            }
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
        for (class, key) in [
            ("thread", "thread_instructions"),
            ("warp", "warp_instructions"),
            ("divergent", "divergent_branches"),
            ("units", "units"),
            ("warps", "warps"),
        ] {
            assert_eq!(
                num(&index, &row, class) as u64,
                r[key].as_u64().unwrap(),
                "{key} at W = {w}"
            );
        }
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
    let widths: Vec<u64> = full["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["warp_size"].as_u64().unwrap())
        .collect();
    assert_eq!(widths, [1, 2, 4, 8, 16, 24, 32, 48, 64]);
    // W = 1: every lane is its own warp.
    assert_eq!(width(&full, 1)["simt_efficiency"].as_f64().unwrap(), 1.0);
}

#[test]
fn analyze_html_writes_the_report_and_keeps_its_own_widths() {
    let t = traced("triangle");
    let dir = tempdir();
    let json = dir.path().join("a.json");
    let html = dir.path().join("html");
    let out = tf()
        .arg("analyze")
        .arg(&t.trace)
        .args(OPTIONS)
        .arg("--json")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
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

/// Runs headless Chromium on `page`: its DOM after scripts ran, and a
/// screenshot written to `png`.
fn chromium(page: &Path, png: &Path) -> String {
    let profile = tempdir();
    let base = |cmd: &mut Command| {
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    };
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut dump = Command::new("chromium");
    base(&mut dump);
    let out = dump
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium is installed (scripts/setup.sh: apt-get install -y chromium)");
    assert!(out.status.success(), "chromium --dump-dom {url} failed");
    let mut shot = Command::new("chromium");
    base(&mut shot);
    let status = shot
        .arg("--window-size=1400,2600")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "chromium --screenshot {url} failed"
    );
    assert!(
        std::fs::metadata(png).unwrap().len() > 10_000,
        "{} is empty",
        png.display()
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn chromium_renders_the_tables_and_plots() {
    let t = traced("triangle");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let index = t.report.join("index.html");
    let dom = chromium(&index, &shots.join("index.png"));
    // The sortable table's script ran without breaking the page, and every
    // function row and plot is in the rendered DOM.
    for name in ["body", "worker"] {
        assert!(
            dom.contains(&format!("<tr data-fn=\"{name}\">")),
            "row {name}"
        );
    }
    assert!(dom.contains("<table class=\"sortable functions\">"));
    assert_eq!(
        dom.matches("<svg").count(),
        4,
        "sweep, shares, memory, skipped"
    );
    assert!(dom.contains("warp width W (lanes)") && dom.contains("SIMT efficiency (%)"));
    let page = page_of(&t.report, &read(&index), "worker");
    let dom = chromium(&page, &shots.join("function-worker.png"));
    for w in [8, 16, 32] {
        assert!(dom.contains(&format!("<tr data-w=\"{w}\">")), "W = {w} row");
    }
    assert!(dom.contains("<tr data-block="), "the block table");
    assert!(dom.contains("<tr data-line="), "the line table");
    assert!(dom.contains("class=\"cfg-block\""), "the CFG's blocks");
    assert_eq!(dom.matches("<svg").count(), 2, "the sweep and the CFG");
    eprintln!("screenshots in {}", shots.display());
}

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
    let widths: Vec<u64> = full["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["warp_size"].as_u64().unwrap())
        .collect();
    assert_eq!(widths, [1, 32, 64]);
    let out = run("65");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "tf: --sweep 65: warp widths must be 1..=64"
    );
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The warps of a report end in any order on several cores, and their
/// figures are gathered in that order; no page may depend on it (the
/// dynamic CFG's layout once depended on the order of its edges).
#[test]
fn the_report_is_the_same_on_one_core_and_on_several() {
    let dir = tempdir();
    let trace = dir.path().join("trace");
    trace_ok(&trace, &workload("omp_bfs"), &[]);
    let pages = |threads: &str| {
        let html = dir.path().join(format!("html-{threads}"));
        let mut report = tf();
        report.env("RAYON_NUM_THREADS", threads);
        run_ok(report.arg("report").arg(&trace).arg("-o").arg(&html));
        files_under(&html)
    };
    let one = pages("1");
    assert!(one.len() > 3, "a report of several pages");
    for threads in ["2", "4"] {
        let several = pages(threads);
        let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&one), names(&several));
        for (a, b) in one.iter().zip(&several) {
            assert!(a.1 == b.1, "{} differs on {threads} cores", a.0.display());
        }
    }
}
