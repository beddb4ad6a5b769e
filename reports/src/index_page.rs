//! The index page: the run, the overall figures per width, the warp-width
//! sweep, then the function table ([`crate::function_table`]) and memory
//! coalescing, traced vs skipped work and locks ([`crate::work_sections`]).

use crate::catalogue::Catalogue;
use crate::html::{count, count_cell, eff_cell, escape, header_row, num_cell, page, spr};
use crate::plots::{self, Line};
use crate::{Error, RunInfo};
use std::fmt::Write;
use tf_analyzer::results::SegmentReport;

/// Functions drawn in the sweep besides the whole program.
const TOP_SWEEP: usize = 5;

/// The index page's HTML.
pub fn render(c: &Catalogue, run: &RunInfo) -> Result<String, Error> {
    let r = c.report;
    let command = if r.command.is_empty() {
        r.trace.clone()
    } else {
        tf_analyzer::processes::quoted_words(&r.command)
    };
    let mut body = format!("<h1>tf report: {}</h1>\n", escape(&command));
    body.push_str(&run_section(c, run));
    body.push_str(&overall_section(c));
    body.push_str(&sweep_section(c)?);
    body.push_str(&crate::function_table::section(c)?);
    body.push_str(&crate::work_sections::memory(c)?);
    body.push_str(&crate::work_sections::skipped(c)?);
    body.push_str(&crate::work_sections::locks(c));
    Ok(page(&format!("tf report: {command}"), &body))
}

