//! A function page's views of its code: figures per source line (each
//! instruction at its DWARF line, with the source text) and the disassembly
//! of its hottest divergent blocks.

use crate::function_detail::{mean, place, Observed, Row};
use crate::html::{count, count_cell, eff_cell, escape, header_row, sectors_cell, text_cell};
use std::collections::BTreeMap;
use std::fmt::Write;
use tf_analyzer::stats::{Insns, Requests};

/// Divergent blocks disassembled.
const DISASSEMBLED: usize = 5;

/// One source line's share of the function.
#[derive(Default)]
struct LineStats {
    insns: Insns,
    requests: Requests,
    divergences: u64,
}

/// The per-source-line table.
pub fn lines(rows: &[Row], o: &Observed, w: usize) -> String {
    let mut by_line: BTreeMap<(String, u32), LineStats> = BTreeMap::new();
    let mut unknown = LineStats::default();
    for r in rows {
        let Some(cb) = o.details.blocks.get(&r.cblock) else {
            continue;
        };
        let addrs = o.code.addresses(cb);
        let line_of = |k: usize| {
            addrs
                .get(k)
                .and_then(|&a| o.code.line(a))
                .map(|l| (l.file, l.line))
        };
        for k in 0..addrs.len() {
            let slot = match line_of(k) {
                Some(l) => by_line.entry(l).or_default(),
                None => &mut unknown,
            };
            slot.insns.add(&r.stats.instruction(k));
        }
        for (j, k) in o.code.operand_instructions(cb).into_iter().enumerate() {
            let slot = match line_of(k) {
                Some(l) => by_line.entry(l).or_default(),
                None => &mut unknown,
            };
            if let Some(req) = r.stats.operands.get(j) {
                slot.requests.add(req);
            }
        }
        if r.stats.divergences > 0 {
            let last = addrs.len().saturating_sub(1);
            let slot = match line_of(last) {
                Some(l) => by_line.entry(l).or_default(),
                None => &mut unknown,
            };
            slot.divergences += r.stats.divergences;
        }
    }
    let mut out = format!(
        "<h2>Source lines (W = {w})</h2>\n<p class=\"note\">Each instruction counted at its DWARF line; \
         divergent branches at the line of the branch that ends the block.</p>\n"
    );
    if by_line.is_empty() {
        out.push_str(
            "<p>No line information (the module has no DWARF, or its file is gone).</p>\n",
        );
        return out;
    }
    out.push_str("<div class=\"wide\"><table class=\"sortable lines\"><thead>");
    out.push_str(&header_row(&[
        "line",
        "source",
        "thread insns",
        "warp insns",
        "SIMT eff.",
        "divergent branches",
        "requests",
        "sectors/request",
    ]));
    out.push_str("</thead><tbody>\n");
    let mut all = by_line
        .into_iter()
        .map(|((f, l), s)| (Some((f, l)), s))
        .collect::<Vec<_>>();
    if unknown.insns.thread_instructions > 0 {
        all.push((None, unknown));
    }
    for (line, s) in all {
        let (name, text) = match &line {
            Some((file, l)) => (
                place(&line),
                o.code.source_text(file, *l).unwrap_or_default(),
            ),
            None => ("(no line)".to_string(), String::new()),
        };
        let _ = writeln!(
            out,
            "<tr data-line=\"{}\">{}<td class=\"code\"><code>{}</code></td>{}{}{}{}{}{}</tr>",
            escape(&name),
            text_cell("line", &name),
            escape(text.trim()),
            count_cell("thread", s.insns.thread_instructions),
            count_cell("warp", s.insns.warp_instructions),
            eff_cell("eff", s.insns.efficiency(w)),
            count_cell("divergent", s.divergences),
            count_cell("requests", s.requests.requests),
            sectors_cell("spr", s.requests.requests, s.requests.sectors_per_request()),
        );
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// The disassembly of the hottest divergent blocks.
pub fn disassembly(rows: &[Row], o: &Observed, w: usize) -> String {
    let mut out = format!("<h2>Hottest divergent blocks (W = {w})</h2>\n");
    let divergent: Vec<&Row> = rows
        .iter()
        .filter(|r| r.stats.divergences > 0)
        .take(DISASSEMBLED)
        .collect();
    if divergent.is_empty() {
        out.push_str("<p>No branch of this function diverged.</p>\n");
        return out;
    }
    for r in divergent {
        let Some(cb) = o.details.blocks.get(&r.cblock) else {
            continue;
        };
        let s = r.stats;
        let _ = writeln!(
            out,
            "<h3>{:#x} {}</h3>\n<p>{} divergent branches into {:.1} paths on average; SIMT efficiency {}; {} warp instructions.</p>",
            r.address,
            escape(&place(&r.line)),
            count(s.divergences),
            mean(s.paths, s.divergences),
            crate::html::pct(s.insns.efficiency(w)),
            count(s.insns.warp_instructions)
        );
        let ops = o.code.operand_instructions(cb);
        let _ = write!(out, "<pre class=\"asm\" data-block=\"{:#x}\">", r.address);
        for (k, (addr, text)) in o.code.disassemble(cb).into_iter().enumerate() {
            let mut note = String::new();
            if let Some(l) = o.code.line(addr) {
                let _ = write!(note, "line {}", l.line);
            }
            for (j, _) in ops.iter().enumerate().filter(|(_, &i)| i == k) {
                if let Some(req) = s.operands.get(j).filter(|q| q.requests > 0) {
                    let _ = write!(note, "  {:.2} sectors/request", req.sectors_per_request());
                }
            }
            let _ = writeln!(
                out,
                "{addr:#x}  {:<40} {}",
                escape(&text),
                if note.is_empty() {
                    String::new()
                } else {
                    format!("; {}", escape(note.trim()))
                }
            );
        }
        out.push_str("</pre>\n");
    }
    out
}
