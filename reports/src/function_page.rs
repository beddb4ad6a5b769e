//! A function's page: its figures per warp width, its efficiency across the
//! sweep, and its memory requests by segment.

use crate::catalogue::{Catalogue, Function};
use crate::html::{
    count_cell, eff_cell, escape, header_row, num_cell, page, pct, sectors_cell, spr,
};
use crate::plots::{self, Line};
use crate::{Error, Observed};
use std::fmt::Write;
use tf_analyzer::results::SegmentReport;
use tf_analyzer::spin_wait::MARKS;

/// The page of `f`.
pub fn render(c: &Catalogue, f: &Function, observed: Option<&Observed>) -> Result<String, Error> {
    let mut body = format!(
        "<p><a href=\"../index.html\">← all functions</a></p>\n<h1>{}</h1>\n<dl class=\"run\"><dt>module</dt><dd>{}</dd><dt>source</dt><dd>{}</dd></dl>\n",
        escape(f.name),
        escape(f.module),
        escape(f.place.as_deref().unwrap_or("(no line information)"))
    );
    body.push_str(&figures(c, f));
    body.push_str(&sweep(c, f)?);
    body.push_str(&memory(c, f));
    if let Some(o) = observed {
        body.push_str(&crate::function_detail::render(c, f, o));
    }
    Ok(page(&format!("tf report: {}", f.name), &body))
}

fn figures(c: &Catalogue, f: &Function) -> String {
    let spin_wait = if c.report.spin_wait == "exclude" {
        "waiting left out of the other figures (--spin-wait exclude)"
    } else {
        "waiting that tf counts as work (--spin-wait exclude leaves it out)"
    };
    let mut out = format!(
        "<h2>Figures per warp width</h2>\n<p class=\"note\">Own instructions only (never its callees'). \
         Share: of all warp instructions at that width. Heap, stack, global, other: 32-byte sectors per request. \
         Spin-wait: thread instructions in {MARKS}, {spin_wait}.</p>\n\
         <table class=\"figures\"><thead>",
    );
    out.push_str(&header_row(&[
        "W",
        "share",
        "thread insns",
        "warp insns",
        "SIMT eff.",
        "stack",
        "stack (interleaved)",
        "heap",
        "global",
        "other",
        "serialized warp insns",
        "skipped insns",
        "spin-wait insns",
    ]));
    out.push_str("</thead><tbody>\n");
    for (k, w) in c.shown_results() {
        let Some(r) = f.at(k) else {
            let _ = writeln!(
                out,
                "<tr data-w=\"{0}\"><td class=\"num w\" data-v=\"{0}\">{0}</td><td colspan=\"12\">issued nothing at this width</td></tr>",
                w.warp_size
            );
            continue;
        };
        let m = &r.memory;
        let seg = |class: &str, s: &SegmentReport| {
            num_cell(
                class,
                s.sectors_per_request,
                &spr(s.requests, s.sectors_per_request),
            )
        };
        let _ = writeln!(
            out,
            "<tr data-w=\"{}\">{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            w.warp_size,
            num_cell("w", w.warp_size, &w.warp_size.to_string()),
            num_cell("share", r.share, &pct(r.share)),
            count_cell("thread", r.thread_instructions),
            count_cell("warp", r.warp_instructions),
            eff_cell("eff", r.simt_efficiency),
            seg("stack", &m.stack),
            seg("stack-interleaved", &m.stack_interleaved),
            seg("heap", &m.heap),
            seg("global", &m.global),
            seg("other", &m.other),
            count_cell("serialized", r.serialized_warp_instructions),
            count_cell("skipped", r.skipped_instructions),
            count_cell("spin", r.spin_wait_thread_instructions),
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

fn sweep(c: &Catalogue, f: &Function) -> Result<String, Error> {
    let r = c.report;
    let lines = [
        Line {
            label: f.name.to_string(),
            points: r
                .results
                .iter()
                .enumerate()
                .filter_map(|(k, w)| Some((w.warp_size as f64, f.at(k)?.simt_efficiency)))
                .collect(),
        },
        Line {
            label: "whole program".into(),
            points: r
                .results
                .iter()
                .map(|w| (w.warp_size as f64, w.simt_efficiency))
                .collect(),
        },
    ];
    let max = r.results.iter().map(|w| w.warp_size).max().unwrap_or(64);
    let svg = plots::efficiency_sweep("SIMT efficiency vs. warp width", &lines, max)?;
    Ok(format!(
        "<h2>Warp-width sweep</h2>\n<figure class=\"plot sweep\">{svg}<figcaption>This function's SIMT efficiency beside the whole program's, each width replayed in the same run.</figcaption></figure>\n"
    ))
}

fn memory(c: &Catalogue, f: &Function) -> String {
    let mut out = String::from("<h2>Memory requests</h2>\n<table class=\"memory\"><thead>");
    out.push_str(&header_row(&[
        "W",
        "segment",
        "load requests",
        "loads: sectors/request",
        "store requests",
        "stores: sectors/request",
    ]));
    out.push_str("</thead><tbody>\n");
    let mut any = false;
    for (k, w) in c.shown_results() {
        let Some(r) = f.at(k) else { continue };
        let m = &r.memory;
        for (name, s) in [
            ("stack", m.stack),
            ("stack (interleaved)", m.stack_interleaved),
            ("heap", m.heap),
            ("global", m.global),
            ("other", m.other),
        ] {
            if s.requests == 0 {
                continue;
            }
            any = true;
            let _ = writeln!(
                out,
                "<tr data-w=\"{}\" data-seg=\"{name}\"><td class=\"num\">{}</td><td>{name}</td>{}{}{}{}</tr>",
                w.warp_size,
                w.warp_size,
                count_cell("load-requests", s.loads.requests),
                sectors_cell("load-spr", s.loads.requests, s.loads.sectors_per_request),
                count_cell("store-requests", s.stores.requests),
                sectors_cell("store-spr", s.stores.requests, s.stores.sectors_per_request),
            );
        }
    }
    out.push_str("</tbody></table>\n");
    if !any {
        out.push_str("<p>No memory requests.</p>\n");
    }
    out
}
