//! The index page's sections on where the work goes besides control flow:
//! memory coalescing, traced vs skipped work, locks.

use crate::catalogue::Catalogue;
use crate::html::{count, count_cell, escape, header_row, num_cell, pct, sectors_cell, text_cell};
use crate::plots;
use crate::Error;
use std::fmt::Write;
use tf_analyzer::results::{MemoryReport, SegmentReport};

/// Sectors per request by segment, loads and stores apart.
pub fn memory(c: &Catalogue) -> Result<String, Error> {
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
                count_cell("requests", s.requests),
                count_cell("sectors", s.sectors),
                sectors_cell("spr", s.requests, s.sectors_per_request),
                count_cell("load-requests", s.loads.requests),
                sectors_cell("load-spr", s.loads.requests, s.loads.sectors_per_request),
                count_cell("store-requests", s.stores.requests),
                sectors_cell("store-spr", s.stores.requests, s.stores.sectors_per_request),
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

/// Traced instructions and skipped ones by reason, and per thread.
pub fn skipped(c: &Catalogue) -> Result<String, Error> {
    let r = c.report;
    let s = &r.skipped;
    let traced = r.traced_instructions();
    let parts: Vec<(&str, u64)> = std::iter::once(("traced", traced))
        .chain(s.by_reason())
        .collect();
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
        "<h2>Traced and skipped work</h2>\n<figure class=\"plot skipped\">{svg}<figcaption>Instructions the trace holds (traced) and those the tracer counted without recording them, by reason (other: the dynamic linker binding library functions on their first call). \
         System calls: {} ({:.3} s in the kernel).</figcaption></figure>\n",
        count(s.syscalls),
        s.syscall_nanos as f64 / 1e9
    );
    out.push_str("<table class=\"skipped\"><thead>");
    out.push_str(&header_row(&["", "instructions", "share of all"]));
    out.push_str("</thead><tbody>\n");
    for &(name, v) in &parts {
        let _ = writeln!(
            out,
            "<tr data-kind=\"{name}\">{}{}{}</tr>",
            text_cell("kind", name),
            count_cell("instructions", v),
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
            count_cell("traced", t.traced_instructions),
            count_cell("skipped", t.skipped_instructions),
            num_cell("units", t.units, &t.units.to_string()),
        );
    }
    out.push_str("</tbody></table></details>\n");
    Ok(out)
}

/// Locks with their serialized lanes and warp instructions.
pub fn locks(c: &Catalogue) -> String {
    let mut out = String::from("<h2>Locks</h2>\n");
    if c.shown_results().all(|(_, w)| w.locks.is_empty()) {
        out.push_str("<p>The units acquired no lock.</p>\n");
        return out;
    }
    out.push_str("<table class=\"sortable locks\"><thead>");
    out.push_str(&header_row(&[
        "W",
        "address",
        "where",
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
                "<tr data-w=\"{}\" data-lock=\"{}\">{}{}{}{}{}{}{}{}{}</tr>",
                w.warp_size,
                escape(&l.address),
                num_cell("w", w.warp_size, &w.warp_size.to_string()),
                text_cell("address", &l.address),
                text_cell("where", &l.location),
                text_cell("symbol", l.symbol.as_deref().unwrap_or("")),
                text_cell("kind", &l.kind),
                count_cell("acquisitions", l.acquisitions),
                count_cell("contentions", l.contentions),
                count_cell("serialized-lanes", l.serialized_lanes),
                count_cell("serialized", l.serialized_warp_instructions),
            );
        }
    }
    out.push_str("</tbody></table>\n<p class=\"note\">Lanes of one warp holding the same lock run their critical sections one after another: \
        serialized lanes waited for another lane's critical section; serialized warp insns were issued while they did.</p>\n");
    out
}
