//! `tf analyze` and `tf report` say how much of the trace its units cover:
//! the figures are of the units' instructions, and the rest (serial code,
//! thread start-up) ran outside every unit.

mod common;

use common::{analyze_json, run_ok, tempdir, tf, trace_ok, width, workload};
use tf_trace::{BlockDef, EndKind, TraceWriter};

/// main: a 2-instruction block that calls work (3 instructions, then it
/// returns), then 1 instruction: 6 traced, 3 of them in work.
fn call_trace(dir: &std::path::Path) {
    let mut w = TraceWriter::create(dir).unwrap();
    let main = w.function(0x1000, 0, "main").unwrap();
    let work = w.function(0x2000, 0, "work").unwrap();
    let call = BlockDef::new(0x1000)
        .function(main)
        .insn(2)
        .insn(5)
        .end(EndKind::Call);
    let call = w.block(&call).unwrap();
    let body = BlockDef::new(0x2000)
        .function(work)
        .insn(1)
        .insn(1)
        .insn(1)
        .end(EndKind::Return);
    let body = w.block(&body).unwrap();
    let after = BlockDef::new(0x1007)
        .function(main)
        .insn(1)
        .end(EndKind::Return);
    let after = w.block(&after).unwrap();
    w.thread(1).unwrap().seq(&[call, body, after]).unwrap();
    w.finish().unwrap();
}

fn analyze(dir: &std::path::Path, args: &[&str]) -> String {
    let out = run_ok(tf().arg("analyze").arg(dir).args(args));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_instructions_outside_every_unit_are_counted() {
    let d = tempdir();
    call_trace(d.path());
    let calls = analyze(d.path(), &["--unit", "call:work", "--warp", "32"]);
    assert!(
        calls.contains(
            "in units: 3 of the 6 traced instructions (50.0%); the other 3 ran outside every unit"
        ),
        "{calls}"
    );
    // A whole thread is one unit: nothing outside, nothing said.
    let whole = analyze(d.path(), &["--unit", "thread", "--warp", "32"]);
    assert!(!whole.contains("in units:"), "{whole}");
    // A shard holds some warps only: it says nothing of the whole.
    let shard = analyze(
        d.path(),
        &["--unit", "call:work", "--warp", "32", "--shard", "0/2"],
    );
    assert!(!shard.contains("in units:"), "{shard}");
}

#[test]
fn the_report_says_what_the_units_cover() {
    let d = tempdir();
    let trace = d.path().join("trace");
    call_trace(&trace);
    let html = d.path().join("html");
    run_ok(tf().arg("report").arg(&trace).arg("-o").arg(&html).args([
        "--unit",
        "call:work",
        "--warp",
        "32",
    ]));
    let index = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(
        index.contains(
            "<dt>traced instructions</dt><dd>6</dd>\n<dt>of them in units</dt><dd>3 (50.0%; the rest ran outside every unit)</dd>"
        ),
        "{index}"
    );
}

/// A stripped program has no `main` symbol: its first thread's unit starts
/// at main all the same (found in the entry code, which hands it to
/// `__libc_start_main`), not at the loader's entry, and covers what the
/// unit of the program with its symbols covers.
#[test]
fn a_stripped_programs_first_unit_starts_at_main() {
    let dir = tempdir();
    let stripped = dir.path().join("loop");
    run_ok(
        std::process::Command::new("strip")
            .arg("-o")
            .arg(&stripped)
            .arg(workload("loop")),
    );
    let covered = |program: &std::path::Path, name: &str| {
        let t = dir.path().join(name);
        trace_ok(&t, program, &["1000"]);
        let r = analyze_json(&t, &["--warp", "8"]);
        let traced = r["threads"][0]["traced_instructions"].as_u64().unwrap();
        let units = width(&r, 8)["recorded_thread_instructions"]
            .as_u64()
            .unwrap();
        (units, traced)
    };
    let (with_symbols, traced) = covered(&workload("loop"), "symbols");
    let (stripped_units, stripped_traced) = covered(&stripped, "stripped");
    // the loader's and libc's start-up run before main
    assert!(with_symbols + 10_000 < traced, "{with_symbols} of {traced}");
    assert!(stripped_units + 10_000 < stripped_traced);
    assert_eq!(stripped_units, with_symbols);
}
