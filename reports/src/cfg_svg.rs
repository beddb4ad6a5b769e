//! A function's dynamic CFG as SVG, laid out by `layout-rs` (a Sugiyama-style
//! layered layout in pure Rust, so a report needs no Graphviz installed and
//! looks the same on every machine): blocks filled by SIMT efficiency (red
//! 0% → yellow → green 100%), edges as wide as how many lanes took them,
//! divergent blocks with a thick red border, reconvergence points with a
//! thick blue one.

use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;
use std::collections::HashMap;

/// Graphs with more blocks than this show their hottest blocks only.
pub const MAX_BLOCKS: usize = 60;

/// One block to draw.
pub struct Node {
    /// Its address (the node's name).
    pub address: u64,
    /// A second label line (source line).
    pub line: Option<u32>,
    /// SIMT efficiency in [0, 1].
    pub efficiency: f64,
    /// Warp instructions (for choosing the hottest).
    pub warp_instructions: u64,
    /// Divergences at its end.
    pub divergent: bool,
    /// Some divergence reconverges here.
    pub reconverges: bool,
    /// The function's first block.
    pub entry: bool,
}

/// The picture, and how many blocks were left out.
pub struct Drawing {
    /// Inline SVG.
    pub svg: String,
    /// Blocks not drawn (the coldest, past [`MAX_BLOCKS`]).
    pub omitted: usize,
}

/// Red (0) → yellow (0.5) → green (1) as `0xRRGGBBAA`.
pub fn efficiency_colour(e: f64) -> u32 {
    let e = e.clamp(0.0, 1.0);
    let (r, g) = if e < 0.5 {
        (255.0, 80.0 + 350.0 * e)
    } else {
        (255.0 - 330.0 * (e - 0.5), 255.0)
    };
    let (r, g, b) = (
        r.clamp(0.0, 255.0) as u32,
        g.clamp(0.0, 255.0) as u32,
        110u32,
    );
    (r << 24) | (g << 16) | (b << 8) | 0xff
}

/// Draws `nodes` (any order) and `edges` (`(from, to, lanes)` by address).
pub fn draw(nodes: &[Node], edges: &[(u64, u64, u64)]) -> Drawing {
    let mut order: Vec<&Node> = nodes.iter().collect();
    order.sort_by(|a, b| {
        (b.entry, b.warp_instructions)
            .cmp(&(a.entry, a.warp_instructions))
            .then(a.address.cmp(&b.address))
    });
    let omitted = order.len().saturating_sub(MAX_BLOCKS);
    order.truncate(MAX_BLOCKS);
    order.sort_by_key(|n| n.address);

    let mut g = VisualGraph::new(Orientation::TopToBottom);
    let mut handles = HashMap::new();
    for n in &order {
        let mut label = format!("{:#x}", n.address);
        if let Some(l) = n.line {
            label.push_str(&format!(" · line {l}"));
        }
        label.push_str(&format!("\n{:.1}% eff.", 100.0 * n.efficiency));
        if n.entry {
            label.push_str(" · entry");
        }
        if n.reconverges {
            label.push_str("\nreconvergence point");
        }
        if n.divergent {
            label.push_str("\ndivergent branch");
        }
        let (border, width) = if n.divergent {
            (Color::new(0xc00000ff), 5)
        } else if n.reconverges {
            (Color::new(0x1f4fbfff), 5)
        } else {
            (Color::new(0x333333ff), 1)
        };
        let look = StyleAttr::new(
            border,
            width,
            Some(Color::new(efficiency_colour(n.efficiency))),
            4,
            13,
        );
        let longest = label.lines().map(|l| l.chars().count()).max().unwrap_or(8);
        let size = Point::new(
            24.0 + 7.5 * longest as f64,
            14.0 + 17.0 * label.lines().count() as f64,
        );
        let shape = ShapeKind::new_box(&label);
        let props = format!("class=\"cfg-block\" data-block=\"{:#x}\"", n.address);
        let element =
            Element::create_with_properties(shape, look, Orientation::LeftToRight, size, props);
        handles.insert(n.address, g.add_node(element));
    }
    let most = edges.iter().map(|e| e.2).max().unwrap_or(1).max(1) as f64;
    for &(from, to, lanes) in edges {
        let (Some(&a), Some(&b)) = (handles.get(&from), handles.get(&to)) else {
            continue;
        };
        // Width 1..4 px, on a log scale of how many lanes took the edge (the
        // arrow heads grow with it).
        let w = 1.0 + 3.0 * (1.0 + lanes as f64).ln() / (1.0 + most).ln();
        let mut arrow = Arrow::simple("");
        arrow.look = StyleAttr::new(Color::new(0x555555ff), w.round() as usize, None, 0, 11);
        g.add_edge(arrow, a, b);
    }
    let mut svg = SVGWriter::new();
    if handles.is_empty() {
        return Drawing {
            svg: String::new(),
            omitted,
        };
    }
    g.do_it(false, false, false, &mut svg);
    let bottom = g
        .iter_nodes()
        .map(|n| g.pos(n).bottom(true))
        .fold(0.0, f64::max);
    Drawing {
        svg: fit_height(&sorted_styles(&svg.finalize()), bottom + 20.0),
        omitted,
    }
}

