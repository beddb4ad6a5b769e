//! tf against a GPU in the report: the pairs of whole-unit figures (tf at
//! W = 32, the twin on the GPU), their agreement per -O level and per
//! replay model, and the Markdown and CSV lines that show them.

use crate::compare::{Agreement, Row};
use crate::expect::Metric;
use crate::gpu::GpuFigures;
use crate::outcome::{GpuOutcome, GpuSource, Outcome, WorkloadOutcome, UNITS};
use crate::report::{opt, pct, sectors};
use std::fmt::Write;

/// One workload's figure next to its twin's: (workload, tf, GPU).
pub type Pair = (String, f64, f64);

/// The metrics compared with the GPU, in the order of [`Outcome::gpu_pairs`].
pub const METRICS: [Metric; 3] = [Metric::Simt, Metric::HeapLoads, Metric::HeapStores];

impl Outcome {
    /// The twins whose figures are compared: measured, and not changed
    /// since (name and figures).
    pub fn gpu_current(&self) -> Vec<(&str, &GpuFigures)> {
        let GpuOutcome::Ran { twins, stale, .. } = &self.gpu else {
            return Vec::new();
        };
        twins
            .iter()
            .filter(|(name, _)| !stale.contains_key(*name))
            .filter_map(|(name, t)| t.as_ref().ok().map(|g| (name.as_str(), g)))
            .collect()
    }

    /// tf's whole-unit figure against the GPU's, per current twin, at
    /// `level` and width 32: (tf, GPU) pairs for efficiency and for load
    /// and store sectors per request.
    pub fn gpu_pairs(&self, level: &str) -> [Vec<Pair>; 3] {
        let mut out: [Vec<Pair>; 3] = Default::default();
        for (name, g) in self.gpu_current() {
            let Some(w) = self.workloads.iter().find(|w| w.name == name) else {
                continue;
            };
            let gpu = [Some(g.simt), g.load_sectors, g.store_sectors];
            for (k, metric) in METRICS.into_iter().enumerate() {
                if let (Some(a), Some(b)) = (units_figure(w, level, metric), gpu[k]) {
                    out[k].push((name.to_string(), a, b));
                }
            }
        }
        out
    }

    /// SIMT efficiency under `model` against the GPU's, per current twin at
    /// `level` (twins whose analysis failed are left out).
    pub fn model_pairs(&self, model: &str, level: &str) -> Vec<Pair> {
        let mut out = Vec::new();
        for (name, g) in self.gpu_current() {
            let Some(w) = self.workloads.iter().find(|w| w.name == name) else {
                continue;
            };
            if let Some(tf) = model_simt(w, model, level) {
                out.push((name.to_string(), tf, g.simt));
            }
        }
        out
    }
}

/// A workload's whole-unit figure at W = 32 and `level`.
fn units_figure(w: &WorkloadOutcome, level: &str, metric: Metric) -> Option<f64> {
    w.rows
        .iter()
        .find(|r| r.function == UNITS && r.level == level && r.width == 32 && r.metric == metric)
        .and_then(|r| r.measured)
}

/// A workload's whole-unit SIMT efficiency under `model` at `level`.
fn model_simt(w: &WorkloadOutcome, model: &str, level: &str) -> Option<f64> {
    w.models
        .iter()
        .find(|m| m.model == model && m.level == level)
        .and_then(|m| m.figures.as_ref().ok())
        .and_then(|f| f.get(Metric::Simt))
}

fn plain(pairs: &[Pair]) -> Vec<(f64, f64)> {
    pairs.iter().map(|(_, a, b)| (*a, *b)).collect()
}

fn r3(x: Option<f64>) -> String {
    opt(x, |x| format!("{x:.3}"))
}

fn points(x: Option<f64>) -> String {
    opt(x, |x| format!("{:.2}", x * 100.0))
}

