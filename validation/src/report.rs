//! The outputs: a Markdown report (sections between markers, so that a
//! hand-written document around them survives regeneration) and a CSV.

use crate::compare::{Row, Summary};
use crate::expect::{Metric, Tolerance};
use crate::gpu::GpuFigures;
use crate::measure::Figures;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The name of the pseudo-function for all units together.
pub const UNITS: &str = "[units]";

/// Everything one run of the suite produced.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The command line that produced it.
    pub command: String,
    /// Compiler, Valgrind and tf versions, one line each.
    pub versions: Vec<String>,
    /// The -O levels run.
    pub levels: Vec<String>,
    /// The warp widths.
    pub widths: Vec<u32>,
    /// The tolerances.
    pub tolerance: Option<Tolerance>,
    /// Per workload, in order.
    pub workloads: Vec<WorkloadOutcome>,
    /// The GPU comparison, or why there is none.
    pub gpu: GpuOutcome,
    /// The replay models compared against the GPU (`--models`), in order.
    pub models: Vec<String>,
    /// The pigz runs, when asked for.
    pub pigz: Option<Result<Vec<PigzOutcome>, String>>,
}

/// One workload's rows and failures.
#[derive(Clone, Debug, Default)]
pub struct WorkloadOutcome {
    /// Its name.
    pub name: String,
    /// What it computes.
    pub about: String,
    /// How it was run (`program args`, environment).
    pub command: String,
    /// `--unit`.
    pub unit: String,
    /// Every measured figure (per function and `[units]`), with expectations.
    pub rows: Vec<Row>,
    /// Levels whose run failed, with the reason.
    pub failures: Vec<(String, String)>,
    /// Whole-unit figures at W = 32 under each model, per level (workloads
    /// with a CUDA twin only).
    pub models: Vec<ModelFigures>,
}

/// A workload's whole-unit figures at W = 32 under one model at one level.
#[derive(Clone, Debug)]
pub struct ModelFigures {
    /// The model's name (`--models`).
    pub model: String,
    /// The -O level.
    pub level: String,
    /// The figures, or why the analysis failed.
    pub figures: Result<Figures, String>,
}

/// The GPU part.
#[derive(Clone, Debug)]
pub enum GpuOutcome {
    /// Not run, and why.
    Skipped(String),
    /// Run on `device` (or read from its stored measurements); per
    /// workload with a twin, its figures or the error.
    Ran {
        /// The GPU.
        device: String,
        /// Where the figures come from.
        source: GpuSource,
        /// Per workload name.
        twins: BTreeMap<String, Result<GpuFigures, String>>,
        /// Twins whose sources changed since they were measured, with what
        /// changed: reported, left out of the statistics.
        stale: BTreeMap<String, String>,
    },
}

/// Where GPU figures come from.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuSource {
    /// Profiled with ncu during this run.
    Live,
    /// Read from measurements stored in the repository.
    Stored {
        /// Their directory.
        dir: String,
        /// The day they were measured.
        date: String,
        /// The commit whose twin sources were measured (abbreviated).
        commit: String,
        /// Compiler and profiler versions.
        tools: String,
        /// How the twins were built.
        build: String,
    },
}

impl Default for GpuOutcome {
    fn default() -> GpuOutcome {
        GpuOutcome::Skipped("not attempted".into())
    }
}

/// One pigz run.
#[derive(Clone, Debug)]
pub struct PigzOutcome {
    /// `-p` threads.
    pub threads: u32,
    /// Input bytes.
    pub bytes: u64,
    /// The traced command.
    pub command: String,
    /// Units `tf analyze` formed.
    pub units: u64,
    /// Thread instructions.
    pub thread_instructions: u64,
    /// SIMT efficiency per width.
    pub efficiency: Vec<(u32, f64)>,
}

impl Outcome {
    /// All rows of all workloads.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.workloads.iter().flat_map(|w| w.rows.iter())
    }

    /// The summary of the rows at `level` (all levels with `None`).
    pub fn summary(&self, level: Option<&str>) -> Summary {
        let tolerance = self.tolerance.unwrap_or(Tolerance {
            simt_pp: 0.0,
            sectors_rel: 0.0,
        });
        Summary::of(
            self.rows().filter(|r| level.is_none_or(|l| r.level == l)),
            &tolerance,
        )
    }

    /// Whether every check passed and every run succeeded (the analyses
    /// under each model included).
    pub fn all_passed(&self) -> bool {
        let s = self.summary(None);
        s.passed == s.count
            && self
                .workloads
                .iter()
                .all(|w| w.failures.is_empty() && w.models.iter().all(|m| m.figures.is_ok()))
    }
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.2}", x * 100.0)
}

