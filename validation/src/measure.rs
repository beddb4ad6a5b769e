//! Running the suite: building the workloads, tracing them with `tf trace`
//! and reading the figures out of `tf analyze --json`.

use crate::expect::Metric;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The figures of one function (or of all units together) at one width.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// Thread instructions.
    pub thread_instructions: u64,
    /// Warp instructions.
    pub warp_instructions: u64,
    /// Each metric's value; `None` for sectors per request without requests.
    pub values: BTreeMap<Metric, Option<f64>>,
}

impl Figures {
    /// Reads the figures of a JSON object with `simt_efficiency`, the
    /// instruction counts and `memory` (a width's result or a function of it).
    ///
    /// ```
    /// use tf_validate::{expect::Metric, measure::Figures};
    /// let seg = |r: u64, s: u64| serde_json::json!({"requests": r, "sectors": s,
    ///     "sectors_per_request": if r == 0 { 0.0 } else { s as f64 / r as f64 },
    ///     "loads": {"requests": r, "sectors": s}, "stores": {"requests": 0, "sectors": 0}});
    /// let f = Figures::from_json(&serde_json::json!({
    ///     "simt_efficiency": 0.5, "thread_instructions": 8, "warp_instructions": 2,
    ///     "memory": {"heap": seg(2, 8), "stack": seg(0, 0), "stack_interleaved": seg(0, 0)}
    /// })).unwrap();
    /// assert_eq!(f.get(Metric::Simt), Some(0.5));
    /// assert_eq!(f.get(Metric::HeapLoads), Some(4.0));
    /// assert_eq!(f.get(Metric::HeapStores), None);
    /// assert_eq!(f.get(Metric::Stack), None);
    /// ```
    pub fn from_json(v: &Value) -> Result<Figures> {
        let number = |v: &Value, what: &str| {
            v.as_f64()
                .with_context(|| format!("`{what}` is not a number in tf's JSON"))
        };
        let count = |v: &Value, what: &str| {
            v.as_u64()
                .with_context(|| format!("`{what}` is not a count in tf's JSON"))
        };
        // Sectors over requests, from the counts (tf writes 0 when there
        // are no requests; that is no figure, not zero sectors).
        let ratio = |v: &Value, what: &str| -> Result<Option<f64>> {
            let r = count(&v["requests"], &format!("{what}.requests"))?;
            let s = count(&v["sectors"], &format!("{what}.sectors"))?;
            Ok((r > 0).then(|| s as f64 / r as f64))
        };
        let memory = &v["memory"];
        let mut values = BTreeMap::new();
        values.insert(
            Metric::Simt,
            Some(number(&v["simt_efficiency"], "simt_efficiency")?),
        );
        values.insert(Metric::Heap, ratio(&memory["heap"], "heap")?);
        values.insert(
            Metric::HeapLoads,
            ratio(&memory["heap"]["loads"], "heap.loads")?,
        );
        values.insert(
            Metric::HeapStores,
            ratio(&memory["heap"]["stores"], "heap.stores")?,
        );
        values.insert(Metric::Stack, ratio(&memory["stack"], "stack")?);
        values.insert(
            Metric::StackInterleaved,
            ratio(&memory["stack_interleaved"], "stack_interleaved")?,
        );
        Ok(Figures {
            thread_instructions: count(&v["thread_instructions"], "thread_instructions")?,
            warp_instructions: count(&v["warp_instructions"], "warp_instructions")?,
            values,
        })
    }

    /// The value of `metric`, if there is one.
    pub fn get(&self, metric: Metric) -> Option<f64> {
        self.values.get(&metric).copied().flatten()
    }
}

/// Everything measured for one workload at one -O level and width.
#[derive(Clone, Debug, Default)]
pub struct WidthFigures {
    /// The warp width.
    pub width: u32,
    /// All units together (what a GPU profiler would see for the kernel).
    pub whole: Figures,
    /// Per function, own instructions only, for the functions asked for
    /// (absent when the function ran in no unit).
    pub functions: BTreeMap<String, Figures>,
}

/// Reads the widths `widths` of `tf analyze --json` output, with the
/// figures of `functions`. A name that several modules define (`strcmp` in
/// ld.so and in libc) is taken from `module` when it is one of them.
pub fn read_report(
    report: &Value,
    widths: &[u32],
    functions: &[&str],
    module: &str,
) -> Result<Vec<WidthFigures>> {
    let results = report["results"]
        .as_array()
        .context("tf's JSON has no `results`")?;
    widths
        .iter()
        .map(|&w| {
            let r = results
                .iter()
                .find(|r| r["warp_size"].as_u64() == Some(u64::from(w)))
                .with_context(|| format!("tf's JSON has no result for W = {w}"))?;
            let listed = r["functions"]
                .as_array()
                .context("tf's JSON has no `functions`")?;
            let mut per_function = BTreeMap::new();
            for &name in functions {
                let mut matches = listed.iter().filter(|f| f["name"] == name);
                let first = matches.next();
                let chosen = listed
                    .iter()
                    .find(|f| f["name"] == name && f["module"] == module)
                    .or(first);
                if let Some(f) = chosen {
                    per_function.insert(name.to_string(), Figures::from_json(f)?);
                }
            }
            Ok(WidthFigures {
                width: w,
                whole: Figures::from_json(r)?,
                functions: per_function,
            })
        })
        .collect()
}

