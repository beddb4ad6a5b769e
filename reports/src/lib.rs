//! HTML reports of tf's SIMT analysis: an index page for the whole program
//! and one page per function, with plots drawn by `plotters` as inline SVG.
//!
//! Every figure is read from the analyzer's [`Report`] — the same model that
//! `tf analyze` prints and writes as JSON — never recomputed. The report's
//! warp-width sweep comes from the same run: the analysis is asked for the
//! user's widths and the sweep's ([`SWEEP`] by default) together
//! ([`analysis_widths`]), and the tables show the user's widths only.
//!
//! ```no_run
//! use tf_reports::{analysis_widths, write, RunInfo, Settings, SWEEP};
//! let trace = tf_trace::Trace::open("trace-pigz-1").unwrap();
//! let settings = Settings { widths: vec![32], all_functions: false };
//! let opts = tf_analyzer::Options { widths: analysis_widths(&settings.widths, &SWEEP), ..Default::default() };
//! let report = tf_analyzer::analyze(&trace, &opts, &tf_analyzer::Silent).unwrap();
//! let written = write("report".as_ref(), &report, &RunInfo::from_trace(&trace), &settings, None).unwrap();
//! println!("{}", written.index.display());
//! ```

pub mod catalogue;
pub mod cfg_svg;
pub mod code;
mod function_code;
mod function_detail;
mod function_page;
mod function_table;
pub mod html;
mod index_page;
pub mod observe;
pub mod plots;
mod work_sections;

use catalogue::Catalogue;
pub use function_detail::Observed;
use std::path::{Path, PathBuf};
use tf_analyzer::results::Report;

/// The warp widths of the sweep plot by default, analysed together with the
/// user's: every power of two and the widths between the larger ones.
pub const SWEEP: [usize; 9] = [1, 2, 4, 8, 16, 24, 32, 48, 64];

/// The widths to analyse for a report of `user` widths with a `sweep`:
/// both, sorted, each once.
///
/// ```
/// use tf_reports::{analysis_widths, SWEEP};
/// assert_eq!(analysis_widths(&[12], &SWEEP), vec![1, 2, 4, 8, 12, 16, 24, 32, 48, 64]);
/// assert_eq!(analysis_widths(&[32], &[1, 64]), vec![1, 32, 64]);
/// ```
pub fn analysis_widths(user: &[usize], sweep: &[usize]) -> Vec<usize> {
    let mut all: Vec<usize> = user.iter().chain(sweep).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be written.
    #[error("cannot write {0}: {1}")]
    Write(PathBuf, std::io::Error),
    /// A plot could not be drawn.
    #[error(transparent)]
    Plot(#[from] plots::PlotError),
    /// The report lacks a width the settings ask for.
    #[error("the analysis has no result for warp width {0}")]
    MissingWidth(usize),
}

/// What the index page says about the traced run, from the trace's manifest.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The tracer, its version and backend (`tf-valgrind 0.1 (valgrind-3.19.0)`).
    pub tracer: String,
    /// How the program ended (`exit 0`, `signal 9`, or empty when unknown).
    pub exit: String,
    /// Whether the tracer finished normally.
    pub complete: bool,
    /// `--only` and `--exclude` of the trace.
    pub only: Vec<String>,
    /// `--exclude` functions.
    pub exclude: Vec<String>,
}

impl RunInfo {
    /// The run as `trace`'s manifest describes it (empty without a manifest).
    pub fn from_trace(trace: &tf_trace::Trace) -> RunInfo {
        let Some(m) = trace.manifest() else {
            return RunInfo::default();
        };
        let exit = match (m.exit_code, m.exit_signal) {
            (_, Some(s)) => format!("killed by signal {s}"),
            (Some(c), None) => format!("exit status {c}"),
            (None, None) => tf_analyzer::processes::exec_end(trace).unwrap_or_default(),
        };
        RunInfo {
            tracer: format!("{} {} ({})", m.tracer, m.tracer_version, m.backend),
            exit,
            complete: m.complete,
            only: m.only.clone(),
            exclude: m.exclude.clone(),
        }
    }
}

/// What the report shows.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The user's warp widths (`--warp`): the widths of the tables. Each must
    /// be in the report.
    pub widths: Vec<usize>,
    /// A page for every function, not only those with at least 0.1% of the
    /// warp instructions at one of the widths.
    pub all_functions: bool,
}

/// What [`write`](fn@write) wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// The index page.
    pub index: PathBuf,
    /// Function pages.
    pub function_pages: usize,
}

/// Writes the report of `report` into `dir` (created when missing): the
/// index page and the function pages under `dir/functions/`, with their
/// blocks, source lines and CFGs when the replay was `observed`.
pub fn write(
    dir: &Path,
    report: &Report,
    run: &RunInfo,
    settings: &Settings,
    observed: Option<&Observed>,
) -> Result<Written, Error> {
    let catalogue = Catalogue::new(report, settings)?;
    let functions_dir = dir.join("functions");
    std::fs::create_dir_all(&functions_dir).map_err(|e| Error::Write(functions_dir.clone(), e))?;
    let put = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|e| Error::Write(path.clone(), e))
    };
    let index = dir.join("index.html");
    put(index.clone(), index_page::render(&catalogue, run)?)?;
    put(dir.join("report.json"), report.to_json())?;
    let mut pages = 0;
    for f in catalogue.functions.iter().filter(|f| f.page.is_some()) {
        let page = f.page.as_deref().expect("filtered");
        put(
            dir.join(page),
            function_page::render(&catalogue, f, observed)?,
        )?;
        pages += 1;
    }
    Ok(Written {
        index,
        function_pages: pages,
    })
}
