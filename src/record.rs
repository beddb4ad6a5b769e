//! `tf trace`: run a program under the tracer, the way `perf record --` does.
//!
//! The program keeps its arguments, stdin, stdout and stderr; `tf` exits with
//! its status (128 + N when signal N killed it) and prints one summary line on
//! stderr.

use crate::summary;
use crate::tracer::{Backend, Tracer};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

/// What `tf trace` was asked to do.
pub struct TraceRequest {
    /// Which tracer records the program.
    pub backend: Backend,
    /// `--pin-root DIR` (else `$PIN_ROOT`), for the Pin backend.
    pub pin_root: Option<PathBuf>,
    /// `-o DIR`, if given.
    pub output: Option<PathBuf>,
    /// `--only FN`: record only while one of these is on the call stack.
    pub only: Vec<String>,
    /// `--exclude FN`: skip these functions and their callees.
    pub exclude: Vec<String>,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// Runs the traced program and returns the exit status `tf` should exit with.
pub fn run(request: &TraceRequest) -> Result<i32> {
    let program = request.command.first().context("no program to trace")?;
    let tracer = Tracer::prepare(request.backend, request.pin_root.as_deref())?;
    let dir = match &request.output {
        Some(dir) => prepare_given(dir)?,
        None => choose_new(program)?,
    };
    let dir =
        fs::canonicalize(&dir).with_context(|| format!("cannot resolve {}", dir.display()))?;

    let mut cmd = tracer.command(&dir, &request.only, &request.exclude);
    cmd.args(&request.command);

    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", tracer.launcher().display()))?;
    // Like a shell running a foreground job: Ctrl-C is for the program, and tf
    // must live on to report what was recorded. Set after the spawn, so that
    // the program does not inherit the ignored signals.
    ignore_interrupts();
    let status = child.wait().context("waiting for the traced program")?;
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    eprintln!("{}", summary::line(&dir));
    Ok(code)
}

fn ignore_interrupts() {
    // SAFETY: installing SIG_IGN for two signals has no memory-safety impact.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
}

/// `-o DIR`: created if missing; an existing directory must be empty, so that
/// an old trace is never mixed with a new one.
fn prepare_given(dir: &Path) -> Result<PathBuf> {
    match fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty: tf does not overwrite traces; remove it or choose another -o",
                    dir.display()
                );
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?
        }
        Err(e) => return Err(e).with_context(|| format!("cannot use {}", dir.display())),
    }
    Ok(dir.to_path_buf())
}

/// Without `-o`: `trace-<program>-<n>` in the current directory, with the first
/// `n` whose directory does not exist yet (created atomically, so two
/// concurrent runs never share one).
fn choose_new(program: &OsString) -> Result<PathBuf> {
    let name: String = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    for n in 1u32.. {
        let dir = PathBuf::from(format!("trace-{name}-{n}"));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
    }
    unreachable!("u32 directories exhausted")
}
