//! Building small traces by hand for the analyzer's tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use tf_trace::{BlockDef, BlockId, EndKind, FunctionId, Trace, TraceWriter};

/// A trace under construction: functions and blocks of 1-byte instructions.
pub struct Prog {
    dir: std::path::PathBuf,
    w: Option<TraceWriter>,
}

impl Prog {
    pub fn new() -> Prog {
        Prog::with_options(tf_trace::WriterOptions::default())
    }
    pub fn with_options(opts: tf_trace::WriterOptions) -> Prog {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tf-replay-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let w = TraceWriter::create_with(&dir, opts).unwrap();
        Prog { dir, w: Some(w) }
    }
    pub fn w(&mut self) -> &mut TraceWriter {
        self.w.as_mut().unwrap()
    }
    pub fn func(&mut self, entry: u64, name: &str) -> FunctionId {
        self.w().function(entry, 0, name).unwrap()
    }
    /// A block of `n` one-byte instructions at `addr`.
    pub fn block(&mut self, addr: u64, n: usize, end: EndKind, f: FunctionId) -> BlockId {
        self.w()
            .block(&BlockDef::new(addr).insns(&vec![1; n]).end(end).function(f))
            .unwrap()
    }
    /// Thread `tid` runs `blocks` (no memory accesses).
    pub fn thread(&mut self, tid: u64, blocks: &[BlockId]) {
        let mut t = self.w().thread(tid).unwrap();
        for &b in blocks {
            t.exec(b, &[]).unwrap();
        }
    }
    pub fn finish(mut self) -> (Trace, Cleanup) {
        self.w.take().unwrap().finish().unwrap();
        (Trace::open(&self.dir).unwrap(), Cleanup(self.dir.clone()))
    }
}

pub struct Cleanup(std::path::PathBuf);
impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// ThreadFuser's Fig. 2 in function `kernel`: thread 1 runs BBL1 (3
/// instructions), BBL2 (2), BBL4 (2); thread 2 runs BBL1, BBL3 (4), BBL4.
pub fn paper_figure_2() -> (Trace, Cleanup) {
    let mut p = Prog::new();
    let f = p.func(0x100, "kernel");
    let b1 = p.block(0x100, 3, EndKind::Branch, f);
    let b2 = p.block(0x103, 2, EndKind::Jump, f);
    let b3 = p.block(0x105, 4, EndKind::Fallthrough, f);
    let b4 = p.block(0x109, 2, EndKind::Return, f);
    p.thread(1, &[b1, b2, b4]);
    p.thread(2, &[b1, b3, b4]);
    p.finish()
}
