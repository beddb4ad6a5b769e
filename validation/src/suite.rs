//! Running the workloads of the expectations file and turning tf's figures
//! into rows against the expectations.

use crate::compare::Row;
use crate::expect::{Expectations, Metric, Workload};
use crate::gpu::{self, GpuFigures};
use crate::measure::{module_of, read_report, Run, Tracer, WidthFigures};
use crate::model::Model;
use crate::outcome::{GpuOutcome, GpuSource, ModelFigures, WorkloadOutcome, UNITS};
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// The rows of one workload at one level from tf's figures: every metric of
/// every function named in the expectations (measured `None` when the
/// function ran in no unit), and of all units together.
pub fn rows(w: &Workload, level: &str, widths: &[u32], figures: &[WidthFigures]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (k, f) in figures.iter().enumerate() {
        debug_assert_eq!(f.width, widths[k]);
        let functions = w.functions();
        let named = functions
            .iter()
            .map(|name| (*name, f.functions.get(*name)))
            .chain([(UNITS, Some(&f.whole))]);
        for (name, fig) in named {
            for metric in Metric::ALL {
                let expected = if name == UNITS {
                    None
                } else {
                    w.expected(name, level, metric, k)
                };
                rows.push(Row {
                    workload: w.name.clone(),
                    function: name.to_string(),
                    level: level.to_string(),
                    width: f.width,
                    metric,
                    measured: fig.and_then(|x| x.get(metric)),
                    expected,
                });
            }
        }
    }
    rows
}

/// The rows of a run that failed: every expectation, unmet.
fn failed_rows(w: &Workload, level: &str, widths: &[u32]) -> Vec<Row> {
    let empty: Vec<WidthFigures> = widths
        .iter()
        .map(|&width| WidthFigures {
            width,
            ..WidthFigures::default()
        })
        .collect();
    rows(w, level, widths, &empty)
        .into_iter()
        .filter(|r| r.expected.is_some())
        .collect()
}

/// Traces and analyzes `w` at every level of `levels`, with programs under
/// `build` (`build/O1/<program>`).
pub fn run_workload(
    w: &Workload,
    e: &Expectations,
    levels: &[String],
    build: &Path,
    tracer: &Tracer,
) -> WorkloadOutcome {
    run_workload_models(w, e, levels, build, tracer, &[])
}

/// [`run_workload`], and when `w` has a CUDA twin, each trace analyzed
/// again at W = 32 under every model of `models` (whole-unit figures).
pub fn run_workload_models(
    w: &Workload,
    e: &Expectations,
    levels: &[String],
    build: &Path,
    tracer: &Tracer,
    models: &[Model],
) -> WorkloadOutcome {
    let mut out = WorkloadOutcome {
        name: w.name.clone(),
        about: w.about.clone(),
        command: command_line(w, &e.env_of(w)),
        unit: w.unit.clone(),
        ..WorkloadOutcome::default()
    };
    let functions = w.functions();
    let env = e.env_of(w);
    let models = if w.cuda.is_some() { models } else { &[] };
    for level in levels {
        let start = Instant::now();
        let program = build.join(level).join(&w.program);
        let module = module_of(&program);
        let job = Run {
            name: format!("{}-{level}", w.name),
            program: &program,
            args: &w.args,
            env: &env,
            unit: Some(&w.unit),
            widths: &e.widths,
        };
        let trace = tracer.trace(&job);
        let measured = trace.as_ref().map_err(|e| anyhow!("{e:#}")).and_then(|t| {
            tracer
                .analyze(t, &job, "", &[])
                .and_then(|json| read_report(&json, &e.widths, &functions, &module))
        });
        for m in models {
            let figures = trace.as_ref().map_err(|e| anyhow!("{e:#}")).and_then(|t| {
                let at32 = Run {
                    name: job.name.clone(),
                    widths: &[32],
                    ..job
                };
                let json = tracer.analyze(t, &at32, &format!("-{}", m.name), &m.args)?;
                let mut widths = read_report(&json, &[32], &[], &module)?;
                Ok(widths.remove(0).whole)
            });
            out.models.push(ModelFigures {
                model: m.name.clone(),
                level: level.clone(),
                figures: figures.map_err(|e| format!("{e:#}")),
            });
        }
        if let Ok(t) = &trace {
            tracer.discard(t);
        }
        let rows = match measured {
            Ok(figures) => rows(w, level, &e.widths, &figures),
            Err(err) => {
                out.failures.push((level.clone(), format!("{err:#}")));
                failed_rows(w, level, &e.widths)
            }
        };
        let checked = rows.iter().filter(|r| r.expected.is_some()).count();
        let missed = rows
            .iter()
            .filter(|r| r.passes(&e.tolerance) == Some(false))
            .count();
        eprintln!(
            "tf-validate: {} -{level}: {checked} checks, {missed} missed{} ({:.1} s)",
            w.name,
            if models.is_empty() {
                String::new()
            } else {
                format!(", {} model(s)", models.len())
            },
            start.elapsed().as_secs_f64()
        );
        out.rows.extend(rows);
    }
    out
}