/// Runs `command`, failing with its stderr when it does not succeed.
pub fn run(command: &mut Command) -> Result<()> {
    checked(command.stdout(Stdio::null())).map(drop)
}

/// Runs `command` and returns its standard output, failing with its stderr
/// when it does not succeed.
pub fn output(command: &mut Command) -> Result<String> {
    checked(command.stdout(Stdio::piped()))
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn checked(command: &mut Command) -> Result<std::process::Output> {
    let out = command
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {:?}", command.get_program()))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            describe(command),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}

/// A command line, for messages.
pub fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Builds the workloads at each of `levels` (`O1` → `make OPT=-O1`).
pub fn build_workloads(workloads_dir: &Path, levels: &[String]) -> Result<()> {
    for level in levels {
        run(Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(workloads_dir)
            .arg(format!("OPT=-{level}")))
        .with_context(|| format!("building the workloads at -{level}"))?;
    }
    Ok(())
}

/// The `tf` binary and where traces go.
#[derive(Clone, Debug)]
pub struct Tracer {
    /// The `tf` binary.
    pub tf: PathBuf,
    /// A directory for traces (each removed after its analysis unless `keep`).
    pub work: PathBuf,
    /// Keep the traces.
    pub keep: bool,
    /// Options added to every `tf analyze` (`--analyze-args`).
    pub analyze_args: Vec<String>,
}

/// One traced and analyzed run.
pub struct Run<'a> {
    /// A name for the trace directory (unique within the work directory).
    pub name: String,
    /// The program.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// Extra environment.
    pub env: &'a BTreeMap<String, String>,
    /// `--unit` (`None`: tf's default).
    pub unit: Option<&'a str>,
    /// Warp widths.
    pub widths: &'a [u32],
}

impl Tracer {
    /// Traces `job.program` with `tf trace` and analyzes the trace at
    /// `job.widths` with `tf analyze --json`; returns the JSON.
    pub fn trace_and_analyze(&self, job: &Run) -> Result<Value> {
        let trace = self.trace(job)?;
        let value = self.analyze(&trace, job, "", &[]);
        self.discard(&trace);
        value
    }

    /// Traces `job.program` with `tf trace` into the work directory; returns
    /// the trace directory.
    pub fn trace(&self, job: &Run) -> Result<PathBuf> {
        let trace = self.work.join(&job.name);
        if trace.exists() {
            std::fs::remove_dir_all(&trace)
                .with_context(|| format!("removing {}", trace.display()))?;
        }
        let mut t = Command::new(&self.tf);
        t.arg("trace")
            .arg("-o")
            .arg(&trace)
            .arg("--")
            .arg(job.program)
            .args(job.args)
            .envs(job.env);
        run(&mut t).context("tracing")?;
        Ok(trace)
    }

    /// Analyzes `trace` at `job.widths` with `tf analyze --json`, with the
    /// tracer's `analyze_args` and then `extra`; returns the JSON. `tag`
    /// tells the JSON files of several analyses of one trace apart.
    pub fn analyze(&self, trace: &Path, job: &Run, tag: &str, extra: &[String]) -> Result<Value> {
        let json = self.work.join(format!("{}{tag}.json", job.name));
        let widths: Vec<String> = job.widths.iter().map(u32::to_string).collect();
        let mut a = Command::new(&self.tf);
        a.arg("analyze")
            .arg(trace)
            .arg("--warp")
            .arg(widths.join(","))
            .arg("--json")
            .arg(&json);
        if let Some(unit) = job.unit {
            a.arg("--unit").arg(unit);
        }
        a.args(&self.analyze_args).args(extra);
        run(&mut a)?;
        let text = std::fs::read(&json).with_context(|| format!("reading {}", json.display()))?;
        let value =
            serde_json::from_slice(&text).with_context(|| format!("parsing {}", json.display()))?;
        if !self.keep {
            std::fs::remove_file(&json).ok();
        }
        Ok(value)
    }

    /// Removes `trace` unless the traces are kept.
    pub fn discard(&self, trace: &Path) {
        if !self.keep {
            std::fs::remove_dir_all(trace).ok();
        }
    }
}

/// The module name tf gives a program: its file name.
pub fn module_of(program: &Path) -> String {
    program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
