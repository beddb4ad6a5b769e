//! The command line fails early and clearly: output files checked before
//! the work and written each on its own, OS errors printed once, warp
//! widths out of range named.

mod common;

use common::{tempdir, tf};
use tf_trace::TraceWriter;

fn small_trace(dir: &std::path::Path) {
    let mut w = TraceWriter::create(dir).unwrap();
    let b = w.block_spec(0x1000, "1 2 jump").unwrap();
    w.thread(1).unwrap().seq(&[b, b, b]).unwrap();
    w.finish().unwrap();
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into()
}

#[test]
fn outputs_are_checked_before_the_work_and_written_each_on_its_own() {
    let d = tempdir();
    small_trace(d.path());
    let csv = d.path().join("out.csv");
    // A --json in a directory that does not exist: refused before the analysis.
    let out = tf()
        .arg("analyze")
        .arg(d.path())
        .args(["--json", "/nonexistent-dir/x.json", "--csv"])
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out).trim(),
        "tf: --json /nonexistent-dir/x.json: /nonexistent-dir is not a directory"
    );
    assert!(out.stdout.is_empty(), "no analysis was printed");
    assert!(!csv.exists());
    // A --json that fails while being written (a full device) does not stop
    // the --csv.
    let out = tf()
        .arg("analyze")
        .arg(d.path())
        .args(["--json", "/dev/full", "--csv"])
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out)
            .contains("tf: --json /dev/full: cannot write: No space left on device (os error 28)"),
        "{}",
        stderr_of(&out)
    );
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 1);
    // A directory is not a file.
    let out = tf()
        .arg("analyze")
        .arg(d.path())
        .arg("--csv")
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out).trim(),
        format!("tf: --csv {}: is a directory", d.path().display())
    );
}

#[test]
fn os_errors_are_printed_once() {
    let out = tf().args(["info", "/nonexistent-trace"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert_eq!(
        err.trim(),
        "tf: cannot read the trace /nonexistent-trace: /nonexistent-trace: No such file or directory (os error 2)"
    );
}

#[test]
fn warp_widths_out_of_range_are_named() {
    let d = tempdir();
    small_trace(d.path());
    for w in ["-1", "0", "65", "8,x"] {
        let out = tf()
            .arg("analyze")
            .arg(d.path())
            .args(["--warp", w])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{w}");
        let err = stderr_of(&out);
        assert!(
            err.contains("for '--warp <W>': warp widths are whole numbers from 1 to 64"),
            "{w}: {err}"
        );
        assert!(!err.contains("-- -1"), "{err}");
    }
}
