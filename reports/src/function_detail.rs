//! The parts of a function page that come from the observed replay: callers
//! and callees, the dynamic CFG, the per-block and per-source-line tables and
//! the disassembly of the hottest divergent blocks
//! ([`crate::function_code`] has the last two).

use crate::catalogue::{Catalogue, Function};
use crate::cfg_svg::{self, Node};
use crate::code::CodeView;
use crate::html::{count_cell, eff_cell, escape, header_row, num_cell, sectors_cell, text_cell};
use crate::observe::{BlockStats, Details, WidthDetails};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use tf_analyzer::blocks::CBlockId;
use tf_analyzer::stats::{Insns, Requests};
use tf_trace::FunctionId;

/// Blocks shown in the block table.
const MAX_ROWS: usize = 200;

/// What the replay's observer gathered, with the trace's code to explain it.
pub struct Observed<'a> {
    /// The gathered figures.
    pub details: &'a Details,
    /// Code, lines and source text.
    pub(crate) code: CodeView<'a>,
    ids: HashMap<(String, String), Vec<FunctionId>>,
}

impl<'a> Observed<'a> {
    /// `details`, explained with `trace`'s code.
    pub fn new(details: &'a Details, trace: &'a tf_trace::Trace) -> Observed<'a> {
        let mut ids: HashMap<(String, String), Vec<FunctionId>> = HashMap::new();
        for (&id, n) in &details.functions {
            ids.entry((n.name.clone(), n.module.clone()))
                .or_default()
                .push(id);
        }
        Observed {
            details,
            code: CodeView::new(trace),
            ids,
        }
    }

    fn ids(&self, f: &Function) -> &[FunctionId] {
        self.ids
            .get(&(f.name.to_string(), f.module.to_string()))
            .map_or(&[], Vec::as_slice)
    }

    fn name(&self, id: FunctionId) -> (&str, &str) {
        self.details
            .functions
            .get(&id)
            .map_or(("?", ""), |n| (n.name.as_str(), n.module.as_str()))
    }
}

/// One of the function's blocks at the main width.
pub(crate) struct Row<'d> {
    pub cblock: CBlockId,
    pub address: u64,
    pub stats: &'d BlockStats,
    pub line: Option<(String, u32)>,
}

