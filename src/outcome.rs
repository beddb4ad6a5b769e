//! What `tf trace` says and how it exits once the program has ended: the
//! program's own status when the trace is complete, [`INCOMPLETE_TRACE`]
//! when it is not (a full disk, a tracer that died), with the reason and
//! how much was written; and no empty trace directory when nothing started.

use crate::fn_names::Resolved;
use crate::summary::{self, human_bytes};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use tf_analyzer::processes;
use tf_analyzer::symbols::demangle;
use tf_trace::Trace;

/// `tf trace`: the trace is incomplete (whatever the program's status,
/// which the message gives).
pub const INCOMPLETE_TRACE: i32 = 125;

/// Below this many free bytes, a device counts as full: the tracer writes
/// chunks of about 1 MiB.
const FULL_BELOW: u64 = 2 << 20;

/// The status `tf` exits with for a program that ended with `status`:
/// its exit code, or 128 + N when signal N killed it.
pub fn program_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Checks the trace in `dir` after the program ended with `status`,
/// prints what happened on stderr and returns tf's exit status. `created`:
/// tf made the directory for this run (it is removed if nothing was
/// recorded).
pub fn finish(dir: &Path, created: bool, status: ExitStatus, only: &[Resolved]) -> i32 {
    let code = program_code(status);
    // A manifest that the tracer could not finish writing.
    let _ = std::fs::remove_file(dir.join("manifest.tmp"));
    let shown = dir.display();
    let recorded = std::fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name == "blocks.tfc" || name.starts_with("thread-")
            })
        })
        .unwrap_or(false);
    if !recorded {
        let _ = std::fs::remove_file(dir.join("manifest"));
        let removed = created && std::fs::remove_dir(dir).is_ok();
        eprintln!(
            "tf: the program did not start under the tracer; nothing was recorded{}",
            if removed {
                format!(" ({shown} removed)")
            } else {
                String::new()
            }
        );
        return if code == 0 { INCOMPLETE_TRACE } else { code };
    }
    let trace = Trace::open(dir).ok();
    let manifest = trace.as_ref().and_then(|t| t.manifest());
    if !manifest.is_some_and(|m| m.complete) {
        let written = human_bytes(summary::dir_bytes(dir));
        match free_bytes(dir) {
            Some(free) if free < FULL_BELOW => eprintln!(
                "tf: no space left on the device of {shown} (ENOSPC): the trace is incomplete, {written} written; what was written can be read (tf info {shown})"
            ),
            _ => eprintln!(
                "tf: the tracer did not finish: the trace is incomplete, {written} written; what was written can be read (tf info {shown})"
            ),
        }
        return incomplete_trace(code);
    }
    if let Some(why) = trace.as_ref().and_then(processes::incomplete_reason) {
        eprintln!("{}", summary::line(dir));
        eprintln!("tf: {why}");
        return incomplete_trace(code);
    }
    for w in trace.iter().flat_map(processes::warnings) {
        eprintln!("tf: warning: {w}");
    }
    if let (Some(signal), Some(m)) = (status.signal(), manifest) {
        // The tracer cannot tell a signal sent from outside from a normal
        // end: record the one that killed the program.
        if m.exit_code.is_none() && m.exit_signal.is_none() {
            let mut m = m.clone();
            m.exit_signal = Some(i64::from(signal));
            if let Err(e) = rewrite_manifest(dir, &m.to_bytes()) {
                eprintln!("tf: {shown}/manifest: cannot record signal {signal}: {e}");
            }
        }
    }
    if let Some(t) = &trace {
        for f in only
            .iter()
            .filter(|f| !f.tracer_patterns().any(|p| ran(t, p)))
        {
            let f = &f.pattern;
            eprintln!("tf: warning: --only {f}: no function of that name ran, so nothing was recorded inside it");
        }
    }
    eprintln!("{}", summary::line(dir));
    // The programs that the run's execves started, each in a trace of its
    // own (--follow-exec): a line for each of the first few and for every
    // incomplete one, which makes the run's incomplete too.
    let followed = processes::followed_manifests(dir);
    let mut incomplete = 0;
    for (k, (t, m)) in followed.iter().enumerate() {
        let done = m.as_ref().is_some_and(|m| m.complete);
        if k < FOLLOWED_SHOWN || !done {
            eprintln!("{}", summary::line(t));
        }
        incomplete += usize::from(!done);
    }
    if followed.len() > FOLLOWED_SHOWN {
        eprintln!(
            "tf: {} traces of the programs the run executed in all, under {}/execs (tf info {} lists them)",
            followed.len(),
            dir.display(),
            dir.display()
        );
    }
    if incomplete > 0 {
        eprintln!("tf: {incomplete} trace(s) of the programs the run executed are incomplete; tf exits with {INCOMPLETE_TRACE}");
        return INCOMPLETE_TRACE;
    }
    code
}

/// Says that the program's status `code` gives way to the status of an
/// incomplete trace, and returns that.
fn incomplete_trace(code: i32) -> i32 {
    eprintln!("tf: the program's status was {code}; tf exits with {INCOMPLETE_TRACE}");
    INCOMPLETE_TRACE
}

/// Summary lines of followed traces printed before a count stands for the
/// rest (a build traced with --follow-exec runs hundreds of programs).
const FOLLOWED_SHOWN: usize = 10;

/// Whether the trace has blocks of a function that tracer pattern `f`
/// names (as the tracer matches it: the symbol, the symbol without its
/// `@VERSION`, or a C++ symbol's name without parameters).
fn ran(trace: &Trace, f: &str) -> bool {
    // code without a symbol, named by file and offset (`pigz+0x11250`)
    if tf_analyzer::symbols::split_in_module(f).is_some() {
        return !tf_analyzer::functions::entries_named(trace.blocks(), f).is_empty();
    }
    trace.blocks().functions().iter().any(|func| {
        let name = func.name_lossy();
        name == f
            || name.split('@').next() == Some(f)
            || demangle(&name).split('(').next() == Some(f)
    })
}

/// Free bytes for an unprivileged user on the device of `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid path and a zeroed statvfs for the call to fill.
    unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        Some(s.f_bavail as u64 * s.f_frsize as u64)
    }
}

/// Replaces the manifest atomically.
fn rewrite_manifest(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join("manifest.tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join("manifest")).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
