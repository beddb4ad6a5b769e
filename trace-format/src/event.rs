//! What a thread stream holds (§6.1, §6.4): block executions and events.

use crate::block_table::BlockId;
use crate::error::DecodeError;
use crate::varint::{self, Cursor};

/// Lock kinds of `lock_acquire` / `lock_release` (§6.4).
///
/// ```
/// use tf_trace::LockKind;
/// assert_eq!(LockKind::from_code(3), LockKind::RwWrite);
/// assert_eq!(LockKind::from_code(99), LockKind::Unknown(99));
/// assert_eq!(LockKind::Unknown(99).code(), 99);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// 0: a mutex (also a condition variable's mutex).
    Mutex,
    /// 1: a spin lock.
    Spin,
    /// 2: a reader-writer lock taken for reading.
    RwRead,
    /// 3: a reader-writer lock taken for writing.
    RwWrite,
    /// 4: a semaphore.
    Semaphore,
    /// 5: OpenMP unnamed critical.
    OmpCritical,
    /// 6: OpenMP named critical.
    OmpCriticalNamed,
    /// 7: OpenMP atomic.
    OmpAtomic,
    /// A code this version does not know.
    Unknown(u64),
}

impl LockKind {
    /// The kind with this code.
    pub fn from_code(c: u64) -> LockKind {
        use LockKind::*;
        match c {
            0 => Mutex,
            1 => Spin,
            2 => RwRead,
            3 => RwWrite,
            4 => Semaphore,
            5 => OmpCritical,
            6 => OmpCriticalNamed,
            7 => OmpAtomic,
            c => Unknown(c),
        }
    }
    /// The kind's code.
    pub fn code(self) -> u64 {
        use LockKind::*;
        match self {
            Mutex => 0,
            Spin => 1,
            RwRead => 2,
            RwWrite => 3,
            Semaphore => 4,
            OmpCritical => 5,
            OmpCriticalNamed => 6,
            OmpAtomic => 7,
            Unknown(c) => c,
        }
    }
}

/// Reasons of a `skip` (§6.4).
///
/// ```
/// use tf_trace::SkipReason;
/// assert_eq!(SkipReason::from_code(2), SkipReason::Excluded);
/// assert_eq!(SkipReason::Other.code(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// 0: inside a lock acquire or release function.
    LockRuntime,
    /// 1: barriers, condition waits, joins.
    SyncWait,
    /// 2: an `--exclude`d function.
    Excluded,
    /// 3: outside the `--only` region.
    OutsideRegion,
    /// 4: other.
    Other,
    /// 5: inside the OpenMP runtime handing out a worksharing loop's
    /// iterations (format 3).
    LoopSchedule,
    /// A code this version does not know.
    Unknown(u64),
}

impl SkipReason {
    /// The reason with this code.
    pub fn from_code(c: u64) -> SkipReason {
        use SkipReason::*;
        match c {
            0 => LockRuntime,
            1 => SyncWait,
            2 => Excluded,
            3 => OutsideRegion,
            4 => Other,
            5 => LoopSchedule,
            c => Unknown(c),
        }
    }
    /// The reason's code.
    pub fn code(self) -> u64 {
        use SkipReason::*;
        match self {
            LockRuntime => 0,
            SyncWait => 1,
            Excluded => 2,
            OutsideRegion => 3,
            Other => 4,
            LoopSchedule => 5,
            Unknown(c) => c,
        }
    }
}

/// How a thread ended (`thread_exit`, §6.4).
///
/// ```
/// assert_eq!(tf_trace::ExitHow::from_code(1), tf_trace::ExitHow::ProcessEnded);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitHow {
    /// 0: the thread ended.
    Ended,
    /// 1: the process exited or died while the thread was live.
    ProcessEnded,
    /// A code this version does not know.
    Unknown(u64),
}

impl ExitHow {
    /// The value with this code.
    pub fn from_code(c: u64) -> ExitHow {
        match c {
            0 => ExitHow::Ended,
            1 => ExitHow::ProcessEnded,
            c => ExitHow::Unknown(c),
        }
    }
    /// The code.
    pub fn code(self) -> u64 {
        match self {
            ExitHow::Ended => 0,
            ExitHow::ProcessEnded => 1,
            ExitHow::Unknown(c) => c,
        }
    }
}

/// How a block record named its block (useful for dumps and statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// Part of a run record.
    Run,
    /// A block record, successor candidate 0.
    Candidate0,
    /// A block record, successor candidate 1.
    Candidate1,
    /// A block record with an explicit block id.
    Explicit,
}

