//! `tf`: predicts how a multi-threaded x86-64 program would run on SIMT hardware.
//!
//! A thin layer of argument parsing and printing over the `tf-trace` and
//! `tf-analyzer` libraries; see `docs/ARCHITECTURE.md` for the data flow.

mod analyze;
mod export;
mod fn_names;
mod forward;
mod info;
mod loaded;
mod merge;
mod options;
mod outcome;
mod pin;
mod progress;
mod record;
mod report;
mod summary;
mod tracer;
mod valgrind;
mod verdict;

use clap::{Parser, Subcommand};
use options::{AnalyzeArgs, ResultArgs, StackModel};
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
        /// Trace directory [default: a new trace-PROGRAM-N in the current directory, e.g. trace-pigz-1].
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<PathBuf>,
        /// Record only while FN is on the thread's call stack (repeatable).
        ///
        /// FN is a function name as tf analyze prints it (`main`,
        /// `ns::f(int)`, `void bs<float>(float*, int) [clone ._omp_fn.1]`),
        /// that name without its parameters (`ns::f`), or a raw symbol
        /// (`_Z2bsIfEvPfi._omp_fn.1`, `memcpy@@GLIBC_2.14`). It is looked up in
        /// the symbol tables of the program and the libraries it links
        /// against before the program runs; a name that matches nothing
        /// there is an error.
        #[arg(long, value_name = "FN")]
        only: Vec<String>,
        /// Skip FN and everything it calls, counting the skipped instructions
        /// (repeatable; FN as for --only).
        #[arg(long, value_name = "FN")]
        exclude: Vec<String>,
        /// Also trace every program that an execve of the run starts (a
        /// shell's commands, a script's, what the program runs with
        /// system()), each into a trace of its own under DIR/execs/PID
        /// (Valgrind tool only).
        #[arg(long)]
        follow_exec: bool,
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
        #[command(flatten)]
        results: ResultArgs,
        /// Print the wall time of each stage of the analysis on stderr, and
        /// for stages of a second or more how right the progress bar's ETA was.
        #[arg(long)]
        timings: bool,
        /// Exit with 0 even when the trace is damaged or incomplete (the
        /// damage is still named, with how much of the trace was read).
        #[arg(long)]
        allow_damaged: bool,
        /// Also write the HTML report into DIR (as `tf report`).
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
    },
    /// Write an HTML report with plots: index.html and a page per function.
    ///
    /// The --sweep widths are replayed in the same run for the warp-width
    /// plots; the tables show the --warp widths.
    Report {
        /// Trace directory.
        trace: PathBuf,
        /// Report directory (created when missing).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
        #[command(flatten)]
        options: AnalyzeArgs,
        /// A page for every function, not only those with at least 0.1% of the warp instructions.
        #[arg(long)]
        all: bool,
        /// Warp widths of the sweep plots, replayed with the --warp widths in the same run
        /// (each width costs one more replay).
        #[arg(
            long,
            value_name = "W",
            value_delimiter = ',',
            default_value = "1,2,4,8,16,24,32,48,64"
        )]
        sweep: Vec<usize>,
        /// Print the wall time of each stage of the analysis on stderr.
        #[arg(long)]
        timings: bool,
        /// Exit with 0 even when the trace is damaged or incomplete (the
        /// damage is still named, with how much of the trace was read).
        #[arg(long)]
        allow_damaged: bool,
    },
    /// Combine the JSON reports of all shards of one analysis (tf analyze --shard i/N --json).
    Merge {
        /// The shards' JSON reports.
        #[arg(required = true, value_name = "PART")]
        parts: Vec<PathBuf>,
        #[command(flatten)]
        results: ResultArgs,
    },
    /// Write the replay as Accel-Sim warp traces (--accelsim), or check a trace directory (--check).
    Export {
        /// Trace directory to export.
        #[arg(
            long,
            value_name = "TRACE",
            required_unless_present = "check",
            requires = "output"
        )]
        accelsim: Option<PathBuf>,
        /// Check an Accel-Sim trace directory: one line per problem, status 1 on an error.
        #[arg(long, value_name = "DIR", conflicts_with = "accelsim")]
        check: Option<PathBuf>,
        /// The directory to write (absent or empty).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<PathBuf>,
        /// Threads per CTA (a multiple of 32).
        #[arg(long, default_value_t = 256)]
        block_size: usize,
        /// Export only instructions charged to these functions.
        #[arg(long, value_name = "FN", num_args = 1..)]
        functions: Vec<String>,
        /// Exit with 0 even when the trace is damaged or incomplete (the
        /// damage is still named, with how much of the trace was read).
        #[arg(long)]
        allow_damaged: bool,
        /// Print the wall time of each stage (replay, writing, checking) on
        /// stderr, and for stages of a second or more how right the
        /// progress bar's ETA was.
        #[arg(long)]
        timings: bool,
        #[command(flatten)]
        options: AnalyzeArgs,
    },
    /// Describe a trace: threads, instructions, blocks, bytes, modules, top functions.
    Info {
        /// Trace directory.
        trace: PathBuf,
        /// How many functions to list.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Exit with 0 even when the trace is damaged or incomplete (the
        /// damage is still named, with how much of the trace was read).
        #[arg(long)]
        allow_damaged: bool,
    },
}

