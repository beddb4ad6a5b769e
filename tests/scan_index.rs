//! The first pass kept in a trace's index (`TRACE/index/`): later analyses
//! of the same trace with the same `--unit` read it instead of scanning,
//! with exactly the same figures, and never when the trace changed.

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Sets every trace file's modification time to `when`.
fn stamp(trace: &Path, when: SystemTime) {
    for e in std::fs::read_dir(trace).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(when).unwrap();
        }
    }
}

/// A minute back, as for a trace recorded a while ago (a trace changed in
/// the last seconds is not indexed).
fn settle(trace: &Path) {
    stamp(trace, SystemTime::now() - Duration::from_secs(60));
}

/// `tf analyze TRACE ARGS --timings --json FILE`: exit status, stderr, JSON.
fn analyze(trace: &Path, args: &[&str]) -> (i32, String, serde_json::Value) {
    let json = trace.with_extension("index.json");
    let _ = std::fs::remove_file(&json);
    let out = tf()
        .arg("analyze")
        .arg(trace)
        .args(args)
        .args(["--timings", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let value = std::fs::read(&json)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or_default();
    (out.status.code().unwrap_or(-1), stderr, value)
}

fn index_files(trace: &Path) -> usize {
    std::fs::read_dir(trace.join("index")).map_or(0, |d| d.count())
}

#[test]
fn a_later_analysis_reads_the_first_pass_and_gives_the_same_figures() {
    let dir = tempdir();
    // Worksharing loops (loop chunks and inline static schedules, cut into
    // iterations) and calls of a function holding locks.
    let omp = dir.path().join("omp");
    trace_ok(&omp, &workload("omp_schedules"), &["256", "all"]);
    let locks = dir.path().join("locks");
    trace_ok(&locks, &workload("deep_unlock"), &["8", "5"]);
    // Long units side by side in warps, all in one thread: their places
    // are kept in the index too.
    let long = dir.path().join("long");
    trace_ok(&long, &workload("array_walk"), &["20000", "6"]);
    let cases: [(&Path, &[&str]); 4] = [
        (&omp, &["--warp", "8,32"]),
        (&omp, &["--warp", "32", "--unit", "thread"]),
        (&locks, &["--warp", "4", "--unit", "call:worker"]),
        (&long, &["--warp", "4,8", "--unit", "call:walk"]),
    ];
    settle(&omp);
    settle(&locks);
    settle(&long);
    for (trace, args) in cases {
        let (code, first, written) = analyze(trace, args);
        assert_eq!(code, 0, "{first}");
        assert!(first.contains("writing the first pass to"), "{first}");
        assert!(first.contains("scanning threads"), "{first}");
        if trace == long {
            assert!(first.contains("placing long units"), "{first}");
            // Each lane reads its own slice from where its unit starts.
            let walk_loads = |w: usize| {
                let result = &written["results"][w];
                let functions = result["functions"].as_array().unwrap();
                let walk = functions.iter().find(|f| f["name"] == "walk").unwrap();
                walk["memory"]["heap"]["loads"]["sectors_per_request"].as_f64()
            };
            assert_eq!((walk_loads(0), walk_loads(1)), (Some(3.0), Some(6.0)));
        }
        let (code, second, read) = analyze(trace, args);
        assert_eq!(code, 0, "{second}");
        assert!(second.contains("first pass read from"), "{second}");
        assert!(!second.contains("scanning threads"), "{second}");
        assert_eq!(read, written, "{args:?}");
        let off: Vec<&str> = args.iter().copied().chain(["--index", "off"]).collect();
        let (code, third, scanned) = analyze(trace, &off);
        assert_eq!(code, 0, "{third}");
        assert!(third.contains("scanning threads"), "{third}");
        assert!(!third.contains("first pass"), "{third}");
        assert_eq!(scanned, written, "{args:?}");
    }
    // One index file per --unit.
    assert_eq!(index_files(&omp), 2);
    assert_eq!(index_files(&locks), 1);
    assert_eq!(index_files(&long), 1);
}

#[test]
fn a_changed_or_fresh_trace_is_scanned_again() {
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("deep_unlock"), &["8", "5"]);
    let args = ["--warp", "4", "--unit", "call:worker"];

    // Just recorded (a minute ahead, so that it stays so however slow the
    // machine): not indexed.
    stamp(&t, SystemTime::now() + Duration::from_secs(60));
    let (code, fresh, whole) = analyze(&t, &args);
    assert_eq!(code, 0, "{fresh}");
    assert!(
        fresh.contains("index not written: ") && fresh.contains("changed less than 2 s before"),
        "{fresh}"
    );
    assert_eq!(index_files(&t), 0);

    settle(&t);
    let (_, first, _) = analyze(&t, &args);
    assert!(first.contains("writing the first pass to"), "{first}");

    // A damaged index is said so, and the pass runs again, with the same
    // figures; the index is written anew.
    let index = std::fs::read_dir(t.join("index"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&index).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&index, &bytes).unwrap();
    let (code, damaged, again) = analyze(&t, &args);
    assert_eq!(code, 0, "{damaged}");
    assert!(
        damaged.contains("index not used: ") && damaged.contains("checksum mismatch"),
        "{damaged}"
    );
    assert!(damaged.contains("scanning threads"), "{damaged}");
    assert_eq!(again, whole);
    assert!(analyze(&t, &args).1.contains("first pass read from"));

    // A thread file cut short since, even with its old modification time:
    // the first pass runs again and finds the damage, as without an index.
    let biggest = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("thread-")
        })
        .max_by_key(|p| p.metadata().unwrap().len())
        .unwrap();
    let len = biggest.metadata().unwrap().len();
    let f = std::fs::File::options().write(true).open(&biggest).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    settle(&t);
    let (code, cut, _) = analyze(&t, &args);
    assert!(!cut.contains("first pass read from"), "{cut}");
    assert!(cut.contains("scanning threads"), "{cut}");
    let (code_off, cut_off, _) = analyze(&t, &[&args[..], &["--index", "off"]].concat());
    assert_ne!(code, 0, "{cut}");
    assert_eq!(code, code_off, "{cut}\n{cut_off}");
}
