//! The command line's options of the analysis, shared by the commands that
//! replay a trace (`analyze`, `report`, `export`) or combine results
//! (`merge`), and how they become the analyzer's [`tf_analyzer::Options`].

use clap::ValueEnum;
use std::path::PathBuf;

/// Where the results go besides the terminal (shared by `analyze` and `merge`).
#[derive(clap::Args)]
pub struct ResultArgs {
    /// Also write the results as JSON.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Also write the results as CSV (one row per warp width and function).
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// How many functions to list per warp width.
    #[arg(long, default_value_t = 25)]
    pub(crate) top: usize,
}

/// The options of the analysis (shared by `analyze` and `report`).
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Warp widths, 1..=64: one (--warp 32) or several (--warp 8,16,32).
    #[arg(
        long = "warp",
        value_name = "W",
        value_delimiter = ',',
        default_value = "32",
        allow_negative_numbers = true,
        value_parser = parse_width
    )]
    pub(crate) widths: Vec<usize>,
    /// What a SIMT thread is: auto, thread, call:FN (each call of FN) or
    /// iter:FN (each iteration of FN's outermost loop).
    #[arg(long, value_name = "UNIT", default_value = "auto")]
    pub(crate) unit: tf_analyzer::unit_rule::UnitSpec,
    /// How units are batched into warps: consecutive, by-function or by-length.
    #[arg(long, value_name = "POLICY", default_value = "consecutive")]
    pub(crate) batch: tf_analyzer::warps::Batch,
    /// Where diverged lanes reconverge (docs/reconvergence.md).
    #[arg(long, value_enum, default_value_t = Reconverge::Ipdom)]
    pub(crate) reconverge: Reconverge,
    /// If-convert forward branches whose arms rejoin within N instructions,
    /// with no call and no store: all lanes issue them, as GPU compilers'
    /// predicated code (0: never).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) predicate: u32,
    /// on: lanes of a warp that hold the same lock run their critical sections
    /// one after another; off: replay as if every lock were uncontended.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) locks: Switch,
    /// serialize: lanes waiting for a lock are inactive until their round;
    /// spin: they count as active while another lane's round runs, as
    /// spinning lanes do in a GPU's counters.
    #[arg(long, value_enum, default_value_t = LockModel::Serialize)]
    pub(crate) lock_model: LockModel,
    /// count: spin-wait loops (a `pause` or a call of sched_yield) count as
    /// work in every figure; exclude: they are replayed but left out of
    /// every figure (and of the report and the export), as VTune's
    /// effective time leaves out spin time. Both count them apart.
    #[arg(long, value_enum, default_value_t = SpinWait::Count)]
    pub(crate) spin_wait: SpinWait,
    /// Blocks of a function that are copies of each other (the compiler's
    /// tail duplication: each arm of an `if` with its own copy of a loop's
    /// latch) issue as one block, where their lanes reconverge, as a GPU
    /// compiler's single copy would.
    #[arg(long)]
    pub(crate) merge_tails: bool,
    /// Replay only shard i of N: the warps whose number is i modulo N (per
    /// width); combine the shards' JSON with `tf merge`.
    #[arg(long, value_name = "i/N")]
    pub(crate) shard: Option<tf_analyzer::results::Shard>,
    /// Stack addresses in the terminal table: as the CPU laid them out (cpu),
    /// or interleaved across lanes as GPU local memory is (interleaved).
    /// The JSON and CSV always have both.
    #[arg(long, value_enum, default_value_t = StackModel::Cpu)]
    pub(crate) stack_model: StackModel,
    /// on: keep the first pass over the trace (frames, graphs, units) in
    /// TRACE/index/ and read it from there when the trace and --unit are
    /// the same, so that later analyses, reports and exports skip it; off:
    /// neither read nor write it.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub(crate) index: Switch,
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
pub enum Switch {
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
    pub fn options(&self) -> tf_analyzer::Options {
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
            spin_wait: match self.spin_wait {
                SpinWait::Count => tf_analyzer::spin_wait::SpinWaitRule::Count,
                SpinWait::Exclude => tf_analyzer::spin_wait::SpinWaitRule::Exclude,
            },
            shard: self.shard,
            merge_tails: self.merge_tails,
            index: self.index == Switch::On,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Reconverge {
    /// A SIMT stack reconverging at immediate post-dominators (GPGPU-Sim's model).
    Ipdom,
    /// Lanes never reconverge inside a function until it returns (the worst case).
    None,
    /// The lanes at the lowest code address run first; they reconverge wherever they meet.
    MinPc,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum SpinWait {
    /// Spin-wait loops count as work.
    Count,
    /// Spin-wait loops are left out of the figures.
    Exclude,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LockModel {
    /// Waiting lanes are inactive until their round.
    Serialize,
    /// Waiting lanes count as active while they spin.
    Spin,
}
