//! The index page: the run, the overall figures per width, the warp-width
//! sweep, the functions, memory coalescing, traced vs skipped work, locks.

use crate::catalogue::Catalogue;
use crate::html::{count, eff_cell, escape, header_row, num_cell, page, pct, spr, text_cell};
use crate::plots::{self, Line, ShareBar};
use crate::{Error, RunInfo};
use std::fmt::Write;
use tf_analyzer::results::{MemoryReport, SegmentReport};

/// Functions drawn in the bar chart and the sweep.
const TOP_BARS: usize = 20;
const TOP_SWEEP: usize = 5;

/// The index page's HTML.
pub fn render(c: &Catalogue, run: &RunInfo) -> Result<String, Error> {
    let r = c.report;
    let command = if r.command.is_empty() {
        r.trace.clone()
    } else {
        r.command.join(" ")
    };
    let mut body = format!("<h1>tf report: {}</h1>\n", escape(&command));
    body.push_str(&run_section(c, run));
    body.push_str(&overall_section(c));
    body.push_str(&sweep_section(c)?);
    body.push_str(&functions_section(c)?);
    body.push_str(&memory_section(c)?);
    body.push_str(&skipped_section(c)?);
    body.push_str(&locks_section(c));
    Ok(page(&format!("tf report: {command}"), &body))
}

fn run_section(c: &Catalogue, run: &RunInfo) -> String {
    let r = c.report;
    let widths: Vec<String> = c
        .shown_results()
        .map(|(_, w)| w.warp_size.to_string())
        .collect();
    let sweep: Vec<String> = r.results.iter().map(|w| w.warp_size.to_string()).collect();
    let traced: u64 = r.threads.iter().map(|t| t.traced_instructions).sum();
    let units = c.main_result().units;
    let mut rows = vec![
        ("trace", r.trace.clone()),
        ("command", r.command.join(" ")),
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
        ("skipped instructions", count(r.skipped.instructions())),
        ("--warp", widths.join(", ")),
        ("--unit", r.unit.clone()),
        ("--batch", r.batch.clone()),
        ("--reconverge", r.reconverge.clone()),
        (
            "--locks",
            if r.locks { "on (serialized)" } else { "off" }.into(),
        ),
        ("sweep widths", sweep.join(", ")),
    ];
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
    for w in &r.incomplete {
        let _ = writeln!(
            out,
            "<p class=\"warn\"><b>incomplete analysis</b> (the figures leave recorded work out): {}</p>",
            escape(w)
        );
    }
    out
}

