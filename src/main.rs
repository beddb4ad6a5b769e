//! `tf`: predicts how a multi-threaded x86-64 program would run on SIMT hardware.
//!
//! A thin layer of argument parsing and printing over the `tf-trace` and
//! `tf-analyzer` libraries; see DESIGN.md for the data flow.

mod info;
mod record;
mod summary;
mod valgrind;

use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tf",
    version,
    about = "Predict how a multi-threaded program would run on SIMT hardware"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program and record what each of its threads executes.
    ///
    /// The program keeps its arguments, stdin, stdout and stderr; tf exits
    /// with its exit status (128+N when signal N killed it).
    Trace {
        /// Tracer backend.
        #[arg(long, value_enum, default_value_t = Backend::Valgrind)]
        backend: Backend,
        /// Trace directory [default: a new trace-<program>-<n> in the current directory].
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<PathBuf>,
        /// Record only while FN is on the thread's call stack (repeatable).
        #[arg(long, value_name = "FN")]
        only: Vec<String>,
        /// Skip FN and everything it calls, counting the skipped instructions (repeatable).
        #[arg(long, value_name = "FN")]
        exclude: Vec<String>,
        /// The program to trace and its arguments.
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "PROGRAM [ARGS]..."
        )]
        command: Vec<OsString>,
    },
    /// Describe a trace: threads, instructions, blocks, bytes, modules, top functions.
    Info {
        /// Trace directory.
        trace: PathBuf,
        /// How many functions to list.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    /// The Valgrind tool embedded in tf (needs only `valgrind` installed).
    Valgrind,
    /// An Intel Pin tool (not available yet).
    Pin,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Trace {
            backend,
            output,
            only,
            exclude,
            command,
        } => match backend {
            Backend::Pin => Err(anyhow::anyhow!(
                "the Pin backend is not available yet: use --backend valgrind"
            )),
            Backend::Valgrind => record::run(&record::TraceRequest {
                output,
                only,
                exclude,
                command,
            }),
        },
        Command::Info { trace, top } => info::run(&trace, top),
    };
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("tf: {e:#}");
            ExitCode::FAILURE
        }
    }
}