pub(crate) fn sectors(x: f64) -> String {
    format!("{x:.3}")
}

fn value(metric: Metric, x: f64) -> String {
    if metric.is_sectors() {
        sectors(x)
    } else {
        pct(x)
    }
}

/// An expected value as written in the expectations (no trailing zeros).
fn short(metric: Metric, x: f64) -> String {
    let x = if metric.is_sectors() { x } else { x * 100.0 };
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn cell(row: Option<&Row>, tolerance: &Tolerance) -> String {
    let Some(r) = row else {
        return String::new();
    };
    let mut s = r
        .measured
        .map(|m| value(r.metric, m))
        .unwrap_or_else(|| "—".into());
    if let Some(e) = r.expected {
        write!(s, " ({})", short(r.metric, e)).unwrap();
        if r.passes(tolerance) == Some(false) {
            s = format!("**{s} ✗**");
        }
    }
    s
}

pub(crate) fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "—".into())
}

/// Replaces the text between `<!-- tf-validate:NAME -->` and
/// `<!-- /tf-validate:NAME -->` in `doc` with `body`; appends the marked
/// section when `doc` has none.
///
/// ```
/// use tf_validate::report::replace_section;
/// let doc = "intro\n<!-- tf-validate:x -->\nold\n<!-- /tf-validate:x -->\nend\n";
/// assert_eq!(replace_section(doc, "x", "new\n"),
///            "intro\n<!-- tf-validate:x -->\nnew\n<!-- /tf-validate:x -->\nend\n");
/// assert_eq!(replace_section("", "y", "b\n"), "<!-- tf-validate:y -->\nb\n<!-- /tf-validate:y -->\n");
/// ```
pub fn replace_section(doc: &str, name: &str, body: &str) -> String {
    let open = format!("<!-- tf-validate:{name} -->\n");
    let close = format!("<!-- /tf-validate:{name} -->");
    if let (Some(a), Some(b)) = (doc.find(&open), doc.find(&close)) {
        if a < b {
            return format!("{}{open}{body}{}", &doc[..a], &doc[b..]);
        }
    }
    let sep = if doc.is_empty() || doc.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{doc}{sep}{open}{body}{close}\n")
}

/// The Markdown of the main results: how they were made, the summary per
/// level, one table per workload, the whole-unit table and the GPU part.
pub fn results_markdown(o: &Outcome) -> String {
    let tolerance = o.tolerance.unwrap_or(Tolerance {
        simt_pp: 0.0,
        sectors_rel: 0.0,
    });
    let mut m = String::new();
    writeln!(m, "Generated by `{}`.", o.command).unwrap();
    for v in &o.versions {
        writeln!(m, "- {v}").unwrap();
    }
    writeln!(
        m,
        "\nTolerances: SIMT efficiency within {} percentage point(s), sectors per request \
         within {}% of the expectation.\n",
        tolerance.simt_pp,
        tolerance.sectors_rel * 100.0
    )
    .unwrap();
    writeln!(m, "### Summary\n").unwrap();
    writeln!(
        m,
        "| -O level | checks | passed | SIMT efficiency MAE (pp) | sectors/request MAE (%) |"
    )
    .unwrap();
    writeln!(m, "|---|---:|---:|---:|---:|").unwrap();
    let levels: Vec<Option<&str>> = o
        .levels
        .iter()
        .map(|l| Some(l.as_str()))
        .chain([None])
        .collect();
    for level in levels {
        let s = o.summary(level);
        writeln!(
            m,
            "| {} | {} | {} | {} | {} |",
            level.map_or("all".into(), |l| format!("-{l}")),
            s.count,
            s.passed,
            opt(s.simt_mae_pp, |x| format!("{x:.3}")),
            opt(s.sectors_mae_rel, |x| format!("{:.2}", x * 100.0)),
        )
        .unwrap();
    }
    writeln!(
        m,
        "\n### Per workload\n\nEach cell: measured (expected); **✗** marks a miss, an empty \
         expectation is measured only. SIMT efficiency in %, the others in 32-byte sectors \
         per request; figures of the function's own instructions.\n"
    )
    .unwrap();
    for w in &o.workloads {
        workload_table(&mut m, w, o, &tolerance);
    }
    units_table(&mut m, o);
    crate::gpu_report::markdown(&mut m, o);
    m
}

