//! `tf analyze`: replay a trace as warps and print SIMT efficiency, memory
//! coalescing and lock serialization, overall and per function.

use crate::verdict::Coverage;
use anyhow::{Context, Result};
use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tf_analyzer::results::{Report, WidthResult};
use tf_analyzer::sink::{Nobody, Observer};
use tf_analyzer::{analyze_observed, Options, Progress};
use tf_trace::Trace;

/// Where to write the results besides the terminal.
pub struct Outputs {
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--csv FILE`.
    pub csv: Option<PathBuf>,
    /// Functions to list per warp width.
    pub top: usize,
    /// Which stack layout the table shows.
    pub stack_model: crate::StackModel,
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
        outputs.stack_model == crate::StackModel::Interleaved,
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
    let read = report.traced_instructions();
    let mut coverage = match trace {
        Some(t) => Coverage::of(t, read),
        None => Coverage::default(),
    };
    coverage.add_damage(report.damage.iter().cloned());
    // Figures that leave recorded work out never pass for complete.
    coverage.add(report.incomplete.iter().cloned());
    let status = coverage.exit_status(outputs.allow_damaged);
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
    bar.finish();
    if timings {
        for line in bar.timings() {
            eprintln!("tf: {line}");
        }
    }
    for w in &report.warnings {
        eprintln!("tf: warning: {w}");
    }
    Ok(report)
}

/// A progress bar that appears only when the analysis runs longer than a second.
pub(crate) struct Bar {
    bar: ProgressBar,
    started: Instant,
    shown: Mutex<bool>,
    /// Stages, to report with `--timings` (the bar's ETA reads the last).
    stages: Arc<Mutex<Vec<Stage>>>,
}

/// One stage: its name, when it started, its length in steps, and when a
/// tenth of it was done with the bar's estimate of the rest then (to check
/// the estimate against what the rest took).
struct Stage {
    name: String,
    at: Instant,
    total: u64,
    /// Steps done so far.
    done: u64,
    /// When the first steps were reported, and how many.
    first: Option<(Instant, u64)>,
    tenth: Option<(Instant, Duration)>,
}

impl Stage {
    /// The estimate of the rest at `now`: the steps left at the rate since
    /// the first report (what comes before it, such as opening a warp's
    /// lanes, is not done again for every step).
    fn eta(&self, now: Instant) -> Duration {
        match self.first {
            Some((at, first)) if self.done > first => linear_eta(
                now - at,
                self.done - first,
                self.total.saturating_sub(first),
            ),
            _ => linear_eta(now - self.at, self.done, self.total),
        }
    }
}

impl Bar {
    pub(crate) fn new() -> Bar {
        let stages: Arc<Mutex<Vec<Stage>>> = Arc::default();
        let shared = Arc::clone(&stages);
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:28} [{bar:40}] {percent:>3}% {elapsed_precise} (eta {stage_eta})",
            )
            .expect("a valid template")
            .with_key(
                "stage_eta",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let stages = shared.lock().expect("not poisoned");
                    let eta = stages
                        .last()
                        .map_or(Duration::ZERO, |s| s.eta(Instant::now()));
                    let _ = write!(w, "{:#}", HumanDuration(eta));
                },
            )
            .progress_chars("=> "),
        );
        Bar {
            bar,
            started: Instant::now(),
            shown: Mutex::new(false),
            stages,
        }
    }

    fn maybe_show(&self) {
        if self.started.elapsed() > Duration::from_secs(1) {
            let mut shown = self.shown.lock().expect("not poisoned");
            if !*shown {
                *shown = true;
                self.bar.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Wall time per stage, one line each; for a stage of at least a second,
    /// also the bar's estimate of the rest when a tenth was done, beside what
    /// the rest took.
    fn timings(&self) -> Vec<String> {
        let stages = self.stages.lock().expect("not poisoned");
        let now = Instant::now();
        stages
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let end = stages.get(i + 1).map_or(now, |s| s.at);
                timing_line(
                    &st.name,
                    end - st.at,
                    st.tenth.map(|(at, eta)| (eta, end - at)),
                )
            })
            .collect()
    }
}

/// `--timings`' line for a stage that took `took`; `tenth`: the bar's
/// estimate of the rest when a tenth was done, and what the rest took
/// (shown for stages of a second or more).
fn timing_line(name: &str, took: Duration, tenth: Option<(Duration, Duration)>) -> String {
    let mut line = format!("{name}: {:.2} s", took.as_secs_f64());
    if let Some((eta, rest)) = tenth.filter(|_| took >= Duration::from_secs(1)) {
        let (eta, rest) = (eta.as_secs_f64(), rest.as_secs_f64());
        line += &format!(
            " (at 10%: eta {eta:.2} s, the rest took {rest:.2} s, error {:+.0}%)",
            100.0 * (eta - rest) / rest.max(1e-9)
        );
    }
    line
}

impl Progress for Bar {
    fn stage(&self, name: &str, total: u64) {
        self.stages.lock().expect("not poisoned").push(Stage {
            name: name.to_string(),
            at: Instant::now(),
            total,
            done: 0,
            first: None,
            tenth: None,
        });
        self.bar.set_message(name.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.maybe_show();
    }

    fn advance(&self, n: u64) {
        self.bar.inc(n);
        if let Some(st) = self.stages.lock().expect("not poisoned").last_mut() {
            let now = Instant::now();
            st.done += n;
            st.first.get_or_insert((now, st.done));
            if st.tenth.is_none() && st.done * 10 >= st.total && st.total > 0 {
                st.tenth = Some((now, st.eta(now)));
            }
        }
        self.maybe_show();
    }
}

/// The rest of a stage that took `elapsed` for the first `done` of its
/// `total` steps, at that rate.
///
/// A replay's rate hardly changes once its lanes are open, so the average
/// rate predicts the rest; indicatif's own estimate weighs the first steps
/// too much and overshot a one-warp replay by 40–70% at a tenth.
fn linear_eta(elapsed: Duration, done: u64, total: u64) -> Duration {
    if done == 0 {
        return Duration::ZERO;
    }
    elapsed.mul_f64(total.saturating_sub(done) as f64 / done as f64)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn spr(requests: u64, x: f64) -> String {
    if requests == 0 {
        "-".into()
    } else {
        format!("{x:.2}")
    }
}

/// Prints the results as tables, the stack interleaved across lanes when
/// `interleaved`.
pub fn print(report: &Report, top: usize, interleaved: bool) {
    println!(
        "trace {}   units: {}   batch: {}   reconverge: {}   predicate: {}   locks: {}   stack: {}",
        report.trace,
        report.unit,
        report.batch,
        report.reconverge,
        report.predicate,
        match (report.locks, report.lock_model.as_str()) {
            (false, _) => "off",
            (true, "spin") => "spin",
            (true, _) => "serialized",
        },
        if interleaved { "interleaved" } else { "cpu" }
    );
    if let Some(s) = report.shard {
        println!(
            "shard {}/{}: the warps whose number is {} modulo {} (combine the shards with tf merge)",
            s.index, s.count, s.index, s.count
        );
    }
    if !report.command.is_empty() {
        println!("command: {}", report.command.join(" "));
    }
    if !report.units_are.is_empty() {
        println!("units: {}", report.units_are);
    }
    let traced = report.traced_instructions();
    let s = &report.skipped;
    println!(
        "threads: {}   traced instructions: {}   skipped: {} (lock runtime {}, waits {}, loop scheduling {}, excluded {}, outside --only {}, other {})   syscalls: {} ({:.3} s in the kernel)",
        report.threads.len(),
        traced,
        s.instructions(),
        s.lock_runtime,
        s.sync_wait,
        s.loop_schedule,
        s.excluded,
        s.outside_only,
        s.other,
        s.syscalls,
        s.syscall_nanos as f64 / 1e9
    );
    // The figures below are of the units' instructions only.
    if let Some((inside, traced)) = report.unit_coverage() {
        if inside < traced {
            println!(
                "in units: {inside} of the {traced} traced instructions ({:.1}%); the other {} ran outside every unit (serial code, thread start-up, a loop's own code around its iterations)",
                100.0 * inside as f64 / traced as f64,
                traced - inside
            );
        }
    }
    println!();
    println!(
        "{:>5} {:>7} {:>7} {:>16} {:>16} {:>8} {:>12}  {:>6} {:>6} {:>6} {:>6}",
        "W",
        "units",
        "warps",
        "thread insns",
        "warp insns",
        "SIMT eff",
        "serialized",
        "stack",
        "heap",
        "global",
        "other"
    );
    for r in &report.results {
        let m = &r.memory;
        let stack = if interleaved {
            &m.stack_interleaved
        } else {
            &m.stack
        };
        println!(
            "{:>5} {:>7} {:>7} {:>16} {:>16} {:>8} {:>12}  {:>6} {:>6} {:>6} {:>6}",
            r.warp_size,
            r.units,
            r.warps,
            r.thread_instructions,
            r.warp_instructions,
            pct(r.simt_efficiency),
            r.serialized_warp_instructions,
            spr(stack.requests, stack.sectors_per_request),
            spr(m.heap.requests, m.heap.sectors_per_request),
            spr(m.global.requests, m.global.sectors_per_request),
            spr(m.other.requests, m.other.sectors_per_request),
        );
    }
    println!("(stack, heap, global, other: 32-byte sectors per warp memory request; serialized: warp instructions of lock rounds)");
    for r in &report.results {
        print_locks(r, top);
        print_functions(r, top, interleaved);
    }
}

fn print_locks(r: &WidthResult, top: usize) {
    if r.locks.is_empty() {
        return;
    }
    println!();
    println!("W = {}: locks", r.warp_size);
    println!(
        "{:>18} {:<14} {:>12} {:>11} {:>11} {:>12}  symbol",
        "address", "kind", "acquisitions", "contentions", "ser. lanes", "ser. insns"
    );
    for l in r.locks.iter().take(top) {
        println!(
            "{:>18} {:<14} {:>12} {:>11} {:>11} {:>12}  {}",
            l.address,
            l.kind,
            l.acquisitions,
            l.contentions,
            l.serialized_lanes,
            l.serialized_warp_instructions,
            l.symbol.as_deref().unwrap_or("")
        );
    }
}

fn print_functions(r: &WidthResult, top: usize, interleaved: bool) {
    println!();
    println!(
        "W = {}: functions by warp instructions (own instructions only)",
        r.warp_size
    );
    println!(
        "{:>7} {:>16} {:>16} {:>8} {:>6} {:>6} {:>12}  function",
        "share", "thread insns", "warp insns", "SIMT eff", "heap", "stack", "skipped"
    );
    for f in r.functions.iter().take(top) {
        let m = &f.memory;
        let stack = if interleaved {
            &m.stack_interleaved
        } else {
            &m.stack
        };
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => {
                format!("  ({}:{line})", file.rsplit('/').next().unwrap_or(file))
            }
            _ => String::new(),
        };
        println!(
            "{:>7} {:>16} {:>16} {:>8} {:>6} {:>6} {:>12}  {} [{}]{}",
            pct(f.share),
            f.thread_instructions,
            f.warp_instructions,
            pct(f.simt_efficiency),
            spr(m.heap.requests, m.heap.sectors_per_request),
            spr(stack.requests, stack.sectors_per_request),
            f.skipped_instructions,
            f.name,
            f.module,
            place
        );
    }
    if r.functions.len() > top {
        println!(
            "({} more functions; all of them are in --json and --csv)",
            r.functions.len() - top
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_lines_compare_the_eta_at_a_tenth_with_the_rest() {
        let s = Duration::from_secs_f64;
        assert_eq!(
            timing_line("scan", s(0.5), Some((s(9.0), s(8.0)))),
            "scan: 0.50 s"
        );
        assert_eq!(
            timing_line("replay", s(10.0), Some((s(9.9), s(9.0)))),
            "replay: 10.00 s (at 10%: eta 9.90 s, the rest took 9.00 s, error +10%)"
        );
        assert_eq!(timing_line("replay", s(2.0), None), "replay: 2.00 s");
    }

    #[test]
    fn a_stage_estimates_from_its_first_report_on() {
        let s = Duration::from_secs_f64;
        let at = Instant::now();
        let mut stage = Stage {
            name: "replay".into(),
            at,
            total: 100,
            done: 0,
            first: None,
            tenth: None,
        };
        // Nothing reported yet: the rate since the stage began (none).
        assert_eq!(stage.eta(at + s(2.0)), s(0.0));
        // 10 steps after 2 s spent opening lanes, 30 after 3 s: 20 steps a
        // second since the first report, 70 left.
        stage.done = 30;
        stage.first = Some((at + s(2.0), 10));
        assert_eq!(stage.eta(at + s(3.0)), s(3.5));
        // Only the first report so far: the rate since the stage began.
        stage.done = 10;
        assert_eq!(stage.eta(at + s(2.0)), s(18.0));
    }

    #[test]
    fn the_eta_goes_on_at_the_rate_so_far() {
        let s = Duration::from_secs_f64;
        assert_eq!(linear_eta(s(1.0), 10, 100), s(9.0));
        assert_eq!(linear_eta(s(3.0), 75, 100), s(1.0));
        assert_eq!(linear_eta(s(3.0), 100, 100), s(0.0));
        assert_eq!(linear_eta(s(3.0), 0, 100), s(0.0));
        assert_eq!(linear_eta(s(3.0), 120, 100), s(0.0));
    }
}
