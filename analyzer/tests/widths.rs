//! Several warp widths in one analysis: a warp that several widths form
//! alike is replayed once and counted at each width exactly as an analysis
//! of that width alone counts it.

mod common;

use common::Prog;
use std::sync::atomic::{AtomicUsize, Ordering};
use tf_analyzer::sink::{Context, Ignore, Observer, WarpInfo};
use tf_analyzer::{analyze, analyze_observed, Options, Silent};
use tf_trace::{BlockDef, EndKind};

/// Three threads: a stack store and a heap load, then a branch that thread
/// 2 takes the other way, to a second stack store of its own, so that
/// memory, the stack layout (of all lanes and of a lane alone) and
/// divergence all count.
fn three_threads() -> (tf_trace::Trace, common::Cleanup) {
    threads(3)
}

/// `n` threads as [`three_threads`]: every third one (2, 5, …) branches the
/// other way.
fn threads(n: u64) -> (tf_trace::Trace, common::Cleanup) {
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let a = p
        .w()
        .block(
            &BlockDef::new(0x100)
                .insns(&[1, 1, 1])
                .write(8)
                .read(4)
                .end(EndKind::Branch)
                .function(main),
        )
        .unwrap();
    let taken = p.block(0x103, 2, EndKind::Fallthrough, main);
    let other = p
        .w()
        .block(
            &BlockDef::new(0x105)
                .insn(5)
                .write(8)
                .end(EndKind::Fallthrough)
                .function(main),
        )
        .unwrap();
    let end = p.block(0x10a, 1, EndKind::Return, main);
    for tid in 1..=n {
        let lo = 0x7000_0000 + 0x10000 * tid;
        let mut t = p.w().thread(tid).unwrap();
        t.thread_start(0, lo, lo + 0x10000, 0).unwrap();
        t.exec(a, &[lo + 0xff00, 0x50_0000 + 4 * tid]).unwrap();
        if tid % 3 == 2 {
            t.exec(other, &[lo + 0xff04]).unwrap();
        } else {
            t.exec(taken, &[]).unwrap();
        }
        t.exec(end, &[]).unwrap();
    }
    p.finish()
}

fn options(widths: &[usize]) -> Options {
    Options {
        widths: widths.to_vec(),
        unit: "thread".parse().unwrap(),
        ..Options::default()
    }
}

#[test]
fn widths_that_form_the_same_warp_count_it_as_each_alone() {
    let (trace, _c) = three_threads();
    // Three units: W = 4, 8 and 16 form one warp of the same three lanes;
    // W = 2 forms two.
    let widths = [8, 2, 4, 16];
    let together = analyze(&trace, &options(&widths), &Silent).unwrap();
    assert!(together.incomplete.is_empty());
    for (k, &w) in widths.iter().enumerate() {
        let alone = analyze(&trace, &options(&[w]), &Silent).unwrap();
        assert_eq!(together.results[k], alone.results[0], "W = {w}");
    }
    let at = |w: usize| &together.results[widths.iter().position(|&x| x == w).unwrap()];
    assert_eq!((at(2).warps, at(4).warps, at(16).warps), (2, 1, 1));
    // The widths' tallies are their own: GPU local memory interleaves the
    // stack store's 4-byte words W lanes apart, so the sectors differ.
    let interleaved = |w: usize| at(w).memory.stack_interleaved.sectors_per_request;
    assert_ne!(interleaved(4), interleaved(16));
}

#[test]
fn narrower_warps_replayed_from_a_wide_warps_units_count_as_each_alone() {
    // 192 units: 24 warps of 8 (at least as many as the cores of most
    // machines), so the warps of 2 and 4 replay with the warp of 8 that
    // holds their units, from the same decoded units.
    let (trace, _c) = threads(192);
    let widths = [2, 8, 4];
    let together = analyze(&trace, &options(&widths), &Silent).unwrap();
    assert!(together.incomplete.is_empty());
    for (k, &w) in widths.iter().enumerate() {
        let alone = analyze(&trace, &options(&[w]), &Silent).unwrap();
        assert_eq!(together.results[k], alone.results[0], "W = {w}");
        assert_eq!(alone.results[0].warps, 192 / w);
    }
    // Unit i branches the other way when i % 3 == 1: two of every three
    // warps of 2 hold both kinds of lane, every warp of 4 and 8 does; each
    // such warp diverges once.
    let divergent: Vec<u64> = together
        .results
        .iter()
        .map(|r| r.divergent_branches)
        .collect();
    assert_eq!(divergent, [64, 24, 48]);
}

/// Counts the warps it is shown, looking at those of `narrowest` lanes or
/// more.
struct Warps {
    shown: AtomicUsize,
    narrowest: usize,
}

impl Warps {
    fn from_width(narrowest: usize) -> Warps {
        Warps {
            shown: AtomicUsize::new(0),
            narrowest,
        }
    }
}

impl Observer for Warps {
    type Sink = Ignore;
    fn observes(&self, width: usize) -> bool {
        width >= self.narrowest
    }
    fn begin(&self, _: &Context<'_>, _: &WarpInfo<'_>) -> Ignore {
        self.shown.fetch_add(1, Ordering::Relaxed);
        Ignore
    }
    fn end(&self, _: &Context<'_>, _: &WarpInfo<'_>, _: Ignore) {}
}

#[test]
fn an_observer_is_shown_every_warp_of_every_width() {
    let (trace, _c) = three_threads();
    let warps = Warps::from_width(1);
    let report = analyze_observed(&trace, &options(&[2, 4, 8]), &Silent, &warps).unwrap();
    assert_eq!(warps.shown.into_inner(), 2 + 1 + 1);
    assert_eq!(report.results.iter().map(|r| r.warps).sum::<usize>(), 4);
}

#[test]
fn width_one_counted_by_wider_warps_is_width_one_replayed_alone() {
    // 7 units at W = 1, 2, 4: unit 6 alone forms the last warp of 2 and a
    // warp of 1 alike; units 0..6 are counted alone by the warps of 2 that
    // hold them, which diverge (threads 2 and 5 branch the other way) and
    // lay the stack out at their own width.
    let (trace, _c) = threads(7);
    let widths = [4, 1, 2];
    let alone = analyze(&trace, &options(&[1]), &Silent).unwrap();
    assert_eq!(alone.results[0].warps, 7);
    assert_eq!(alone.results[0].divergent_branches, 0);
    let shown = Warps::from_width(2);
    let together = analyze_observed(&trace, &options(&widths), &Silent, &shown).unwrap();
    assert!(together.incomplete.is_empty());
    assert_eq!(together.results[1], alone.results[0]);
    // No warp of width 1 replays on its own but unit 6's, which is also
    // the last warp of 2 (and shown at both widths, as one replay).
    assert_eq!(shown.shown.into_inner(), 2 + 4 + 1);
    // An observer of width 1 is shown its warps, and the figures are the same.
    let warps = Warps::from_width(1);
    let observed = analyze_observed(&trace, &options(&widths), &Silent, &warps).unwrap();
    assert_eq!(warps.shown.into_inner(), 7 + 4 + 2);
    assert_eq!(observed.results, together.results);
}
