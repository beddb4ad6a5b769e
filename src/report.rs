//! `tf report`: the analysis as a directory of HTML pages with plots (and
//! `tf analyze --html DIR`, which writes the same beside its table).

use anyhow::{Context, Result};
use std::path::Path;
use tf_analyzer::results::Report;
use tf_analyzer::Options;
use tf_reports::{analysis_widths, RunInfo, Settings};
use tf_trace::Trace;

/// Options that only the report has.
pub struct ReportArgs<'a> {
    /// The report directory.
    pub dir: &'a Path,
    /// A page for every function.
    pub all: bool,
}

/// The analysis options of a report: the user's widths and the sweep's.
pub fn sweep_options(options: &Options) -> Options {
    Options {
        widths: analysis_widths(&options.widths),
        ..options.clone()
    }
}

/// `tf report`: analyses the trace (the user's widths and the sweep's in one
/// run) and writes the report; returns the exit status.
pub fn run(trace: &Path, options: &Options, args: &ReportArgs, timings: bool) -> Result<i32> {
    let trace = crate::analyze::open(trace)?;
    let report = crate::analyze::compute_on(&trace, &sweep_options(options), timings)?;
    write(&trace, &report, &options.widths, args)?;
    Ok(0)
}

/// Writes the report of `report` (analysed with [`sweep_options`]) showing
/// `widths`, and prints where its index page is.
pub fn write(trace: &Trace, report: &Report, widths: &[usize], args: &ReportArgs) -> Result<()> {
    let run = RunInfo::from_trace(trace);
    let settings = Settings {
        widths: widths.to_vec(),
        all_functions: args.all,
    };
    let written = tf_reports::write(args.dir, report, &run, &settings)
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
