//! The observer seam: a sink that records every issue sees exactly what
//! `tf analyze` counts.

mod common;

use common::Prog;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use tf_analyzer::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
use tf_analyzer::{analyze_observed, Options, Silent};
use tf_trace::{EndKind, LockKind};

/// One recorded issue: function, active lanes, warp and thread
/// instructions, the lanes' sectors per operand, the lock of its round.
#[derive(Clone, Debug)]
struct Record {
    function: String,
    active: u64,
    warp: u64,
    thread: u64,
    sectors: Vec<usize>,
    serialized: Option<u64>,
}

#[derive(Default)]
struct Recorder {
    records: Mutex<Vec<(usize, usize, Vec<Record>)>>,
    divergences: Mutex<u64>,
    /// Per width: acquisitions, contentions, waiting lanes.
    locks: Mutex<BTreeMap<usize, (u64, u64, u64)>>,
}

struct WarpRecords {
    records: Vec<Record>,
    divergences: u64,
    locks: (u64, u64, u64),
}

impl IssueSink for WarpRecords {
    fn issue(&mut self, issue: &Issue<'_>) {
        // Sectors per operand index, over the active lanes.
        let mut per_op: BTreeMap<u16, HashSet<u64>> = BTreeMap::new();
        for l in issue.lanes {
            assert_eq!(issue.active & (1 << l.lane), 1 << l.lane);
            for a in l.accesses {
                let s = per_op.entry(a.operand - l.first_op).or_default();
                for sector in a.addr / 32..=(a.addr + u64::from(a.size) - 1) / 32 {
                    s.insert(sector);
                }
            }
        }
        self.records.push(Record {
            function: String::new(),
            active: issue.active,
            warp: issue.warp_instructions,
            thread: issue.lanes.iter().map(|l| u64::from(l.insns)).sum(),
            sectors: per_op.values().map(|s| s.len()).collect(),
            serialized: issue.serialized,
        });
        let last = self.records.last_mut().unwrap();
        last.function = issue.function.to_string();
        assert_eq!(last.thread, issue.thread_instructions);
    }
    fn diverged(&mut self, _: u32, _: u64, paths: usize, _: Option<u32>) {
        assert!(paths >= 2);
        self.divergences += 1;
    }
    fn lock_acquired(&mut self, _: usize, lock: u64, _: LockKind) {
        assert_eq!(lock, 0x5000);
        self.locks.0 += 1;
    }
    fn lock_contended(&mut self, _: u64, lanes: u64, waiting: u64) {
        assert!(waiting < u64::from(lanes.count_ones()));
        self.locks.1 += 1;
        self.locks.2 += waiting;
    }
}

impl Observer for Recorder {
    type Sink = WarpRecords;
    fn begin(&self, _: &Context<'_>, _: &WarpInfo<'_>) -> WarpRecords {
        WarpRecords {
            records: Vec::new(),
            divergences: 0,
            locks: (0, 0, 0),
        }
    }
    fn end(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>, sink: WarpRecords) {
        let mut records = sink.records;
        for r in &mut records {
            let id: u32 = r.function.parse().unwrap();
            r.function = ctx.functions.info(id).name.clone();
        }
        self.records
            .lock()
            .unwrap()
            .push((warp.width, warp.index, records));
        *self.divergences.lock().unwrap() += sink.divergences;
        let mut locks = self.locks.lock().unwrap();
        let l = locks.entry(warp.width).or_default();
        (l.0, l.1, l.2) = (l.0 + sink.locks.0, l.1 + sink.locks.1, l.2 + sink.locks.2);
    }
}

