//! Narrower warps counted from a wider warp's replay count what their own
//! replays count: random programs of calls, returns, recursion, branches,
//! memory, signals and a contended lock, at widths that nest (1, 2, 4, 8,
//! 16, 32) and that do not (3), under every reconvergence and lock model.

use super::mask_of;
use crate::replay::random_program::program;
use crate::replay::{LockModel, Reconvergence};
use crate::warp_jobs::tests::{NARROWER_COUNTS, NARROWER_OFF};
use crate::{analyze, Options, Silent};
use std::sync::atomic::Ordering;

#[test]
fn a_run_of_lanes_is_a_mask() {
    assert_eq!(mask_of(&(0..8)), 0xff);
    assert_eq!(mask_of(&(8..16)), 0xff00);
    assert_eq!(mask_of(&(32..64)), 0xffff_ffff_0000_0000);
    assert_eq!(mask_of(&(0..64)), u64::MAX);
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
    for seed in 0..6 {
        let trace = program(seed, 40);
        let base = Options {
            widths: vec![1, 2, 3, 4, 8, 16, 32],
            unit: "thread".parse().unwrap(),
            index: false,
            ..Options::default()
        };
        let variants = [
            base.clone(),
            Options {
                reconvergence: Reconvergence::MinPc,
                ..base.clone()
            },
            Options {
                lock_model: LockModel::Spin,
                predicate: 8,
                ..base.clone()
            },
            Options {
                locks: false,
                ..base.clone()
            },
            Options {
                unit: "call:f1".parse().unwrap(),
                ..base.clone()
            },
        ];
        for opts in &variants {
            let run = |off: bool| {
                NARROWER_OFF.store(off, Ordering::Relaxed);
                let report = one_core.install(|| analyze(&trace, opts, &Silent).unwrap());
                NARROWER_OFF.store(false, Ordering::Relaxed);
                report
            };
            let (counted, replayed) = (run(false), run(true));
            assert!(counted.incomplete.is_empty());
            assert_eq!(counted, replayed, "seed {seed}, {opts:?}");
        }
    }
    // Both ways were taken: counted from the wide warp, and void (the lock
    // of function 2, predication, min-pc), then replayed.
    let [counted, void] = [0, 1].map(|k| NARROWER_COUNTS[k].load(Ordering::Relaxed) - before[k]);
    assert!(counted > 100, "{counted} narrower warps counted");
    assert!(void > 10, "{void} narrower warps void");
}
