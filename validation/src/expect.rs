//! The expectations file, `workloads/expectations.toml`: the workloads, how
//! to run and analyze them, and the figures derived by hand in their C
//! files' header comments.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// Warp widths; every list of expected values follows this order.
    pub widths: Vec<u32>,
    /// Optimization levels (`O0` … `O3`) the suite builds and runs.
    pub levels: Vec<String>,
    /// How close a measurement must be to its expectation.
    pub tolerance: Tolerance,
    /// Environment of every traced run (a workload's own adds to it).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The workloads, in report order.
    #[serde(rename = "workload")]
    pub workloads: Vec<Workload>,
}

/// Tolerances of the checks.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// SIMT efficiency: largest |measured − expected|, in percentage points.
    pub simt_pp: f64,
    /// Sectors per request: largest |measured − expected| / expected.
    pub sectors_rel: f64,
}

/// One workload: a program of `workloads/` with its arguments and unit.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Name in the report (unique).
    pub name: String,
    /// The program, built into `workloads/build/O<n>/<program>`.
    pub program: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The `--unit` of `tf analyze` that makes one unit one GPU thread.
    pub unit: String,
    /// One line saying what it computes.
    pub about: String,
    /// Environment variables for the traced run.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Part of the fast subset (`--quick`, the end-to-end test).
    #[serde(default)]
    pub quick: bool,
    /// The CUDA twin in `workloads/cuda`, if there is one.
    #[serde(default)]
    pub cuda: Option<CudaTwin>,
    /// Expected figures, per function.
    #[serde(default, rename = "expect")]
    pub expects: Vec<Expect>,
}

/// A CUDA program doing the same work per GPU thread as the workload per unit.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaTwin {
    /// The program, built into `workloads/build/cuda/<program>`.
    pub program: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The kernels whose launches are profiled (all their launches are summed).
    pub kernels: Vec<String>,
}

/// Expected figures of one function's own instructions, per warp width.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The function.
    pub function: String,
    /// The levels this block applies to (default: all).
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// SIMT efficiency (a fraction).
    #[serde(default)]
    pub simt: Option<Vec<f64>>,
    /// Heap sectors per request.
    #[serde(default)]
    pub heap: Option<Vec<f64>>,
    /// Heap sectors per load request.
    #[serde(default)]
    pub heap_loads: Option<Vec<f64>>,
    /// Heap sectors per store request.
    #[serde(default)]
    pub heap_stores: Option<Vec<f64>>,
    /// Stack sectors per request, CPU stacks.
    #[serde(default)]
    pub stack: Option<Vec<f64>>,
    /// Stack sectors per request, interleaved as GPU local memory.
    #[serde(default)]
    pub stack_interleaved: Option<Vec<f64>>,
}

/// A figure that tf reports and the suite can check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// SIMT efficiency.
    Simt,
    /// Heap sectors per request.
    Heap,
    /// Heap sectors per load request.
    HeapLoads,
    /// Heap sectors per store request.
    HeapStores,
    /// Stack sectors per request (CPU stacks).
    Stack,
    /// Stack sectors per request (interleaved).
    StackInterleaved,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 6] = [
        Metric::Simt,
        Metric::Heap,
        Metric::HeapLoads,
        Metric::HeapStores,
        Metric::Stack,
        Metric::StackInterleaved,
    ];

    /// The key in the expectations file and in the CSV.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Simt => "simt",
            Metric::Heap => "heap",
            Metric::HeapLoads => "heap_loads",
            Metric::HeapStores => "heap_stores",
            Metric::Stack => "stack",
            Metric::StackInterleaved => "stack_interleaved",
        }
    }

    /// The column header in the Markdown report.
    pub fn header(self) -> &'static str {
        match self {
            Metric::Simt => "SIMT eff. %",
            Metric::Heap => "heap",
            Metric::HeapLoads => "heap ld",
            Metric::HeapStores => "heap st",
            Metric::Stack => "stack",
            Metric::StackInterleaved => "stack il.",
        }
    }

    /// Whether the metric is a number of sectors per request (else an efficiency).
    pub fn is_sectors(self) -> bool {
        self != Metric::Simt
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl Expect {
    /// The expected values of `metric`, one per width, if given.
    pub fn values(&self, metric: Metric) -> Option<&[f64]> {
        match metric {
            Metric::Simt => self.simt.as_deref(),
            Metric::Heap => self.heap.as_deref(),
            Metric::HeapLoads => self.heap_loads.as_deref(),
            Metric::HeapStores => self.heap_stores.as_deref(),
            Metric::Stack => self.stack.as_deref(),
            Metric::StackInterleaved => self.stack_interleaved.as_deref(),
        }
    }

    /// Whether the block applies at optimization level `level` (`O2`).
    pub fn applies_at(&self, level: &str) -> bool {
        self.levels
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == level))
    }
}

impl Workload {
    /// The functions named in its expectations, in first-mention order.
    pub fn functions(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for e in &self.expects {
            if !names.contains(&e.function.as_str()) {
                names.push(&e.function);
            }
        }
        names
    }