#[test]
fn a_recording_sink_sees_what_the_report_counts() {
    // Four threads: a lane-dependent loop in work with a 4-byte load per
    // iteration, then a contended lock around crit.
    let mut p = Prog::new();
    let main = p.func(0x100, "main");
    let work = p.func(0x200, "work");
    let crit_f = p.func(0x400, "crit");
    let m0 = p.block(0x100, 1, EndKind::Call, main);
    let m1 = p.block(0x101, 1, EndKind::Call, main);
    let m2 = p.block(0x102, 1, EndKind::Call, main);
    let m3 = p.block(0x103, 1, EndKind::Call, main);
    let m4 = p.block(0x104, 2, EndKind::Return, main);
    let w0 = p.block(0x200, 1, EndKind::Fallthrough, work);
    let w1 = p
        .w()
        .block(
            &tf_trace::BlockDef::new(0x201)
                .insns(&[1, 1])
                .read(4)
                .end(EndKind::Branch)
                .function(work),
        )
        .unwrap();
    let w2 = p.block(0x203, 1, EndKind::Return, work);
    let crit = p.block(0x400, 5, EndKind::Return, crit_f);
    let plt_lock = p.block(0x300, 1, EndKind::IndirectJump, 0);
    let plt_unlock = p.block(0x310, 1, EndKind::IndirectJump, 0);
    for tid in 1..=4u64 {
        let mut t = p.w().thread(tid).unwrap();
        t.exec(m0, &[]).unwrap();
        t.exec(w0, &[]).unwrap();
        for i in 0..tid {
            t.exec(w1, &[0x10000 + 64 * i + 4 * tid]).unwrap();
        }
        t.exec(w2, &[]).unwrap();
        t.exec(m1, &[]).unwrap();
        t.exec(plt_lock, &[]).unwrap();
        t.lock_acquire(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m2, &[]).unwrap();
        t.exec(crit, &[]).unwrap();
        t.exec(m3, &[]).unwrap();
        t.exec(plt_unlock, &[]).unwrap();
        t.lock_release(LockKind::Mutex, 0x5000).unwrap();
        t.exec(m4, &[]).unwrap();
    }
    let (trace, _c) = p.finish();
    // Four units: W = 4 and W = 8 form the same warp, replayed once for both.
    let opts = Options {
        widths: vec![2, 4, 8],
        unit: "thread".parse().unwrap(),
        ..Options::default()
    };
    let recorder = Recorder::default();
    let report = analyze_observed(&trace, &opts, &Silent, &recorder).unwrap();
    assert!(report.incomplete.is_empty());
    let records = recorder.records.into_inner().unwrap();
    for (k, result) in report.results.iter().enumerate() {
        let width = opts.widths[k];
        let mine: Vec<&Record> = records
            .iter()
            .filter(|(w, _, _)| *w == width)
            .flat_map(|(_, _, r)| r)
            .collect();
        let warps: HashSet<usize> = records
            .iter()
            .filter(|(w, _, _)| *w == width)
            .map(|(_, i, _)| *i)
            .collect();
        assert_eq!(warps.len(), result.warps);
        assert_eq!(warps, (0..result.warps).collect());
        for f in &result.functions {
            let of_f = mine.iter().filter(|r| r.function == f.name);
            let (warp, thread) = of_f
                .clone()
                .fold((0, 0), |(w, t), r| (w + r.warp, t + r.thread));
            assert_eq!(
                (warp, thread),
                (f.warp_instructions, f.thread_instructions),
                "{}",
                f.name
            );
            let serialized: u64 = of_f
                .clone()
                .filter(|r| r.serialized.is_some())
                .map(|r| r.warp)
                .sum();
            assert_eq!(serialized, f.serialized_warp_instructions, "{}", f.name);
            let requests: usize = of_f.clone().map(|r| r.sectors.len()).sum();
            let sectors: usize = of_f.clone().flat_map(|r| r.sectors.iter()).sum();
            let all = f.memory.all;
            assert_eq!(
                (requests as u64, sectors as u64),
                (all.requests, all.sectors),
                "{}",
                f.name
            );
            assert!(of_f.clone().all(|r| r.active != 0));
        }
    }
    let divergent: u64 = report.results.iter().map(|r| r.divergent_branches).sum();
    assert_eq!(*recorder.divergences.lock().unwrap(), divergent);
    assert!(divergent > 0);
    // Lock events: what the report's lock table counts.
    let locks = recorder.locks.into_inner().unwrap();
    for (k, result) in report.results.iter().enumerate() {
        let l = &result.locks[0];
        let seen = locks[&opts.widths[k]];
        assert_eq!(seen, (l.acquisitions, l.contentions, l.serialized_lanes));
        assert_eq!(seen.0, 4);
        assert!(seen.2 > 0);
    }
}