/// One memory access of a block execution: a present operand and its address.
///
/// ```
/// let a = tf_trace::Access { operand: 0, addr: 0x7ffc_0000, size: 8, write: false };
/// assert!(!a.write);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Access {
    /// Index of the operand in the block's [`operands`](crate::Block::operands).
    pub operand: u16,
    /// Access size in bytes (from the block table).
    pub size: u16,
    /// A write (from the block table).
    pub write: bool,
    /// The effective address.
    pub addr: u64,
}

/// One block execution, borrowed from the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockExec<'a> {
    /// The block.
    pub block: BlockId,
    /// Instructions executed (all of the block's unless partial).
    pub insns: u32,
    /// False for a partial execution (one preceded by a `partial` event).
    pub complete: bool,
    /// Operands of this execution, present or absent: all of the block's
    /// for a complete execution, the first `n_ops` for a partial one.
    pub operands: u32,
    /// How the record named the block.
    pub via: Via,
    pub(crate) present: u32,
    pub(crate) accesses: &'a [Access],
}

impl<'a> BlockExec<'a> {
    /// The present operands' accesses, in operand order (absent
    /// conditional operands are left out).
    #[inline]
    pub fn accesses(&self) -> &'a [Access] {
        self.accesses
    }

    /// How many of its operands accessed memory (absent conditional
    /// operands left out): the length of [`accesses`](Self::accesses),
    /// known also to a reader that does not decode addresses.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-present-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// // a load, and a store that may not happen
    /// let b = w.block(&BlockDef::new(0x1000).insn(4).read(8).insn(4).cond_write(8))?;
    /// w.thread(1)?.exec_opt(b, &[Some(0x5000), Some(0x6000)])?;
    /// w.thread(1)?.exec_opt(b, &[Some(0x5000), None])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// r.set_addresses(false);
    /// let mut present = Vec::new();
    /// while let Some(ev) = r.next_event() {
    ///     if let Event::Block(x) = ev? {
    ///         assert!(x.accesses().is_empty());
    ///         present.push(x.present_operands());
    ///     }
    /// }
    /// assert_eq!(present, [2, 1]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn present_operands(&self) -> u32 {
        self.present
    }
}

/// A `loop_chunk` event (type 10, FORMAT.md §6.6): iterations of a
/// worksharing loop instance that the OpenMP runtime handed one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoopChunk {
    /// The loop instance, numbered from 1 in the order instances began.
    pub loop_id: u64,
    /// Logical number of the chunk's first iteration (0 = the loop's first).
    pub first: u64,
    /// Iterations per chunk; 0: the thread has no more of this loop.
    pub count: u64,
    /// 0: one chunk; otherwise the thread also runs the chunks starting at
    /// `first + j × stride` (j = 1, 2, …) below `trip`, in order.
    pub stride: u64,
    /// Iterations of the whole loop instance.
    pub trip: u64,
}

impl LoopChunk {
    /// How many iterations the thread runs from this event on.
    ///
    /// ```
    /// use tf_trace::LoopChunk;
    /// let c = LoopChunk { loop_id: 1, first: 2, count: 2, stride: 8, trip: 13 };
    /// // chunks [2, 4), [10, 12) and nothing from 18 on
    /// assert_eq!(c.iterations(), 4);
    /// ```
    pub fn iterations(&self) -> u64 {
        if self.stride == 0 || self.count == 0 {
            return self.count;
        }
        let mut n = 0;
        let mut at = self.first;
        while at < self.trip {
            n += self.count.min(self.trip - at);
            at = at.saturating_add(self.stride);
        }
        n
    }

    /// The logical number of the `k`-th of those iterations (from 0).
    ///
    /// ```
    /// use tf_trace::LoopChunk;
    /// let c = LoopChunk { loop_id: 1, first: 2, count: 2, stride: 8, trip: 13 };
    /// assert_eq!((0..4).map(|k| c.number(k)).collect::<Vec<_>>(), [2, 3, 10, 11]);
    /// ```
    pub fn number(&self, k: u64) -> u64 {
        if self.stride == 0 || self.count == 0 {
            self.first + k
        } else {
            self.first + k / self.count * self.stride + k % self.count
        }
    }
}