fn spr_cell(class: &str, s: &SegmentReport) -> String {
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
            num_cell(
                "thread",
                w.thread_instructions,
                &count(w.thread_instructions)
            ),
            num_cell("warp", w.warp_instructions, &count(w.warp_instructions)),
            eff_cell("eff", w.simt_efficiency),
            num_cell(
                "divergent",
                w.divergent_branches,
                &count(w.divergent_branches)
            ),
            num_cell(
                "serialized",
                w.serialized_warp_instructions,
                &count(w.serialized_warp_instructions)
            ),
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

fn functions_section(c: &Catalogue) -> Result<String, Error> {
    let main = c.main_result();
    let bars: Vec<ShareBar> = c
        .functions
        .iter()
        .filter_map(|f| {
            let r = f.at(c.main)?;
            Some(ShareBar {
                label: f.name.to_string(),
                share: r.share,
                efficiency: r.simt_efficiency,
            })
        })
        .take(TOP_BARS)
        .collect();
    let svg = plots::share_bars(
        &format!(
            "Functions by share of warp instructions, W = {}",
            main.warp_size
        ),
        &bars,
    )?;
    let mut out = format!(
        "<h2>Functions</h2>\n<figure class=\"plot shares\">{svg}<figcaption>The {} functions with the most warp instructions at W = {}: \
         bar length is the share; its green part the share times the SIMT efficiency.</figcaption></figure>\n",
        bars.len(),
        main.warp_size
    );
    let mut columns = vec![
        "function".to_string(),
        "module".into(),
        "source".into(),
        format!("share (W={})", main.warp_size),
        format!("thread insns (W={})", main.warp_size),
        format!("warp insns (W={})", main.warp_size),
    ];
    for (_, w) in c.shown_results() {
        columns.push(format!("SIMT eff. W={}", w.warp_size));
    }
    for s in ["heap", "stack", "global", "serialized", "skipped"] {
        columns.push(format!("{s} (W={})", main.warp_size));
    }
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    out.push_str(
        "<p class=\"note\">Own instructions only (never callees'); click a column to sort. \
        Heap, stack, global: sectors per request. Functions with a page are links.</p>\n",
    );
    let _ = writeln!(
        out,
        "<div class=\"wide\"><table class=\"sortable functions\"><thead>{}</thead><tbody>",
        header_row(&columns)
    );
    for f in &c.functions {
        let name = match &f.page {
            Some(p) => format!(
                "<td class=\"name\" data-v=\"{0}\"><a href=\"{1}\">{0}</a></td>",
                escape(f.name),
                escape(p)
            ),
            None => text_cell("name", f.name),
        };
        let mut row = format!("<tr data-fn=\"{}\">{name}", escape(f.name));
        row.push_str(&text_cell("module", f.module));
        row.push_str(&source_cell(f.place.as_deref().unwrap_or("")));
        let m = f.at(c.main);
        let n = |v: Option<u64>| v.unwrap_or(0);
        row.push_str(&num_cell(
            "share",
            m.map_or(0.0, |r| r.share),
            &pct(m.map_or(0.0, |r| r.share)),
        ));
        let thread = n(m.map(|r| r.thread_instructions));
        let warp = n(m.map(|r| r.warp_instructions));
        row.push_str(&num_cell("thread", thread, &count(thread)));
        row.push_str(&num_cell("warp", warp, &count(warp)));
        for (k, w) in c.shown_results() {
            let class = format!("eff-w{}", w.warp_size);
            match f.at(k) {
                Some(r) => row.push_str(&eff_cell(&class, r.simt_efficiency)),
                None => row.push_str(&num_cell(&class, -1, "–")),
            }
        }
        let mem = m.map(|r| r.memory).unwrap_or_default();
        row.push_str(&spr_cell("heap", &mem.heap));
        row.push_str(&spr_cell("stack", &mem.stack));
        row.push_str(&spr_cell("global", &mem.global));
        let ser = n(m.map(|r| r.serialized_warp_instructions));
        let skip = n(m.map(|r| r.skipped_instructions));
        row.push_str(&num_cell("serialized", ser, &count(ser)));
        row.push_str(&num_cell("skipped", skip, &count(skip)));
        row.push_str("</tr>\n");
        out.push_str(&row);
    }
    out.push_str("</tbody></table></div>\n");
    Ok(out)
}

fn memory_section(c: &Catalogue) -> Result<String, Error> {
    let main = c.main_result();
    let m = &main.memory;
    let segs = segments(m);
    let categories: Vec<String> = segs.iter().map(|(n, _)| n.to_string()).collect();
    let loads: Vec<f64> = segs
        .iter()
        .map(|(_, s)| s.loads.sectors_per_request)
        .collect();
    let stores: Vec<f64> = segs
        .iter()
        .map(|(_, s)| s.stores.sectors_per_request)
        .collect();
    let svg = plots::grouped_bars(
        &format!("Sectors per request by segment, W = {}", main.warp_size),
        "32-byte sectors per request",
        &categories,
        &[("loads".into(), loads), ("stores".into(), stores)],
    )?;
    let mut out = format!(
        "<h2>Memory coalescing</h2>\n<figure class=\"plot memory\">{svg}<figcaption>Mean distinct 32-byte sectors per warp memory request (one x86 memory operand, active lanes), loads and stores apart, at W = {}.</figcaption></figure>\n",
        main.warp_size
    );
    out.push_str("<table class=\"memory\"><thead>");
    out.push_str(&header_row(&[
        "W",
        "segment",
        "requests",
        "sectors",
        "sectors/request",
        "load requests",
        "loads: sectors/request",
        "store requests",
        "stores: sectors/request",
    ]));
    out.push_str("</thead><tbody>\n");
    for (_, w) in c.shown_results() {
        for (name, s) in segments(&w.memory) {
            let _ = writeln!(
                out,
                "<tr data-w=\"{}\" data-seg=\"{name}\">{}{}{}{}{}{}{}{}{}</tr>",
                w.warp_size,
                num_cell("w", w.warp_size, &w.warp_size.to_string()),
                text_cell("segment", name),
                num_cell("requests", s.requests, &count(s.requests)),
                num_cell("sectors", s.sectors, &count(s.sectors)),
                num_cell(
                    "spr",
                    s.sectors_per_request,
                    &spr(s.requests, s.sectors_per_request)
                ),
                num_cell("load-requests", s.loads.requests, &count(s.loads.requests)),
                num_cell(
                    "load-spr",
                    s.loads.sectors_per_request,
                    &spr(s.loads.requests, s.loads.sectors_per_request)
                ),
                num_cell(
                    "store-requests",
                    s.stores.requests,
                    &count(s.stores.requests)
                ),
                num_cell(
                    "store-spr",
                    s.stores.sectors_per_request,
                    &spr(s.stores.requests, s.stores.sectors_per_request)
                ),
            );
        }
    }
    out.push_str("</tbody></table>\n");
    Ok(out)
}

/// The segments in report order, with the interleaved stack after the stack.
fn segments(m: &MemoryReport) -> [(&'static str, SegmentReport); 5] {
    [
        ("stack", m.stack),
        ("stack (interleaved)", m.stack_interleaved),
        ("heap", m.heap),
        ("global", m.global),
        ("other", m.other),
    ]
}

fn skipped_section(c: &Catalogue) -> Result<String, Error> {
    let r = c.report;
    let s = &r.skipped;
    let traced: u64 = r.threads.iter().map(|t| t.traced_instructions).sum();
    let parts = [
        ("traced", traced),
        ("lock runtime", s.lock_runtime),
        ("sync waits", s.sync_wait),
        ("excluded", s.excluded),
        ("outside --only", s.outside_only),
        ("other", s.other),
    ];
    let all = (traced + s.instructions()).max(1) as f64;
    let svg = plots::grouped_bars(
        "Traced and skipped instructions",
        "share of all instructions run (%)",
        &parts.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>(),
        &[(
            "instructions".into(),
            parts.iter().map(|&(_, v)| 100.0 * v as f64 / all).collect(),
        )],
    )?;
    let mut out = format!(
        "<h2>Traced and skipped work</h2>\n<figure class=\"plot skipped\">{svg}<figcaption>Instructions the trace holds (traced) and those the tracer counted without recording them, by reason. \
         System calls: {} ({:.3} s in the kernel).</figcaption></figure>\n",
        count(s.syscalls),
        s.syscall_nanos as f64 / 1e9
    );
    out.push_str("<table class=\"skipped\"><thead>");
    out.push_str(&header_row(&["", "instructions", "share of all"]));
    out.push_str("</thead><tbody>\n");
    for (name, v) in parts {
        let _ = writeln!(
            out,
            "<tr data-kind=\"{name}\">{}{}{}</tr>",
            text_cell("kind", name),
            num_cell("instructions", v, &count(v)),
            num_cell("share", v as f64 / all, &pct(v as f64 / all)),
        );
    }
    out.push_str("</tbody></table>\n<details><summary>Per thread</summary><table class=\"sortable threads\"><thead>");
    out.push_str(&header_row(&[
        "tid",
        "parent",
        "start routine",
        "traced",
        "skipped",
        "units",
    ]));
    out.push_str("</thead><tbody>\n");
    for t in &r.threads {
        let _ = writeln!(
            out,
            "<tr>{}{}{}{}{}{}</tr>",
            num_cell("tid", t.tid, &t.tid.to_string()),
            num_cell("parent", t.parent, &t.parent.to_string()),
            text_cell("start", &t.start_routine),
            num_cell(
                "traced",
                t.traced_instructions,
                &count(t.traced_instructions)
            ),
            num_cell(
                "skipped",
                t.skipped_instructions,
                &count(t.skipped_instructions)
            ),
            num_cell("units", t.units, &t.units.to_string()),
        );
    }
    out.push_str("</tbody></table></details>\n");
    Ok(out)
}

fn locks_section(c: &Catalogue) -> String {
    let mut out = String::from("<h2>Locks</h2>\n");
    if c.shown_results().all(|(_, w)| w.locks.is_empty()) {
        out.push_str("<p>The units acquired no lock.</p>\n");
        return out;
    }
    out.push_str("<table class=\"sortable locks\"><thead>");
    out.push_str(&header_row(&[
        "W",
        "address",
        "symbol",
        "kind",
        "acquisitions",
        "contentions",
        "serialized lanes",
        "serialized warp insns",
    ]));
    out.push_str("</thead><tbody>\n");
    for (_, w) in c.shown_results() {
        for l in &w.locks {
            let _ = writeln!(
                out,
                "<tr data-w=\"{}\" data-lock=\"{}\">{}{}{}{}{}{}{}{}</tr>",
                w.warp_size,
                escape(&l.address),
                num_cell("w", w.warp_size, &w.warp_size.to_string()),
                text_cell("address", &l.address),
                text_cell("symbol", l.symbol.as_deref().unwrap_or("")),
                text_cell("kind", &l.kind),
                num_cell("acquisitions", l.acquisitions, &count(l.acquisitions)),
                num_cell("contentions", l.contentions, &count(l.contentions)),
                num_cell(
                    "serialized-lanes",
                    l.serialized_lanes,
                    &count(l.serialized_lanes)
                ),
                num_cell(
                    "serialized",
                    l.serialized_warp_instructions,
                    &count(l.serialized_warp_instructions)
                ),
            );
        }
    }
    out.push_str("</tbody></table>\n<p class=\"note\">Lanes of one warp holding the same lock run their critical sections one after another: \
        serialized lanes waited for another lane's critical section; serialized warp insns were issued while they did.</p>\n");
    out
}

/// `file:line` by the file's name, the whole path in its tooltip.
fn source_cell(place: &str) -> String {
    let short = place.rsplit('/').next().unwrap_or(place);
    format!(
        "<td class=\"source\" data-v=\"{0}\" title=\"{0}\">{1}</td>",
        escape(place),
        escape(short)
    )
}
