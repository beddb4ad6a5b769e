//! `tf info`: what a trace holds.
//!
//! Decodes every thread stream (in parallel) and prints threads with traced
//! and skipped instructions, the block table, bytes per instruction, modules,
//! and the functions with the most instructions, named as `tf analyze` names
//! them (code without a symbol by its frame: `module+0xoffset`). A damaged stream is read up
//! to the damage, which is named (file and byte offset); `tf info` then exits
//! with status 3 after printing everything it could read (see
//! [`crate::verdict`]).

use crate::progress::Bar;
use crate::summary::{human, human_bytes};
use crate::verdict::Coverage;
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use tf_analyzer::blocks::CanonicalBlocks;
use tf_analyzer::functions::FunctionTable;
use tf_analyzer::processes;
use tf_analyzer::scan::{ScanJob, Skipped, ThreadScan};
use tf_analyzer::symbols::Symbols;
use tf_analyzer::units::Cutter;
use tf_analyzer::Progress;
use tf_trace::Trace;

/// What one thread's stream holds.
#[derive(Default)]
struct ThreadTally {
    tid: u64,
    parent: u64,
    start_routine: u64,
    bytes: u64,
    traced: u64,
    skipped: Skipped,
    block_execs: u64,
    accesses: u64,
    locks: u64,
    /// Traced instructions by (symbol, frame entry of code without one).
    per_function: Vec<((u32, u64), u64)>,
    /// The damage that stopped the reading, if any.
    damage: Option<String>,
}

impl ThreadTally {
    /// The figures of thread `scan`, whose file has `bytes` bytes.
    fn of(scan: ThreadScan, bytes: u64) -> ThreadTally {
        ThreadTally {
            tid: scan.tid,
            parent: scan.parent,
            start_routine: scan.start_routine,
            bytes,
            traced: scan.traced,
            skipped: scan.skipped,
            block_execs: scan.block_execs,
            accesses: scan.accesses,
            locks: scan.lock_acquisitions,
            per_function: scan.traced_in,
            damage: scan.damage,
        }
    }
}

/// Reads thread `tid` once: the analyzer's first pass, which counts
/// everything `tf info` shows (which function ran what needs its call
/// frames). Each chunk is decoded as it is read; when one turns out not to
/// decode after some of its events were counted, the thread is read again
/// decoding each chunk before using it, so that nothing of a damaged chunk
/// counts (as the analysis does).
fn scan(job: &ScanJob<'_>, tid: u64) -> ThreadScan {
    let scan = job.scan(tid, |_| Cutter::Whole, None);
    if !scan.used_damaged_chunk {
        return scan;
    }
    let again = ScanJob {
        check_ahead: true,
        ..*job
    };
    again.scan(tid, |_| Cutter::Whole, None)
}

/// Prints the description of the trace in `dir`; returns the exit status
/// (see [`crate::verdict`]).
pub fn run(dir: &Path, top: usize, allow_damaged: bool) -> Result<i32> {
    let trace =
        Trace::open(dir).with_context(|| format!("cannot read the trace {}", dir.display()))?;
    let files: Vec<(u64, u64)> = trace.threads().iter().map(|f| (f.tid, f.size)).collect();
    let symbols = Symbols::new(trace.blocks());
    let canon = CanonicalBlocks::build(trace.blocks());
    let entry_of = |f: u32| symbols.entry(f);
    // A trace of a few billion instructions takes a while: the same bar as
    // the analysis's, moving with the bytes read.
    let bar = Bar::new();
    bar.stage(
        "reading threads",
        files.iter().map(|&(_, bytes)| bytes).sum(),
    );
    let job = ScanJob {
        trace: &trace,
        canon: &canon,
        entry_of: &entry_of,
        addresses: false,
        per_function: true,
        progress: Some(&bar),
        runtime: &[],
        check_ahead: false,
    };
    let tallies: Vec<ThreadTally> = files
        .par_iter()
        .map(|&(tid, bytes)| ThreadTally::of(scan(&job, tid), bytes))
        .collect();
    bar.finish();
    let table_bytes = std::fs::metadata(dir.join("blocks.tfc"))
        .map(|m| m.len())
        .unwrap_or(0);
    let manifest_bytes = std::fs::metadata(dir.join("manifest"))
        .map(|m| m.len())
        .unwrap_or(0);

    print_header(&trace, dir);
    let frames = tallies.iter().flat_map(|t| {
        t.per_function
            .iter()
            .filter(|((sym, _), _)| *sym == 0)
            .map(|((_, frame), _)| *frame)
            .chain(std::iter::once(t.start_routine))
            .filter(|&a| a != 0)
    });
    let functions = FunctionTable::new(&symbols, trace.blocks(), frames);
    print_threads(&tallies, &functions, table_bytes + manifest_bytes);
    print_modules(&trace);
    print_functions(&functions, &tallies, top);

    let read = tallies.iter().map(|t| t.traced).sum();
    let mut coverage = Coverage::of(&trace, read);
    coverage.add_damage(tallies.iter().filter_map(|t| {
        let d = t.damage.as_ref()?;
        Some(format!("{d} (thread {} is shown up to there)", t.tid))
    }));
    Ok(coverage.exit_status(allow_damaged))
}

/// How `tf info` says that a trace's tracer did not finish.
const UNFINISHED: &str = "incomplete: the tracer did not finish";