/// How a workload is run, for the report: `[ENV=…] program args`.
fn command_line(w: &Workload, env: &BTreeMap<String, String>) -> String {
    env.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain([w.program.clone()])
        .chain(w.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The GPU part: detects a GPU with nvcc and ncu, builds the twins and
/// profiles those of `workloads`; the reason when it cannot run.
pub fn run_gpu(workloads: &[&Workload], workloads_dir: &Path, work: &Path) -> GpuOutcome {
    let device = match gpu::detect() {
        Ok(d) => d,
        Err(why) => return GpuOutcome::Skipped(why),
    };
    if let Err(e) = gpu::build_twins(workloads_dir) {
        return GpuOutcome::Skipped(format!("{e:#}"));
    }
    let mut twins = BTreeMap::new();
    for w in workloads {
        let Some(twin) = &w.cuda else { continue };
        let program = workloads_dir.join("build/cuda").join(&twin.program);
        let log = work.join(format!("ncu-{}.csv", w.name));
        eprintln!("tf-validate: ncu {} ({})", w.name, twin.kernels.join(", "));
        let r: Result<GpuFigures> = gpu::profile(&program, &twin.args, &twin.kernels, &log);
        twins.insert(w.name.clone(), r.map_err(|e| format!("{e:#}")));
    }
    GpuOutcome::Ran {
        device,
        source: GpuSource::Live,
        twins,
        stale: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Figures;

    #[test]
    fn missing_functions_fail_their_expectations_and_units_are_unchecked() {
        let e = Expectations::parse(
            "widths = [8]\nlevels = [\"O1\"]\ntolerance = { simt_pp = 1.0, sectors_rel = 0.05 }\n\
             [[workload]]\nname = \"w\"\nprogram = \"p\"\nunit = \"call:f\"\nabout = \"x\"\n\
             env = { A = \"1\" }\nargs = [\"3\"]\n\
             [[workload.expect]]\nfunction = \"f\"\nsimt = [1]\n\
             [[workload.expect]]\nfunction = \"g\"\nheap = [2]\n",
        )
        .unwrap();
        let w = &e.workloads[0];
        let mut f = Figures::default();
        f.values.insert(Metric::Simt, Some(1.0));
        let figures = [WidthFigures {
            width: 8,
            whole: f.clone(),
            functions: [("f".to_string(), f)].into(),
        }];
        let rows = rows(w, "O1", &e.widths, &figures);
        assert_eq!(rows.len(), 3 * Metric::ALL.len());
        let get = |func: &str, m: Metric| {
            rows.iter()
                .find(|r| r.function == func && r.metric == m)
                .unwrap()
        };
        assert_eq!(get("f", Metric::Simt).passes(&e.tolerance), Some(true));
        assert_eq!(get("g", Metric::Heap).passes(&e.tolerance), Some(false));
        assert_eq!(get(UNITS, Metric::Simt).expected, None);
        let failed = failed_rows(w, "O1", &e.widths);
        assert_eq!(failed.len(), 2);
        assert!(failed.iter().all(|r| r.measured.is_none()));
        assert_eq!(command_line(w, &e.env_of(w)), "A=1 p 3");
    }
}
