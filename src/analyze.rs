//! `tf analyze`: replay a trace as warps and print SIMT efficiency, memory
//! coalescing and lock serialization, overall and per function.

use crate::progress::Bar;
use crate::verdict::Coverage;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use tf_analyzer::results::Report;
use tf_analyzer::sink::{Nobody, Observer};
use tf_analyzer::{analyze_observed, Options};
use tf_trace::Trace;

mod text;
use text::print;

/// Where to write the results besides the terminal.
pub struct Outputs {
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--csv FILE`.
    pub csv: Option<PathBuf>,
    /// Functions to list per warp width.
    pub top: usize,
    /// Which stack layout the table shows.
    pub stack_model: crate::options::StackModel,
    /// Print the wall time of each stage on stderr.
    pub timings: bool,
    /// `--html DIR`: also write the HTML report there.
    pub html: Option<PathBuf>,
    /// `--allow-damaged`: exit 0 on a damaged or incomplete trace.
    pub allow_damaged: bool,
}

impl Outputs {
    /// The `--json` and `--csv` files, each with its option; fails, naming
    /// the option, when one cannot be written (checked before any work).
    fn files(&self) -> Result<Vec<(&PathBuf, &'static str)>> {
        let files: Vec<(&PathBuf, &str)> = [(&self.json, "--json"), (&self.csv, "--csv")]
            .into_iter()
            .filter_map(|(p, opt)| Some((p.as_ref()?, opt)))
            .collect();
        for &(path, opt) in &files {
            check_writable(path).with_context(|| format!("{opt} {}", path.display()))?;
        }
        Ok(files)
    }
}

/// Runs the analysis and prints the table; returns the exit status (see
/// [`crate::verdict`]; 1 when an output file could not be written).
pub fn run(dir: &Path, options: &Options, outputs: &Outputs) -> Result<i32> {
    outputs.files()?;
    let trace = open(dir)?;
    // With --html the sweep's widths are replayed in the same run; the table,
    // JSON and CSV keep the user's widths only.
    let (report, full) = match &outputs.html {
        None => (compute_on(&trace, options, outputs.timings)?, None),
        Some(_) => {
            let sweep = tf_reports::SWEEP;
            let (full, details) = crate::report::compute(&trace, options, &sweep, outputs.timings)?;
            let shown = crate::report::only_widths(&full, &options.widths);
            (shown, Some((full, details)))
        }
    };
    if let (Some(dir), Some((full, details))) = (&outputs.html, &full) {
        let args = crate::report::ReportArgs {
            dir,
            all: false,
            sweep: &tf_reports::SWEEP,
        };
        crate::report::write(&trace, full, details, &options.widths, &args)?;
    }
    emit(&report, Some(&trace), outputs)
}

/// Prints the table of `report`, writes its JSON and CSV (each on its own:
/// one that fails does not stop the other), and returns the exit status:
/// what was read of `trace` against its manifest, the damage met, and the
/// replay's own completeness decide it.
pub fn emit(report: &Report, trace: Option<&Trace>, outputs: &Outputs) -> Result<i32> {
    let files = outputs.files()?;
    print(
        report,
        outputs.top,
        outputs.stack_model == crate::options::StackModel::Interleaved,
    );
    let mut failed = false;
    for (path, opt) in files {
        let text = if opt == "--json" {
            report.to_json()
        } else {
            report.to_csv()
        };
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("tf: {opt} {}: cannot write: {e}", path.display());
            failed = true;
        }
    }
    let status = Coverage::of_analysis(trace, report).exit_status(outputs.allow_damaged);
    Ok(if failed { 1 } else { status })
}

/// Fails, naming the reason, when `path` cannot be written: its directory
/// is missing or not writable, or it is a directory itself. Nothing is
/// created or truncated.
fn check_writable(path: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if path.is_dir() {
        anyhow::bail!("is a directory");
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        anyhow::bail!("{} is not a directory", parent.display());
    }
    let target = if path.exists() { path } else { parent };
    let c = std::ffi::CString::new(target.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        anyhow::bail!("cannot write {}: {e}", target.display());
    }
    Ok(())
}

/// Opens a trace (its damage is named when the exit status is decided).
pub fn open(dir: &Path) -> Result<Trace> {
    Trace::open(dir).with_context(|| format!("cannot read the trace {}", dir.display()))
}

/// Analyses an open trace with a progress bar on stderr (and the wall time
/// of each stage when `timings`).
pub fn compute_on(trace: &Trace, options: &Options, timings: bool) -> Result<Report> {
    compute_observed(trace, options, timings, &Nobody)
}

/// [`compute_on`], showing every warp's replay to `observer`.
pub fn compute_observed<O: Observer>(
    trace: &Trace,
    options: &Options,
    timings: bool,
    observer: &O,
) -> Result<Report> {
    let bar = Bar::new();
    let report = analyze_observed(trace, options, &bar, observer)?;
    bar.end(timings);
    for w in &report.warnings {
        eprintln!("tf: warning: {w}");
    }
    Ok(report)
}
