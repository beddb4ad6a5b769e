//! The report's plots, drawn with `plotters` into SVG strings that the pages
//! inline. Every plot has labelled axes with units and a legend when it
//! shows more than one series. Text in plots is escaped by plotters' SVG
//! backend.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// A plot could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot {0}: {1}")]
pub struct PlotError(pub String, pub String);

type Result<T> = std::result::Result<T, PlotError>;

const FONT: &str = "sans-serif";

/// Draws the chart's legend at `at`, in the style every plot shares.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) -> std::result::Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(|e| e.to_string())
}

/// One line of a plot: its legend label and its points.
pub struct Line {
    /// Legend label.
    pub label: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// One bar of [`share_bars`].
pub struct ShareBar {
    /// The function's name (shortened in the plot).
    pub label: String,
    /// Its share of the warp instructions, in [0, 1].
    pub share: f64,
    /// Its SIMT efficiency, in [0, 1].
    pub efficiency: f64,
}

fn colour(i: usize) -> RGBColor {
    const COLOURS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLOURS[i % COLOURS.len()]
}

/// A linear axis whose labels sit at chosen points (category centres, warp
/// widths) instead of round numbers.
struct Keyed {
    range: Range<f64>,
    keys: Vec<f64>,
}

fn keyed(range: Range<f64>, keys: Vec<f64>) -> Keyed {
    Keyed { range, keys }
}

impl Ranged for Keyed {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.range.start) / (self.range.end - self.range.start);
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.keys.clone()
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Shortens a label to `max` characters, with an ellipsis.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// Draws into a fresh SVG string of `size` pixels.
fn svg(
    name: &str,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> std::result::Result<(), String>,
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| PlotError(name.into(), e.to_string()))?;
        draw(&root).map_err(|e| PlotError(name.into(), e))?;
        root.present()
            .map_err(|e| PlotError(name.into(), e.to_string()))?;
    }
    Ok(out)
}

/// SIMT efficiency (%) against warp width (lanes), one line per series:
/// the paper's Fig. 1 for one program.
pub fn efficiency_sweep(title: &str, lines: &[Line], max_width: usize) -> Result<String> {
    let max_x = max_width.max(2) as f64;
    let keys: Vec<f64> = [1usize, 4, 8, 16, 24, 32, 48, 64]
        .into_iter()
        .filter(|&w| w <= max_width.max(2))
        .map(|w| w as f64)
        .collect();
    // The x axis runs on past the widest width to leave the legend room.
    svg("efficiency sweep", (860, 440), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(keyed(0.0..max_x * 1.45, keys), 0.0..105.0)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("warp width W (lanes)")
            .y_desc("SIMT efficiency (%)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, line) in lines.iter().enumerate() {
            let c = colour(i);
            // Each series is drawn thinner than the one before, so that one
            // that coincides with an earlier one (a function that is most
            // of the program) leaves the earlier one showing around it.
            let (width, radius) = sweep_stroke(i, lines.len());
            let pts: Vec<(f64, f64)> = line.points.iter().map(|&(x, y)| (x, 100.0 * y)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(width)))
                .map_err(|e| e.to_string())?
                .label(shorten(&line.label, 40))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(width))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, radius, c.filled())))
                .map_err(|e| e.to_string())?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The line width and point radius of series `i` of `n` in a sweep: the
/// last drawn as before (2 and 3), each earlier one a pixel wider and two
/// larger.
fn sweep_stroke(i: usize, n: usize) -> (u32, u32) {
    let under = n.saturating_sub(i + 1) as u32;
    (2 + under, 3 + 2 * under)
}