/// A `static_loop` event (type 11, FORMAT.md §6.7): the thread begins its
/// part of a worksharing loop instance whose static schedule the compiler
/// expanded inline (GCC's `schedule(static)`): no runtime call hands out its
/// iterations, the thread computes them from its place in the team.
///
/// ```
/// use tf_trace::{Event, StaticLoop};
/// let s = StaticLoop { loop_id: 3, thread: 1, threads: 4 };
/// assert_eq!(Event::StaticLoop(s).type_code(), Some(11));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StaticLoop {
    /// The loop instance, numbered as `loop_chunk` instances are (one
    /// sequence for both).
    pub loop_id: u64,
    /// The thread's number in its team (`omp_get_thread_num()`).
    pub thread: u64,
    /// The number of threads of the team (`omp_get_num_threads()`).
    pub threads: u64,
}

/// One record of a thread stream, as the reader returns it.
///
/// Runs are expanded into one [`Event::Block`] per execution; `partial`
/// events are folded into the block execution they describe.
///
/// ```
/// use tf_trace::{Event, LockKind};
/// let e = Event::LockAcquire { kind: LockKind::Mutex, lock: 0x601040 };
/// assert_eq!(e.type_code(), Some(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A block execution.
    Block(BlockExec<'a>),
    /// Type 1: the thread starts.
    ThreadStart {
        /// Parent thread id, 0 = none.
        parent: u64,
        /// Lowest stack address.
        stack_lo: u64,
        /// One past the highest stack address.
        stack_hi: u64,
        /// The thread's start routine, 0 = unknown.
        start_routine: u64,
    },
    /// Type 2: the thread ends.
    ThreadExit {
        /// How.
        how: ExitHow,
    },
    /// Type 3: the thread now holds a lock.
    LockAcquire {
        /// Which kind of lock.
        kind: LockKind,
        /// Its address.
        lock: u64,
    },
    /// Type 4: the thread is about to release a lock.
    LockRelease {
        /// Which kind of lock.
        kind: LockKind,
        /// Its address.
        lock: u64,
    },
    /// Type 5: instructions ran here that the trace does not contain.
    Skip {
        /// Why they are missing.
        reason: SkipReason,
        /// How many.
        count: u64,
    },
    /// Type 6: a system call completed.
    Syscall {
        /// The system call number.
        number: u64,
        /// Nanoseconds in the kernel, 0 = not measured.
        nanos: u64,
    },
    /// Type 7: a signal handler starts.
    Signal {
        /// The signal.
        signo: u64,
    },
    /// Type 8: a signal handler returned.
    SignalReturn {
        /// The signal.
        signo: u64,
    },
    /// Type 9: a mark made by the program.
    Marker {
        /// What kind of mark.
        kind: u64,
        /// Its value.
        value: u64,
    },
    /// Type 10: a worksharing loop's runtime handed this thread iterations
    /// (FORMAT.md §6.6).
    LoopChunk(LoopChunk),
    /// Type 11: the thread begins its part of a loop instance whose static
    /// schedule the compiler expanded inline (FORMAT.md §6.7).
    StaticLoop(StaticLoop),
    /// Type 12: the thread enters the `--only` region (FORMAT.md §6.4): the
    /// next block is the first of a call whose return address lies at `sp`,
    /// the stack pointer at the call's start.
    ///
    /// ```
    /// use tf_trace::Event;
    /// assert_eq!(Event::RegionEntry { sp: 0x7ff0 }.type_code(), Some(12));
    /// ```
    RegionEntry {
        /// The stack pointer at the region's entry.
        sp: u64,
    },
    /// An event type this version does not know.
    Unknown {
        /// The type code.
        ty: u64,
        /// Its payload.
        payload: &'a [u8],
    },
}

pub(crate) const PARTIAL: u64 = 0;

