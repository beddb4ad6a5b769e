//! A real multi-threaded program: Debian's pigz compressing 20 MB with four
//! threads, traced once and shared by the tests below.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use tf_trace::Trace;

/// The pigz trace, with pigz's output traced and native.
struct Pigz {
    trace: PathBuf,
    traced_output: PathBuf,
    native_output: PathBuf,
}

fn pigz() -> &'static Pigz {
    static PIGZ: OnceLock<Pigz> = OnceLock::new();
    PIGZ.get_or_init(|| {
        assert!(
            Command::new("pigz").arg("--version").output().is_ok(),
            "pigz is not installed: run scripts/setup.sh (apt-get install -y pigz)"
        );
        let dir = made_once("pigz", |dir| {
            let input = dir.join("input.txt");
            text_file(&input, 20_000_000);
            let native_output = dir.join("native.gz");
            let status = Command::new("pigz")
                .args(["-p", "4", "-c"])
                .arg(&input)
                .stdout(std::fs::File::create(&native_output).unwrap())
                .status()
                .unwrap();
            assert!(status.success());
            let trace = dir.join("trace");
            let traced_output = dir.join("traced.gz");
            let out = tf()
                .arg("trace")
                .arg("-o")
                .arg(&trace)
                .args(["--", "pigz", "-p", "4", "-c"])
                .arg(&input)
                .stdout(std::fs::File::create(&traced_output).unwrap())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "tf trace pigz failed: {stderr}");
            assert!(stderr.starts_with("tf: traced 6 threads"), "{stderr}");
        });
        Pigz {
            trace: dir.join("trace"),
            traced_output: dir.join("traced.gz"),
            native_output: dir.join("native.gz"),
        }
    })
}

#[test]
fn pigz_output_is_byte_identical_and_every_thread_has_memory_records() {
    let p = pigz();
    assert_eq!(
        std::fs::read(&p.traced_output).unwrap(),
        std::fs::read(&p.native_output).unwrap(),
        "pigz under tf trace must write exactly what it writes natively"
    );
    let trace = Trace::open(&p.trace).unwrap();
    assert!(trace.problems().is_empty());
    assert_eq!(trace.threads().len(), 6);
    for t in trace.threads() {
        let (chunks, damage) = trace.thread_stats(t.tid).unwrap();
        assert!(damage.is_none(), "{damage:?}");
        let accesses: u64 = chunks.iter().map(|c| c.accesses).sum();
        let insns: u64 = chunks.iter().map(|c| c.insns).sum();
        assert!(
            accesses > 0 && insns > 0,
            "thread {} has no memory records",
            t.tid
        );
    }
    // tf info shows every thread, and reads the whole trace cleanly.
    let out = tf().arg("info").arg(&p.trace).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for tid in 1..=6 {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&tid.to_string()))
            .unwrap_or_else(|| panic!("tf info shows no thread {tid}:\n{stdout}"));
        let accesses: u64 = row.split_whitespace().nth(6).unwrap().parse().unwrap();
        assert!(accesses > 0, "{row}");
    }
}

/// A file `name` of this test process beside the shared trace (the tests of
/// one `cargo nextest` run share the trace's directory, each a process).
fn scratch(name: &str) -> PathBuf {
    let dir = pigz().trace.parent().unwrap();
    dir.join(format!("{}.{name}", std::process::id()))
}

/// `tf analyze --warp 8,16,32` of the pigz trace on `threads` threads, into
/// `json`.
fn analyze_on(threads: &str, json: &Path) -> serde_json::Value {
    run_ok(
        tf().env("RAYON_NUM_THREADS", threads)
            .arg("analyze")
            .arg(&pigz().trace)
            .args(["--warp", "8,16,32", "--json"])
            .arg(json),
    );
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// `tf analyze --warp 8,16,32` of the pigz trace, run once, on 4 threads:
/// more than the one warp the three widths share, so that each lane's
/// stream is decoded ahead on a thread of its own.
fn analysis() -> &'static serde_json::Value {
    static ANALYSIS: OnceLock<serde_json::Value> = OnceLock::new();
    ANALYSIS.get_or_init(|| analyze_on("4", &scratch("four-threads.json")))
}

/// Decoding the lanes ahead, in batches handed from thread to thread and
/// reused, changes no figure: on one thread each lane is read as it goes.
#[test]
fn decoding_lanes_ahead_changes_no_figure() {
    let one = analyze_on("1", &scratch("one-thread.json"));
    assert!(one == *analysis(), "the figures differ on one thread");
}

