//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tf_trace::{
    Event, ExitHow, LockKind, LoopChunk, SkipReason, StaticLoop, ThreadWriter, Trace, TraceWriter,
};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "tf-trace-test-{}-{}-{}",
            name,
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, s: &str) -> PathBuf {
        self.0.join(s)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// splitmix64: a small seeded RNG.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A record as the reader returns it, owned, for comparisons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rec {
    Exec {
        block: u32,
        insns: u32,
        complete: bool,
        /// Operands of the execution, present or absent.
        operands: u32,
        /// (operand index, address) of present operands.
        accesses: Vec<(u16, u64)>,
    },
    /// Any other event, by its Debug form.
    Ev(String),
}

impl Rec {
    pub fn of(ev: &Event<'_>) -> Rec {
        match ev {
            Event::Block(x) => Rec::Exec {
                block: x.block,
                insns: x.insns,
                complete: x.complete,
                operands: x.operands,
                accesses: x.accesses().iter().map(|a| (a.operand, a.addr)).collect(),
            },
            other => Rec::Ev(format!("{other:?}")),
        }
    }
}

/// What a test asks the writer to do; also gives the record expected back.
#[derive(Clone, Debug)]
pub enum Op {
    Exec {
        block: u32,
        partial: Option<u32>,
        addrs: Vec<Option<u64>>,
    },
    Start(u64, u64, u64, u64),
    Exit(u64),
    Acquire(u64, u64),
    Release(u64, u64),
    Skip(u64, u64),
    Syscall(u64, u64),
    Signal(u64),
    SignalReturn(u64),
    Marker(u64, u64),
    LoopChunk(LoopChunk),
    StaticLoop(StaticLoop),
    RegionEntry(u64),
    Raw(u64, Vec<u8>),
    Flush,
}

/// An execution op: `x(block, None, vec![Some(a)])`.
pub fn x(block: u32, partial: Option<u32>, addrs: Vec<Option<u64>>) -> Op {
    Op::Exec {
        block,
        partial,
        addrs,
    }
}

impl Op {
    pub fn apply(&self, t: &mut ThreadWriter<'_>) -> tf_trace::Result<()> {
        match self {
            Op::Exec {
                block,
                partial: None,
                addrs,
            } => t.exec_opt(*block, addrs),
            Op::Exec {
                block,
                partial: Some(n),
                addrs,
            } => t.exec_partial(*block, *n, addrs),
            Op::Start(a, b, c, d) => t.thread_start(*a, *b, *c, *d),
            Op::Exit(h) => t.thread_exit(ExitHow::from_code(*h)),
            Op::Acquire(k, l) => t.lock_acquire(LockKind::from_code(*k), *l),
            Op::Release(k, l) => t.lock_release(LockKind::from_code(*k), *l),
            Op::Skip(r, c) => t.skip(SkipReason::from_code(*r), *c),
            Op::Syscall(n, ns) => t.syscall(*n, *ns),
            Op::Signal(s) => t.signal(*s),
            Op::SignalReturn(s) => t.signal_return(*s),
            Op::Marker(k, v) => t.marker(*k, *v),
            Op::LoopChunk(c) => t.loop_chunk(*c),
            Op::StaticLoop(s) => t.static_loop(*s),
            Op::RegionEntry(sp) => t.region_entry(*sp),
            Op::Raw(ty, p) => t.raw_event(*ty, p),
            Op::Flush => t.flush(),
        }
    }

