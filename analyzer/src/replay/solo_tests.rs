//! The lone-lane loop changes nothing: random programs of calls, returns,
//! recursion, branches, memory, signals and a contended lock replay to the same
//! issues, in the same order, with the same figures, with the loop as
//! without it.

use crate::blocks::CBlockId;
use crate::replay::random_program::{program, variants};
use crate::results::Report;
use crate::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
use crate::{analyze_observed, Options, Silent};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tf_trace::LockKind;

/// Set by this test: every lone lane takes the general step.
pub(super) static GENERAL_STEPS_ONLY: AtomicBool = AtomicBool::new(false);

/// Everything a warp's sink is told, in order, as text.
#[derive(Default)]
struct Log(Vec<String>);

impl IssueSink for Log {
    fn issue(&mut self, i: &Issue<'_>) {
        let lanes: Vec<_> = i
            .lanes
            .iter()
            .map(|l| (l.lane, l.insns, l.first_op, l.accesses.to_vec()))
            .collect();
        self.0.push(format!(
            "issue {} f{} {:x} {:x} {:x} {:x} {} {} {:?} {:?}",
            i.cblock,
            i.function,
            i.active,
            i.counted,
            i.predicated,
            i.spinning,
            i.warp_instructions,
            i.thread_instructions,
            i.serialized,
            lanes
        ));
    }
    fn diverged(&mut self, b: CBlockId, active: u64, paths: usize, at: Option<CBlockId>) {
        self.0
            .push(format!("diverged {b} {active:x} {paths} {at:?}"));
    }
    fn lock_rounds(&mut self, rounds: &[(u64, Option<u64>)]) {
        self.0.push(format!("rounds {rounds:?}"));
    }
    fn predicated(&mut self, b: CBlockId) {
        self.0.push(format!("predicated {b}"));
    }
    fn lock_acquired(&mut self, lane: usize, lock: u64, kind: LockKind) {
        self.0.push(format!("acquired {lane} {lock:x} {kind:?}"));
    }
    fn lock_contended(&mut self, lock: u64, lanes: u64, waiting: u64) {
        self.0
            .push(format!("contended {lock:x} {lanes:x} {waiting}"));
    }
}

/// A warp's (width, index) and log.
type WarpLog = ((usize, usize), Vec<String>);

/// The logs of every warp.
#[derive(Default)]
struct Logs(Mutex<Vec<WarpLog>>);

impl Observer for Logs {
    type Sink = Log;
    fn begin(&self, _: &Context<'_>, _: &WarpInfo<'_>) -> Log {
        Log::default()
    }
    fn end(&self, _: &Context<'_>, warp: &WarpInfo<'_>, sink: Log) {
        let key = (warp.width, warp.index);
        self.0.lock().unwrap().push((key, sink.0));
    }
}

/// The report and every warp's log of analysing `trace` with `opts`.
fn replay(trace: &tf_trace::Trace, opts: &Options) -> (Report, Vec<WarpLog>) {
    let logs = Logs::default();
    let report = analyze_observed(trace, opts, &Silent, &logs).unwrap();
    let mut logs = logs.0.into_inner().unwrap();
    logs.sort_by_key(|l| l.0);
    (report, logs)
}

#[test]
fn a_lone_lane_replays_as_the_general_step_would() {
    let lone = |logs: &[WarpLog]| {
        logs.iter()
            .flat_map(|l| &l.1)
            .filter(|s| {
                s.starts_with("issue")
                    && s.split(' ')
                        .nth(3)
                        .is_some_and(|m| u64::from_str_radix(m, 16).unwrap().is_power_of_two())
            })
            .count()
    };
    let (mut lone_issues, mut signals, mut units_of_calls) = (0, false, 0);
    for seed in 0..12 {
        let trace = program(seed, 7);
        let variants = variants(&[1, 2, 3, 4, 8]);
        for opts in &variants {
            GENERAL_STEPS_ONLY.store(false, Ordering::Relaxed);
            let (report, logs) = replay(&trace, opts);
            GENERAL_STEPS_ONLY.store(true, Ordering::Relaxed);
            let (general, general_logs) = replay(&trace, opts);
            GENERAL_STEPS_ONLY.store(false, Ordering::Relaxed);
            assert!(report.incomplete.is_empty());
            assert_eq!(report, general, "seed {seed}, {opts:?}");
            assert_eq!(logs, general_logs, "seed {seed}, {opts:?}");
            lone_issues += lone(&logs);
            let handled = report.results[0].functions.iter().any(|f| f.name == "f4");
            signals |= handled;
            units_of_calls = units_of_calls.max(report.results[0].units);
        }
    }
    // The programs do leave lanes alone, often.
    assert!(lone_issues > 1000, "{lone_issues} issues of a lone lane");
    assert!(signals, "no signal handler ran");
    assert!(units_of_calls > 7, "{units_of_calls} units");
}