/// The "Against a GPU" part of the report.
pub fn markdown(m: &mut String, o: &Outcome) {
    writeln!(m, "### Against a GPU\n").unwrap();
    let (device, source, twins, stale) = match &o.gpu {
        GpuOutcome::Skipped(why) => {
            writeln!(m, "**Not run: {why}.** The CUDA twins (`workloads/cuda`) and the Nsight Compute comparison need a machine with an NVIDIA GPU, nvcc and ncu, or stored measurements (`--gpu-data`); tf-validate then compares tf's whole-unit figures at W = 32 with the GPU's.").unwrap();
            return;
        }
        GpuOutcome::Ran {
            device,
            source,
            twins,
            stale,
        } => (device, source, twins, stale),
    };
    match source {
        GpuSource::Live => writeln!(
            m,
            "CUDA twins built with nvcc -O3 and profiled with Nsight Compute on {device} \
             during this run."
        ),
        GpuSource::Stored {
            dir,
            date,
            commit,
            tools,
            build,
        } => writeln!(
            m,
            "Stored measurements (`{dir}`, whose README says how they were made): the CUDA \
             twins of `workloads/cuda` as of commit `{commit}`, built with {build}, \
             profiled with Nsight Compute on an {device} on {date} ({tools})."
        ),
    }
    .unwrap();
    writeln!(
        m,
        "tf: all units at W = 32 (SIMT efficiency; heap sectors per load / store request); \
         GPU: all launches of the twin's kernels, `{}` / `{}` / 32, `{}` / `{}` and the `_op_st` \
         equivalents. MAE of SIMT efficiency in percentage points, of sectors per request \
         in sectors; r is Pearson's correlation over the twins.\n",
        crate::gpu::THREAD_INST,
        crate::gpu::WARP_INST,
        crate::gpu::LD_SECTORS,
        crate::gpu::LD_REQUESTS
    )
    .unwrap();
    for (name, why) in stale {
        if twins.contains_key(name) {
            writeln!(
                m,
                "- {name}: **not measured since**: its sources changed ({why}); left out of \
                 the statistics."
            )
        } else {
            writeln!(m, "- {name}: **not measured**: {why}.")
        }
        .unwrap();
    }
    for (name, t) in twins {
        if let Err(e) = t {
            writeln!(m, "- {name}: **failed**: {e}").unwrap();
        }
    }
    levels_table(m, o);
    twins_table(m, o, twins, stale);
    models_tables(m, o);
}

fn levels_table(m: &mut String, o: &Outcome) {
    writeln!(
        m,
        "\n| -O level | twins | SIMT MAE (pp) | SIMT r | load sectors MAE | load r | store sectors MAE | store r |"
    )
    .unwrap();
    writeln!(m, "|---|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    for level in &o.levels {
        let [simt, ld, st] = o.gpu_pairs(level).map(|p| Agreement::of(&plain(&p)));
        writeln!(
            m,
            "| -{level} | {} | {} | {} | {} | {} | {} | {} |",
            simt.count,
            points(simt.mae),
            r3(simt.pearson),
            r3(ld.mae),
            r3(ld.pearson),
            r3(st.mae),
            r3(st.pearson),
        )
        .unwrap();
    }
}