/// glibc's malloc maps blocks of more than 128 KiB afresh and gives a
/// freed heap top back to the system; the replay allocates and frees a few
/// hundred kilobytes per lane for every warp of small units, so each warp
/// page-faulted in fresh zeroed memory: a sixth of a many-warp replay
/// (nbody). Blocks up to 32 MiB now come from the heap, and up to 64 MiB of
/// free heap top is kept for the next warp.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's thresholds; called before
    // any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
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
    keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Trace {
            backend,
            pin_root,
            output,
            only,
            exclude,
            follow_exec,
            command,
        } => record::run(&record::TraceRequest {
            backend,
            pin_root,
            output,
            only,
            exclude,
            follow_exec,
            command,
        }),
        Command::Analyze {
            trace,
            options,
            results,
            timings,
            html,
            allow_damaged,
        } => analyze::run(
            &trace,
            &options.options(),
            &analyze::Outputs {
                json: results.json,
                csv: results.csv,
                top: results.top,
                stack_model: options.stack_model,
                timings,
                html,
                allow_damaged,
            },
        ),
        Command::Merge { parts, results } => merge::run(
            &parts,
            &analyze::Outputs {
                json: results.json,
                csv: results.csv,
                top: results.top,
                stack_model: StackModel::Cpu,
                timings: false,
                html: None,
                allow_damaged: false,
            },
        ),
        Command::Export {
            accelsim,
            check,
            output,
            block_size,
            functions,
            options,
            allow_damaged,
            timings,
        } => match (accelsim, check, output) {
            (_, Some(dir), _) => export::check(&dir, timings),
            (Some(trace), None, Some(out)) => export::run(
                &trace,
                &out,
                &options.options(),
                &export::Shape {
                    block_size,
                    functions: &functions,
                },
                allow_damaged,
                timings,
            ),
            _ => Err(anyhow::anyhow!(
                "tf export: give --accelsim TRACE -o DIR, or --check DIR"
            )),
        },
        Command::Report {
            trace,
            output,
            options,
            all,
            sweep,
            timings,
            allow_damaged,
        } => report::run(
            &trace,
            &options.options(),
            &report::ReportArgs {
                dir: &output,
                all,
                sweep: &sweep,
            },
            timings,
            allow_damaged,
        ),
        Command::Info {
            trace,
            top,
            allow_damaged,
        } => info::run(&trace, top, allow_damaged),
    };
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("tf: {}", error_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes on one line, each cause once: the trace
/// library's errors already show the operating system's message that they
/// carry as their source.
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
