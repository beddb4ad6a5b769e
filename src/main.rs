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
mod outcome;
mod pin;
mod progress;
mod record;
mod report;
mod summary;
mod tracer;
mod valgrind;
mod verdict;

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

/// Where the results go besides the terminal (shared by `analyze` and `merge`).
#[derive(clap::Args)]
struct ResultArgs {
    /// Also write the results as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the results as CSV (one row per warp width and function).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// How many functions to list per warp width.
    #[arg(long, default_value_t = 25)]
    top: usize,
}

/// The options of the analysis (shared by `analyze` and `report`).
#[derive(clap::Args)]
struct AnalyzeArgs {
    /// Warp widths, 1..=64: one (--warp 32) or several (--warp 8,16,32).
    #[arg(
        long = "warp",
        value_name = "W",
        value_delimiter = ',',
        default_value = "32",
        allow_negative_numbers = true,
        value_parser = parse_width
    )]
    widths: Vec<usize>,
    /// What a SIMT thread is: auto, thread, call:FN (each call of FN) or
    /// iter:FN (each iteration of FN's outermost loop).
    #[arg(long, value_name = "UNIT", default_value = "auto")]
    unit: tf_analyzer::unit_rule::UnitSpec,
    /// How units are batched into warps: consecutive, by-function or by-length.
    #[arg(long, value_name = "POLICY", default_value = "consecutive")]
    batch: tf_analyzer::warps::Batch,
    /// Where diverged lanes reconverge (docs/reconvergence.md).
    #[arg(long, value_enum, default_value_t = Reconverge::Ipdom)]
    reconverge: Reconverge,
    /// If-convert forward branches whose arms rejoin within N instructions,
    /// with no call and no store: all lanes issue them, as GPU compilers'
    /// predicated code (0: never).
    #[arg(long, value_name = "N", default_value_t = 0)]
    predicate: u32,
    /// on: lanes of a warp that hold the same lock run their critical sections
    /// one after another; off: replay as if every lock were uncontended.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    locks: Switch,
    /// serialize: lanes waiting for a lock are inactive until their round;
    /// spin: they count as active while another lane's round runs, as
    /// spinning lanes do in a GPU's counters.
    #[arg(long, value_enum, default_value_t = LockModel::Serialize)]
    lock_model: LockModel,
    /// Replay only shard i of N: the warps whose number is i modulo N (per
    /// width); combine the shards' JSON with `tf merge`.
    #[arg(long, value_name = "i/N")]
    shard: Option<tf_analyzer::results::Shard>,
    /// Stack addresses in the terminal table: as the CPU laid them out (cpu),
    /// or interleaved across lanes as GPU local memory is (interleaved).
    /// The JSON and CSV always have both.
    #[arg(long, value_enum, default_value_t = StackModel::Cpu)]
    stack_model: StackModel,
    /// on: keep the first pass over the trace (frames, graphs, units) in
    /// TRACE/index/ and read it from there when the trace and --unit are
    /// the same, so that later analyses, reports and exports skip it; off:
    /// neither read nor write it.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    index: Switch,
}

/// One `--warp` width: a whole number from 1 to 64.
fn parse_width(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(w) if (1..=64).contains(&w) => Ok(w),
        _ => Err(
            "warp widths are whole numbers from 1 to 64 (e.g. --warp 32 or --warp 8,16,32)".into(),
        ),
    }
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
        use tf_analyzer::replay::{LockModel as L, Reconvergence as R};
        tf_analyzer::Options {
            widths: self.widths.clone(),
            unit: self.unit.clone(),
            batch: self.batch,
            locks: self.locks == Switch::On,
            reconvergence: match self.reconverge {
                Reconverge::Ipdom => R::Ipdom,
                Reconverge::None => R::None,
                Reconverge::MinPc => R::MinPc,
            },
            predicate: self.predicate,
            lock_model: match self.lock_model {
                LockModel::Serialize => L::Serialize,
                LockModel::Spin => L::Spin,
            },
            shard: self.shard,
            index: self.index == Switch::On,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Reconverge {
    /// A SIMT stack reconverging at immediate post-dominators (GPGPU-Sim's model).
    Ipdom,
    /// Lanes never reconverge inside a function until it returns (the worst case).
    None,
    /// The lanes at the lowest code address run first; they reconverge wherever they meet.
    MinPc,
}

#[derive(Clone, Copy, ValueEnum)]
enum LockModel {
    /// Waiting lanes are inactive until their round.
    Serialize,
    /// Waiting lanes count as active while they spin.
    Spin,
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
        } => match (accelsim, check, output) {
            (_, Some(dir), _) => export::check(&dir),
            (Some(trace), None, Some(out)) => {
                export::run(&trace, &out, &options.options(), block_size, &functions)
            }
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
        } => report::run(
            &trace,
            &options.options(),
            &report::ReportArgs {
                dir: &output,
                all,
                sweep: &sweep,
            },
            timings,
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
