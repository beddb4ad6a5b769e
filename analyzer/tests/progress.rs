//! What the analysis tells its progress bar: every stage's steps add up
//! to its total, and the replay's parts (its groups of warps, each replayed
//! by one thread) to the replay's.

mod common;

use common::{Cleanup, Prog};
use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;
use tf_analyzer::Options;
use tf_trace::{EndKind, Trace};

/// A stage as told: its name, total and advances; the parts it said it
/// comes in, the parts started, and the steps each part's thread reported
/// while it held it.
#[derive(Default)]
struct Told {
    name: String,
    total: u64,
    advances: Vec<u64>,
    sizes: Vec<u64>,
    started: Vec<usize>,
    per_part: HashMap<usize, u64>,
    holding: HashMap<ThreadId, usize>,
}

/// Records the stages and everything told of them.
#[derive(Default)]
struct Steps(Mutex<Vec<Told>>);

impl tf_analyzer::Progress for Steps {
    fn stage(&self, name: &str, total: u64) {
        self.0.lock().unwrap().push(Told {
            name: name.to_string(),
            total,
            ..Told::default()
        });
    }
    fn advance(&self, n: u64) {
        let mut stages = self.0.lock().unwrap();
        let st = stages.last_mut().unwrap();
        st.advances.push(n);
        if let Some(&part) = st.holding.get(&std::thread::current().id()) {
            *st.per_part.entry(part).or_default() += n;
        }
    }
    fn parts(&self, sizes: &[u64], _threads: usize) {
        self.0.lock().unwrap().last_mut().unwrap().sizes = sizes.to_vec();
    }
    fn part(&self, i: usize) {
        let mut stages = self.0.lock().unwrap();
        let st = stages.last_mut().unwrap();
        st.started.push(i);
        st.holding.insert(std::thread::current().id(), i);
    }
}

/// The stage whose name starts with `stage` when `trace` is analyzed one
/// unit per thread at `widths`.
fn told(trace: &tf_trace::Trace, widths: &[usize], stage: &str) -> Told {
    let steps = Steps::default();
    let opts = Options {
        widths: widths.to_vec(),
        unit: "thread".parse().unwrap(),
        ..Options::default()
    };
    tf_analyzer::analyze(trace, &opts, &steps).unwrap();
    let stages = steps.0.into_inner().unwrap();
    stages
        .into_iter()
        .find(|s| s.name.starts_with(stage))
        .unwrap()
}

/// A trace of `threads` threads, thread t running a block of `insns`
/// instructions `rounds(t)` times, then one of 1.
fn loops(threads: u64, insns: usize, rounds: impl Fn(u64) -> u64) -> (Trace, Cleanup) {
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let body = p.block(0x100, insns, EndKind::Branch, main);
    let end = p.block(0x100 + insns as u64, 1, EndKind::Return, main);
    for tid in 1..=threads {
        let mut t = p.w().thread(tid).unwrap();
        for _ in 0..rounds(tid) {
            t.exec(body, &[]).unwrap();
        }
        t.exec(end, &[]).unwrap();
    }
    p.finish()
}

#[test]
fn the_replay_reports_progress_as_it_replays_instructions() {
    // One warp of two lanes, 2 × 40 000 × 100 = 8 M thread instructions: the
    // replay stage counts them all, in several steps, not once per warp.
    let (trace, _c) = loops(2, 100, |_| 40_000);
    let Told {
        total, advances, ..
    } = told(&trace, &[2], "replaying");
    assert_eq!(total, 2 * 4_000_001);
    assert_eq!(advances.iter().sum::<u64>(), total);
    assert!(advances.len() >= 7, "{advances:?}");
}

#[test]
fn the_scan_reports_progress_chunk_by_chunk() {
    // Two threads of many small chunks: the scanning stage advances as each
    // chunk is read, not once per thread, and ends on the total.
    let mut p = Prog::with_options(tf_trace::WriterOptions {
        chunk_target: 64,
        ..Default::default()
    });
    let main = p.func(0x100, "main");
    let a = p.block(0x100, 3, EndKind::Branch, main);
    let b = p.block(0x103, 2, EndKind::Branch, main);
    for tid in 1..=2 {
        let mut t = p.w().thread(tid).unwrap();
        for i in 0..4_000 {
            // alternate unpredictably enough that runs stay short
            t.exec(if i % 3 == 0 { a } else { b }, &[]).unwrap();
        }
    }
    let (trace, _c) = p.finish();
    let Told {
        total, advances, ..
    } = told(&trace, &[2], "scanning");
    let bytes: u64 = trace.threads().iter().map(|t| t.size).sum();
    assert_eq!(total, bytes);
    assert_eq!(advances.iter().sum::<u64>(), bytes);
    assert!(advances.len() >= 8, "{advances:?}");
}

#[test]
fn the_replay_tells_its_parts_and_each_part_adds_up_to_its_size() {
    // Eight threads of unlike lengths at widths 1, 2, 4 and 8: several
    // groups of warps, of unlike sizes.
    let (trace, _c) = loops(8, 10, |tid| 1_000 * tid);
    for widths in [&[1, 2, 4, 8][..], &[8], &[2]] {
        let st = told(&trace, widths, "replaying");
        assert!(!st.sizes.is_empty());
        assert_eq!(st.sizes.iter().sum::<u64>(), st.total, "{widths:?}");
        assert_eq!(st.advances.iter().sum::<u64>(), st.total);
        // Every part started once, and its thread reported its size.
        let mut started = st.started.clone();
        started.sort();
        assert_eq!(started, (0..st.sizes.len()).collect::<Vec<_>>());
        for (i, &size) in st.sizes.iter().enumerate() {
            assert_eq!(st.per_part.get(&i).copied().unwrap_or(0), size, "part {i}");
        }
    }
}
