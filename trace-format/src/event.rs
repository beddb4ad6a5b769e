//! What a thread stream holds (§6.1, §6.4): block executions and events.

use crate::error::DecodeError;
use crate::varint::{self, Cursor};

mod block_exec;
mod kinds;
mod loops;
pub use block_exec::{Access, BlockExec, Via};
pub use kinds::{ExitHow, LockKind, SkipReason};
pub use loops::{LoopChunk, StaticLoop};

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
