//! Stage 8: the results model, as `tf analyze` prints it and writes it to
//! JSON and CSV.
//!
//! Every figure is defined in `docs/ARCHITECTURE.md` §5; fractions are in [0, 1].

use crate::off_stack::OffStack;
use crate::scan::Skipped;
use crate::stats::{Memory, Requests, Segment};
use serde::{Deserialize, Serialize};

mod csv_rows;

/// Everything `tf analyze` reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The trace directory.
    pub trace: String,
    /// The traced command.
    pub command: Vec<String>,
    /// `--unit`.
    pub unit: String,
    /// What a unit is, as the analysis chose it (`--unit auto` decides by
    /// the program).
    #[serde(default)]
    pub units_are: String,
    /// `--batch`.
    pub batch: String,
    /// `--reconverge`.
    pub reconverge: String,
    /// `--predicate` (0: no if-conversion).
    pub predicate: u32,
    /// `--lock-model`.
    pub lock_model: String,
    /// `--spin-wait`: `count`, or `exclude` (spin-wait code left out of the
    /// figures); `count` in results written before tf had the option.
    #[serde(default = "spin_wait_counted")]
    pub spin_wait: String,
    /// `--merge-tails`: whether blocks that are copies of each other issued
    /// as one (false in results written before tf had the option).
    #[serde(default)]
    pub merge_tails: bool,
    /// Under `--merge-tails`, how many blocks issued as a copy of another.
    #[serde(default)]
    pub merged_blocks: u64,
    /// `--locks`: whether lanes holding the same lock were serialized.
    pub locks: bool,
    /// Per thread.
    pub threads: Vec<ThreadReport>,
    /// Work the trace does not contain, over all threads.
    pub skipped: Skipped,
    /// One result per warp width.
    pub results: Vec<WidthResult>,
    /// Notes on what could not be analysed exactly (anomalies).
    pub warnings: Vec<String>,
    /// Damage that stopped the reading of a thread, one line each naming
    /// the file and byte offset: the figures cover what came before it.
    pub damage: Vec<String>,
    /// Why the trace holds less than its run, in its manifest's word (a
    /// tracer that did not finish, an `execve` not followed): the figures
    /// cover what was recorded ([`crate::recorded::unrecorded`]).
    #[serde(default)]
    pub unrecorded: Vec<String>,
    /// Why the figures do not cover all the recorded work (empty when they
    /// do): lanes that did not finish their units, instructions recorded but
    /// not replayed. A caller must not present such figures as complete.
    pub incomplete: Vec<String>,
    /// The shard of the warps these figures cover (`--shard i/N`); `None`
    /// for all of them. Shards combine with [`crate::merge::merge`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// One of `count` shards of an analysis: the warps whose number (in
/// formation order, per width) is `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0..count.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// Whether warp number `warp` belongs to this shard.
    pub fn holds(&self, warp: usize) -> bool {
        warp % self.count == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `i/N`, 0 <= i < N.
    ///
    /// ```
    /// let s: tf_analyzer::results::Shard = "2/7".parse().unwrap();
    /// assert_eq!((s.index, s.count), (2, 7));
    /// assert!("7/7".parse::<tf_analyzer::results::Shard>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s}: a shard is i/N with 0 <= i < N");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if index < count {
            Ok(Shard { index, count })
        } else {
            Err(bad())
        }
    }
}

/// One thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    /// Thread id.
    pub tid: u64,
    /// Parent thread id (0 = none).
    pub parent: u64,
    /// Start routine name, when known.
    pub start_routine: String,
    /// Instructions traced.
    pub traced_instructions: u64,
    /// Instructions skipped (lock runtime, waits, excluded, outside `--only`).
    pub skipped_instructions: u64,
    /// The skipped work by reason.
    pub skipped: Skipped,
    /// Units cut from it.
    pub units: usize,
}

