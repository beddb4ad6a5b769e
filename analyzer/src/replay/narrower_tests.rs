//! Narrower warps counted from a wider warp's replay count what their own
//! replays count: random programs of calls, returns, recursion, branches,
//! memory, signals and a contended lock, at widths that nest (1, 2, 4, 8,
//! 16, 32) and that do not (3), under every reconvergence and lock model.

use super::mask_of;
use crate::group_replay::tests::{NARROWER_COUNTS, NARROWER_OFF, TURNS_TAKEN};
use crate::replay::random_program::{program, variants};
use crate::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
use crate::{analyze, analyze_observed, Options, Silent};
use std::sync::atomic::Ordering;

#[test]
fn a_run_of_lanes_is_a_mask() {
    assert_eq!(mask_of(&(0..8)), 0xff);
    assert_eq!(mask_of(&(8..16)), 0xff00);
    assert_eq!(mask_of(&(32..64)), 0xffff_ffff_0000_0000);
    assert_eq!(mask_of(&(0..64)), u64::MAX);
}

/// Every stage's name and total, and the steps it was told.
#[derive(Default)]
struct Steps(std::sync::Mutex<Vec<(String, u64, u64)>>);

impl crate::Progress for Steps {
    fn stage(&self, name: &str, total: u64) {
        self.0.lock().unwrap().push((name.to_string(), total, 0));
    }
    fn advance(&self, n: u64) {
        self.0.lock().unwrap().last_mut().unwrap().2 += n;
    }
}

#[test]
fn narrower_warps_count_as_their_own_replays() {
    // One core: the narrower warps replay with the wide warp that holds
    // them (with more cores than wide warps, each would replay alone).
    let one_core = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let before = NARROWER_COUNTS
        .each_ref()
        .map(|c| c.load(Ordering::Relaxed));
    let turns_before = TURNS_TAKEN.load(Ordering::Relaxed);
    for seed in 0..6 {
        let trace = program(seed, 40);
        let variants = variants(&[1, 2, 3, 4, 8, 16, 32]);
        for opts in &variants {
            let run = |off: bool| {
                NARROWER_OFF.store(off, Ordering::Relaxed);
                let steps = Steps::default();
                let report = one_core.install(|| analyze(&trace, opts, &steps).unwrap());
                NARROWER_OFF.store(false, Ordering::Relaxed);
                (report, steps.0.into_inner().unwrap())
            };
            let ((counted, steps), (replayed, own_steps)) = (run(false), run(true));
            assert!(counted.incomplete.is_empty());
            assert_eq!(counted, replayed, "seed {seed}, {opts:?}");
            // The bar is told every step as the narrower warps' own replays
            // tell it, whether counted from a wider warp, void or not.
            assert_eq!(steps, own_steps, "seed {seed}, {opts:?}");
            if opts.predicate == 0 {
                for (name, total, told) in steps {
                    assert_eq!(told, total, "{name}: seed {seed}, {opts:?}");
                }
            }
        }
    }
    // Both ways were taken: counted from the wide warp, and void (the lock
    // of function 2, predication, min-pc), then replayed.
    let [counted, void] = [0, 1].map(|k| NARROWER_COUNTS[k].load(Ordering::Relaxed) - before[k]);
    assert!(counted > 100, "{counted} narrower warps counted");
    assert!(void > 10, "{void} narrower warps void");
    // Some were void before the wide warp's end, and replayed taking turns
    // with the rest of it.
    let turns = TURNS_TAKEN.load(Ordering::Relaxed) - turns_before;
    assert!(turns > 5, "{turns} wide warps took turns");
}

/// Counts the warps of width 8 it was shown, and their warp instructions;
/// and the warp instructions its sinks of other widths were told.
#[derive(Default)]
struct EightsSeen(std::sync::Mutex<(usize, u64, u64)>);

struct Issues(u64);

impl IssueSink for Issues {
    fn issue(&mut self, issue: &Issue<'_>) {
        self.0 += issue.warp_instructions;
    }
}

impl Observer for EightsSeen {
    type Sink = Issues;
    fn observes(&self, width: usize) -> bool {
        width == 8
    }
    fn begin(&self, _: &Context<'_>, _: &WarpInfo<'_>) -> Issues {
        Issues(0)
    }
    fn end(&self, _: &Context<'_>, warp: &WarpInfo<'_>, sink: Issues) {
        let mut seen = self.0.lock().unwrap();
        if warp.width == 8 {
            seen.0 += 1;
            seen.1 += sink.0;
        } else {
            seen.2 += sink.0;
        }
    }
}

#[test]
fn a_width_an_observer_looks_at_replays_by_itself() {
    let one_core = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let trace = program(3, 40);
    let opts = Options {
        widths: vec![8, 32],
        unit: "thread".parse().unwrap(),
        locks: false,
        index: false,
        ..Options::default()
    };
    let seen = EightsSeen::default();
    let report = one_core.install(|| analyze_observed(&trace, &opts, &Silent, &seen).unwrap());
    let (warps, warp_instructions, elsewhere) = *seen.0.lock().unwrap();
    // 40 threads: five warps of 8, each shown to the observer, every issue;
    // the sinks of the warps of 32 it does not look at are told nothing.
    assert_eq!(warps, 5);
    assert_eq!(elsewhere, 0);
    let eights = &report.results[0];
    assert_eq!(eights.warp_size, 8);
    assert_eq!(warp_instructions, eights.warp_instructions);
    assert_eq!(
        report,
        one_core.install(|| analyze(&trace, &opts, &Silent).unwrap())
    );
}