impl Event<'_> {
    /// The event type code of §6.4 (`None` for block executions).
    pub fn type_code(&self) -> Option<u64> {
        Some(match self {
            Event::Block(_) => return None,
            Event::ThreadStart { .. } => 1,
            Event::ThreadExit { .. } => 2,
            Event::LockAcquire { .. } => 3,
            Event::LockRelease { .. } => 4,
            Event::Skip { .. } => 5,
            Event::Syscall { .. } => 6,
            Event::Signal { .. } => 7,
            Event::SignalReturn { .. } => 8,
            Event::Marker { .. } => 9,
            Event::LoopChunk(_) => 10,
            Event::StaticLoop(_) => 11,
            Event::RegionEntry { .. } => 12,
            Event::Unknown { ty, .. } => *ty,
        })
    }

    /// The payload fields of a known event, in order.
    fn fields(&self) -> ([u64; 5], usize) {
        match *self {
            Event::ThreadStart {
                parent,
                stack_lo,
                stack_hi,
                start_routine,
            } => ([parent, stack_lo, stack_hi, start_routine, 0], 4),
            Event::ThreadExit { how } => ([how.code(), 0, 0, 0, 0], 1),
            Event::LockAcquire { kind, lock } | Event::LockRelease { kind, lock } => {
                ([kind.code(), lock, 0, 0, 0], 2)
            }
            Event::Skip { reason, count } => ([reason.code(), count, 0, 0, 0], 2),
            Event::Syscall { number, nanos } => ([number, nanos, 0, 0, 0], 2),
            Event::Signal { signo } | Event::SignalReturn { signo } => ([signo, 0, 0, 0, 0], 1),
            Event::Marker { kind, value } => ([kind, value, 0, 0, 0], 2),
            Event::LoopChunk(c) => ([c.loop_id, c.first, c.count, c.stride, c.trip], 5),
            Event::StaticLoop(s) => ([s.loop_id, s.thread, s.threads, 0, 0], 3),
            Event::RegionEntry { sp } => ([sp, 0, 0, 0, 0], 1),
            Event::Block(_) | Event::Unknown { .. } => ([0; 5], 0),
        }
    }
}

/// Appends the event record (header varint and `bytes` payload) of `e`,
/// which must not be a block execution.
pub(crate) fn encode(out: &mut Vec<u8>, e: &Event<'_>) {
    let ty = e.type_code().expect("not an event");
    match e {
        Event::Unknown { payload, .. } => {
            varint::put(out, ty << 2 | 2);
            varint::put_bytes(out, payload);
        }
        _ => {
            let (f, n) = e.fields();
            encode_fields(out, ty, &f[..n]);
        }
    }
}

/// Appends an event record whose payload is the varints `fields`.
pub(crate) fn encode_fields(out: &mut Vec<u8>, ty: u64, fields: &[u64]) {
    varint::put(out, ty << 2 | 2);
    // At most 5 varints of 10 bytes: the length fits one byte.
    let at = out.len();
    out.push(0);
    for &v in fields {
        varint::put(out, v);
    }
    out[at] = (out.len() - at - 1) as u8;
}

/// Decodes the payload of a known event type (1..=12); `None` for others.
/// `pos` is the record's offset, for errors.
pub(crate) fn decode(
    ty: u64,
    payload: &[u8],
    pos: usize,
) -> Result<Option<Event<'static>>, DecodeError> {
    let n = match ty {
        1 => 4,
        2 | 7 | 8 | 12 => 1,
        3..=6 | 9 => 2,
        10 => 5,
        11 => 3,
        _ => return Ok(None),
    };
    let mut c = Cursor::new(payload);
    let mut f = [0u64; 5];
    for v in f.iter_mut().take(n) {
        *v = c
            .varint()
            .map_err(|_| DecodeError::new(pos, format!("event type {ty}: payload too short")))?;
    }
    if !c.is_empty() {
        return Err(DecodeError::new(
            pos,
            format!(
                "event type {ty}: {} bytes left over in payload",
                payload.len() - c.pos()
            ),
        ));
    }
    Ok(Some(match ty {
        1 => Event::ThreadStart {
            parent: f[0],
            stack_lo: f[1],
            stack_hi: f[2],
            start_routine: f[3],
        },
        2 => Event::ThreadExit {
            how: ExitHow::from_code(f[0]),
        },
        3 => Event::LockAcquire {
            kind: LockKind::from_code(f[0]),
            lock: f[1],
        },
        4 => Event::LockRelease {
            kind: LockKind::from_code(f[0]),
            lock: f[1],
        },
        5 => Event::Skip {
            reason: SkipReason::from_code(f[0]),
            count: f[1],
        },
        6 => Event::Syscall {
            number: f[0],
            nanos: f[1],
        },
        7 => Event::Signal { signo: f[0] },
        8 => Event::SignalReturn { signo: f[0] },
        10 => Event::LoopChunk(LoopChunk {
            loop_id: f[0],
            first: f[1],
            count: f[2],
            stride: f[3],
            trip: f[4],
        }),
        11 => Event::StaticLoop(StaticLoop {
            loop_id: f[0],
            thread: f[1],
            threads: f[2],
        }),
        12 => Event::RegionEntry { sp: f[0] },
        _ => Event::Marker {
            kind: f[0],
            value: f[1],
        },
    }))
}
