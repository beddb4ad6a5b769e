//! `tf analyze`'s tables on the terminal: the run's settings, each
//! width's figures, its locks and its functions.

use tf_analyzer::results::{Report, WidthResult};

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn spr(requests: u64, x: f64) -> String {
    if requests == 0 {
        "-".into()
    } else {
        format!("{x:.2}")
    }
}

/// Prints the results as tables, the stack interleaved across lanes when
/// `interleaved`.
pub fn print(report: &Report, top: usize, interleaved: bool) {
    println!(
        "trace {}   units: {}   batch: {}   reconverge: {}   predicate: {}   locks: {}   spin-wait: {}   stack: {}",
        report.trace,
        report.unit,
        report.batch,
        report.reconverge,
        report.predicate,
        match (report.locks, report.lock_model.as_str()) {
            (false, _) => "off",
            (true, "spin") => "spin",
            (true, _) => "serialized",
        },
        report.spin_wait,
        if interleaved { "interleaved" } else { "cpu" }
    );
    if report.merge_tails {
        println!(
            "merge-tails: {} block(s) issued as a copy of another (the compiler's tail duplication undone)",
            report.merged_blocks
        );
    }
    if let Some(s) = report.shard {
        println!(
            "shard {}/{}: the warps whose number is {} modulo {} (combine the shards with tf merge)",
            s.index, s.count, s.index, s.count
        );
    }
    if !report.command.is_empty() {
        println!(
            "command: {}",
            tf_analyzer::processes::quoted_words(&report.command)
        );
    }
    if !report.units_are.is_empty() {
        println!("units: {}", report.units_are);
    }
    let traced = report.traced_instructions();
    let s = &report.skipped;
    println!(
        "threads: {}   traced instructions: {}   skipped: {} ({})   syscalls: {} ({:.3} s in the kernel)",
        report.threads.len(),
        traced,
        s.instructions(),
        s.by_reason_text(),
        s.syscalls,
        s.syscall_nanos as f64 / 1e9
    );
    // The figures below are of the units' instructions only.
    if let Some((inside, traced)) = report.unit_coverage() {
        if inside < traced {
            println!(
                "in units: {inside} of the {traced} traced instructions ({:.1}%); the other {} ran outside every unit (serial code, thread start-up, a loop's own code around its iterations)",
                100.0 * inside as f64 / traced as f64,
                traced - inside
            );
        }
    }
    println!();
    println!(
        "{:>5} {:>7} {:>7} {:>16} {:>16} {:>8} {:>12}  {:>6} {:>6} {:>6} {:>6}",
        "W",
        "units",
        "warps",
        "thread insns",
        "warp insns",
        "SIMT eff",
        "serialized",
        "stack",
        "heap",
        "global",
        "other"
    );
    for r in &report.results {
        let m = &r.memory;
        let stack = if interleaved {
            &m.stack_interleaved
        } else {
            &m.stack
        };
        println!(
            "{:>5} {:>7} {:>7} {:>16} {:>16} {:>8} {:>12}  {:>6} {:>6} {:>6} {:>6}",
            r.warp_size,
            r.units,
            r.warps,
            r.thread_instructions,
            r.warp_instructions,
            pct(r.simt_efficiency),
            r.serialized_warp_instructions,
            spr(stack.requests, stack.sectors_per_request),
            spr(m.heap.requests, m.heap.sectors_per_request),
            spr(m.global.requests, m.global.sectors_per_request),
            spr(m.other.requests, m.other.sectors_per_request),
        );
    }
    println!("(stack, heap, global, other: 32-byte sectors per warp memory request; serialized: warp instructions of lock rounds)");
    for r in &report.results {
        print_locks(r, top);
        print_functions(r, top, interleaved);
    }
}

fn print_locks(r: &WidthResult, top: usize) {
    if r.locks.is_empty() {
        return;
    }
    println!();
    println!("W = {}: locks", r.warp_size);
    println!(
        "{:>18} {:<18} {:>12} {:>11} {:>11} {:>12}  {:<18} symbol",
        "address", "kind", "acquisitions", "contentions", "ser. lanes", "ser. insns", "where"
    );
    for l in r.locks.iter().take(top) {
        println!(
            "{:>18} {:<18} {:>12} {:>11} {:>11} {:>12}  {:<18} {}",
            l.address,
            l.kind,
            l.acquisitions,
            l.contentions,
            l.serialized_lanes,
            l.serialized_warp_instructions,
            l.location,
            l.symbol.as_deref().unwrap_or("")
        );
    }
}

fn print_functions(r: &WidthResult, top: usize, interleaved: bool) {
    println!();
    println!(
        "W = {}: functions by warp instructions (own instructions only)",
        r.warp_size
    );
    println!(
        "{:>7} {:>16} {:>16} {:>8} {:>6} {:>6} {:>12} {:>12}  function",
        "share", "thread insns", "warp insns", "SIMT eff", "heap", "stack", "skipped", "spin-wait"
    );
    for f in r.functions.iter().take(top) {
        let m = &f.memory;
        let stack = if interleaved {
            &m.stack_interleaved
        } else {
            &m.stack
        };
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => {
                format!("  ({}:{line})", file.rsplit('/').next().unwrap_or(file))
            }
            _ => String::new(),
        };
        println!(
            "{:>7} {:>16} {:>16} {:>8} {:>6} {:>6} {:>12} {:>12}  {} [{}]{}",
            pct(f.share),
            f.thread_instructions,
            f.warp_instructions,
            pct(f.simt_efficiency),
            spr(m.heap.requests, m.heap.sectors_per_request),
            spr(stack.requests, stack.sectors_per_request),
            f.skipped_instructions,
            f.spin_wait_thread_instructions,
            f.name,
            f.module,
            place
        );
    }
    if r.functions.len() > top {
        println!(
            "({} more functions; all of them are in --json and --csv)",
            r.functions.len() - top
        );
    }
}
