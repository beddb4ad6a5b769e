//! `tf export`: the replay as Accel-Sim warp traces, and their validator.

use crate::progress::Bar;
use crate::verdict::Coverage;
use anyhow::{bail, Context, Result};
use std::path::Path;
use tf_accelsim::export::{ExportOptions, Exporter};
use tf_accelsim::kernels::Summary;
use tf_analyzer::{analyze_observed, Options, Progress};
use tf_trace::Trace;

/// How the export lays out its kernels.
pub struct Shape<'a> {
    /// Threads per CTA (`--block-size`).
    pub block_size: usize,
    /// Export only instructions charged to these functions (`--functions`).
    pub functions: &'a [String],
}

/// `tf export --accelsim TRACE -o DIR`: returns the exit status (that of a
/// damaged or incomplete trace unless `allow_damaged`).
pub fn run(
    trace_dir: &Path,
    out: &Path,
    options: &Options,
    shape: &Shape,
    allow_damaged: bool,
    timings: bool,
) -> Result<i32> {
    let Shape {
        block_size,
        functions,
    } = *shape;
    let width = match options.widths[..] {
        [w] if (1..=32).contains(&w) => w,
        _ => bail!("--warp: give one width, 1..=32 (Accel-Sim's warps have 32 lanes)"),
    };
    if !block_size.is_multiple_of(32) || !(32..=1024).contains(&block_size) {
        bail!("--block-size {block_size}: must be a multiple of 32, 32..=1024");
    }
    if out.exists()
        && std::fs::read_dir(out)
            .with_context(|| format!("cannot read {}", out.display()))?
            .next()
            .is_some()
    {
        bail!("-o {}: the directory is not empty", out.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let trace = Trace::open(trace_dir)
        .with_context(|| format!("cannot read the trace {}", trace_dir.display()))?;
    let exporter = Exporter::new(ExportOptions {
        block_size,
        functions: functions.to_vec(),
        spill_dir: out.join(".warps"),
    });
    let bar = Bar::new();
    let report = analyze_observed(&trace, options, &bar, &exporter)?;
    bar.stage("writing kernels", report.results[0].warps as u64);
    let summary = exporter.finish(out, width, &|n| bar.advance(n))?;
    // Checked before anything is printed: the bar goes on showing while
    // the export is read back.
    let problems = tf_accelsim::check::check_dir_with(out, &bar);
    bar.end(timings);
    for w in &report.warnings {
        eprintln!("tf: warning: {w}");
    }
    print(out, &summary);
    let mut status = 0;
    for p in &problems {
        eprintln!("tf: {p}");
    }
    if problems.iter().any(|p| p.error) {
        eprintln!("tf: error: the export does not pass its validation");
        status = 1;
    }
    // An export of part of the trace never passes for the whole.
    let coverage = Coverage::of_analysis(Some(&trace), &report).exit_status(allow_damaged);
    Ok(if coverage != 0 { coverage } else { status })
}

fn print(out: &Path, s: &Summary) {
    let eff = |thread: u64, warp: u64, w: usize| {
        if warp == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * thread as f64 / (warp as f64 * w as f64))
        }
    };
    let spr = |req: u64, sec: u64| {
        if req == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", sec as f64 / req as f64)
        }
    };
    println!(
        "{:<18} {:<28} {:>7} {:>9} {:>14} {:>8} {:>14} {:>8} {:>8} {:>10}",
        "file",
        "kernel",
        "warps",
        "grid×block",
        "x86 warp insns",
        "x86 SIMT",
        "lines",
        "RISC SIMT",
        "global s/r",
        "bytes"
    );
    for k in &s.kernels {
        let c = &k.counts;
        println!(
            "{:<18} {:<28} {:>7} {:>9} {:>14} {:>8} {:>14} {:>8} {:>8} {:>10}",
            k.file,
            truncate(&k.name, 28),
            k.warps,
            format!("{}×{}", k.grid[0], k.block[0]),
            c.x86_warp_instructions,
            eff(
                c.x86_thread_instructions,
                c.x86_warp_instructions,
                s.warp_width
            ),
            c.lines,
            eff(c.lane_instructions, c.lines, 32),
            spr(c.global_requests, c.global_sectors),
            k.bytes,
        );
    }
    let t = &s.total;
    println!(
        "{} kernels, {} x86 warp instructions (SIMT efficiency {} at W = {}), {} lines \
         ({} of 32 lanes), global {} sectors per request, {} local requests; {} in {}",
        s.kernels.len(),
        t.x86_warp_instructions,
        eff(
            t.x86_thread_instructions,
            t.x86_warp_instructions,
            s.warp_width
        ),
        s.warp_width,
        t.lines,
        eff(t.lane_instructions, t.lines, 32),
        spr(t.global_requests, t.global_sectors),
        t.local_requests,
        human(s.bytes),
        out.display()
    );
    if s.warps_left_out > 0 {
        println!(
            "{} warps ran none of --functions and were left out",
            s.warps_left_out
        );
    }
    if s.undecoded_instructions > 0 {
        eprintln!(
            "tf: warning: {} x86 instructions could not be decoded and were exported as NOP",
            s.undecoded_instructions
        );
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// `tf export --check DIR`: one line per problem; status 1 on any error.
pub fn check(dir: &Path, timings: bool) -> Result<i32> {
    if !dir.join("kernelslist.g").is_file() {
        bail!("--check {}: no kernelslist.g there", dir.display());
    }
    let bar = Bar::new();
    let problems = tf_accelsim::check::check_dir_with(dir, &bar);
    bar.end(timings);
    for p in &problems {
        println!("{p}");
    }
    let errors = problems.iter().filter(|p| p.error).count();
    println!(
        "{}: {} errors, {} warnings",
        dir.display(),
        errors,
        problems.len() - errors
    );
    Ok(i32::from(errors > 0))
}