/// The result for one warp width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WidthResult {
    /// W.
    pub warp_size: usize,
    /// SIMT threads.
    pub units: usize,
    /// Warps.
    pub warps: usize,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// The units' recorded instructions: what `thread_instructions` must
    /// equal when every unit was replayed in full.
    pub recorded_thread_instructions: u64,
    /// Units whose lanes did not reach their end in the replay.
    pub unfinished_units: u64,
    /// Branches executed as predicated code (`--predicate`), not counted as
    /// divergent.
    pub predicated_branches: u64,
    /// Of `thread_instructions`, those of lanes whose predicate was off.
    pub predicated_off_thread_instructions: u64,
    /// Of `thread_instructions`, those of lanes spinning on a lock
    /// (`--lock-model spin`).
    pub spinning_thread_instructions: u64,
    /// Warp instructions.
    pub warp_instructions: u64,
    /// thread / (warp × W).
    pub simt_efficiency: f64,
    /// Warp-level branches whose lanes split.
    pub divergent_branches: u64,
    /// Memory requests by segment.
    pub memory: MemoryReport,
    /// Skipped instructions (all threads, not only units).
    pub skipped_instructions: u64,
    /// Warp instructions issued by serialized lock rounds.
    pub serialized_warp_instructions: u64,
    /// Per lock, by serialized warp instructions (most first).
    pub locks: Vec<LockResult>,
    /// Per function, by warp instructions (most first).
    pub functions: Vec<FunctionResult>,
    /// Units that ran on a stack outside their thread's, and their calls
    /// (zero in results written before tf counted them).
    #[serde(default)]
    pub off_stack: OffStack,
    /// The units' thread instructions in spin-wait loops (loops with a
    /// `pause` or a call of `sched_yield`: crate::spin_wait; zero in results
    /// written before tf counted them): of `thread_instructions`, or, under
    /// `--spin-wait exclude`, the `excluded_thread_instructions`.
    #[serde(default)]
    pub spin_wait_thread_instructions: u64,
    /// Thread instructions replayed but left out of every figure
    /// (`--spin-wait exclude`): with `thread_instructions`, less the idle
    /// lanes' (predicated off, spinning), they make the recorded ones.
    #[serde(default)]
    pub excluded_thread_instructions: u64,
}

/// One lock, as the units used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockResult {
    /// Its address, `0x…`.
    pub address: String,
    /// The data symbol it lies in (`name` or `name+offset`), when known;
    /// in a module's image that no symbol covers, `module+offset`.
    pub symbol: Option<String>,
    /// Where it lies: `global` (in a module's image), `stack of thread N`
    /// (`stack of threads N, M` for a stack that a later thread reused) or
    /// `heap` (anywhere else). Empty in results written before tf said so.
    #[serde(default)]
    pub location: String,
    /// Its kind (`mutex`, `spin`, `rwlock-read`, …).
    pub kind: String,
    /// Acquisitions by the units.
    pub acquisitions: u64,
    /// Times lanes of one warp held it at once.
    pub contentions: u64,
    /// Lanes that waited for another lane's critical section.
    pub serialized_lanes: u64,
    /// Warp instructions issued while they did.
    pub serialized_warp_instructions: u64,
}

/// One function's own instructions (never its callees').
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionResult {
    /// Demangled name.
    pub name: String,
    /// Module file name.
    pub module: String,
    /// Source file of its entry, when the module has line information.
    pub file: Option<String>,
    /// Its line.
    pub line: Option<u32>,
    /// Its share of all warp instructions, in [0, 1].
    pub share: f64,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// Warp instructions.
    pub warp_instructions: u64,
    /// thread / (warp × W).
    pub simt_efficiency: f64,
    /// Memory requests by segment.
    pub memory: MemoryReport,
    /// Of its warp instructions, those issued by serialized lock rounds.
    pub serialized_warp_instructions: u64,
    /// Instructions skipped right after its blocks (calls into lock runtime
    /// or excluded functions made from it).
    pub skipped_instructions: u64,
    /// Its thread instructions in spin-wait loops, counted in
    /// `thread_instructions` or left out of them as the report's
    /// `spin_wait` says (zero in results written before tf counted them).
    #[serde(default)]
    pub spin_wait_thread_instructions: u64,
}

/// Requests, sectors and their ratio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestReport {
    /// Warp memory instructions.
    pub requests: u64,
    /// 32-byte sectors touched.
    pub sectors: u64,
    /// sectors / requests (0 without requests).
    pub sectors_per_request: f64,
}

impl From<Requests> for RequestReport {
    fn from(r: Requests) -> Self {
        RequestReport {
            requests: r.requests,
            sectors: r.sectors,
            sectors_per_request: r.sectors_per_request(),
        }
    }
}

