//! The tracer seam: which tracer records a program, and the command line
//! that runs the program under it. `record` knows nothing of Valgrind or Pin
//! beyond this module; each backend lives in its own module (`valgrind`,
//! `pin`) and prepares itself (installs or builds its tool) before the trace
//! directory is created, so that a missing tracer leaves nothing behind.

use crate::pin::Pin;
use crate::valgrind::Valgrind;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which tracer records the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The Valgrind tool embedded in tf (needs only `valgrind` installed).
    Valgrind,
    /// The Pin tool embedded in tf, built on first use with a Pin kit
    /// (`PIN_ROOT` or `--pin-root`).
    Pin,
}

impl Backend {
    /// Whether its tracer matches `--only` / `--exclude` names of code
    /// without a symbol, `FILE+0xOFFSET` (only the Valgrind tool does).
    pub fn names_code_by_offset(self) -> bool {
        self == Backend::Valgrind
    }
}

/// A tracer ready to run.
pub enum Tracer {
    /// The Valgrind tool.
    Valgrind(Valgrind),
    /// The Pin tool.
    Pin(Pin),
}

impl Tracer {
    /// Finds and prepares the backend's tracer (`pin_root`: the Pin kit,
    /// else `$PIN_ROOT`).
    pub fn prepare(backend: Backend, pin_root: Option<&Path>) -> Result<Tracer> {
        Ok(match backend {
            Backend::Valgrind => Tracer::Valgrind(Valgrind::prepare()?),
            Backend::Pin => Tracer::Pin(Pin::prepare(pin_root)?),
        })
    }

    /// The command that runs a program under the tracer, writing the trace
    /// into `dir`; the caller appends the program and its arguments.
    pub fn command(&self, dir: &Path, only: &[String], exclude: &[String]) -> Command {
        match self {
            Tracer::Valgrind(v) => v.command(dir, only, exclude),
            Tracer::Pin(p) => p.command(dir, only, exclude),
        }
    }

    /// The tracer's options that make it trace every program an `execve`
    /// of the run starts, each into a trace of its own under `DIR/execs`
    /// (`tf trace --follow-exec`; FORMAT.md §2). Only the Valgrind tool
    /// can.
    pub fn follow_exec_args(&self) -> Result<&'static [&'static str]> {
        match self {
            Tracer::Valgrind(_) => Ok(&["--trace-children=yes", "--tf-follow-exec=yes"]),
            Tracer::Pin(_) => anyhow::bail!(
                "--follow-exec: the Pin tool does not follow execve; trace with --backend valgrind"
            ),
        }
    }

    /// The program `command` starts (for error messages).
    pub fn launcher(&self) -> &PathBuf {
        match self {
            Tracer::Valgrind(v) => &v.launcher,
            Tracer::Pin(p) => &p.launcher,
        }
    }
}
