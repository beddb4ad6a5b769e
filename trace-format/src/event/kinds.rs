//! The values of events' fields: lock kinds, skip reasons, how a thread
//! ended (§6.4).

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
