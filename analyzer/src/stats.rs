//! Counters the replay fills: instructions, memory requests and sectors.
//!
//! Definitions (`docs/ARCHITECTURE.md` §5): a *thread instruction* is one x86 instruction run
//! by one SIMT thread; a *warp instruction* is one instruction issued for a
//! warp, whatever its active lanes; SIMT efficiency = thread instructions /
//! (warp instructions × W). A *request* is one warp memory instruction (one
//! x86 memory operand, active lanes only) and its *sectors* are the distinct
//! aligned 32-byte sectors its lanes touch.

use serde::Serialize;

/// Thread and warp instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Insns {
    /// Thread instructions.
    pub thread_instructions: u64,
    /// Warp instructions.
    pub warp_instructions: u64,
}

impl Insns {
    /// SIMT efficiency for warps of `width` lanes, in [0, 1] (0 when nothing ran).
    ///
    /// ```
    /// let i = tf_analyzer::stats::Insns { thread_instructions: 28, warp_instructions: 11 };
    /// assert!((i.efficiency(4) - 28.0 / 44.0).abs() < 1e-12);
    /// ```
    pub fn efficiency(&self, width: usize) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.thread_instructions as f64 / (self.warp_instructions as f64 * width as f64)
        }
    }

    /// Adds `o`.
    pub fn add(&mut self, o: &Insns) {
        self.thread_instructions += o.thread_instructions;
        self.warp_instructions += o.warp_instructions;
    }
}

/// Where a request's memory lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Segment {
    /// The unit's own thread stack.
    Stack,
    /// Neither a stack nor a module image: malloc'd and mmap'd memory.
    Heap,
    /// A module's image (data, bss, read-only data).
    Global,
    /// Another thread's stack.
    Other,
}

impl Segment {
    /// All segments, in report order.
    pub const ALL: [Segment; 4] = [
        Segment::Stack,
        Segment::Heap,
        Segment::Global,
        Segment::Other,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Requests and the sectors they touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Requests {
    /// Warp memory instructions.
    pub requests: u64,
    /// Distinct 32-byte sectors, summed over requests.
    pub sectors: u64,
}

impl Requests {
    /// Mean sectors per request (0 without requests).
    pub fn sectors_per_request(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.sectors as f64 / self.requests as f64
        }
    }

    /// Counts one request of `sectors` sectors.
    ///
    /// ```
    /// let mut r = tf_analyzer::stats::Requests::default();
    /// r.add_one(2);
    /// r.add_one(1);
    /// assert_eq!((r.requests, r.sectors), (2, 3));
    /// ```
    #[inline]
    pub fn add_one(&mut self, sectors: u64) {
        self.requests += 1;
        self.sectors += sectors;
    }

    /// Adds `o`.
    pub fn add(&mut self, o: &Requests) {
        self.requests += o.requests;
        self.sectors += o.sectors;
    }
}

/// Requests by segment and direction, under both stack models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// `[segment][0 = load, 1 = store]`, stack addresses as the CPU laid them out.
    pub cpu: [[Requests; 2]; 4],
    /// Stack requests with each lane's stack interleaved as GPU local memory is.
    pub stack_interleaved: [Requests; 2],
}

impl Memory {
    /// Counts one request.
    #[inline]
    pub fn add_request(
        &mut self,
        segment: Segment,
        write: bool,
        sectors: u64,
        interleaved_sectors: u64,
    ) {
        self.cpu[segment.index()][write as usize].add_one(sectors);
        if segment == Segment::Stack {
            self.stack_interleaved[write as usize].add_one(interleaved_sectors);
        }
    }

    /// Requests in `segment` (loads and stores), CPU stack layout.
    pub fn segment(&self, segment: Segment) -> Requests {
        let [l, s] = self.cpu[segment.index()];
        Requests {
            requests: l.requests + s.requests,
            sectors: l.sectors + s.sectors,
        }
    }

    /// Loads (`write` false) or stores in `segment`.
    pub fn direction(&self, segment: Segment, write: bool) -> Requests {
        self.cpu[segment.index()][write as usize]
    }

    /// All requests, with the stack laid out as the CPU did or interleaved.
    pub fn total(&self, interleaved: bool) -> Requests {
        let mut t = Requests::default();
        for s in Segment::ALL {
            if interleaved && s == Segment::Stack {
                t.add(&self.stack_interleaved[0]);
                t.add(&self.stack_interleaved[1]);
            } else {
                t.add(&self.segment(s));
            }
        }
        t
    }

    /// Adds `o`.
    pub fn add(&mut self, o: &Memory) {
        for s in 0..4 {
            for d in 0..2 {
                self.cpu[s][d].add(&o.cpu[s][d]);
            }
        }
        for d in 0..2 {
            self.stack_interleaved[d].add(&o.stack_interleaved[d]);
        }
    }
}

/// What one function's own instructions did (never its callees').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// Instructions.
    pub insns: Insns,
    /// Memory requests.
    pub memory: Memory,
    /// Warp instructions issued with the lanes of one lock serialized.
    pub serialized_warp_instructions: u64,
    /// Thread instructions of spin-wait code (crate::spin_wait), active
    /// lanes only: counted in `insns` too, or left out of them under
    /// [`SpinWaitRule::Exclude`](crate::spin_wait::SpinWaitRule).
    pub spin_wait_instructions: u64,
}

impl FunctionStats {
    /// Adds `o`.
    pub fn add(&mut self, o: &FunctionStats) {
        self.insns.add(&o.insns);
        self.memory.add(&o.memory);
        self.serialized_warp_instructions += o.serialized_warp_instructions;
        self.spin_wait_instructions += o.spin_wait_instructions;
    }
}