fn twins_table(
    m: &mut String,
    o: &Outcome,
    twins: &std::collections::BTreeMap<String, Result<GpuFigures, String>>,
    stale: &std::collections::BTreeMap<String, String>,
) {
    writeln!(
        m,
        "\n| workload | GPU SIMT % | GPU ld | GPU st | tf SIMT % by -O | tf ld by -O | tf st by -O |"
    )
    .unwrap();
    writeln!(m, "|---|---:|---:|---:|---|---|---|").unwrap();
    for (name, t) in twins {
        let Ok(g) = t else { continue };
        let Some(w) = o.workloads.iter().find(|w| &w.name == name) else {
            continue;
        };
        let by = |metric: Metric, f: fn(f64) -> String| {
            o.levels
                .iter()
                .map(|l| opt(units_figure(w, l, metric), f))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let mark = if stale.contains_key(name) {
            " (not measured since)"
        } else {
            ""
        };
        writeln!(
            m,
            "| {name}{mark} | {} | {} | {} | {} | {} | {} |",
            pct(g.simt),
            opt(g.load_sectors, sectors),
            opt(g.store_sectors, sectors),
            by(Metric::Simt, pct),
            by(Metric::HeapLoads, sectors),
            by(Metric::HeapStores, sectors),
        )
        .unwrap();
    }
}

/// The models × level table of SIMT efficiency against the GPU, and each
/// twin's figure under each model.
fn models_tables(m: &mut String, o: &Outcome) {
    if o.models.is_empty() {
        m.push('\n');
        return;
    }
    writeln!(
        m,
        "\n#### Replay models\n\nEach twin's trace analyzed again under each model (the \
         `tf analyze` options it names); SIMT efficiency of all units at W = 32 against the \
         GPU's: MAE in percentage points / Pearson's r, over the twins.\n"
    )
    .unwrap();
    write!(m, "| model |").unwrap();
    for level in &o.levels {
        write!(m, " -{level} MAE (pp) | -{level} r |").unwrap();
    }
    writeln!(m, "\n|---|{}", "---:|---:|".repeat(o.levels.len())).unwrap();
    for model in &o.models {
        write!(m, "| {model} |").unwrap();
        for level in &o.levels {
            let a = Agreement::of(&plain(&o.model_pairs(model, level)));
            write!(m, " {} | {} |", points(a.mae), r3(a.pearson)).unwrap();
        }
        m.push('\n');
    }
    writeln!(
        m,
        "\nSIMT efficiency (%) per twin, by -O ({}):\n",
        o.levels.join(" / ")
    )
    .unwrap();
    write!(m, "| workload | GPU |").unwrap();
    for model in &o.models {
        write!(m, " {model} |").unwrap();
    }
    writeln!(m, "\n|---|---:|{}", "---|".repeat(o.models.len())).unwrap();
    for (name, g) in o.gpu_current() {
        let Some(w) = o.workloads.iter().find(|w| w.name == name) else {
            continue;
        };
        write!(m, "| {name} | {} |", pct(g.simt)).unwrap();
        for model in &o.models {
            let cells: Vec<String> = o
                .levels
                .iter()
                .map(|l| opt(model_simt(w, model, l), pct))
                .collect();
            write!(m, " {} |", cells.join(" / ")).unwrap();
        }
        m.push('\n');
    }
    // One line per model, level and reason, naming the workloads.
    let mut failed: std::collections::BTreeMap<(String, String, String), Vec<&str>> =
        Default::default();
    for w in &o.workloads {
        for f in &w.models {
            if let Err(e) = &f.figures {
                let key = (f.model.clone(), f.level.clone(), reason(e));
                failed.entry(key).or_default().push(&w.name);
            }
        }
    }
    if !failed.is_empty() {
        writeln!(m, "\nAnalyses that failed (left out of the table):\n").unwrap();
        for ((model, level, why), names) in failed {
            writeln!(m, "- {model} at -{level} ({}): {why}", names.join(", ")).unwrap();
        }
    }
    m.push('\n');
}

/// The gist of a failed analysis: tf's own `error:` line when there is one
/// (the command line before it names temporary paths), else the last line.
fn reason(e: &str) -> String {
    let line = e
        .lines()
        .find_map(|l| l.find("error:").map(|k| &l[k..]))
        .or_else(|| e.lines().last())
        .unwrap_or(e);
    line.trim().to_string()
}

/// The CSV lines of the GPU comparison (see [`crate::report::csv`]).
pub fn csv_rows(s: &mut String, o: &Outcome) {
    let num = |x: f64| format!("{x:.6}");
    let mut line = |name: &str, level: &str, metric: Metric, tf: f64, gpu: f64, reference: &str| {
        let row = Row {
            workload: name.to_string(),
            function: UNITS.into(),
            level: level.to_string(),
            width: 32,
            metric,
            measured: Some(tf),
            expected: Some(gpu),
        };
        let error = row.error().map(num).unwrap_or_default();
        writeln!(
            s,
            "{name},{UNITS},{level},32,{metric},{},{reference},{},{error},",
            num(tf),
            num(gpu)
        )
        .unwrap();
    };
    for level in &o.levels {
        let pairs = o.gpu_pairs(level);
        for (metric, p) in METRICS.iter().zip(pairs.iter()) {
            for (name, tf, gpu) in p {
                line(name, level, *metric, *tf, *gpu, "gpu");
            }
        }
        for model in &o.models {
            for (name, tf, gpu) in o.model_pairs(model, level) {
                line(&name, level, Metric::Simt, tf, gpu, &format!("gpu:{model}"));
            }
        }
    }
}

#[cfg(test)]
#[path = "gpu_report_tests.rs"]
mod tests;
