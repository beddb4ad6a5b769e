//! `tf trace` and `tf info` as commands: the program keeps its streams and
//! exit status, a new trace directory never overwrites an old one, damage is
//! named, and a missing Valgrind is said in one line.

use super::*;

#[test]
fn the_program_keeps_stdin_stdout_and_exit_status() {
    use std::io::Write;
    let dir = tempdir();
    let mut child = tf()
        .arg("trace")
        .arg("-o")
        .arg(dir.path())
        .args(["--", "sh", "-c", "read x; echo \"got $x\"; exit 7"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got hello\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one summary line: {stderr}");
    assert!(stderr.starts_with("tf: traced 1 thread,"), "{stderr}");
}

#[test]
fn without_o_a_new_directory_is_chosen_and_old_traces_are_kept() {
    let cwd = tempdir();
    for _ in 0..2 {
        let out = tf()
            .current_dir(cwd.path())
            .args(["trace", "--", "true"])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    for n in 1..=2 {
        let d = cwd.path().join(format!("trace-true-{n}"));
        assert!(
            Trace::open(&d).unwrap().manifest().unwrap().complete,
            "{}",
            d.display()
        );
    }
    // -o into a directory holding a trace is refused and the trace is kept.
    let first = cwd.path().join("trace-true-1");
    let before = std::fs::read(first.join("manifest")).unwrap();
    let out = tf()
        .arg("trace")
        .arg("-o")
        .arg(&first)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not empty") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(std::fs::read(first.join("manifest")).unwrap(), before);
}

/// Runs `tf info` and returns (status, stdout, stderr).
fn info(dir: &Path) -> (i32, String, String) {
    let out = tf().arg("info").arg(dir).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn info_reads_up_to_damage_and_names_it() {
    let dir = tempdir();
    trace_ok(dir.path(), &workload("threads"), &["2"]);
    let (status, stdout, stderr) = info(dir.path());
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stdout.contains("worker") && stdout.contains("helper"),
        "{stdout}"
    );

    // A reader that goes away early (`tf info TRACE | head -1`) ends tf
    // quietly with SIGPIPE, without a panic.
    let mut child = tf()
        .arg("info")
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.code().is_none_or(|c| c == 0), "{:?}", out.status);

    // Cut thread 1's stream in the middle of its first chunk: its events are
    // gone, the other threads are still described, and the damage is named.
    let file = dir.path().join("thread-1.tfc");
    let bytes = std::fs::read(&file).unwrap();
    for cut in [bytes.len() / 2, 40, bytes.len() - 1] {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let (status, stdout, stderr) = info(dir.path());
        assert_eq!(status, 3, "{stderr}");
        assert!(
            stderr.contains("thread-1.tfc: byte 32:"),
            "cut at {cut}: {stderr}"
        );
        assert!(stdout.contains("helper"), "{stdout}");
    }
    // A flipped byte is caught by the checksum.
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    std::fs::write(&file, &flipped).unwrap();
    let (status, _, stderr) = info(dir.path());
    assert_eq!(status, 3, "{stderr}");
    assert!(
        stderr.contains("thread-1.tfc: byte 32:") && stderr.contains("checksum"),
        "{stderr}"
    );
}

#[test]
fn missing_valgrind_is_named_in_one_line() {
    let empty = tempdir();
    let out = tf()
        .env("PATH", empty.path())
        .args(["trace", "-o"])
        .arg(empty.path().join("t"))
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("valgrind is not installed") && err.contains("apt-get install"),
        "{err}"
    );
}
