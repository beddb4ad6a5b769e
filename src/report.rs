//! `tf report`: the analysis as a directory of HTML pages with plots (and
//! `tf analyze --html DIR`, which writes the same beside its table).

use crate::verdict::Coverage;
use anyhow::{Context, Result};
use std::path::Path;
use tf_analyzer::results::Report;
use tf_analyzer::Options;
use tf_reports::observe::{Collector, Details};
use tf_reports::{analysis_widths, RunInfo, Settings};
use tf_trace::Trace;

/// Options that only the report has.
pub struct ReportArgs<'a> {
    /// The report directory.
    pub dir: &'a Path,
    /// A page for every function.
    pub all: bool,
    /// The sweep's warp widths.
    pub sweep: &'a [usize],
}

/// `tf report`: analyses the trace (the user's widths and the sweep's in one
/// run) and writes the report; returns the exit status.
pub fn run(
    trace: &Path,
    options: &Options,
    args: &ReportArgs,
    timings: bool,
    allow_damaged: bool,
) -> Result<i32> {
    let trace = crate::analyze::open(trace)?;
    if let Some(w) = args.sweep.iter().find(|w| !(1..=64).contains(*w)) {
        anyhow::bail!("--sweep {w}: warp widths must be 1..=64");
    }
    let (report, details) = compute(&trace, options, args.sweep, timings)?;
    write(&trace, &report, &details, &options.widths, args)?;
    Ok(Coverage::of_analysis(Some(&trace), &report).exit_status(allow_damaged))
}

/// Analyses `trace` at the user's widths and the `sweep`'s in one run,
/// observing the blocks of the user's widths.
pub fn compute(
    trace: &Trace,
    options: &Options,
    sweep: &[usize],
    timings: bool,
) -> Result<(Report, Details)> {
    let collector = Collector::new(&options.widths);
    let sweep = Options {
        widths: analysis_widths(&options.widths, sweep),
        ..options.clone()
    };
    let report = crate::analyze::compute_observed(trace, &sweep, timings, &collector)?;
    Ok((report, collector.finish()))
}

/// Writes the report of `report` and `details` (from [`compute`]) showing
/// `widths`, and prints where its index page is.
pub fn write(
    trace: &Trace,
    report: &Report,
    details: &Details,
    widths: &[usize],
    args: &ReportArgs,
) -> Result<()> {
    let settings = Settings {
        widths: widths.to_vec(),
        all_functions: args.all,
    };
    let observed = tf_reports::Observed::new(details, trace);
    let written = tf_reports::write(
        args.dir,
        report,
        &RunInfo::from_trace(trace),
        &settings,
        Some(&observed),
    )
    .with_context(|| format!("cannot write the report into {}", args.dir.display()))?;
    eprintln!(
        "tf: report with {} function pages: {}",
        written.function_pages,
        written.index.display()
    );
    Ok(())
}

/// `report` with only the results of `widths`: what `tf analyze` alone would
/// have produced, since every width is replayed on its own.
pub fn only_widths(report: &Report, widths: &[usize]) -> Report {
    let mut out = report.clone();
    out.results.retain(|r| widths.contains(&r.warp_size));
    out
}