fn print_header(trace: &Trace, dir: &Path) {
    println!("trace     {}", dir.display());
    let Some(m) = trace.manifest() else {
        if dir.join("manifest").exists() {
            println!("manifest  damaged (see below)");
        } else {
            println!("manifest  missing (the tracer did not start or finish cleanly)");
        }
        return;
    };
    println!("command   {}", processes::quoted(&m.command));
    println!(
        "tracer    {} {} on {}{}",
        m.tracer,
        m.tracer_version,
        m.backend,
        if m.worksharing {
            ""
        } else {
            " (records no OpenMP worksharing loops: units of OpenMP programs are calls)"
        }
    );
    let exec = processes::exec_end(trace);
    let end = match (m.complete, m.exit_code, m.exit_signal) {
        (false, _, _) => UNFINISHED.to_string(),
        (true, _, _) if exec.is_some() => exec.unwrap_or_default(),
        (true, _, Some(sig)) => format!("killed by signal {sig}"),
        (true, Some(code), _) => format!("exited with status {code}"),
        (true, None, None) => "ended".to_string(),
    };
    println!("program   {end}");
    if m.forked > 0 {
        let s = if m.forked == 1 { "" } else { "es" };
        println!("forked    {} process{s} of its own, not traced", m.forked);
    }
    // tf trace --follow-exec: the programs the run executed, each traced
    // into a directory of its own
    for (t, m) in processes::followed_manifests(dir) {
        let what = m
            .map(|m| {
                let n = m.threads.len();
                let size = if m.complete {
                    format!(
                        "{} instructions, {n} thread{}",
                        human(m.traced_instructions as f64),
                        if n == 1 { "" } else { "s" }
                    )
                } else {
                    UNFINISHED.to_string()
                };
                format!("{} ({size})", processes::quoted(&m.command))
            })
            .unwrap_or_default();
        println!("execs     {}: {what}", t.display());
    }
    if !m.only.is_empty() {
        println!("only      {}", m.only.join(", "));
    }
    if !m.exclude.is_empty() {
        println!("exclude   {}", m.exclude.join(", "));
    }
}

fn print_threads(tallies: &[ThreadTally], functions: &FunctionTable, shared_bytes: u64) {
    println!();
    println!(
        "{:>5} {:>6}  {:<24} {:>14} {:>12} {:>12} {:>13} {:>6} {:>10} {:>7}",
        "tid",
        "parent",
        "start routine",
        "traced insns",
        "skipped",
        "blocks",
        "mem accesses",
        "locks",
        "bytes",
        "B/insn"
    );
    let mut total = ThreadTally::default();
    for t in tallies {
        let routine = match t.start_routine {
            0 => "-".to_string(),
            a => functions.info(functions.frame(a)).name.clone(),
        };
        let parent = if t.parent == 0 {
            "-".to_string()
        } else {
            t.parent.to_string()
        };
        println!(
            "{:>5} {:>6}  {:<24} {:>14} {:>12} {:>12} {:>13} {:>6} {:>10} {:>7}",
            t.tid,
            parent,
            truncate(&routine, 24),
            t.traced,
            t.skipped.instructions(),
            t.block_execs,
            t.accesses,
            t.locks,
            human_bytes(t.bytes),
            per_insn(t.bytes, t.traced)
        );
        total.traced += t.traced;
        total.skipped.merge(&t.skipped);
        total.block_execs += t.block_execs;
        total.accesses += t.accesses;
        total.locks += t.locks;
        total.bytes += t.bytes;
    }
    total.bytes += shared_bytes;
    println!(
        "{:>5} {:>6}  {:<24} {:>14} {:>12} {:>12} {:>13} {:>6} {:>10} {:>7}",
        "all",
        "",
        format!("{} threads", tallies.len()),
        total.traced,
        total.skipped.instructions(),
        total.block_execs,
        total.accesses,
        total.locks,
        human_bytes(total.bytes),
        per_insn(total.bytes, total.traced)
    );
    println!(
        "(all: {} instructions traced, {} skipped; bytes include the block table and manifest)",
        human(total.traced as f64),
        human(total.skipped.instructions() as f64)
    );
    println!("skipped by reason: {}", total.skipped.by_reason_text());
}

fn print_modules(trace: &Trace) {
    let blocks = trace.blocks();
    println!();
    println!(
        "block table: {} blocks, {} functions, {} modules",
        blocks.len(),
        blocks.functions().len(),
        blocks.modules().len()
    );
    println!("{:>4} {:>18} {:>12}  path", "id", "base", "size");
    for m in blocks.modules() {
        println!(
            "{:>4} {:>#18x} {:>12}  {}",
            m.id,
            m.base,
            m.size,
            String::from_utf8_lossy(&m.path)
        );
    }
}

fn print_functions(functions: &FunctionTable, tallies: &[ThreadTally], top: usize) {
    let mut per_function: HashMap<u32, u64> = HashMap::new();
    for t in tallies {
        for &((sym, frame), n) in &t.per_function {
            let f = if sym != 0 {
                sym
            } else {
                functions.frame(frame)
            };
            *per_function.entry(f).or_default() += n;
        }
    }
    let total: u64 = per_function.values().sum();
    let mut rows: Vec<(u32, u64)> = per_function.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!();
    println!("top functions by traced instructions:");
    println!("{:>14} {:>7}  {:<40} module", "insns", "share", "function");
    for (f, n) in rows.into_iter().take(top) {
        let info = functions.info(f);
        let (name, module) = (info.name.clone(), info.module.clone());
        let share = if total > 0 {
            100.0 * n as f64 / total as f64
        } else {
            0.0
        };
        println!(
            "{:>14} {:>6.2}%  {:<40} {}",
            n,
            share,
            truncate(&name, 40),
            module
        );
    }
}

fn per_insn(bytes: u64, insns: u64) -> String {
    if insns == 0 {
        "-".to_string()
    } else {
        format!("{:.3}", bytes as f64 / insns as f64)
    }
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}
