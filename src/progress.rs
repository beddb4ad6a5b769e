//! The progress bar of the long commands (analyze, info, report, export):
//! shown only when a run takes over a second, moving with the work done,
//! with an ETA at the rate so far; and `--timings`' lines, which say how
//! right that ETA was.

mod parts;

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use parts::Parts;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tf_analyzer::Progress;

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
    /// The parts the work comes in, when the stage said.
    parts: Option<Parts>,
}

impl Stage {
    /// The estimate of the rest at `now`: the steps left at the rate since
    /// the first report (what comes before it, such as opening a warp's
    /// lanes, is not done again for every step).
    fn eta(&self, now: Instant) -> Duration {
        if let Some(eta) = self.parts.as_ref().and_then(|p| p.eta(now)) {
            return eta;
        }
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

    /// Clears the bar, and prints each stage's `--timings` line on stderr
    /// when `timings`.
    pub(crate) fn end(&self, timings: bool) {
        self.finish();
        if timings {
            for line in self.timings() {
                eprintln!("tf: {line}");
            }
        }
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
            parts: None,
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
            if let Some(parts) = &mut st.parts {
                parts.advance(std::thread::current().id(), n, now);
            }
            if st.tenth.is_none() && st.done * 10 >= st.total && st.total > 0 {
                st.tenth = Some((now, st.eta(now)));
            }
        }
        self.maybe_show();
    }

    fn parts(&self, sizes: &[u64], threads: usize) {
        if let Some(st) = self.stages.lock().expect("not poisoned").last_mut() {
            st.parts = Some(Parts::new(sizes.to_vec(), threads));
        }
    }

    fn part(&self, i: usize) {
        if let Some(st) = self.stages.lock().expect("not poisoned").last_mut() {
            if let Some(parts) = &mut st.parts {
                parts.start(std::thread::current().id(), i, Instant::now());
            }
        }
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
            parts: None,
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
