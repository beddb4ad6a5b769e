//! Hostile and damaged traces, built by each test: every one fails loudly,
//! naming the damage, with the exit status of README's table (3: the trace
//! is damaged or incomplete; 1: tf could not do what was asked; 2: usage).

mod common;

use common::{tempdir, tf, trace_ok, workload};
use std::path::Path;
use std::time::{Duration, Instant};
use tf_trace::{stream::crc32c, TraceWriter, WriterOptions};

/// Runs `tf ARGS` and returns (status, stdout, stderr).
fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = tf().args(args).arg(dir).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A chunk (FORMAT.md §4.2) with a correct checksum.
fn chunk(seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut c = b"TFCK".to_vec();
    c.extend((payload.len() as u32).to_le_bytes());
    c.extend(seq.to_le_bytes());
    let mut summed = c[4..12].to_vec();
    summed.extend_from_slice(payload);
    c.extend(crc32c(&summed).to_le_bytes());
    c.extend_from_slice(payload);
    c
}

/// A trace of one thread that runs the block `spec` 10 times, one chunk per
/// execution.
fn small_trace(dir: &Path, spec: &str) {
    let opts = WriterOptions {
        chunk_target: 1,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(dir, opts).unwrap();
    let b = w.block_spec(0x1000, spec).unwrap();
    let n = w.blocks().block(b).unwrap().operands().len() as u64;
    let addrs: Vec<u64> = (0..n).map(|i| 0x8000 + 8 * i).collect();
    let mut t = w.thread(1).unwrap();
    for _ in 0..10 {
        t.exec(b, &addrs).unwrap();
    }
    w.finish().unwrap();
}

/// Replaces the last chunk of `thread-1.tfc` with one holding `payload`.
fn replace_last_chunk(dir: &Path, payload: &[u8]) {
    let file = dir.join("thread-1.tfc");
    let mut chunks = tf_trace::ChunkReader::open(&file).unwrap();
    let mut last = (0, 0);
    while let Some(c) = chunks.next_chunk() {
        let c = c.unwrap();
        last = (c.offset, c.seq);
    }
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate(last.0 as usize);
    bytes.extend(chunk(last.1, payload));
    std::fs::write(&file, bytes).unwrap();
}

/// The whole `tf info` finishes in a few seconds, however the input asks
/// for more: a hang would fail the test here instead of stalling CI.
fn quick(args: &[&str], dir: &Path) -> (i32, String, String) {
    let t = Instant::now();
    let r = run(args, dir);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "tf {args:?} took {:?}",
        t.elapsed()
    );
    r
}

#[test]
fn truncated_trace_fails_analyze_with_damage_named() {
    let d = tempdir();
    let out = tempdir();
    trace_ok(d.path(), &workload("threads"), &["2"]);
    let (status, _, stderr) = run(&["analyze"], d.path());
    assert_eq!(status, 0, "{stderr}");
    let file = d.path().join("thread-1.tfc");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    // Every command that reads the trace's figures: the report and the
    // export of a damaged trace fail as the analysis does, each into a
    // directory of its own.
    let made = std::cell::Cell::new(0);
    let fresh = |name: &str| {
        made.set(made.get() + 1);
        out.path()
            .join(format!("{name}{}", made.get()))
            .display()
            .to_string()
    };
    let commands = |allow: &[&'static str]| -> Vec<Vec<String>> {
        // the option right after the command: the export's last option
        // takes the trace
        let with = |args: &[&str]| {
            let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            v.splice(1..1, allow.iter().map(|a| a.to_string()));
            v
        };
        vec![
            with(&["analyze"]),
            with(&["info"]),
            with(&["report", "--warp", "8", "-o", &fresh("report")]),
            with(&[
                "export",
                "--warp",
                "8",
                "-o",
                &fresh("export"),
                "--accelsim",
            ]),
        ]
    };
    let report_page = |args: &[String]| {
        let at = args.iter().position(|a| a == "-o").unwrap() + 1;
        std::path::PathBuf::from(&args[at]).join("index.html")
    };
    for (args, allowed_args) in commands(&[]).iter().zip(commands(&["--allow-damaged"])) {
        let cmd = args[0].as_str();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (status, _, stderr) = run(&args, d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: byte 32: chunk payload cut short",
                file.display()
            )),
            "{cmd}: {stderr}"
        );
        assert!(
            stderr.contains("instructions the manifest records (")
                && stderr.contains("the figures cover only what was read")
                && stderr.contains("exit status 3"),
            "{cmd}: {stderr}"
        );
        let allowed_args: Vec<&str> = allowed_args.iter().map(String::as_str).collect();
        let (status, _, allowed) = run(&allowed_args, d.path());
        assert_eq!(status, 0, "{cmd}: {allowed}");
        assert!(allowed.contains("chunk payload cut short"), "{allowed}");
        assert!(!allowed.contains("exit status 3"), "{allowed}");
        if cmd == "report" {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let page = std::fs::read_to_string(report_page(&args)).unwrap();
            let allowed_page = std::fs::read_to_string(report_page(
                &allowed_args
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>(),
            ))
            .unwrap();
            assert_eq!(
                page, allowed_page,
                "--allow-damaged changes only the status"
            );
            assert!(
                page.contains("<b>damaged trace</b> (the figures cover only what was read before the damage): ")
                    && page.contains("chunk payload cut short"),
                "the report's page names the damage"
            );
        }
    }
}

