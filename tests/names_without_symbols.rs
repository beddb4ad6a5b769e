//! The names tf prints for code without a symbol, given back: a stripped
//! program (as Debian ships them) has its functions named
//! `module+0xoffset`, and `--unit call:NAME` (tf analyze) and `--only NAME`
//! / `--exclude NAME` (tf trace, Valgrind tool) take them, giving what the
//! symbol's name gives on the program before it was stripped. (`0xaddress`,
//! for code outside every module: tests/jit_code.rs; a Go function's name:
//! tests/go_program.rs.)

mod common;

use common::*;
use object::{Object, ObjectSymbol};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Workload `name` and a stripped copy of it in `dir`, and the name tf
/// gives `function` in the copy.
fn stripped(dir: &Path, name: &str, function: &str) -> (PathBuf, PathBuf, String) {
    let program = workload(name);
    let copy = format!("{name}_stripped");
    let stripped = dir.join(&copy);
    let ok = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&program)
        .status()
        .unwrap();
    assert!(ok.success());
    // a position-independent program: its file addresses are offsets from
    // where it is mapped, so threads' helper() is named
    // threads_stripped+0xADDRESS
    let data = std::fs::read(&program).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let symbol = file.symbols().find(|s| s.name() == Ok(function)).unwrap();
    let printed = format!("{copy}+{:#x}", symbol.address());
    (program, stripped, printed)
}

#[test]
fn a_stripped_start_routine_that_never_ran_is_named_as_tf_info_names_it() {
    // never_ran 3's threads start in idle(), which is not traced
    // (--exclude): no code of it is in the trace, whether or not a thread
    // ran before the process ended; only the manifest names the routine.
    let dir = tempdir();
    let (_, program, idle) = stripped(dir.path(), "never_ran", "idle");
    let trace = dir.path().join("trace");
    let out = trace_with(&trace, &["--exclude", &idle], &program, &["3"]);
    assert!(out.status.success(), "{out:?}");
    let out = run_ok(tf().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&out.stdout);
    let row = info_thread_row(&info, 2);
    assert_eq!(row[1], "1", "{info}");
    // (a column of 24 characters: a longer name ends in "…")
    let shown = row[2].trim_end_matches('…');
    assert!(
        idle.starts_with(shown) && shown.len() >= 20,
        "{idle}: {info}"
    );
    let report = analyze_json(&trace, &[]);
    let threads = report["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 4);
    for t in &threads[1..] {
        assert_eq!(t["start_routine"], idle.as_str(), "{t}");
    }
}

/// Units, thread and warp instructions of a result.
fn figures(res: &Value) -> (u64, u64, u64) {
    let n = |k: &str| res[k].as_u64().unwrap();
    (n("units"), n("thread_instructions"), n("warp_instructions"))
}

#[test]
fn a_stripped_program_s_function_is_cut_by_the_name_tf_prints() {
    let dir = tempdir();
    let (program, stripped, name) = stripped(dir.path(), "threads", "helper");
    let (plain, bare) = (dir.path().join("plain"), dir.path().join("bare"));
    trace_ok(&plain, &program, &["4"]);
    trace_ok(&bare, &stripped, &["4"]);
    let by_symbol = analyze_json(&plain, &["--warp", "4,8", "--unit", "call:helper"]);
    let by_name = analyze_json(&bare, &["--warp", "4,8", "--unit", &format!("call:{name}")]);
    assert_eq!(by_name["unit"], format!("call:{name}"));
    for w in [4, 8] {
        let (s, n) = (width(&by_symbol, w), width(&by_name, w));
        assert_eq!(figures(s).0, 4, "W={w}: one unit per helper() call");
        assert_eq!(figures(s), figures(n), "W={w}");
        let helper = function(n, &name);
        assert_eq!(
            helper["thread_instructions"],
            function(s, "helper")["thread_instructions"]
        );
    }
    // a name no code has is still refused, naming it
    let out = tf()
        .args([
            "analyze",
            bare.to_str().unwrap(),
            "--unit",
            "call:threads_stripped+0x7",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no function named threads_stripped+0x7"),
        "{err}"
    );
}

/// `tf trace OPTIONS -o DIR -- PROGRAM 4`.
fn trace_threads(dir: &Path, options: &[&str], program: &Path) -> Output {
    tf().arg("trace")
        .args(options)
        .arg("-o")
        .arg(dir)
        .arg("--")
        .arg(program)
        .arg("4")
        .output()
        .unwrap()
}

/// Traced instructions and the skipped ones (outside --only, excluded) of
/// a trace.
fn recorded(trace: &Path) -> (u64, u64, u64) {
    let r = analyze_json(trace, &["--unit", "thread", "--warp", "8"]);
    let skipped = |k: &str| r["skipped"][k].as_u64().unwrap();
    let traced = width(&r, 8)["recorded_thread_instructions"]
        .as_u64()
        .unwrap();
    (traced, skipped("outside_only"), skipped("excluded"))
}

#[test]
fn only_and_exclude_take_a_stripped_function_s_printed_name() {
    let dir = tempdir();
    let (program, stripped, name) = stripped(dir.path(), "threads", "helper");
    let t = |k: &str| dir.path().join(k);
    for option in ["--only", "--exclude"] {
        let by_symbol = trace_threads(&t("symbol"), &[option, "helper"], &program);
        let by_name = trace_threads(&t("name"), &[option, &name], &stripped);
        let err = String::from_utf8_lossy(&by_name.stderr);
        assert!(
            by_symbol.status.success() && by_name.status.success(),
            "{err}"
        );
        assert!(!err.contains("warning"), "{err}");
        let (s, n) = (recorded(&t("symbol")), recorded(&t("name")));
        // helper()'s 4 calls: the same instructions recorded (--only) or
        // excluded (--exclude) whichever name says so
        match option {
            "--only" => assert_eq!((n.0, n.2), (s.0, 0), "{option}"),
            _ => assert_eq!((n.2, n.1), (s.2, 0), "{option}"),
        }
        assert!(
            s.0 > 0 && (option == "--only" || s.2 > 4000),
            "{option}: {s:?}"
        );
        std::fs::remove_dir_all(t("symbol")).unwrap();
        std::fs::remove_dir_all(t("name")).unwrap();
    }
    // an offset outside the program's code is refused before it runs
    let out = trace_threads(
        &t("far"),
        &["--only", "threads_stripped+0x99999"],
        &stripped,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "tf: --only threads_stripped+0x99999: threads_stripped+0x99999 is not in \
         threads_stripped's code"
    );
    // one inside its code where no code ran from: nothing recorded, and said
    let helper = u64::from_str_radix(name.rsplit_once("+0x").unwrap().1, 16).unwrap();
    let inside = format!("threads_stripped+{:#x}", helper + 1);
    let out = trace_threads(&t("none"), &["--only", &inside], &stripped);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no function of that name ran, so nothing was recorded inside it"),
        "{err}"
    );
    // the Pin tool does not match such names: refused before it is looked for
    let out = trace_threads(&t("pin"), &["--backend", "pin", "--only", &name], &stripped);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("the Pin tool takes names of functions with symbols only"));
}
