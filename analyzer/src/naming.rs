//! Stage 8: the results model of one warp width from the replay's counts,
//! with names and places (functions, source lines, lock symbols), the
//! threads' rows, and the check that the replay covered every recorded
//! instruction.

use crate::functions::FunctionTable;
use crate::replay::WarpStats;
use crate::results::{
    sort_functions, sort_locks, FunctionResult, LockResult, MemoryReport, ThreadReport, WidthResult,
};
use crate::scan::ThreadScan;
use crate::segments::{SegmentCache, Segments};
use crate::stats::{FunctionStats, Segment};
use crate::symbols::{SourceLines, Symbols};
use std::collections::HashMap;
use tf_trace::{BlockTable, FunctionId};

/// The warnings that the counts of `results` call for, the same at every
/// width (so the first width's counts): units that ran on a stack outside
/// their thread's, units that spun, and units that bound library functions
/// lazily.
pub(crate) fn count_warnings(results: &[WidthResult]) -> Vec<String> {
    let Some(r) = results.first() else {
        return Vec::new();
    };
    (r.off_stack.warning(r.units).into_iter())
        .chain(crate::spin_wait::warning(r))
        .chain(crate::lazy_binding::warning(results))
        .collect()
}

/// `part` as a percentage of `whole`, to two places; a share that would
/// print as zero says that it is there.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    let share = 100.0 * part as f64 / whole.max(1) as f64;
    if part > 0 && share < 0.005 {
        "under 0.01%".to_string()
    } else {
        format!("{share:.2}%")
    }
}

/// Why the replays of `results` do not cover every recorded instruction.
pub(crate) fn incomplete(results: &[WidthResult]) -> Vec<String> {
    let mut why = Vec::new();
    for r in results {
        if r.unfinished_units > 0 {
            why.push(format!(
                "W={}: {} of {} units did not finish in the replay",
                r.warp_size, r.unfinished_units, r.units
            ));
        }
        let replayed = r.thread_instructions - r.predicated_off_thread_instructions
            + r.excluded_thread_instructions
            - r.spinning_thread_instructions;
        if replayed != r.recorded_thread_instructions {
            let share = replayed as f64 / r.recorded_thread_instructions.max(1) as f64;
            why.push(format!(
                "W={}: {} of {} recorded instructions were replayed ({:.2}%)",
                r.warp_size,
                replayed,
                r.recorded_thread_instructions,
                100.0 * share
            ));
        }
    }
    why
}

/// The threads' rows of the report, each with its start routine named as
/// `tf info` names it: its symbol's name, else the name the function table
/// gives code without one (pigz+0x11250: Debian's programs are stripped).
pub(crate) fn thread_reports(
    scans: &[ThreadScan],
    symbols: &Symbols,
    functions: &FunctionTable,
    table: &BlockTable,
) -> Vec<ThreadReport> {
    // Routines without a symbol that no thread ran (threads that never ran
    // before the program ended): the function table has no frame of theirs,
    // so a table of their own names them as it would.
    let never_ran: Vec<u64> = (scans.iter().map(|s| s.start_routine))
        .filter(|&a| a != 0 && symbols.at_entry(a).is_none() && functions.frame(a) == 0)
        .collect();
    let never_ran = (!never_ran.is_empty()).then(|| FunctionTable::new(symbols, table, never_ran));
    let routine_name = |at: u64| {
        if let Some(f) = symbols.at_entry(at) {
            return symbols.name(f).to_string();
        }
        for t in std::iter::once(functions).chain(&never_ran) {
            if let f @ 1.. = t.frame(at) {
                return t.info(f).name.clone();
            }
        }
        String::new()
    };
    scans
        .iter()
        .map(|s| ThreadReport {
            tid: s.tid,
            parent: s.parent,
            start_routine: routine_name(s.start_routine),
            traced_instructions: s.traced,
            skipped_instructions: s.skipped.instructions(),
            skipped: s.skipped.clone(),
            units: s.units.len(),
        })
        .collect()
}