/// The sections of `f`'s page drawn from the observed replay.
pub fn render(c: &Catalogue, f: &Function, o: &Observed) -> String {
    let w = c.main_result().warp_size;
    let Some(wd) = o.details.widths.get(&w) else {
        return format!("<p>Blocks were not observed at W = {w}.</p>\n");
    };
    let ids = o.ids(f);
    let mut rows: Vec<Row> = wd
        .blocks
        .iter()
        .filter(|((fid, _), _)| ids.contains(fid))
        .filter_map(|(&(_, b), s)| {
            let cb = o.details.blocks.get(&b)?;
            let line = o.code.line(cb.address).map(|l| (l.file, l.line));
            Some(Row {
                cblock: b,
                address: cb.address,
                stats: s,
                line,
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.stats
            .insns
            .warp_instructions
            .cmp(&a.stats.insns.warp_instructions)
            .then(a.address.cmp(&b.address))
    });
    let mut out = calls(c, ids, wd, o);
    out.push_str(&cfg(ids, wd, o, &rows, w));
    out.push_str(&blocks(&rows, o, w));
    out.push_str(&crate::function_code::lines(&rows, o, w));
    out.push_str(&crate::function_code::disassembly(&rows, o, w));
    out
}

fn calls(c: &Catalogue, ids: &[FunctionId], wd: &WidthDetails, o: &Observed) -> String {
    let w = c.main_result().warp_size;
    let mut out = format!("<h2>Callers and callees (W = {w})</h2>\n");
    let link = |id: FunctionId| {
        let (name, module) = o.name(id);
        let target = c
            .functions
            .iter()
            .find(|g| g.name == name && g.module == module);
        let share = target.and_then(|g| g.at(c.main)).map_or(0.0, |r| r.share);
        let text = match target.and_then(|g| g.page.as_deref()) {
            Some(p) => format!("<a href=\"../{}\">{}</a>", escape(p), escape(name)),
            None => escape(name),
        };
        (text, share)
    };
    for (title, caller_side) in [("Callers", true), ("Callees", false)] {
        let mut list: BTreeMap<FunctionId, u64> = BTreeMap::new();
        for (&(from, to), &n) in &wd.calls {
            let (me, other) = if caller_side { (to, from) } else { (from, to) };
            if ids.contains(&me) {
                *list.entry(other).or_default() += n;
            }
        }
        let total: u64 = list.values().sum();
        let _ = writeln!(out, "<h3>{title}</h3>");
        if list.is_empty() {
            out.push_str("<p>None observed in the units.</p>\n");
            continue;
        }
        let mut list: Vec<(FunctionId, u64)> = list.into_iter().collect();
        list.sort_by_key(|e| std::cmp::Reverse(e.1));
        let _ = writeln!(
            out,
            "<table class=\"{}\"><thead>{}</thead><tbody>",
            title.to_lowercase(),
            header_row(&[
                "function",
                "calls (lanes)",
                "share of calls",
                "its share of warp insns"
            ])
        );
        for (id, n) in list {
            let (text, share) = link(id);
            let _ = writeln!(
                out,
                "<tr><td>{text}</td>{}{}{}</tr>",
                count_cell("calls", n),
                num_cell(
                    "call-share",
                    n as f64 / total as f64,
                    &crate::html::pct(n as f64 / total as f64)
                ),
                num_cell("share", share, &crate::html::pct(share)),
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out
}

fn cfg(ids: &[FunctionId], wd: &WidthDetails, o: &Observed, rows: &[Row], w: usize) -> String {
    let reconverging: Vec<CBlockId> = rows.iter().filter_map(|r| r.stats.reconverge).collect();
    let nodes: Vec<Node> = rows
        .iter()
        .map(|r| Node {
            address: r.address,
            line: r.line.as_ref().map(|l| l.1),
            efficiency: r.stats.insns.efficiency(w),
            warp_instructions: r.stats.insns.warp_instructions,
            divergent: r.stats.divergences > 0,
            reconverges: reconverging.contains(&r.cblock),
            entry: o.details.blocks.get(&r.cblock).is_some_and(|b| b.is_entry),
        })
        .collect();
    let address = |b: CBlockId| o.details.blocks.get(&b).map_or(0, |cb| cb.address);
    let mut edges: Vec<(u64, u64, u64)> = wd
        .edges
        .iter()
        .filter(|((f, _, _), _)| ids.contains(f))
        .map(|(&(_, a, b), &n)| (address(a), address(b), n))
        .collect();
    // The layout depends on the order of the edges: in address order, the
    // drawing does not depend on how the warps' figures were gathered.
    edges.sort_unstable();
    let d = cfg_svg::draw(&nodes, &edges);
    let mut out = format!(
        "<h2>Dynamic CFG (W = {w})</h2>\n<p class=\"note\">Blocks as the units ran them, filled by SIMT efficiency \
         (<span style=\"background:#ff506e\">&nbsp;0%&nbsp;</span> <span style=\"background:#ffff6e\">&nbsp;50%&nbsp;</span> \
         <span style=\"background:#5aff6e\">&nbsp;100%&nbsp;</span>); a thick <b style=\"color:#c00000\">red</b> border marks a divergent branch, \
         a thick <b style=\"color:#1f4fbf\">blue</b> one the immediate post-dominator where its lanes reconverge; \
         edge width grows with the lanes that took the edge (log scale); a call is drawn as an edge from the call site to the return site. \
         Laid out by layout-rs.</p>\n<figure class=\"cfg\">{}</figure>\n",
        d.svg
    );
    if d.omitted > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} colder blocks are not drawn (the {} hottest are); the table lists all.</p>",
            d.omitted,
            cfg_svg::MAX_BLOCKS
        );
    }
    out
}

/// `file:line` with the file's name only.
pub(crate) fn place(line: &Option<(String, u32)>) -> String {
    match line {
        Some((file, l)) => format!("{}:{l}", file.rsplit('/').next().unwrap_or(file)),
        None => String::new(),
    }
}

fn blocks(rows: &[Row], o: &Observed, w: usize) -> String {
    let mut out = format!(
        "<h2>Blocks (W = {w})</h2>\n<p class=\"note\">Canonical basic blocks, hottest first{}. \
         Divergent branches: times the warp's lanes split at the block's end, and into how many paths on average. \
         Sectors/request: all its memory operands.</p>\n<div class=\"wide\"><table class=\"sortable blocks\"><thead>",
        if rows.len() > MAX_ROWS {
            format!(" (the {MAX_ROWS} hottest of {})", rows.len())
        } else {
            String::new()
        }
    );
    out.push_str(&header_row(&[
        "block",
        "source",
        "insns",
        "issues",
        "thread insns",
        "warp insns",
        "SIMT eff.",
        "divergent branches",
        "paths",
        "reconverges at",
        "requests",
        "sectors/request",
        "serialized warp insns",
    ]));
    out.push_str("</thead><tbody>\n");
    let mut total = (Insns::default(), Requests::default(), 0u64, 0u64);
    for r in rows {
        let s = r.stats;
        let req = s.memory.total(false);
        total.0.add(&s.insns);
        total.1.add(&req);
        total.2 += s.divergences;
        total.3 += s.serialized;
    }
    for r in rows.iter().take(MAX_ROWS) {
        let s = r.stats;
        let req = s.memory.total(false);
        let reconv = match s.reconverge {
            Some(b) => format!("{:#x}", o.details.blocks.get(&b).map_or(0, |cb| cb.address)),
            None if s.divergences > 0 => "function exit".into(),
            None => String::new(),
        };
        let n_insns = s.lanes_by_length.len() - 1;
        let _ = writeln!(
            out,
            "<tr data-block=\"{:#x}\">{}{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
            r.address,
            text_cell("block", &format!("{:#x}", r.address)),
            text_cell("source", &place(&r.line)),
            num_cell("insns", n_insns, &n_insns.to_string()),
            count_cell("issues", s.issues),
            count_cell("thread", s.insns.thread_instructions),
            count_cell("warp", s.insns.warp_instructions),
            eff_cell("eff", s.insns.efficiency(w)),
            count_cell("divergent", s.divergences),
            num_cell(
                "paths",
                mean(s.paths, s.divergences),
                &format!("{:.1}", mean(s.paths, s.divergences))
            ),
            text_cell("reconverge", &reconv),
            count_cell("requests", req.requests),
            sectors_cell("spr", req.requests, req.sectors_per_request()),
            count_cell("serialized", s.serialized),
        );
    }
    out.push_str("</tbody><tfoot>\n");
    let (insns, req, div, ser) = total;
    let _ = writeln!(
        out,
        "<tr data-total=\"blocks\"><td>all {} blocks</td><td></td><td></td><td></td>{}{}{}{}<td></td><td></td>{}{}{}</tr>",
        rows.len(),
        count_cell("thread", insns.thread_instructions),
        count_cell("warp", insns.warp_instructions),
        eff_cell("eff", insns.efficiency(w)),
        count_cell("divergent", div),
        count_cell("requests", req.requests),
        sectors_cell("spr", req.requests, req.sectors_per_request()),
        count_cell("serialized", ser),
    );
    out.push_str("</tfoot></table></div>\n");
    out
}

/// `a / n`, 0 when `n` is 0.
pub(crate) fn mean(a: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        a as f64 / n as f64
    }
}