    /// The expected value of `metric` for `function` at `level` and width
    /// index `w`, if any block gives one.
    pub fn expected(&self, function: &str, level: &str, metric: Metric, w: usize) -> Option<f64> {
        self.expects
            .iter()
            .filter(|e| e.function == function && e.applies_at(level))
            .find_map(|e| e.values(metric).map(|v| v[w]))
    }
}

impl Expectations {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Expectations> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Expectations::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    /// Parses and checks the text of an expectations file.
    ///
    /// ```
    /// let e = tf_validate::expect::Expectations::parse(r#"
    ///     widths = [8, 32]
    ///     levels = ["O1"]
    ///     tolerance = { simt_pp = 1.0, sectors_rel = 0.05 }
    ///     [[workload]]
    ///     name = "v"
    ///     program = "vecadd"
    ///     unit = "call:vecadd"
    ///     about = "vector add"
    ///     [[workload.expect]]
    ///     function = "vecadd"
    ///     heap = [1, 4]
    /// "#).unwrap();
    /// use tf_validate::expect::Metric;
    /// assert_eq!(e.workloads[0].expected("vecadd", "O1", Metric::Heap, 1), Some(4.0));
    /// assert_eq!(e.workloads[0].expected("vecadd", "O1", Metric::Stack, 1), None);
    /// ```
    pub fn parse(text: &str) -> Result<Expectations> {
        let e: Expectations = toml::from_str(text)?;
        e.check()?;
        Ok(e)
    }

    fn check(&self) -> Result<()> {
        if self.widths.is_empty() || self.widths.iter().any(|&w| w == 0 || w > 64) {
            bail!("widths must be 1..=64, at least one");
        }
        for l in &self.levels {
            if !matches!(l.as_str(), "O0" | "O1" | "O2" | "O3" | "Os" | "Og") {
                bail!("level {l}: expected O0, O1, O2, O3, Os or Og");
            }
        }
        let mut seen = Vec::new();
        for w in &self.workloads {
            if seen.contains(&&w.name) {
                bail!("workload {} appears twice", w.name);
            }
            seen.push(&w.name);
            for e in &w.expects {
                for l in e.levels.iter().flatten() {
                    if !self.levels.contains(l) {
                        bail!("{} / {}: level {l} is not in `levels`", w.name, e.function);
                    }
                }
                for m in Metric::ALL {
                    if let Some(v) = e.values(m) {
                        if v.len() != self.widths.len() {
                            bail!(
                                "{} / {} / {m}: {} values for {} widths",
                                w.name,
                                e.function,
                                v.len(),
                                self.widths.len()
                            );
                        }
                        if m.is_sectors() && v.iter().any(|&x| x <= 0.0) {
                            bail!(
                                "{} / {} / {m}: sectors must be positive",
                                w.name,
                                e.function
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The environment of `w`'s traced run: the suite's, then its own.
    pub fn env_of(&self, w: &Workload) -> BTreeMap<String, String> {
        let mut env = self.env.clone();
        env.extend(w.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "widths = [8, 16]\nlevels = [\"O0\", \"O1\"]\n\
        tolerance = { simt_pp = 1.0, sectors_rel = 0.05 }\n";

    #[test]
    fn level_restricted_blocks_and_first_match() {
        let e = Expectations::parse(&format!(
            "{HEAD}[[workload]]\nname = \"a\"\nprogram = \"p\"\nunit = \"call:f\"\nabout = \"x\"\n\
             [[workload.expect]]\nfunction = \"f\"\nsimt = [1, 1]\n\
             [[workload.expect]]\nfunction = \"f\"\nlevels = [\"O1\"]\nstack = [2, 4]\n\
             [[workload.expect]]\nfunction = \"g\"\nheap = [3, 3]\n"
        ))
        .unwrap();
        let w = &e.workloads[0];
        assert_eq!(w.functions(), ["f", "g"]);
        assert_eq!(w.expected("f", "O0", Metric::Stack, 0), None);
        assert_eq!(w.expected("f", "O1", Metric::Stack, 1), Some(4.0));
        assert_eq!(w.expected("f", "O0", Metric::Simt, 1), Some(1.0));
        assert_eq!(w.expected("g", "O0", Metric::Heap, 0), Some(3.0));
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let wl = "[[workload]]\nname = \"a\"\nprogram = \"p\"\nunit = \"call:f\"\nabout = \"x\"\n";
        for (tail, needle) in [
            (
                format!("{wl}[[workload.expect]]\nfunction = \"f\"\nsimt = [1]\n"),
                "1 values for 2 widths",
            ),
            (
                format!("{wl}[[workload.expect]]\nfunction = \"f\"\nlevels = [\"O3\"]\n"),
                "level O3",
            ),
            (
                format!("{wl}[[workload.expect]]\nfunction = \"f\"\nheap = [0, 1]\n"),
                "positive",
            ),
            (
                format!("{wl}[[workload.expect]]\nfunction = \"f\"\nsmit = [1, 1]\n"),
                "smit",
            ),
            (format!("{wl}{wl}"), "twice"),
        ] {
            let err = format!(
                "{:#}",
                Expectations::parse(&format!("{HEAD}{tail}")).unwrap_err()
            );
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn the_suite_file_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/expectations.toml");
        let e = Expectations::load(&path).unwrap();
        assert_eq!(e.widths, [8, 16, 32]);
        assert!(e.workloads.iter().any(|w| w.quick));
    }
}