fn workload_table(m: &mut String, w: &WorkloadOutcome, o: &Outcome, tolerance: &Tolerance) {
    writeln!(
        m,
        "#### {}\n\n{}: `{}`, `--unit {}`\n",
        w.name, w.about, w.command, w.unit
    )
    .unwrap();
    for (level, why) in &w.failures {
        writeln!(m, "- **-{level} failed**: {why}").unwrap();
    }
    write!(m, "| -O | W | function |").unwrap();
    for metric in Metric::ALL {
        write!(m, " {} |", metric.header()).unwrap();
    }
    writeln!(m, " max error |").unwrap();
    writeln!(
        m,
        "|---|---:|---|{}---:|",
        "---:|".repeat(Metric::ALL.len())
    )
    .unwrap();
    let mut functions: Vec<&str> = Vec::new();
    for r in w.rows.iter().filter(|r| r.function != UNITS) {
        if !functions.contains(&r.function.as_str()) {
            functions.push(&r.function);
        }
    }
    for level in &o.levels {
        for &width in &o.widths {
            for f in &functions {
                let mine: Vec<&Row> = w
                    .rows
                    .iter()
                    .filter(|r| &r.level == level && r.width == width && r.function == *f)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                write!(m, "| {level} | {width} | {f} |").unwrap();
                for metric in Metric::ALL {
                    let r = mine.iter().copied().find(|r| r.metric == metric);
                    write!(m, " {} |", cell(r, tolerance)).unwrap();
                }
                let simt = mine
                    .iter()
                    .filter(|r| !r.metric.is_sectors())
                    .filter_map(|r| r.error())
                    .fold(None, |a: Option<f64>, e| Some(a.map_or(e, |a| a.max(e))));
                let sec = mine
                    .iter()
                    .filter(|r| r.metric.is_sectors())
                    .filter_map(|r| r.error())
                    .fold(None, |a: Option<f64>, e| Some(a.map_or(e, |a| a.max(e))));
                let mut errs = Vec::new();
                if let Some(e) = simt {
                    errs.push(format!("{e:.2} pp"));
                }
                if let Some(e) = sec {
                    errs.push(format!("{:.1}%", e * 100.0));
                }
                writeln!(m, " {} |", errs.join(", ")).unwrap();
            }
        }
    }
    m.push('\n');
}

fn units_table(m: &mut String, o: &Outcome) {
    writeln!(
        m,
        "### Whole units\n\nAll of a unit's instructions (its function and callees): what a \
         GPU profiler sees of the twin kernel. SIMT efficiency in %, heap sectors per load \
         and store request at W = 32.\n"
    )
    .unwrap();
    write!(m, "| workload | -O |").unwrap();
    for w in &o.widths {
        write!(m, " SIMT W={w} |").unwrap();
    }
    writeln!(m, " heap ld W=32 | heap st W=32 |").unwrap();
    writeln!(m, "|---|---|{}---:|---:|", "---:|".repeat(o.widths.len())).unwrap();
    for w in &o.workloads {
        for level in &o.levels {
            let get = |width: u32, metric: Metric| {
                w.rows
                    .iter()
                    .find(|r| {
                        r.function == UNITS
                            && &r.level == level
                            && r.width == width
                            && r.metric == metric
                    })
                    .and_then(|r| r.measured)
            };
            write!(m, "| {} | {level} |", w.name).unwrap();
            for &width in &o.widths {
                write!(m, " {} |", opt(get(width, Metric::Simt), pct)).unwrap();
            }
            writeln!(
                m,
                " {} | {} |",
                opt(get(32, Metric::HeapLoads), sectors),
                opt(get(32, Metric::HeapStores), sectors)
            )
            .unwrap();
        }
    }
    m.push('\n');
}

/// The Markdown of the pigz runs.
pub fn pigz_markdown(runs: &Result<Vec<PigzOutcome>, String>, widths: &[u32]) -> String {
    let mut m = String::new();
    let runs = match runs {
        Err(why) => {
            writeln!(m, "**Not run: {why}.**").unwrap();
            return m;
        }
        Ok(r) => r,
    };
    write!(m, "| command | input | units | thread instructions |").unwrap();
    for w in widths {
        write!(m, " SIMT W={w} |").unwrap();
    }
    writeln!(m).unwrap();
    writeln!(m, "|---|---:|---:|---:|{}", "---:|".repeat(widths.len())).unwrap();
    for r in runs {
        write!(
            m,
            "| `{}` | {} MiB | {} | {} |",
            r.command,
            r.bytes >> 20,
            r.units,
            r.thread_instructions
        )
        .unwrap();
        for w in widths {
            let e = r.efficiency.iter().find(|(x, _)| x == w).map(|(_, e)| *e);
            write!(m, " {}% |", opt(e, |x| format!("{:.1}", x * 100.0))).unwrap();
        }
        writeln!(m).unwrap();
    }
    m
}

