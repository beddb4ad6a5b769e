//! The index page's functions: a bar chart of share × efficiency and the
//! sortable table of every function, with links to their pages.

use crate::catalogue::Catalogue;
use crate::html::{count_cell, eff_cell, escape, header_row, num_cell, pct, text_cell};
use crate::index_page::spr_cell;
use crate::plots::{self, ShareBar};
use crate::Error;
use std::fmt::Write;
use tf_analyzer::spin_wait::MARKS;

/// Functions drawn in the bar chart.
const TOP_BARS: usize = 20;

/// The functions: share × efficiency bars and the sortable table.
pub fn section(c: &Catalogue) -> Result<String, Error> {
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
    for s in [
        "heap",
        "stack",
        "global",
        "serialized",
        "skipped",
        "spin-wait",
    ] {
        columns.push(format!("{s} (W={})", main.warp_size));
    }
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let _ = writeln!(
        out,
        "<p class=\"note\">Own instructions only (never callees'); click a column to sort. \
        Heap, stack, global: sectors per request. Spin-wait: thread instructions in spin-wait loops \
        ({MARKS}). Functions with a page are links.</p>",
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
        row.push_str(&count_cell("thread", thread));
        row.push_str(&count_cell("warp", warp));
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
        row.push_str(&count_cell("serialized", ser));
        row.push_str(&count_cell("skipped", skip));
        let spun = n(m.map(|r| r.spin_wait_thread_instructions));
        row.push_str(&count_cell("spin", spun));
        row.push_str("</tr>\n");
        out.push_str(&row);
    }
    out.push_str("</tbody></table></div>\n");
    Ok(out)
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
