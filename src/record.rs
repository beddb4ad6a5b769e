//! `tf trace`: run a program under the tracer, the way `perf record --` does.
//!
//! The program keeps its arguments, stdin, stdout and stderr; `tf` exits with
//! its status (128 + N when signal N killed it) and prints one summary line on
//! stderr. Signals sent to `tf` go to the program ([`forward`]); a trace that
//! ends incomplete makes `tf` exit with its own status ([`outcome`]).

use crate::tracer::{Backend, Tracer};
use crate::{fn_names, forward, loaded, outcome};
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What `tf trace` was asked to do.
pub struct TraceRequest {
    /// Which tracer records the program.
    pub backend: Backend,
    /// `--pin-root DIR` (else `$PIN_ROOT`), for the Pin backend.
    pub pin_root: Option<PathBuf>,
    /// `-o DIR`, if given.
    pub output: Option<PathBuf>,
    /// `--only FN`: record only while one of these is on the call stack
    /// (names as [`fn_names`] resolves them).
    pub only: Vec<String>,
    /// `--exclude FN`: skip these functions and their callees.
    pub exclude: Vec<String>,
    /// `--follow-exec`: trace every program an `execve` of the run starts
    /// too, each into a trace of its own under `DIR/execs`.
    pub follow_exec: bool,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// Runs the traced program and returns the exit status `tf` should exit
/// with (see [`outcome::finish`]).
pub fn run(request: &TraceRequest) -> Result<i32> {
    let program = request.command.first().context("no program to trace")?;
    check_program(program)?;
    let names = fn_names::resolve(program, &request.only, &request.exclude)?;
    let by_offset = (names.only.iter().chain(&names.exclude))
        .find(|r| tf_analyzer::symbols::split_in_module(&r.pattern).is_some());
    if let Some(r) = by_offset.filter(|_| !request.backend.names_code_by_offset()) {
        anyhow::bail!(
            "{}: the Pin tool takes names of functions with symbols only; trace with --backend valgrind",
            r.pattern
        );
    }
    let tracer = Tracer::prepare(request.backend, request.pin_root.as_deref())?;
    let follow: &[&str] = if request.follow_exec {
        tracer.follow_exec_args()?
    } else {
        &[]
    };
    let (dir, created) = match &request.output {
        Some(dir) => prepare_given(dir)?,
        None => (choose_new(program)?, true),
    };
    let dir =
        fs::canonicalize(&dir).with_context(|| format!("cannot resolve {}", dir.display()))?;

    let mut cmd = tracer.command(
        &dir,
        &fn_names::tracer_patterns(&names.only),
        &fn_names::tracer_patterns(&names.exclude),
    );
    cmd.args(follow).args(&request.command);

    let mut child = match forward::spawn(&mut cmd) {
        Ok(c) => c,
        Err(e) => {
            if created {
                let _ = fs::remove_dir(&dir);
            }
            return Err(e).with_context(|| format!("cannot start {}", tracer.launcher().display()));
        }
    };
    let status = child.wait().context("waiting for the traced program")?;
    Ok(outcome::finish(&dir, created, status, &names.only))
}

/// Refuses, before anything starts, a program that Valgrind's amd64 tool
/// cannot run: an ELF file that is not x86-64. Other files (scripts,
/// programs not found) are left to the system to judge.
fn check_program(program: &OsString) -> Result<()> {
    let Some(found) = loaded::locate(program) else {
        return Ok(());
    };
    let mut head = [0u8; 20];
    let n = fs::File::open(&found)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    if n < 20 || head[..4] != *b"\x7fELF" {
        return Ok(());
    }
    let class = head[4];
    let machine = u16::from_le_bytes([head[18], head[19]]);
    if class != 2 || machine != 62 {
        let what = match (class, machine) {
            (1, 3) => "a 32-bit x86 program".to_string(),
            (1, _) => "a 32-bit program".to_string(),
            (_, m) => format!("a program for another machine (ELF machine {m})"),
        };
        bail!(
            "{}: only x86-64 programs can be traced, and this is {what}",
            found.display()
        );
    }
    Ok(())
}

/// `-o DIR`: created if missing (then true); an existing directory must be
/// empty, so that an old trace is never mixed with a new one.
fn prepare_given(dir: &Path) -> Result<(PathBuf, bool)> {
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
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            return Ok((dir.to_path_buf(), true));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot use {}", dir.display())),
    }
    Ok((dir.to_path_buf(), false))
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
