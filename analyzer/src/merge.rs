//! Combining the reports of the shards of one analysis.
//!
//! Warps are independent: `tf analyze --shard i/N` replays only the warps
//! whose number is `i` modulo `N` (per width), on any machine, and
//! [`merge`] adds the shards' counts and derives every ratio from the sums
//! with the same formulas as one run, so that merging all `N` shards gives
//! exactly the report of one unsharded run.

use crate::naming::{count_warnings, incomplete};
use crate::results::{
    sort_functions, sort_locks, FunctionResult, LockResult, MemoryReport, Report, RequestReport,
    SegmentReport, WidthResult,
};
use crate::stats::{Insns, Requests};

/// Why shards could not be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no reports to merge")]
    Empty,
    /// A report that is not a shard.
    #[error("part {0} is not a shard (made without --shard)")]
    NotAShard(usize),
    /// Shards of different analyses.
    #[error("part {0} is a shard of another analysis: its {1} differs from part 0's")]
    Mismatch(usize, &'static str),
    /// A shard given twice.
    #[error("shard {0}/{1} is given twice")]
    Duplicate(usize, usize),
    /// A shard missing.
    #[error("shard {0}/{1} is missing: every shard 0..{1} is needed")]
    Missing(usize, usize),
}

/// Merges the reports of all shards of one analysis into the report of the
/// whole analysis.
pub fn merge(parts: Vec<Report>) -> Result<Report, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    let count = first.shard.ok_or(MergeError::NotAShard(0))?.count;
    let mut seen = vec![false; count];
    for (k, p) in parts.iter().enumerate() {
        let s = p.shard.ok_or(MergeError::NotAShard(k))?;
        let same = [
            ("trace", p.trace == first.trace),
            ("shard count", s.count == count),
            ("set of options", same_options(p, first)),
            ("warp widths", widths(p) == widths(first)),
            ("threads", p.threads == first.threads),
        ];
        if let Some((what, _)) = same.iter().find(|(_, ok)| !ok) {
            return Err(MergeError::Mismatch(k, what));
        }
        if std::mem::replace(&mut seen[s.index], true) {
            return Err(MergeError::Duplicate(s.index, count));
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return Err(MergeError::Missing(i, count));
    }
    // Each part warns of its own counts (units on another stack, spinning):
    // the whole says it once, of the sums.
    let parts_counts: Vec<String> = (parts.iter())
        .flat_map(|p| count_warnings(&p.results))
        .collect();
    let mut parts = parts.into_iter();
    let mut all = parts.next().expect("one part at least");
    for p in parts {
        for (a, b) in all.results.iter_mut().zip(p.results) {
            add_width(a, b);
        }
        for w in p.warnings {
            if !all.warnings.contains(&w) {
                all.warnings.push(w);
            }
        }
        for d in p.damage {
            if !all.damage.contains(&d) {
                all.damage.push(d);
            }
        }
        for u in p.unrecorded {
            if !all.unrecorded.contains(&u) {
                all.unrecorded.push(u);
            }
        }
    }
    for r in &mut all.results {
        derive_width(r);
    }
    all.warnings.retain(|w| !parts_counts.contains(w));
    all.warnings.extend(count_warnings(&all.results));
    all.shard = None;
    all.incomplete = incomplete(&all.results);
    Ok(all)
}

fn same_options(a: &Report, b: &Report) -> bool {
    (
        &a.unit,
        &a.batch,
        &a.reconverge,
        a.predicate,
        &a.lock_model,
        a.locks,
        &a.spin_wait,
        a.merge_tails,
    ) == (
        &b.unit,
        &b.batch,
        &b.reconverge,
        b.predicate,
        &b.lock_model,
        b.locks,
        &b.spin_wait,
        b.merge_tails,
    )
}

fn widths(r: &Report) -> Vec<usize> {
    r.results.iter().map(|w| w.warp_size).collect()
}

