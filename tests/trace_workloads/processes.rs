//! A program's own processes, which the trace does not follow: the
//! children it starts are counted and named as untraced by every command,
//! and an `execve` that replaces it ends the trace, which every command
//! then calls incomplete, unless `--follow-exec` traced the new program
//! too (workloads/processes.c).

use super::common::*;
use std::path::Path;
use std::process::Output;
use tf_trace::Trace;

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into()
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into()
}

/// `tf info` and `tf analyze` of `dir`.
fn info_and_analyze(dir: &Path) -> (Output, Output) {
    let info = tf().arg("info").arg(dir).output().unwrap();
    let analyze = tf()
        .args(["analyze", "--warp", "8"])
        .arg(dir)
        .output()
        .unwrap();
    (info, analyze)
}

#[test]
fn children_are_counted_and_named_as_untraced() {
    let d = tempdir();
    let dir = d.path().join("t");
    // 3 children with fork and one with posix_spawn; the failed execve
    // before them leaves nothing behind.
    let out = trace_ok(&dir, &workload("processes"), &["3"]);
    let m = Trace::open(&dir).unwrap().manifest().unwrap().clone();
    assert_eq!(m.forked, 4);
    assert!(m.exec.is_empty(), "{:?}", m.exec);
    assert!(m.complete);
    assert_eq!(m.exit_code, Some(0));
    let warning = "warning: the program started 4 processes of its own (fork), which its \
                   trace does not follow: what they ran is in no figure here; to analyze one, \
                   trace its command directly\n";
    assert!(stderr_of(&out).contains(warning), "{}", stderr_of(&out));

    let (info, analyze) = info_and_analyze(&dir);
    assert_eq!(info.status.code(), Some(0), "{}", stderr_of(&info));
    assert!(stdout_of(&info).contains("\nforked    4 processes of its own, not traced\n"));
    assert_eq!(analyze.status.code(), Some(0), "{}", stderr_of(&analyze));
    assert!(stderr_of(&analyze).contains(warning));
}

#[test]
fn an_execve_ends_the_trace_and_every_command_says_so() {
    let d = tempdir();
    let dir = d.path().join("t");
    let threads = workload("threads");
    let out = trace(
        &dir,
        &workload("processes"),
        &["1", threads.to_str().unwrap(), "2", "a b"],
    );
    // The program's status is that of the program that replaced it.
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(125), "{err}");
    let cmd = format!("{} 2 'a b'", threads.display());
    let why = format!(
        "the program replaced itself with {cmd} (execve): the trace ends there, and what that \
         program ran is not in it; to analyze it, trace it directly (tf trace -- {cmd}) or \
         trace the run with --follow-exec"
    );
    assert!(err.contains(&format!("tf: {why}\n")), "{err}");
    assert!(
        err.contains("tf: the program's status was 0; tf exits with 125"),
        "{err}"
    );

    let m = Trace::open(&dir).unwrap().manifest().unwrap().clone();
    let exec: Vec<&[u8]> = m.exec.iter().map(|w| w.as_bytes()).collect();
    let expected: [&[u8]; 3] = [threads.to_str().unwrap().as_bytes(), b"2", b"a b"];
    assert_eq!(exec, expected);
    assert_eq!(m.forked, 2);
    assert!(m.complete, "everything before the execve is written");
    assert_eq!((m.exit_code, m.exit_signal), (None, None));

    // Only the first program's single thread is in the trace.
    assert_eq!(m.threads.len(), 1);
    let (info, analyze) = info_and_analyze(&dir);
    for out in [&info, &analyze] {
        assert_eq!(out.status.code(), Some(3), "{}", stderr_of(out));
        assert!(stderr_of(out).contains(&format!("tf: incomplete: {why}\n")));
    }
    let program = format!("\nprogram   replaced itself with {cmd} (execve): traced up to there\n");
    assert!(stdout_of(&info).contains(&program), "{}", stdout_of(&info));
    // The traced command, quoted alike by every command (pasted back into
    // a shell, it runs the same)
    let traced = format!("{} 1 {cmd}", workload("processes").display());
    assert!(stdout_of(&info).contains(&format!("\ncommand   {traced}\n")));
    assert!(stdout_of(&analyze).contains(&format!("\ncommand: {traced}\n")));
    let html = d.path().join("html");
    let report = tf()
        .args(["report", "--warp", "8", "-o"])
        .arg(&html)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(3), "{}", stderr_of(&report));
    let page = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(
        page.contains("replaced itself with"),
        "the report's run table says so"
    );
    let accepted = tf()
        .args(["analyze", "--allow-damaged", "--warp", "8"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(accepted.status.code(), Some(0), "{}", stderr_of(&accepted));
}

#[test]
fn follow_exec_traces_each_program_the_run_executes() {
    let d = tempdir();
    let dir = d.path().join("t");
    let threads = workload("threads");
    // 2 forks, a posix_spawn of /bin/true, then an execve of threads 2
    let out = trace_with(
        &dir,
        &["--follow-exec"],
        &workload("processes"),
        &["2", threads.to_str().unwrap(), "2", "a b"],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let root = Trace::open(&dir).unwrap();
    let m = root.manifest().unwrap();
    assert_eq!((m.forked, m.complete), (3, true));
    assert_eq!(m.exec.len(), 3);

    // Two programs were executed: /bin/true in the spawned child, and
    // threads in the traced process itself (which keeps its process id).
    let followed = tf_analyzer::processes::followed(&dir);
    assert_eq!(followed.len(), 2, "{followed:?}");
    let new = dir.join("execs").join(m.pid.to_string());
    assert!(followed.contains(&new), "{followed:?}");
    for t in &followed {
        let trace = Trace::open(t).unwrap();
        let tm = trace.manifest().unwrap();
        assert!(tm.complete && tm.exit_code == Some(0), "{}", t.display());
        assert!(err.contains(&format!("→ {} (", t.display())), "{err}");
        let words: Vec<&[u8]> = tm.command.iter().map(|w| w.as_bytes()).collect();
        if *t == new {
            // threads T: 1 + 2T threads (its header)
            assert_eq!(trace.threads().len(), 5);
            let expected: [&[u8]; 3] = [threads.to_str().unwrap().as_bytes(), b"2", b"a b"];
            assert_eq!(words, expected);
        } else {
            assert_eq!(words, [b"/bin/true".as_slice()]);
        }
    }

    // The first program's trace is complete: it says where the new
    // program's trace is, and every command reads it without failing.
    let cmd = format!("{} 2 'a b'", threads.display());
    let (info, analyze) = info_and_analyze(&dir);
    for out in [&info, &analyze] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(out));
    }
    let program = format!(
        "\nprogram   replaced itself with {cmd} (execve): traced up to there; the new program's \
         trace is {}\n",
        new.display()
    );
    let info_out = stdout_of(&info);
    assert!(info_out.contains(&program), "{info_out}");
    // threads 2's 5 threads, and as many instructions as its own manifest says
    let traced = Trace::open(&new)
        .unwrap()
        .manifest()
        .unwrap()
        .traced_instructions;
    let size = format!("{:.2} k instructions, 5 threads", traced as f64 / 1e3);
    assert!(
        (1e5..1e6).contains(&(traced as f64)),
        "{traced}: the size in k"
    );
    let line = format!("\nexecs     {}: {cmd} ({size})\n", new.display());
    assert!(info_out.contains(&line), "{info_out}");
    assert!(stderr_of(&analyze).contains(&format!(
        "warning: the program replaced itself with {cmd} (execve): this trace ends there, and \
         the new program's trace is {}",
        new.display()
    )));
    let (info, analyze) = info_and_analyze(&new);
    for out in [&info, &analyze] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr_of(out));
    }
}