/// One segment: all its requests, and loads and stores apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentReport {
    /// Warp memory instructions.
    pub requests: u64,
    /// 32-byte sectors touched.
    pub sectors: u64,
    /// sectors / requests.
    pub sectors_per_request: f64,
    /// Loads only.
    pub loads: RequestReport,
    /// Stores only.
    pub stores: RequestReport,
}

/// Memory requests by segment (stack addresses as the CPU laid them out),
/// and the stack under GPU local-memory interleaving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// The unit's own thread stack.
    pub stack: SegmentReport,
    /// Heap and other anonymous memory.
    pub heap: SegmentReport,
    /// Module data.
    pub global: SegmentReport,
    /// Other threads' stacks.
    pub other: SegmentReport,
    /// The stack with `--stack-model interleaved`: each lane's words
    /// interleaved as GPU local memory lays them out.
    pub stack_interleaved: SegmentReport,
    /// All requests, stack as the CPU laid it out.
    pub all: RequestReport,
    /// All requests, stack interleaved.
    pub all_interleaved: RequestReport,
}

impl From<&Memory> for MemoryReport {
    fn from(m: &Memory) -> Self {
        let seg = |s: Segment| {
            let all: RequestReport = m.segment(s).into();
            SegmentReport {
                requests: all.requests,
                sectors: all.sectors,
                sectors_per_request: all.sectors_per_request,
                loads: m.direction(s, false).into(),
                stores: m.direction(s, true).into(),
            }
        };
        let [l, s] = m.stack_interleaved;
        let both = Requests {
            requests: l.requests + s.requests,
            sectors: l.sectors + s.sectors,
        };
        MemoryReport {
            stack: seg(Segment::Stack),
            heap: seg(Segment::Heap),
            global: seg(Segment::Global),
            other: seg(Segment::Other),
            stack_interleaved: SegmentReport {
                requests: both.requests,
                sectors: both.sectors,
                sectors_per_request: both.sectors_per_request(),
                loads: l.into(),
                stores: s.into(),
            },
            all: m.total(false).into(),
            all_interleaved: m.total(true).into(),
        }
    }
}

/// `--spin-wait`'s default, for results written before tf had it.
fn spin_wait_counted() -> String {
    crate::spin_wait::SpinWaitRule::Count.to_string()
}

/// Orders functions as reports list them: most warp instructions first.
pub fn sort_functions(functions: &mut [FunctionResult]) {
    functions.sort_by(|a, b| {
        b.warp_instructions
            .cmp(&a.warp_instructions)
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// Orders locks as reports list them: most serialized warp instructions first.
pub fn sort_locks(locks: &mut [LockResult]) {
    locks.sort_by(|a, b| {
        (b.serialized_warp_instructions, b.acquisitions)
            .cmp(&(a.serialized_warp_instructions, a.acquisitions))
            .then_with(|| a.address.cmp(&b.address))
    });
}

impl Report {
    /// Instructions the trace's threads hold (those the first pass read).
    pub fn traced_instructions(&self) -> u64 {
        self.threads.iter().map(|t| t.traced_instructions).sum()
    }

    /// Whether the figures cover the whole run: no damage, a trace that
    /// holds all of its run, and a replay of all of it. A caller must not
    /// present figures for which this is false as complete.
    ///
    /// ```no_run
    /// use tf_analyzer::{analyze, Options, Silent};
    /// let trace = tf_trace::Trace::open("trace-pigz-1").unwrap();
    /// let report = analyze(&trace, &Options::default(), &Silent).unwrap();
    /// if !report.is_complete() {
    ///     eprintln!("partial: {:?} {:?}", report.damage, report.unrecorded);
    /// }
    /// ```
    pub fn is_complete(&self) -> bool {
        self.damage.is_empty() && self.unrecorded.is_empty() && self.incomplete.is_empty()
    }

    /// What the units cover: the instructions they recorded and the traced
    /// ones; `None` for a shard, whose warps hold only some of the units.
    pub fn unit_coverage(&self) -> Option<(u64, u64)> {
        let inside = self.results.first()?.recorded_thread_instructions;
        self.shard
            .is_none()
            .then(|| (inside, self.traced_instructions()))
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report serializes")
    }
}