#[test]
fn runs_beyond_the_limits_are_damage_and_cost_nothing() {
    let d = tempdir();
    small_trace(d.path(), "1 1 jump");
    let (status, stdout, stderr) = run(&["info"], d.path());
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("20"), "{stdout}");
    // Block 0 twice (so that it is its own candidate 0), then a run of 2^63
    // executions (a 10-byte varint).
    let mut payload = vec![2 << 5, 2 << 5];
    let mut h = u64::MAX;
    while h >= 0x80 {
        payload.push(h as u8 | 0x80);
        h >>= 7;
    }
    payload.push(h as u8);
    replace_last_chunk(d.path(), &payload);
    for cmd in ["info", "analyze"] {
        let (status, _, stderr) = quick(&[cmd], d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(
            stderr.contains("chunk does not decode: payload byte 2: run of 9223372036854775808 executions, above the limit of 64"),
            "{cmd}: {stderr}"
        );
        // Nothing of the damaged chunk is used: 9 of the 10 chunks.
        assert!(
            stderr.contains("read 18 of the 20 instructions"),
            "{cmd}: {stderr}"
        );
    }
    // Runs of blocks with many operands end at 256 operands.
    let d = tempdir();
    small_trace(d.path(), &"1r8 ".repeat(200));
    replace_last_chunk(d.path(), &[2 << 5, 2 << 5, (2 << 1) | 1]);
    let (status, _, stderr) = quick(&["info"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(
        stderr.contains("payload byte 2: run goes on after 400 operands, above the limit of 256"),
        "{stderr}"
    );
}

#[test]
fn nothing_is_used_from_a_chunk_that_does_not_decode() {
    let d = tempdir();
    small_trace(d.path(), "1 1 jump");
    // Block 0 twice (4 instructions), then a record naming block 7, which
    // the table does not have ((7 + 2) << 5, a two-byte varint): the chunk's
    // checksum is right, its content not.
    replace_last_chunk(d.path(), &[2 << 5, 2 << 5, 0xa0, 0x02]);
    let expect = "payload byte 2: block 7 not in the block table (1 blocks)";
    for cmd in ["info", "analyze"] {
        let (status, stdout, stderr) = run(&[cmd], d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(stderr.contains(expect), "{cmd}: {stderr}");
        assert!(
            stderr.contains("read 18 of the 20 instructions"),
            "{cmd}: {stderr}"
        );
        if cmd == "analyze" {
            // The first pass used the damaged chunk's first records as they
            // decoded, and scanned again rather than count them (without
            // the index, which a slow run may have written by now).
            let (_, _, timed) = run(&[cmd, "--timings", "--index", "off"], d.path());
            assert!(
                timed.contains("scanning threads again (a chunk does not decode)"),
                "{timed}"
            );
            // W = 32, one unit: 18 thread instructions, 18 warp instructions.
            let row = stdout
                .lines()
                .find(|l| l.trim_start().starts_with("32 "))
                .unwrap();
            assert_eq!(row.split_whitespace().nth(3), Some("18"), "{stdout}");
        }
    }
}

#[test]
fn table_sizes_beyond_the_limit_are_refused() {
    let d = tempdir();
    small_trace(d.path(), "1");
    let file = d.path().join("thread-1.tfc");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[24] = 24; // addr_table_bits: 2^24 entries, above the limit
    let crc = crc32c(&bytes[..28]);
    bytes[28..32].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&file, bytes).unwrap();
    let (status, _, stderr) = run(&["analyze"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: bad file header: addr_table_bits 24 out of range 8..=16",
            file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn the_largest_tables_the_format_allows_decode() {
    let d = tempdir();
    let opts = WriterOptions {
        params: tf_trace::TableParams {
            addr_table_bits: tf_trace::limits::MAX_TABLE_BITS,
            succ_table_bits: tf_trace::limits::MAX_TABLE_BITS,
            ret_stack_depth: 255,
            run_prefix: true,
        },
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    let b = w.block_spec(0x1000, "1r8 2 jump").unwrap();
    let mut t = w.thread(1).unwrap();
    for i in 0..1000u64 {
        t.exec(b, &[0x8000 + 8 * i]).unwrap();
    }
    w.finish().unwrap();
    let (status, stdout, stderr) = run(&["analyze"], d.path());
    assert_eq!(status, 0, "{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("32 "))
        .unwrap();
    assert_eq!(row.split_whitespace().nth(3), Some("2000"), "{stdout}");
}

#[test]
fn fifos_and_devices_are_never_opened_as_trace_files() {
    let d = tempdir();
    small_trace(d.path(), "1");
    // A FIFO as a thread file: nothing blocks, it is named.
    let fifo = d.path().join("thread-2.tfc");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for cmd in ["info", "analyze"] {
        let (status, _, stderr) = quick(&[cmd], d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(
            stderr.contains(&format!("{}: not a regular file", fifo.display())),
            "{cmd}: {stderr}"
        );
    }
    std::fs::remove_file(&fifo).unwrap();
    // A FIFO as the manifest.
    let manifest = d.path().join("manifest");
    std::fs::remove_file(&manifest).unwrap();
    let c = std::ffi::CString::new(manifest.to_str().unwrap()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (status, _, stderr) = quick(&["info"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(
        stderr.contains(&format!("{}: not a regular file", manifest.display())),
        "{stderr}"
    );

    // A module that names a device: its symbols are not read.
    let d = tempdir();
    let mut w = TraceWriter::create(d.path()).unwrap();
    w.module(0x1000, 0x1000, "/dev/zero", b"").unwrap();
    let b = w.block_spec(0x1000, "1 2 jump").unwrap();
    w.thread(1).unwrap().seq(&[b, b, b]).unwrap();
    w.finish().unwrap();
    let (status, _, stderr) = quick(&["analyze"], d.path());
    assert_eq!(status, 0, "{stderr}");
}

#[test]
fn missing_pieces_fail_loudly() {
    // No thread files at all.
    let d = tempdir();
    let mut w = TraceWriter::create(d.path()).unwrap();
    w.block_spec(0x1000, "1 jump").unwrap();
    w.finish().unwrap();
    for cmd in ["info", "analyze"] {
        let (status, _, stderr) = run(&[cmd], d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: no thread files (thread-<tid>.tfc): nothing was recorded",
                d.path().display()
            )),
            "{cmd}: {stderr}"
        );
    }
    // A thread that the manifest lists, without its file.
    let d = tempdir();
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x1000, "1 1 jump").unwrap();
    w.thread(1).unwrap().seq(&[b, b]).unwrap();
    w.thread(2).unwrap().seq(&[b, b, b]).unwrap();
    w.finish().unwrap();
    std::fs::remove_file(d.path().join("thread-2.tfc")).unwrap();
    for cmd in ["info", "analyze"] {
        let (status, _, stderr) = run(&[cmd], d.path());
        assert_eq!(status, 3, "{cmd}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: missing: the manifest lists thread 2 with 6 instructions",
                d.path().join("thread-2.tfc").display()
            )),
            "{cmd}: {stderr}"
        );
        assert!(
            stderr.contains("read 4 of the 10 instructions"),
            "{cmd}: {stderr}"
        );
    }
    // A damaged manifest is damaged, not missing.
    let manifest = d.path().join("manifest");
    std::fs::write(&manifest, b"\x81\xa3pid\xa1x").unwrap();
    let (status, stdout, stderr) = run(&["info"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(stdout.contains("manifest  damaged"), "{stdout}");
    assert!(
        stderr.contains(&format!(
            "{}: damaged: manifest does not decode",
            manifest.display()
        )),
        "{stderr}"
    );
    // No manifest: how much was recorded is unknown.
    std::fs::remove_file(&manifest).unwrap();
    let (status, stdout, stderr) = run(&["analyze"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(stdout.contains("SIMT"), "{stdout}");
    assert!(
        stderr.contains("manifest: missing: how much was recorded is unknown"),
        "{stderr}"
    );
}

#[test]
fn an_unfinished_trace_is_incomplete() {
    let d = tempdir();
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x1000, "1 jump").unwrap();
    w.thread(1).unwrap().seq(&[b, b]).unwrap();
    w.flush().unwrap();
    drop(w); // a tracer that died: the first manifest says incomplete
    let (status, _, stderr) = run(&["analyze"], d.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(stderr.contains("the tracer did not finish"), "{stderr}");
    // The JSON and every row of the CSV say so too, for whoever reads
    // them without the exit status.
    let out = tempdir();
    let (json, csv) = (out.path().join("r.json"), out.path().join("r.csv"));
    let files = [
        "analyze",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ];
    let (status, _, _) = run(&files, d.path());
    assert_eq!(status, 3);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let unrecorded = report["unrecorded"].as_array().unwrap();
    assert_eq!(unrecorded.len(), 1);
    assert!(unrecorded[0]
        .as_str()
        .unwrap()
        .ends_with("manifest: the tracer did not finish (the run crashed or was cut short): the trace may end early"));
    let rows = common::csv_rows(&csv);
    assert!(!rows.is_empty() && rows.iter().all(|r| r["complete"] == "false"));
}