#[test]
fn a_chain_of_execs_is_followed_link_by_link() {
    let d = tempdir();
    let dir = d.path().join("t");
    let threads = workload("threads");
    // sh, replaced by sh, replaced by threads: one process, three programs
    let script = format!("exec sh -c 'exec {} 1'", threads.display());
    let out = trace_with(
        &dir,
        &["--follow-exec"],
        Path::new("/bin/sh"),
        &["-c", &script],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let pid = Trace::open(&dir).unwrap().manifest().unwrap().pid;
    let execs = dir.join("execs").canonicalize().unwrap();
    let (second, third) = (execs.join(pid.to_string()), execs.join(format!("{pid}.2")));
    assert_eq!(
        tf_analyzer::processes::followed(&dir),
        [
            dir.join("execs").join(pid.to_string()),
            dir.join("execs").join(format!("{pid}.2"))
        ]
    );
    // Each link names the next, and none is incomplete.
    for (link, next) in [(&dir, &second), (&second, &third)] {
        let (info, analyze) = info_and_analyze(link);
        assert_eq!(info.status.code(), Some(0), "{}", stderr_of(&info));
        assert_eq!(analyze.status.code(), Some(0), "{}", stderr_of(&analyze));
        let named = format!("the new program's trace is {}", next.display());
        assert!(stdout_of(&info).contains(&named), "{}", stdout_of(&info));
    }
    // threads T: 1 + 2T threads
    assert_eq!(Trace::open(&third).unwrap().threads().len(), 3);
}

#[test]
fn many_followed_programs_are_summed_up() {
    let d = tempdir();
    let dir = d.path().join("t");
    let script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do /bin/true; done";
    let out = trace_with(
        &dir,
        &["--follow-exec"],
        Path::new("/bin/sh"),
        &["-c", script],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(tf_analyzer::processes::followed(&dir).len(), 12);
    // the first program's line, then the first ten followed, then the count
    let execs = format!("{}/execs/", dir.display());
    assert_eq!(
        err.lines()
            .filter(|l| l.contains(&execs) && l.starts_with("tf: traced"))
            .count(),
        10
    );
    let all = format!(
        "tf: 12 traces of the programs the run executed in all, under {}/execs (tf info {} lists them)\n",
        dir.display(),
        dir.display()
    );
    assert!(err.ends_with(&all), "{err}");
    let info = tf().arg("info").arg(&dir).output().unwrap();
    assert_eq!(stdout_of(&info).matches("\nexecs     ").count(), 12);
}
