//! What one run of the suite produced: per workload, its figures and
//! their checks, the analyses under each replay model, the GPU's side; and
//! the pigz runs.

use crate::compare::{Row, Summary};
use crate::expect::Tolerance;
use crate::gpu::GpuFigures;
use crate::measure::Figures;
use std::collections::BTreeMap;

/// The name of the pseudo-function for all units together.
pub const UNITS: &str = "[units]";

/// Everything one run of the suite produced.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The command line that produced it.
    pub command: String,
    /// Compiler, Valgrind and tf versions, one line each.
    pub versions: Vec<String>,
    /// The -O levels run.
    pub levels: Vec<String>,
    /// The warp widths.
    pub widths: Vec<u32>,
    /// The tolerances.
    pub tolerance: Option<Tolerance>,
    /// Per workload, in order.
    pub workloads: Vec<WorkloadOutcome>,
    /// The GPU comparison, or why there is none.
    pub gpu: GpuOutcome,
    /// The replay models compared against the GPU (`--models`), in order.
    pub models: Vec<String>,
    /// The pigz runs, when asked for.
    pub pigz: Option<Result<Vec<PigzOutcome>, String>>,
}

/// One workload's rows and failures.
#[derive(Clone, Debug, Default)]
pub struct WorkloadOutcome {
    /// Its name.
    pub name: String,
    /// What it computes.
    pub about: String,
    /// How it was run (`program args`, environment).
    pub command: String,
    /// `--unit`.
    pub unit: String,
    /// Every measured figure (per function and `[units]`), with expectations.
    pub rows: Vec<Row>,
    /// Levels whose run failed, with the reason.
    pub failures: Vec<(String, String)>,
    /// Whole-unit figures at W = 32 under each model, per level (workloads
    /// with a CUDA twin only).
    pub models: Vec<ModelFigures>,
}

/// A workload's whole-unit figures at W = 32 under one model at one level.
#[derive(Clone, Debug)]
pub struct ModelFigures {
    /// The model's name (`--models`).
    pub model: String,
    /// The -O level.
    pub level: String,
    /// The figures, or why the analysis failed.
    pub figures: Result<Figures, String>,
}

/// The GPU part.
#[derive(Clone, Debug)]
pub enum GpuOutcome {
    /// Not run, and why.
    Skipped(String),
    /// Run on `device` (or read from its stored measurements); per
    /// workload with a twin, its figures or the error.
    Ran {
        /// The GPU.
        device: String,
        /// Where the figures come from.
        source: GpuSource,
        /// Per workload name.
        twins: BTreeMap<String, Result<GpuFigures, String>>,
        /// Twins whose sources changed since they were measured, with what
        /// changed: reported, left out of the statistics.
        stale: BTreeMap<String, String>,
    },
}

/// Where GPU figures come from.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuSource {
    /// Profiled with ncu during this run.
    Live,
    /// Read from measurements stored in the repository.
    Stored {
        /// Their directory.
        dir: String,
        /// The day they were measured.
        date: String,
        /// The commit whose twin sources were measured (abbreviated).
        commit: String,
        /// Compiler and profiler versions.
        tools: String,
        /// How the twins were built.
        build: String,
    },
}

impl Default for GpuOutcome {
    fn default() -> GpuOutcome {
        GpuOutcome::Skipped("not attempted".into())
    }
}

/// One pigz run.
#[derive(Clone, Debug)]
pub struct PigzOutcome {
    /// `-p` threads.
    pub threads: u32,
    /// Input bytes.
    pub bytes: u64,
    /// The traced command.
    pub command: String,
    /// Units `tf analyze` formed.
    pub units: u64,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// SIMT efficiency per width.
    pub efficiency: Vec<(u32, f64)>,
}

impl Outcome {
    /// All rows of all workloads.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.workloads.iter().flat_map(|w| w.rows.iter())
    }

    /// The summary of the rows at `level` (all levels with `None`).
    pub fn summary(&self, level: Option<&str>) -> Summary {
        let tolerance = self.tolerance.unwrap_or(Tolerance {
            simt_pp: 0.0,
            sectors_rel: 0.0,
        });
        Summary::of(
            self.rows().filter(|r| level.is_none_or(|l| r.level == l)),
            &tolerance,
        )
    }

    /// Whether every check passed and every run succeeded (the analyses
    /// under each model included).
    pub fn all_passed(&self) -> bool {
        let s = self.summary(None);
        s.passed == s.count
            && self
                .workloads
                .iter()
                .all(|w| w.failures.is_empty() && w.models.iter().all(|m| m.figures.is_ok()))
    }
}
