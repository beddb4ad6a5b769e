//! HTML building blocks: escaping, the page skeleton with its inline style
//! and sorting script, and number formatting.
//!
//! Pages are self-contained: the style, the script and the plots (inline
//! SVG) are in the page itself, so a report opens offline from the file
//! system.

use std::fmt::Write;

/// Escapes text for HTML element content and attribute values (double or
/// single quoted).
///
/// ```
/// assert_eq!(
///     tf_reports::html::escape("<script>a & \"b\" 'c'"),
///     "&lt;script&gt;a &amp; &quot;b&quot; &#39;c&#39;"
/// );
/// ```
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A fraction as a percentage with one decimal: `0.515625` → `51.6%`.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// An integer with thin spaces between groups of three digits.
///
/// ```
/// assert_eq!(tf_reports::html::count(1234567), "1\u{2009}234\u{2009}567");
/// ```
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// Sectors per request with two decimals, or `–` without requests.
pub fn spr(requests: u64, x: f64) -> String {
    if requests == 0 {
        "–".into()
    } else {
        format!("{x:.2}")
    }
}

/// A number cell showing a count with thousands separators (see [`num_cell`]).
pub fn count_cell(class: &str, n: u64) -> String {
    num_cell(class, n, &count(n))
}

/// A number cell of sectors per request, `-` without requests (see [`spr`]).
pub fn sectors_cell(class: &str, requests: u64, sectors_per_request: f64) -> String {
    num_cell(
        class,
        sectors_per_request,
        &spr(requests, sectors_per_request),
    )
}

/// A table cell whose sort key (`data-v`) is the exact value and whose text
/// is its formatted form; `class` names the figure for tests and styling.
pub fn num_cell(class: &str, value: impl std::fmt::Display, text: &str) -> String {
    format!(
        "<td class=\"num {}\" data-v=\"{value}\">{}</td>",
        escape(class),
        escape(text)
    )
}

/// An efficiency cell, its background from red (0%) to green (100%).
pub fn eff_cell(class: &str, eff: f64) -> String {
    format!(
        "<td class=\"num {}\" data-v=\"{eff}\" style=\"background:hsl({:.0},70%,85%)\">{}</td>",
        escape(class),
        120.0 * eff.clamp(0.0, 1.0),
        pct(eff)
    )
}

/// A text cell (sorted alphabetically).
pub fn text_cell(class: &str, text: &str) -> String {
    format!(
        "<td class=\"{}\" data-v=\"{}\">{}</td>",
        escape(class),
        escape(text),
        escape(text)
    )
}

/// A table header row; columns are sortable when the table has class `sortable`.
pub fn header_row(columns: &[&str]) -> String {
    let mut out = String::from("<tr>");
    for c in columns {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out.push_str("</tr>");
    out
}

/// A whole page: `title` (escaped here), `body` (already HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n\
         <script>{SORT_SCRIPT}</script>\n</body>\n</html>\n",
        escape(title)
    )
}

/// The page style: system fonts only (nothing to download).
const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; }
th { background: #f0f0f0; position: sticky; top: 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #e0e8f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td { white-space: nowrap; }
.wide { overflow-x: auto; max-width: 100%; }
tr:nth-child(even) td { background: #fafafa; }
dl.run { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }
dl.run dt { font-weight: bold; } dl.run dd { margin: 0; font-family: monospace; }
.note { color: #555; font-size: 0.9em; max-width: 60em; }
.warn { color: #a00; }
figure { margin: 0.5em 0; display: inline-block; vertical-align: top; }
figcaption { font-size: 0.85em; color: #444; max-width: 760px; }
pre.asm { background: #f6f6f6; padding: 0.5em; font-size: 0.85em; overflow-x: auto; }
"#;

/// Sorts a `table.sortable` by the clicked column: numbers by their `data-v`
/// value, text alphabetically; a second click reverses.
const SORT_SCRIPT: &str = r#"
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var i = Array.prototype.indexOf.call(th.parentNode.children, th);
    var desc = th.dataset.dir !== 'desc'; th.dataset.dir = desc ? 'desc' : 'asc';
    var key = function (tr) { var c = tr.children[i]; return c ? c.dataset.v : ''; };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
      var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
      return desc ? -r : r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_special_character() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
        assert_eq!(escape("plain_name+0x10"), "plain_name+0x10");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1\u{2009}000");
    }

    #[test]
    fn cells_escape_their_class_and_text() {
        assert_eq!(
            text_cell("name", "<script>"),
            "<td class=\"name\" data-v=\"&lt;script&gt;\">&lt;script&gt;</td>"
        );
        assert_eq!(
            num_cell("eff", 0.5, "50.0%"),
            "<td class=\"num eff\" data-v=\"0.5\">50.0%</td>"
        );
    }
}