/// Adds the counts of `b` (the same width) to `a`.
fn add_width(a: &mut WidthResult, b: WidthResult) {
    a.thread_instructions += b.thread_instructions;
    a.recorded_thread_instructions += b.recorded_thread_instructions;
    a.unfinished_units += b.unfinished_units;
    a.predicated_branches += b.predicated_branches;
    a.predicated_off_thread_instructions += b.predicated_off_thread_instructions;
    a.spinning_thread_instructions += b.spinning_thread_instructions;
    a.warp_instructions += b.warp_instructions;
    a.divergent_branches += b.divergent_branches;
    a.serialized_warp_instructions += b.serialized_warp_instructions;
    a.off_stack.add(&b.off_stack);
    a.spin_wait_thread_instructions += b.spin_wait_thread_instructions;
    a.excluded_thread_instructions += b.excluded_thread_instructions;
    add_memory(&mut a.memory, &b.memory);
    for l in b.locks {
        match a.locks.iter_mut().find(|x| x.address == l.address) {
            Some(x) => add_lock(x, &l),
            None => a.locks.push(l),
        }
    }
    for f in b.functions {
        let key = |x: &FunctionResult| (x.name.clone(), x.module.clone(), x.file.clone(), x.line);
        match a.functions.iter_mut().find(|x| key(x) == key(&f)) {
            Some(x) => {
                x.thread_instructions += f.thread_instructions;
                x.warp_instructions += f.warp_instructions;
                x.serialized_warp_instructions += f.serialized_warp_instructions;
                x.spin_wait_thread_instructions += f.spin_wait_thread_instructions;
                add_memory(&mut x.memory, &f.memory);
            }
            None => a.functions.push(f),
        }
    }
}

fn add_lock(a: &mut LockResult, b: &LockResult) {
    if a.kind == "unknown" {
        a.kind.clone_from(&b.kind);
    }
    if a.location.is_empty() {
        a.location.clone_from(&b.location);
    }
    a.acquisitions += b.acquisitions;
    a.contentions += b.contentions;
    a.serialized_lanes += b.serialized_lanes;
    a.serialized_warp_instructions += b.serialized_warp_instructions;
}

/// Derives the ratios of `r` from its counts, as one run does.
fn derive_width(r: &mut WidthResult) {
    let w = r.warp_size;
    let eff = |thread, warp| {
        Insns {
            thread_instructions: thread,
            warp_instructions: warp,
        }
        .efficiency(w)
    };
    r.simt_efficiency = eff(r.thread_instructions, r.warp_instructions);
    derive_memory(&mut r.memory);
    let all_warp = r.warp_instructions.max(1) as f64;
    for f in &mut r.functions {
        f.simt_efficiency = eff(f.thread_instructions, f.warp_instructions);
        f.share = f.warp_instructions as f64 / all_warp;
        derive_memory(&mut f.memory);
    }
    sort_functions(&mut r.functions);
    sort_locks(&mut r.locks);
}

fn requests(r: &mut RequestReport, o: &RequestReport) {
    r.requests += o.requests;
    r.sectors += o.sectors;
}

fn segments(s: &mut SegmentReport, o: &SegmentReport) {
    s.requests += o.requests;
    s.sectors += o.sectors;
    requests(&mut s.loads, &o.loads);
    requests(&mut s.stores, &o.stores);
}

fn add_memory(m: &mut MemoryReport, o: &MemoryReport) {
    segments(&mut m.stack, &o.stack);
    segments(&mut m.heap, &o.heap);
    segments(&mut m.global, &o.global);
    segments(&mut m.other, &o.other);
    segments(&mut m.stack_interleaved, &o.stack_interleaved);
    requests(&mut m.all, &o.all);
    requests(&mut m.all_interleaved, &o.all_interleaved);
}

fn ratio(requests: u64, sectors: u64) -> f64 {
    Requests { requests, sectors }.sectors_per_request()
}

fn derive_memory(m: &mut MemoryReport) {
    for s in [
        &mut m.stack,
        &mut m.heap,
        &mut m.global,
        &mut m.other,
        &mut m.stack_interleaved,
    ] {
        s.sectors_per_request = ratio(s.requests, s.sectors);
        for r in [&mut s.loads, &mut s.stores] {
            r.sectors_per_request = ratio(r.requests, r.sectors);
        }
    }
    for r in [&mut m.all, &mut m.all_interleaved] {
        r.sectors_per_request = ratio(r.requests, r.sectors);
    }
}