    /// The record the reader should return for this op (None for Flush).
    pub fn expected(&self, trace_blocks: &tf_trace::BlockTable) -> Option<Rec> {
        let ev = match self {
            Op::Exec {
                block,
                partial,
                addrs,
            } => {
                let b = trace_blocks.block(*block).unwrap();
                return Some(Rec::Exec {
                    block: *block,
                    insns: partial.unwrap_or(b.n_insns() as u32),
                    complete: partial.is_none(),
                    operands: addrs.len() as u32,
                    accesses: addrs
                        .iter()
                        .enumerate()
                        .filter_map(|(j, a)| a.map(|a| (j as u16, a)))
                        .collect(),
                });
            }
            Op::Start(a, b, c, d) => Event::ThreadStart {
                parent: *a,
                stack_lo: *b,
                stack_hi: *c,
                start_routine: *d,
            },
            Op::Exit(h) => Event::ThreadExit {
                how: ExitHow::from_code(*h),
            },
            Op::Acquire(k, l) => Event::LockAcquire {
                kind: LockKind::from_code(*k),
                lock: *l,
            },
            Op::Release(k, l) => Event::LockRelease {
                kind: LockKind::from_code(*k),
                lock: *l,
            },
            Op::Skip(r, c) => Event::Skip {
                reason: SkipReason::from_code(*r),
                count: *c,
            },
            Op::Syscall(n, ns) => Event::Syscall {
                number: *n,
                nanos: *ns,
            },
            Op::Signal(s) => Event::Signal { signo: *s },
            Op::SignalReturn(s) => Event::SignalReturn { signo: *s },
            Op::Marker(k, v) => Event::Marker {
                kind: *k,
                value: *v,
            },
            Op::LoopChunk(c) => Event::LoopChunk(*c),
            Op::StaticLoop(s) => Event::StaticLoop(*s),
            Op::RegionEntry(sp) => Event::RegionEntry { sp: *sp },
            Op::Raw(ty, p) => {
                return Some(Rec::Ev(format!(
                    "{:?}",
                    Event::Unknown {
                        ty: *ty,
                        payload: p
                    }
                )))
            }
            Op::Flush => return None,
        };
        Some(Rec::Ev(format!("{ev:?}")))
    }
}

/// Every record of a thread, and the error that stopped the reader.
pub fn read_all(trace: &Trace, tid: u64) -> (Vec<Rec>, Option<tf_trace::Error>) {
    let mut r = match trace.read_thread(tid) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut out = Vec::new();
    while let Some(ev) = r.next_event() {
        match ev {
            Ok(ev) => out.push(Rec::of(&ev)),
            Err(e) => {
                assert!(r.next_event().is_none(), "the reader stops after an error");
                return (out, Some(e));
            }
        }
    }
    (out, None)
}

/// Every record of a thread, which must read without error.
pub fn read_ok(trace: &Trace, tid: u64) -> Vec<Rec> {
    let (recs, err) = read_all(trace, tid);
    if let Some(e) = err {
        panic!("thread {tid}: {e}");
    }
    recs
}

/// Every record of a thread with how each block record named its block.
pub fn read_via(trace: &Trace, tid: u64) -> Vec<(u32, tf_trace::Via)> {
    let mut r = trace.read_thread(tid).unwrap();
    let mut out = Vec::new();
    while let Some(ev) = r.next_event() {
        if let Event::Block(x) = ev.unwrap() {
            out.push((x.block, x.via));
        }
    }
    out
}

/// The payload bytes of every chunk of a stream file.
pub fn payloads(path: &Path) -> Vec<Vec<u8>> {
    let mut c = tf_trace::ChunkReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(ch) = c.next_chunk() {
        out.push(ch.unwrap().payload.to_vec());
    }
    out
}

/// The records the reader should return for `ops`.
pub fn expected(ops: &[Op], blocks: &tf_trace::BlockTable) -> Vec<Rec> {
    ops.iter().filter_map(|o| o.expected(blocks)).collect()
}

/// Writes `ops` to thread `tid`, finishes the trace and opens it; returns
/// it with the records it should hold.
pub fn finish_with(mut w: TraceWriter, tid: u64, ops: &[Op]) -> (Trace, Vec<Rec>) {
    let mut t = w.thread(tid).unwrap();
    for op in ops {
        op.apply(&mut t).unwrap();
    }
    let dir = w.dir().to_path_buf();
    w.finish().unwrap();
    let trace = Trace::open(dir).unwrap();
    let expect = expected(ops, trace.blocks());
    (trace, expect)
}