/// The SVG with the rules of its `<style>` element in order: layout-rs
/// writes them from a hash map, in an order that changes from run to run,
/// and a report should read the same every time it is made.
fn sorted_styles(svg: &str) -> String {
    let (Some(open), Some(close)) = (svg.find("<style>\n"), svg.find("</style>")) else {
        return svg.to_string();
    };
    let start = open + "<style>\n".len();
    if close < start {
        return svg.to_string();
    }
    let mut rules: Vec<&str> = svg[start..close].lines().collect();
    rules.sort_unstable();
    let mut out = String::with_capacity(svg.len());
    out.push_str(&svg[..start]);
    for r in rules {
        out.push_str(r);
        out.push('\n');
    }
    out.push_str(&svg[close..]);
    out
}

/// The SVG without its XML declaration (it is inlined in HTML) and cut to
/// `height`: layout-rs sizes its canvas as if every label were drawn
/// vertically, which leaves a tall empty band below the graph.
fn fit_height(text: &str, height: f64) -> String {
    let svg = &text[text.find("<svg").unwrap_or(0)..];
    let Some(end) = svg.find('>') else {
        return svg.to_string();
    };
    let header = &svg[..end];
    let attr = |name: &str| -> Option<f64> {
        let at = header.find(&format!(" {name}=\""))? + name.len() + 3;
        header[at..].split('"').next()?.parse().ok()
    };
    let (Some(width), Some(old)) = (attr("width"), attr("height")) else {
        return svg.to_string();
    };
    let height = height.min(old);
    format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\"{}",
        &svg[end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(address: u64, efficiency: f64) -> Node {
        Node {
            address,
            line: Some(3),
            efficiency,
            warp_instructions: 1,
            divergent: address == 1,
            reconverges: address == 4,
            entry: address == 1,
        }
    }

    /// An if-else: block 1 branches to 2 or 3, which meet at 4.
    fn diamond() -> Drawing {
        let nodes: Vec<Node> = [(1, 1.0), (2, 0.5), (3, 0.5), (4, 1.0)]
            .into_iter()
            .map(|(a, e)| node(a, e))
            .collect();
        draw(&nodes, &[(1, 2, 16), (1, 3, 16), (2, 4, 16), (3, 4, 16)])
    }

    #[test]
    fn a_diamond_is_drawn_with_its_marks() {
        let d = diamond();
        assert!(d.svg.starts_with("<svg"));
        assert_eq!(d.svg.matches("class=\"cfg-block\"").count(), 4);
        assert!(d.svg.contains("divergent branch") && d.svg.contains("reconvergence point"));
        assert_eq!(d.omitted, 0);
    }

    #[test]
    fn a_drawing_reads_the_same_every_time() {
        let first = diamond().svg;
        // layout-rs seeds each of its hash maps afresh
        for _ in 0..20 {
            assert_eq!(diamond().svg, first);
        }
        let styles = &first[first.find("<style>").unwrap()..first.find("</style>").unwrap()];
        assert!(styles.lines().count() > 2, "{styles}");
    }

    #[test]
    fn sorted_styles_orders_the_rules_only() {
        let svg = "<svg><style>\n.a13 { x }\n.a11 { y }\n</style><g/></svg>";
        assert_eq!(
            sorted_styles(svg),
            "<svg><style>\n.a11 { y }\n.a13 { x }\n</style><g/></svg>"
        );
        assert_eq!(sorted_styles("<svg/>"), "<svg/>");
    }

    #[test]
    fn colours_run_from_red_to_green() {
        assert_eq!(efficiency_colour(0.0) >> 24, 255);
        assert_eq!((efficiency_colour(1.0) >> 16) & 0xff, 255);
        assert!(efficiency_colour(1.0) >> 24 < 120);
    }
}