/// Per-function bars of the share of warp instructions (%), split into the
/// part whose lanes were busy (share × efficiency) and the idle part: the
/// paper's Fig. 7, both panels in one.
pub fn share_bars(title: &str, bars: &[ShareBar]) -> Result<String> {
    let n = bars.len().max(1);
    let max = bars.iter().map(|b| b.share).fold(0.0, f64::max).max(0.01) * 100.0 * 1.05;
    let keys: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let labels: Vec<String> = bars.iter().map(|b| shorten(&b.label, 36)).collect();
    let height = 110 + 26 * n as u32;
    svg("functions by share", (760, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(250)
            .build_cartesian_2d(0.0..max, keyed(0.0..n as f64, keys))
            .map_err(|e| e.to_string())?;
        // Function i is drawn at y = n - i - 0.5 so that the largest is on top.
        let label_of = |y: &f64| {
            let i = n as f64 - y - 0.5;
            labels
                .get(i.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("share of all warp instructions (%)")
            .y_desc("function")
            .y_label_formatter(&label_of)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(|e| e.to_string())?;
        let busy = RGBColor(44, 160, 44);
        let idle = RGBColor(214, 39, 40).mix(0.55);
        let y = |i: usize| n as f64 - i as f64 - 0.5;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let used = 100.0 * b.share * b.efficiency;
                Rectangle::new([(0.0, y(i) - 0.35), (used, y(i) + 0.35)], busy.filled())
            }))
            .map_err(|e| e.to_string())?
            .label("busy lanes: share × SIMT efficiency")
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], busy.filled()));
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let used = 100.0 * b.share * b.efficiency;
                Rectangle::new(
                    [(used, y(i) - 0.35), (100.0 * b.share, y(i) + 0.35)],
                    idle.filled(),
                )
            }))
            .map_err(|e| e.to_string())?
            .label("idle lanes: share × (1 − SIMT efficiency)")
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], idle.filled()));
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// Vertical bars: one group per category, one bar per series (a legend when
/// there are several). `y_desc` names the value and its unit.
pub fn grouped_bars(
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<String> {
    let n = categories.len().max(1);
    let k = series.len().max(1);
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.15;
    let keys: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let labels: Vec<String> = categories.iter().map(|c| shorten(c, 22)).collect();
    let width = (160 + 110 * n as u32).clamp(520, 900);
    svg(title, (width, 380), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(keyed(0.0..n as f64, keys), 0.0..max)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(y_desc)
            .x_label_formatter(&|x| {
                labels
                    .get(x.floor().max(0.0) as usize)
                    .cloned()
                    .unwrap_or_default()
            })
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(|e| e.to_string())?;
        let bar = 0.8 / k as f64;
        for (j, (name, values)) in series.iter().enumerate() {
            let c = colour(j);
            let x0 = |i: usize| i as f64 + 0.1 + bar * j as f64;
            let drawn =
                chart
                    .draw_series(values.iter().enumerate().map(|(i, &v)| {
                        Rectangle::new([(x0(i), 0.0), (x0(i) + bar, v)], c.filled())
                    }))
                    .map_err(|e| e.to_string())?;
            if k > 1 {
                drawn.label(name.as_str()).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled())
                });
            }
        }
        if k > 1 {
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_has_its_axis_titles_and_legend() {
        let svg = efficiency_sweep(
            "t",
            &[Line {
                label: "all <code>".into(),
                points: vec![(1.0, 1.0), (32.0, 0.5)],
            }],
            64,
        )
        .unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("warp width W (lanes)"));
        assert!(svg.contains("SIMT efficiency (%)"));
        assert!(svg.contains("all &lt;code&gt;"), "legend escaped");
    }

    #[test]
    fn coinciding_series_stay_apart_drawn_thinner_one_over_another() {
        assert_eq!(sweep_stroke(0, 5), (6, 11));
        assert_eq!(sweep_stroke(3, 5), (3, 5));
        assert_eq!(sweep_stroke(4, 5), (2, 3));
        let same = |label: &str| Line {
            label: label.into(),
            points: vec![(1.0, 1.0), (32.0, 0.5)],
        };
        let svg = efficiency_sweep("t", &[same("all"), same("worker")], 64).unwrap();
        for width in ["stroke-width=\"3\"", "stroke-width=\"2\""] {
            assert!(svg.contains(width), "{width}");
        }
    }

    #[test]
    fn long_labels_are_shortened() {
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abc", 4), "abc");
    }
}