/// The CSV: one line per workload, function, level, width and metric, with
/// the expectation (`reference` = `hand`) where there is one, and one per
/// workload, level and GPU metric (`reference` = `gpu`, function `[units]`,
/// width 32) where the GPU part ran, and per model (`reference` =
/// `gpu:MODEL`, SIMT efficiency only).
pub fn csv(o: &Outcome) -> String {
    let tolerance = o.tolerance.unwrap_or(Tolerance {
        simt_pp: 0.0,
        sectors_rel: 0.0,
    });
    let mut s = String::from(
        "workload,function,level,width,metric,measured,reference,expected,error,pass\n",
    );
    let num = |x: Option<f64>| x.map(|x| format!("{x:.6}")).unwrap_or_default();
    for w in &o.workloads {
        for r in &w.rows {
            let pass = r
                .passes(&tolerance)
                .map(|p| p.to_string())
                .unwrap_or_default();
            writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{}",
                w.name,
                r.function,
                r.level,
                r.width,
                r.metric,
                num(r.measured),
                if r.expected.is_some() { "hand" } else { "none" },
                num(r.expected),
                num(r.error().filter(|e| e.is_finite())),
                pass
            )
            .unwrap();
        }
    }
    crate::gpu_report::csv_rows(&mut s, o);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(function: &str, metric: Metric, measured: f64, expected: Option<f64>) -> Row {
        Row {
            workload: "w".into(),
            function: function.into(),
            level: "O1".into(),
            width: 32,
            metric,
            measured: Some(measured),
            expected,
        }
    }

    fn outcome() -> Outcome {
        Outcome {
            command: "tf-validate".into(),
            levels: vec!["O1".into()],
            widths: vec![32],
            tolerance: Some(Tolerance {
                simt_pp: 1.0,
                sectors_rel: 0.05,
            }),
            workloads: vec![WorkloadOutcome {
                name: "w".into(),
                about: "a test".into(),
                command: "w 1".into(),
                unit: "call:f".into(),
                rows: vec![
                    row("f", Metric::Simt, 1.0, Some(1.0)),
                    row("f", Metric::Heap, 4.5, Some(4.0)),
                    row(UNITS, Metric::Simt, 0.9, None),
                    row(UNITS, Metric::HeapLoads, 4.0, None),
                ],
                failures: vec![],
                models: vec![],
            }],
            ..Outcome::default()
        }
    }

    #[test]
    fn misses_are_marked_and_counted() {
        let o = outcome();
        assert!(!o.all_passed());
        let md = results_markdown(&o);
        assert!(
            md.contains("| O1 | 32 | f | 100.00 (100) | **4.500 (4) ✗** |"),
            "{md}"
        );
        assert!(md.contains("| -O1 | 2 | 1 | 0.000 | 12.50 |"), "{md}");
        assert!(md.contains("| w | O1 | 90.00 | 4.000 | — |"), "{md}");
        assert!(md.contains("Not run: not attempted"), "{md}");
    }

    #[test]
    fn csv_has_one_line_per_figure_and_the_gpu_side() {
        let mut o = outcome();
        o.gpu = GpuOutcome::Ran {
            device: "GPU 0".into(),
            source: GpuSource::Live,
            stale: BTreeMap::new(),
            twins: [(
                "w".to_string(),
                Ok(GpuFigures {
                    launches: 1,
                    simt: 0.8,
                    load_sectors: Some(5.0),
                    store_sectors: None,
                }),
            )]
            .into(),
        };
        let text = csv(&o);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 4 + 2);
        assert!(lines.contains(&"w,f,O1,32,heap,4.500000,hand,4.000000,0.125000,false"));
        assert!(lines.contains(&"w,[units],O1,32,simt,0.900000,gpu,0.800000,10.000000,"));
        assert!(lines.contains(&"w,[units],O1,32,heap_loads,4.000000,gpu,5.000000,0.200000,"));
        let md = results_markdown(&o);
        assert!(
            md.contains("| w | 80.00 | 5.000 | — | 90.00 | 4.000 | — |"),
            "{md}"
        );
    }
}
