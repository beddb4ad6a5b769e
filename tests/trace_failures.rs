//! `tf trace` fails honestly: signals sent to it reach the program and the
//! trace is finished; a full disk, a program that does not start, a 32-bit
//! program and an `--only` function that never runs are all named, with
//! the exit statuses of docs/failures.md.

mod common;

use common::{tempdir, tf, workload};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into()
}

/// `tf info DIR`'s line about how the program ended.
fn program_line(dir: &Path) -> String {
    let out = tf().arg("info").arg(dir).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("program"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn signals_sent_to_tf_reach_the_program_and_the_trace_is_finished() {
    for (signal, name) in [(libc::SIGTERM, 15), (libc::SIGINT, 2)] {
        let d = tempdir();
        let dir = d.path().join("t");
        let mut cmd = tf();
        cmd.arg("trace")
            .arg("-o")
            .arg(&dir)
            .args(["--", "sleep", "60"])
            .stderr(Stdio::piped());
        // The program must not ignore the signal: a suite started in the
        // background by a shell inherits SIGINT ignored, and a program that
        // ignores a signal rightly goes on ignoring it when tf passes it on.
        // SAFETY: between fork and exec only signal(), async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                libc::signal(signal, libc::SIG_DFL);
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        // Wait until the tracer runs (it writes a first manifest at start).
        let t = Instant::now();
        while !dir.join("manifest").exists() {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "the tracer did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = child.wait_with_output().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(50),
            "sleep 60 was not stopped"
        );
        assert_eq!(out.status.code(), Some(128 + name), "{}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains("tf: traced 1 thread"),
            "{}",
            stderr_of(&out)
        );
        assert_eq!(
            program_line(&dir),
            format!("program   killed by signal {name}")
        );
    }
}

#[test]
fn a_full_disk_makes_an_incomplete_trace_and_says_so() {
    let d = tempdir();
    let mnt = d.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=100k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: this machine does not let the test mount a small tmpfs");
        return;
    }
    let dir = mnt.join("t");
    let out = tf()
        .arg("trace")
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(workload("threads"))
        .arg("2")
        .output()
        .unwrap();
    let err = stderr_of(&out);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let info = tf().arg("info").arg(&dir).output().unwrap();
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains(&format!(
            "tf: no space left on the device of {} (ENOSPC): the trace is incomplete, ",
            dir.display()
        )) && err.contains(" written; what was written can be read"),
        "{err}"
    );
    assert!(
        err.contains("the program's status was 0; tf exits with 125"),
        "{err}"
    );
    assert!(!files.iter().any(|f| f == "manifest.tmp"), "{files:?}");
    // What was written reads up to the damage.
    assert_eq!(info.status.code(), Some(3));
    assert!(
        stderr_of(&info).contains("truncated file") || stderr_of(&info).contains("bad file header")
    );
}

#[test]
fn a_program_that_does_not_start_leaves_no_trace_directory() {
    let d = tempdir();
    let dir = d.path().join("t");
    let out = tf()
        .arg("trace")
        .arg("-o")
        .arg(&dir)
        .args(["--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(
        stderr_of(&out).contains(&format!(
            "tf: the program did not start under the tracer; nothing was recorded ({} removed)",
            dir.display()
        )),
        "{}",
        stderr_of(&out)
    );
    assert!(!dir.exists());
}

#[test]
fn only_x86_64_programs_are_traced() {
    let d = tempdir();
    // The 20 first bytes of a 32-bit x86 executable: class 1, machine 3.
    let elf = d.path().join("prog32");
    let mut head = b"\x7fELF\x01\x01\x01".to_vec();
    head.resize(16, 0);
    head.extend([2, 0, 3, 0]);
    std::fs::write(&elf, head).unwrap();
    let out = tf()
        .arg("trace")
        .arg("-o")
        .arg(d.path().join("t"))
        .arg("--")
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out).trim(),
        format!(
            "tf: {}: only x86-64 programs can be traced, and this is a 32-bit x86 program",
            elf.display()
        )
    );
    assert!(!d.path().join("t").exists());
}

#[test]
fn an_only_function_that_never_runs_is_named() {
    // qsort is a function of the C library that the program never calls.
    let d = tempdir();
    let out = tf()
        .arg("trace")
        .args(["--only", "qsort", "--only", "worker", "-o"])
        .arg(d.path().join("t"))
        .arg("--")
        .arg(workload("threads"))
        .arg("2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("tf: warning: --only qsort: no function of that name ran, so nothing was recorded inside it"),
        "{err}"
    );
    assert!(!err.contains("--only worker"), "{err}");
}