/// Names and places for the report: functions, source lines, lock symbols.
pub(crate) struct Naming<'a> {
    functions: &'a FunctionTable,
    lines: &'a SourceLines,
    /// Skipped instructions per function.
    skipped_in: HashMap<FunctionId, u64>,
    skipped: u64,
    /// Module images and thread stacks, to place locks.
    segments: &'a Segments,
    /// Each thread's stack `[lo, hi)`, by thread id, in thread order.
    stacks: Vec<(u64, (u64, u64))>,
}

impl<'a> Naming<'a> {
    pub(crate) fn new(
        functions: &'a FunctionTable,
        lines: &'a SourceLines,
        segments: &'a Segments,
        scans: &[ThreadScan],
    ) -> Naming<'a> {
        let mut skipped_in: HashMap<FunctionId, u64> = HashMap::new();
        for s in scans {
            for &((sym, frame), n) in &s.skipped_in {
                let f = if sym != 0 {
                    sym
                } else {
                    functions.frame(frame)
                };
                *skipped_in.entry(f).or_default() += n;
            }
        }
        Naming {
            functions,
            lines,
            skipped_in,
            skipped: scans.iter().map(|s| s.skipped.instructions()).sum(),
            segments,
            stacks: scans.iter().map(|s| (s.tid, s.stack)).collect(),
        }
    }

    pub(crate) fn width_result(
        &self,
        total: &WarpStats,
        width: usize,
        units: usize,
        warps: usize,
    ) -> WidthResult {
        let all_warp = total.insns.warp_instructions.max(1) as f64;
        let mut functions: Vec<FunctionResult> = total
            .functions
            .iter()
            .enumerate()
            // a function whose every instruction was left out as spin-wait
            // code (--spin-wait exclude) still shows its spinning
            .filter(|(_, f)| f.insns.warp_instructions > 0 || f.spin_wait_instructions > 0)
            .map(|(id, f)| self.function_result(id as FunctionId, f, width, all_warp))
            .collect();
        sort_functions(&mut functions);
        let mut locks: Vec<LockResult> = total
            .locks
            .iter()
            .map(|(&addr, l)| LockResult {
                address: format!("{addr:#x}"),
                symbol: self.lines.symbol_or_offset(addr),
                location: lock_location(&self.stacks, self.segments, addr),
                kind: lock_kind_name(l.kind),
                acquisitions: l.acquisitions,
                contentions: l.contentions,
                serialized_lanes: l.serialized_lanes,
                serialized_warp_instructions: l.serialized_warp_instructions,
            })
            .collect();
        sort_locks(&mut locks);
        WidthResult {
            warp_size: width,
            units,
            warps,
            thread_instructions: total.insns.thread_instructions,
            recorded_thread_instructions: total.recorded_instructions,
            unfinished_units: total.unfinished_lanes,
            predicated_branches: total.predicated_branches,
            predicated_off_thread_instructions: total.predicated_off,
            spinning_thread_instructions: total.spinning,
            warp_instructions: total.insns.warp_instructions,
            simt_efficiency: total.insns.efficiency(width),
            divergent_branches: total.divergent_branches,
            memory: MemoryReport::from(&total.memory),
            skipped_instructions: self.skipped,
            serialized_warp_instructions: total
                .locks
                .values()
                .map(|l| l.serialized_warp_instructions)
                .sum(),
            locks,
            functions,
            off_stack: total.off_stack,
            spin_wait_thread_instructions: (total.functions.iter())
                .map(|f| f.spin_wait_instructions)
                .sum(),
            excluded_thread_instructions: total.excluded,
        }
    }

    fn function_result(
        &self,
        id: FunctionId,
        f: &FunctionStats,
        width: usize,
        all_warp: f64,
    ) -> FunctionResult {
        let info = self.functions.info(id);
        let line = info.entry.and_then(|e| self.lines.line(e));
        FunctionResult {
            name: info.name.clone(),
            module: info.module.clone(),
            file: line.as_ref().map(|l| l.file.clone()),
            line: line.map(|l| l.line),
            share: f.insns.warp_instructions as f64 / all_warp,
            thread_instructions: f.insns.thread_instructions,
            warp_instructions: f.insns.warp_instructions,
            simt_efficiency: f.insns.efficiency(width),
            memory: MemoryReport::from(&f.memory),
            serialized_warp_instructions: f.serialized_warp_instructions,
            skipped_instructions: self.skipped_in.get(&id).copied().unwrap_or(0),
            spin_wait_thread_instructions: f.spin_wait_instructions,
        }
    }
}