#[test]
fn pigz_analysis_reports_every_function_at_three_widths() {
    let r = analysis();
    for w in [8u64, 16, 32] {
        let res = width(r, w);
        let functions = res["functions"].as_array().unwrap();
        assert!(
            functions.len() > 20,
            "W = {w}: {} functions",
            functions.len()
        );
        // Every function is reported: their own instructions add up to the whole.
        let sum = |key: &str| {
            functions
                .iter()
                .map(|f| f[key].as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(
            sum("thread_instructions"),
            res["thread_instructions"].as_u64().unwrap()
        );
        assert_eq!(
            sum("warp_instructions"),
            res["warp_instructions"].as_u64().unwrap()
        );
        let eff = res["simt_efficiency"].as_f64().unwrap();
        assert!(eff > 0.0 && eff <= 1.0);
        // Every call pushed its return address on its own thread's stack.
        let off = &res["off_stack"];
        assert!(off["calls"].as_u64().unwrap() > 1000, "W = {w}: {off}");
        assert_eq!(off["units"], 0, "W = {w}: {off}");
        // yarn's locks come from malloc(); a global one is named, by its
        // symbol or, in the stripped program, as `pigz+0x…`, as its code is.
        let locks = res["locks"].as_array().unwrap();
        assert!(locks.iter().any(|l| l["location"] == "heap"), "W = {w}");
        for l in locks {
            match l["location"].as_str().unwrap() {
                "heap" => assert_eq!(l["symbol"], serde_json::Value::Null, "{l}"),
                "global" => assert!(l["symbol"].is_string(), "{l}"),
                _ => panic!("W = {w}: {l}"),
            }
        }
        assert!(
            (locks.iter()).any(|l| l["symbol"]
                .as_str()
                .is_some_and(|s| s.starts_with("pigz+0x"))),
            "W = {w}: {locks:?}"
        );
        // The compressor's own code (libz) is where the work is.
        assert!(
            functions[0]["module"].as_str().unwrap().starts_with("libz"),
            "{}",
            functions[0]
        );
        // Debian's pigz is stripped: its own code is named after the module
        // and the entry's offset in it, as perf names unknown code; its PLT
        // stubs after the functions they jump to, as objdump names them.
        let own: Vec<&str> = functions
            .iter()
            .filter(|f| f["module"] == "pigz")
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        let stripped = |n: &&str| n.starts_with("pigz+0x");
        let plt = |n: &&str| n.ends_with("@plt");
        assert!(own.iter().any(stripped), "W = {w}: {own:?}");
        assert!(own.contains(&"deflate@plt"), "W = {w}: {own:?}");
        assert!(
            own.iter().all(|n| stripped(n) || plt(n)),
            "W = {w}: {own:?}"
        );
    }
}

#[test]
fn the_stripped_program_is_a_module_and_info_charges_its_code_to_it() {
    let p = pigz();
    let trace = Trace::open(&p.trace).unwrap();
    let pigz = trace
        .blocks()
        .modules()
        .iter()
        .find(|m| m.file_name() == "pigz")
        .expect("the traced program is a module of the block table");
    assert!(trace.blocks().iter().any(|b| b.function() == 0
        && trace.blocks().module_containing(b.address()).map(|m| m.id) == Some(pigz.id)));
    let out = tf().arg("info").arg(&p.trace).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // tf info names code without symbols as tf analyze does: by its frame's
    // entry, `pigz+0x…` (or `NAME@plt` for a PLT stub), never lumped under
    // one "[no symbol]" row.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 4 && f[3] == "pigz")
        .collect();
    assert!(!rows.is_empty(), "{stdout}");
    assert!(
        rows.iter()
            .all(|f| f[2].starts_with("pigz+0x") || f[2].ends_with("@plt")),
        "{stdout}"
    );
    assert!(!stdout.contains("[no symbol]"), "{stdout}");
    let names: Vec<&str> = width(analysis(), 32)["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(rows.iter().all(|f| names.contains(&f[2])), "{stdout}");
    // The JSON names the threads' start routine so too, as tf info does:
    // pigz's five threads all run one function of the stripped program.
    let routines: Vec<&str> = analysis()["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["start_routine"].as_str().unwrap())
        .collect();
    assert_eq!(routines.len(), 6);
    assert_eq!(routines[0], "", "the first thread has none");
    assert!(routines[1].starts_with("pigz+0x"), "{routines:?}");
    assert!(
        routines[1..].iter().all(|r| *r == routines[1]),
        "{routines:?}"
    );
    assert_eq!(info_thread_row(&stdout, 2)[2], routines[1], "{stdout}");
}

/// pigz with 32 compression threads: 34 threads whose encoders write their
/// chunks at the same time. The Valgrind tool keeps the trace files it has
/// open at once under what Valgrind leaves it (about ten file descriptors):
/// with more, Valgrind's assertion in VG_(safe_fd) killed the run (three
/// runs in four while the machine was writing other traces). Traced once as
/// it comes and once with every trace file held open 20 ms longer
/// (`--tf-hold-files`, as a slow disk would), which killed every run before
/// the limit; each must finish and match pigz's own output.
#[test]
fn thirty_two_threads_trace_every_time() {
    let dir = tempdir();
    let input = dir.path().join("input.txt");
    text_file(&input, 4_500_000); // 35 blocks of 128 KiB: every thread busy
    let native = Command::new("pigz")
        .args(["-p", "32", "-c"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(native.status.success());
    for (run, tracer_args) in [(1, ""), (2, "--tf-hold-files=20")] {
        let trace = dir.path().join(format!("trace-{run}"));
        let out = tf()
            .env("TF_TRACER_ARGS", tracer_args)
            .arg("trace")
            .arg("-o")
            .arg(&trace)
            .args(["--", "pigz", "-p", "32", "-c"])
            .arg(&input)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "run {run}: {stderr}");
        assert!(
            stderr.starts_with("tf: traced 34 threads"),
            "run {run}: {stderr}"
        );
        assert!(
            out.stdout == native.stdout,
            "run {run}: pigz's output differs"
        );
        std::fs::remove_dir_all(&trace).unwrap();
    }
}