fn run_section(c: &Catalogue, run: &RunInfo) -> String {
    let r = c.report;
    let widths: Vec<String> = c
        .shown_results()
        .map(|(_, w)| w.warp_size.to_string())
        .collect();
    let sweep: Vec<String> = r.results.iter().map(|w| w.warp_size.to_string()).collect();
    let traced = r.traced_instructions();
    let units = c.main_result().units;
    // What the units cover (a shard's warps hold only some of them).
    let in_units = r
        .unit_coverage()
        .filter(|&(_, t)| t > 0)
        .map(|(inside, traced)| {
            let rest = if inside < traced {
                "; the rest ran outside every unit"
            } else {
                ""
            };
            format!(
                "{} ({:.1}%{rest})",
                count(inside),
                100.0 * inside as f64 / traced as f64
            )
        });
    let mut rows = vec![
        ("trace", r.trace.clone()),
        ("command", tf_analyzer::processes::quoted_words(&r.command)),
        ("tracer", run.tracer.clone()),
        (
            "program",
            format!(
                "{}{}",
                run.exit,
                if run.complete {
                    ""
                } else {
                    " (the tracer did not finish normally)"
                }
            ),
        ),
        ("threads", r.threads.len().to_string()),
        ("units (SIMT threads)", units.to_string()),
        ("traced instructions", count(traced)),
    ];
    rows.extend(in_units.map(|v| ("of them in units", v)));
    rows.extend([
        ("skipped instructions", count(r.skipped.instructions())),
        ("--warp", widths.join(", ")),
        ("--unit", r.unit.clone()),
        ("--batch", r.batch.clone()),
        ("--reconverge", r.reconverge.clone()),
        (
            "--predicate",
            match r.predicate {
                0 => "off".to_string(),
                n => format!("arms of up to {n} instructions"),
            },
        ),
        (
            "--locks",
            match (r.locks, r.lock_model.as_str()) {
                (false, _) => "off",
                (true, "spin") => "on (serialized, the waiting lanes spinning)",
                (true, _) => "on (serialized)",
            }
            .into(),
        ),
        ("--spin-wait", r.spin_wait.clone()),
        ("sweep widths", sweep.join(", ")),
    ]);
    if r.merge_tails {
        rows.push((
            "--merge-tails",
            format!(
                "on ({} block(s) issued as a copy of another: the compiler's tail duplication undone)",
                r.merged_blocks
            ),
        ));
    }
    if !run.only.is_empty() {
        rows.push(("traced with --only", run.only.join(", ")));
    }
    if !run.exclude.is_empty() {
        rows.push(("traced with --exclude", run.exclude.join(", ")));
    }
    let mut out = String::from("<h2>Run</h2>\n<dl class=\"run\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    out.push_str("</dl>\n");
    for w in &r.warnings {
        let _ = writeln!(out, "<p class=\"warn\">warning: {}</p>", escape(w));
    }
    // Why the figures cover less than the run, each kind with its words
    let partial = [
        (
            "damaged trace",
            "the figures cover only what was read before the damage",
            &r.damage,
        ),
        (
            "incomplete trace",
            "the trace holds less than the run",
            &r.unrecorded,
        ),
        (
            "incomplete analysis",
            "the figures leave recorded work out",
            &r.incomplete,
        ),
    ];
    for (kind, meaning, lines) in partial {
        for line in lines {
            let _ = writeln!(
                out,
                "<p class=\"warn\"><b>{kind}</b> ({meaning}): {}</p>",
                escape(line)
            );
        }
    }
    out
}

/// A sectors-per-request cell (`–` without requests).
pub(crate) fn spr_cell(class: &str, s: &SegmentReport) -> String {
    num_cell(
        class,
        s.sectors_per_request,
        &spr(s.requests, s.sectors_per_request),
    )
}

fn overall_section(c: &Catalogue) -> String {
    let mut out =
        String::from("<h2>Whole program</h2>\n<table class=\"sortable overall\">\n<thead>");
    out.push_str(&header_row(&[
        "W",
        "units",
        "warps",
        "thread insns",
        "warp insns",
        "SIMT eff.",
        "divergent branches",
        "serialized warp insns",
        "stack",
        "stack (interleaved)",
        "heap",
        "global",
        "other",
    ]));
    out.push_str("</thead><tbody>\n");
    for (_, w) in c.shown_results() {
        let m = &w.memory;
        let _ = writeln!(
            out,
            "<tr data-w=\"{}\">{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            w.warp_size,
            num_cell("w", w.warp_size, &w.warp_size.to_string()),
            num_cell("units", w.units, &count(w.units as u64)),
            num_cell("warps", w.warps, &count(w.warps as u64)),
            count_cell("thread", w.thread_instructions),
            count_cell("warp", w.warp_instructions),
            eff_cell("eff", w.simt_efficiency),
            count_cell("divergent", w.divergent_branches),
            count_cell("serialized", w.serialized_warp_instructions),
            spr_cell("stack", &m.stack),
            spr_cell("stack-interleaved", &m.stack_interleaved),
            spr_cell("heap", &m.heap),
            spr_cell("global", &m.global),
            spr_cell("other", &m.other),
        );
    }
    out.push_str("</tbody></table>\n<p class=\"note\">SIMT efficiency = thread instructions / (warp instructions × W). \
        Stack, heap, global, other: mean 32-byte sectors per warp memory request (ideal: 4 for 4-byte accesses of 32 lanes, 8 for 8-byte ones); \
        interleaved: the stack as GPU local memory lays it out. Serialized: warp instructions issued by lock rounds after the first.</p>\n");
    out
}

fn sweep_section(c: &Catalogue) -> Result<String, Error> {
    let r = c.report;
    let mut lines = vec![Line {
        label: "whole program".into(),
        points: r
            .results
            .iter()
            .map(|w| (w.warp_size as f64, w.simt_efficiency))
            .collect(),
    }];
    for f in c.functions.iter().take(TOP_SWEEP) {
        lines.push(Line {
            label: f.name.to_string(),
            points: r
                .results
                .iter()
                .enumerate()
                .filter_map(|(k, w)| Some((w.warp_size as f64, f.at(k)?.simt_efficiency)))
                .collect(),
        });
    }
    let max = r.results.iter().map(|w| w.warp_size).max().unwrap_or(64);
    let svg = plots::efficiency_sweep("SIMT efficiency vs. warp width", &lines, max)?;
    Ok(format!(
        "<h2>Warp-width sweep</h2>\n<figure class=\"plot sweep\">{svg}<figcaption>SIMT efficiency of the whole program and of the {} functions with the most warp instructions at W = {}, \
         each width replayed in the same run (widths {}).</figcaption></figure>\n",
        TOP_SWEEP.min(c.functions.len()),
        c.main_result().warp_size,
        r.results.iter().map(|w| w.warp_size.to_string()).collect::<Vec<_>>().join(", ")
    ))
}