fn lock_kind_name(kind: Option<tf_trace::LockKind>) -> String {
    use tf_trace::LockKind::*;
    match kind {
        Some(Mutex) => "mutex".into(),
        Some(Spin) => "spin".into(),
        Some(RwRead) => "rwlock-read".into(),
        Some(RwWrite) => "rwlock-write".into(),
        Some(Semaphore) => "semaphore".into(),
        Some(OmpCritical) => "omp-critical".into(),
        Some(OmpCriticalNamed) => "omp-critical-named".into(),
        Some(OmpAtomic) => "omp-atomic".into(),
        Some(Unknown(c)) => format!("kind-{c}"),
        None => "unknown".into(),
    }
}

/// Where a lock at `addr` lies ([`LockResult::location`]), among these
/// threads' stacks (by thread id) and the module images of `segments`.
fn lock_location(stacks: &[(u64, (u64, u64))], segments: &Segments, addr: u64) -> String {
    let on_stack: Vec<String> = (stacks.iter())
        .filter(|(_, (lo, hi))| (*lo..*hi).contains(&addr))
        .map(|(tid, _)| tid.to_string())
        .collect();
    match on_stack.len() {
        0 => {}
        1 => return format!("stack of thread {}", on_stack[0]),
        _ => return format!("stack of threads {}", on_stack.join(", ")),
    }
    // On no thread's stack: the module images tell global from heap.
    let no_stack = (0, 0);
    match segments.classify(no_stack, addr, &mut SegmentCache::default()) {
        Segment::Global => "global".to_string(),
        _ => "heap".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_are_placed_in_a_module_on_a_stack_or_on_the_heap() {
        // thread 5 reused thread 3's stack
        let stacks = [
            (1, (0x7000, 0x8000)),
            (3, (0x9000, 0xa000)),
            (5, (0x9000, 0xa000)),
        ];
        let segments = Segments::new([(0x40_0000, 0x50_0000)], stacks.map(|(_, s)| s));
        let at = |addr| lock_location(&stacks, &segments, addr);
        assert_eq!(at(0x40_1000), "global");
        assert_eq!(at(0x7ff0), "stack of thread 1");
        assert_eq!(at(0x9ff0), "stack of threads 3, 5");
        assert_eq!(at(0x8000), "heap");
        assert_eq!(at(0x5555_0000_0000), "heap");
    }

    fn width(thread: u64, recorded: u64, unfinished: u64) -> WidthResult {
        WidthResult {
            thread_instructions: thread,
            recorded_thread_instructions: recorded,
            unfinished_units: unfinished,
            warp_instructions: thread,
            simt_efficiency: 1.0 / 32.0,
            ..crate::testutil::width_result()
        }
    }

    #[test]
    fn lanes_that_did_not_finish_make_the_figures_incomplete() {
        assert!(incomplete(&[width(72, 72, 0)]).is_empty());
        assert_eq!(
            incomplete(&[width(11, 24, 3)]),
            [
                "W=32: 3 of 4 units did not finish in the replay",
                "W=32: 11 of 24 recorded instructions were replayed (45.83%)"
            ]
        );
    }

    #[test]
    fn a_share_too_small_to_print_says_that_it_is_there() {
        assert_eq!(percent(12000, 40310), "29.77%");
        assert_eq!(percent(1600, 99664074), "under 0.01%");
        assert_eq!(percent(5, 100000), "0.01%");
        assert_eq!(percent(0, 7), "0.00%");
    }
}
