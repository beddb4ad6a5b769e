//! Hand-built traces for unit tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use tf_trace::{Trace, TraceWriter};

/// A deterministic generator for randomized tests: each call with `n`
/// gives the next number of `0..n`.
pub fn numbers(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    }
}

/// A trace written into a fresh temporary directory, removed on drop.
pub struct TempTrace {
    dir: PathBuf,
    writer: Option<TraceWriter>,
}

impl TempTrace {
    /// A new, empty trace.
    pub fn new() -> TempTrace {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tf-analyzer-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let writer = TraceWriter::create(&dir).expect("create a test trace");
        TempTrace {
            dir,
            writer: Some(writer),
        }
    }

    /// The writer, until [`finish`](Self::finish).
    pub fn writer(&mut self) -> &mut TraceWriter {
        self.writer.as_mut().expect("not finished yet")
    }

    /// Finishes writing and opens the trace for reading.
    pub fn finish(mut self) -> OpenTrace {
        self.writer
            .take()
            .expect("finish once")
            .finish()
            .expect("finish the test trace");
        let trace = Trace::open(&self.dir).expect("open the test trace");
        OpenTrace { trace, _dir: self }
    }
}

/// A finished temporary trace, open for reading.
pub struct OpenTrace {
    trace: Trace,
    _dir: TempTrace,
}

impl std::ops::Deref for OpenTrace {
    type Target = Trace;
    fn deref(&self) -> &Trace {
        &self.trace
    }
}

impl Drop for TempTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A width result of W = 32 with 4 units in one warp and nothing counted,
/// for tests to fill in.
pub fn width_result() -> crate::results::WidthResult {
    crate::results::WidthResult {
        warp_size: 32,
        units: 4,
        warps: 1,
        thread_instructions: 0,
        recorded_thread_instructions: 0,
        unfinished_units: 0,
        predicated_branches: 0,
        predicated_off_thread_instructions: 0,
        spinning_thread_instructions: 0,
        warp_instructions: 0,
        simt_efficiency: 0.0,
        divergent_branches: 0,
        memory: Default::default(),
        skipped_instructions: 0,
        serialized_warp_instructions: 0,
        locks: Vec::new(),
        functions: Vec::new(),
        off_stack: Default::default(),
        spin_wait_thread_instructions: 0,
        excluded_thread_instructions: 0,
    }
}

/// A function row with nothing counted, for tests to fill in.
pub fn function_result() -> crate::results::FunctionResult {
    crate::results::FunctionResult {
        name: String::new(),
        module: String::new(),
        file: None,
        line: None,
        share: 0.0,
        thread_instructions: 0,
        warp_instructions: 0,
        simt_efficiency: 0.0,
        memory: Default::default(),
        serialized_warp_instructions: 0,
        skipped_instructions: 0,
        spin_wait_thread_instructions: 0,
    }
}
