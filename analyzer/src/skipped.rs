//! The work a thread did that its trace does not contain, counted from its
//! `skip` and `syscall` events by the first pass ([`crate::scan`]): by
//! reason, and system calls by number.

use tf_trace::SkipReason;

/// Calls of one system call and the time they spent in the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SyscallCount {
    /// Calls.
    pub calls: u64,
    /// Nanoseconds in the kernel (0 when not measured).
    pub nanos: u64,
}

/// Counts of work the trace does not contain, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// Inside lock acquire and release functions.
    pub lock_runtime: u64,
    /// Waiting in barriers, condition variables and joins.
    pub sync_wait: u64,
    /// In `--exclude`d functions.
    pub excluded: u64,
    /// Outside the `--only` functions.
    pub outside_only: u64,
    /// Inside the OpenMP runtime handing out loop iterations.
    #[serde(default)]
    pub loop_schedule: u64,
    /// Any other reason.
    pub other: u64,
    /// System calls made.
    pub syscalls: u64,
    /// Nanoseconds spent in the kernel by those system calls (when measured).
    pub syscall_nanos: u64,
    /// The same by system call number (x86-64 numbering: 0 read, 1 write, …).
    pub syscalls_by_number: std::collections::BTreeMap<u64, SyscallCount>,
}

impl Skipped {
    /// Counts a `skip` event.
    pub fn add(&mut self, reason: SkipReason, count: u64) {
        let slot = match reason {
            SkipReason::LockRuntime => &mut self.lock_runtime,
            SkipReason::SyncWait => &mut self.sync_wait,
            SkipReason::Excluded => &mut self.excluded,
            SkipReason::OutsideRegion => &mut self.outside_only,
            SkipReason::LoopSchedule => &mut self.loop_schedule,
            _ => &mut self.other,
        };
        *slot += count;
    }

    /// All skipped instructions (system calls are counted apart).
    pub fn instructions(&self) -> u64 {
        self.by_reason().iter().map(|(_, n)| n).sum()
    }

    /// The counts by reason, each with the words tf's outputs name it by
    /// (`other` holds the dynamic linker's lazy binding, FORMAT.md §7), in
    /// the order they show them.
    ///
    /// ```
    /// use tf_analyzer::scan::Skipped;
    /// use tf_trace::SkipReason;
    /// let mut s = Skipped::default();
    /// s.add(SkipReason::LoopSchedule, 7);
    /// s.add(SkipReason::Other, 2);
    /// assert_eq!(s.by_reason()[2], ("loop scheduling", 7));
    /// assert_eq!(s.by_reason()[5], ("other", 2));
    /// assert_eq!(s.instructions(), 9);
    /// ```
    pub fn by_reason(&self) -> [(&'static str, u64); 6] {
        [
            ("lock runtime", self.lock_runtime),
            ("waits", self.sync_wait),
            ("loop scheduling", self.loop_schedule),
            ("excluded", self.excluded),
            ("outside --only", self.outside_only),
            ("other", self.other),
        ]
    }

    /// [`by_reason`](Self::by_reason) as the text outputs print it.
    ///
    /// ```
    /// use tf_analyzer::scan::Skipped;
    /// let s = Skipped { lock_runtime: 3, ..Skipped::default() };
    /// assert_eq!(
    ///     s.by_reason_text(),
    ///     "lock runtime 3, waits 0, loop scheduling 0, excluded 0, outside --only 0, other 0"
    /// );
    /// ```
    pub fn by_reason_text(&self) -> String {
        let reasons: Vec<String> = (self.by_reason().iter())
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        reasons.join(", ")
    }

    /// Adds another thread's counts.
    pub fn merge(&mut self, o: &Skipped) {
        self.lock_runtime += o.lock_runtime;
        self.sync_wait += o.sync_wait;
        self.excluded += o.excluded;
        self.outside_only += o.outside_only;
        self.loop_schedule += o.loop_schedule;
        self.other += o.other;
        self.syscalls += o.syscalls;
        self.syscall_nanos += o.syscall_nanos;
        for (&n, c) in &o.syscalls_by_number {
            let mine = self.syscalls_by_number.entry(n).or_default();
            mine.calls += c.calls;
            mine.nanos += c.nanos;
        }
    }

    /// Counts a system call.
    pub fn syscall(&mut self, number: u64, nanos: u64) {
        self.syscalls += 1;
        self.syscall_nanos += nanos;
        let c = self.syscalls_by_number.entry(number).or_default();
        c.calls += 1;
        c.nanos += nanos;
    }
}
