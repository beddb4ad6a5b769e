//! `tf`: predicts how a multi-threaded x86-64 program would run on SIMT hardware.
//!
//! A thin layer of argument parsing and printing over the `tf-trace` and
//! `tf-analyzer` libraries; see DESIGN.md for the data flow.

mod analyze;
mod info;
mod pin;
mod record;
mod summary;
mod tracer;
mod valgrind;

use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use tracer::Backend;

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
        /// The Pin kit for --backend pin [default: $PIN_ROOT].
        #[arg(long, value_name = "DIR")]
        pin_root: Option<PathBuf>,
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
    /// Replay a trace as warps: SIMT efficiency, memory coalescing, locks, per function.
    Analyze {
        /// Trace directory.
        trace: PathBuf,
        #[command(flatten)]
        options: AnalyzeArgs,
        /// Also write the results as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write the results as CSV (one row per warp width and function).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// How many functions to list per warp width.
        #[arg(long, default_value_t = 25)]
        top: usize,
        /// Print the wall time of each stage of the analysis on stderr.
        #[arg(long)]
        timings: bool,
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

/// The options of the analysis (shared by `analyze` and `report`).
#[derive(clap::Args)]
struct AnalyzeArgs {
    /// Warp widths, 1..=64: one (--warp 32) or several (--warp 8,16,32).
    #[arg(
        long = "warp",
        value_name = "W",
        value_delimiter = ',',
        default_value = "32"
    )]
    widths: Vec<usize>,
    /// What a SIMT thread is: auto, thread, call:FN (each call of FN) or
    /// iter:FN (each iteration of FN's outermost loop).
    #[arg(long, value_name = "UNIT", default_value = "auto")]
    unit: tf_analyzer::units::UnitSpec,
    /// How units are batched into warps: consecutive, by-function or by-length.
    #[arg(long, value_name = "POLICY", default_value = "consecutive")]
    batch: tf_analyzer::warps::Batch,
    /// Reconvergence model.
    #[arg(long, value_enum, default_value_t = Reconverge::Ipdom)]
    reconverge: Reconverge,
    /// on: lanes of a warp that hold the same lock run their critical sections
    /// one after another; off: replay as if every lock were uncontended.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    locks: Switch,
    /// Stack addresses in the terminal table: as the CPU laid them out (cpu),
    /// or interleaved across lanes as GPU local memory is (interleaved).
    /// The JSON and CSV always have both.
    #[arg(long, value_enum, default_value_t = StackModel::Cpu)]
    stack_model: StackModel,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Switch {
    On,
    Off,
}

/// How the terminal table shows stack requests.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StackModel {
    /// Each lane's own CPU stack.
    Cpu,
    /// Word k of lane l at base + 4·(k·W + l).
    Interleaved,
}

impl AnalyzeArgs {
    fn options(&self) -> tf_analyzer::Options {
        let Reconverge::Ipdom = self.reconverge;
        tf_analyzer::Options {
            widths: self.widths.clone(),
            unit: self.unit.clone(),
            batch: self.batch,
            locks: self.locks == Switch::On,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Reconverge {
    /// A SIMT stack reconverging at immediate post-dominators (GPGPU-Sim's model).
    Ipdom,
}

fn main() -> ExitCode {
    // Like other command-line tools, end quietly when the reader of our
    // output goes away (`tf info TRACE | head`): Rust ignores SIGPIPE, which
    // would turn that into a panic on the next print.
    // SAFETY: resetting a signal to its default disposition before any other
    // thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Trace {
            backend,
            pin_root,
            output,
            only,
            exclude,
            command,
        } => record::run(&record::TraceRequest {
            backend,
            pin_root,
            output,
            only,
            exclude,
            command,
        }),
        Command::Analyze {
            trace,
            options,
            json,
            csv,
            top,
            timings,
        } => analyze::run(
            &trace,
            &options.options(),
            &analyze::Outputs {
                json,
                csv,
                top,
                stack_model: options.stack_model,
                timings,
            },
        ),
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
