//! GPU measurements kept in the repository (`validation/gpu/h100/`), for
//! machines without a GPU: Nsight Compute's CSV per twin
//! (`twin-NAME.csv`), and `measured.toml` saying on which device, when, and
//! from which commit's twin sources they were made. A twin whose sources
//! (`workloads/cuda/PROGRAM.cu` and the headers it includes) changed after
//! that commit is reported as not measured since, and left out of the
//! statistics.

use crate::expect::Workload;
use crate::gpu::{parse_ncu_csv, GpuFigures};
use crate::outcome::{GpuOutcome, GpuSource};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The stored H100 measurements, relative to the repository root.
pub const H100_DIR: &str = "validation/gpu/h100";

/// `measured.toml`: how the stored measurements were made.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// The GPU.
    pub device: String,
    /// The day of the measurements (`YYYY-MM-DD`).
    pub date: String,
    /// The commit whose twin sources were built and profiled.
    pub commit: String,
    /// Compiler and profiler versions.
    pub tools: String,
    /// How the twins were built.
    pub build: String,
}

impl Measured {
    /// Reads `dir/measured.toml`.
    pub fn load(dir: &Path) -> Result<Measured> {
        let path = dir.join("measured.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("{}", path.display()))
    }
}

/// The stored figures of workload `name`'s twin (`dir/twin-NAME.csv`).
pub fn twin_figures(dir: &Path, name: &str) -> Result<GpuFigures> {
    let path = dir.join(format!("twin-{name}.csv"));
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    parse_ncu_csv(&text).with_context(|| format!("{}", path.display()))
}

/// The files a twin is built from: `workloads/cuda/PROGRAM.cu` and every
/// file it includes with `#include "…"`, recursively, as paths relative to
/// the repository `root`.
pub fn twin_sources(root: &Path, program: &str) -> Result<Vec<PathBuf>> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![PathBuf::from(format!("workloads/cuda/{program}.cu"))];
    while let Some(file) = todo.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&file))
            .with_context(|| format!("reading {}", file.display()))?;
        let dir = file.parent().unwrap_or(Path::new(""));
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("#include") else {
                continue;
            };
            let Some(name) = rest
                .trim()
                .strip_prefix('"')
                .and_then(|r| r.split('"').next())
            else {
                continue; // <system> headers are not the project's
            };
            todo.push(normalize(&dir.join(name)));
        }
    }
    Ok(seen.into_iter().collect())
}

/// `a/b/../c` → `a/c` (the paths git knows).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            p => out.push(p),
        }
    }
    out
}

/// The commits after `commit` that changed any of `files` (newest first,
/// abbreviated), and the files among them that changed, from `git log` in
/// the repository at `root`.
pub fn changed_since(
    root: &Path,
    commit: &str,
    files: &[PathBuf],
) -> Result<(Vec<String>, BTreeSet<String>)> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["log", "--format=commit %h", "--name-only"])
        .arg(format!("{commit}..HEAD"))
        .arg("--")
        .args(files)
        .output()
        .context("running git log (is git installed?)")?;
    if !out.status.success() {
        bail!(
            "git log {commit}..HEAD failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let (mut commits, mut changed) = (Vec::new(), BTreeSet::new());
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        match line.strip_prefix("commit ") {
            Some(c) => commits.push(c.to_string()),
            None if !line.is_empty() => {
                changed.insert(line.to_string());
            }
            None => {}
        }
    }
    Ok((commits, changed))
}

/// The GPU part from stored measurements in `dir`: the figures of every
/// twin of `workloads`, with the twins whose sources changed since the
/// measured commit set apart. Fails (one line) when the directory, its
/// `measured.toml` or git cannot be read.
pub fn load(dir: &Path, root: &Path, workloads: &[&Workload]) -> Result<GpuOutcome> {
    let measured = Measured::load(dir)?;
    let mut twins = BTreeMap::new();
    let mut stale = BTreeMap::new();
    for w in workloads {
        let Some(twin) = &w.cuda else { continue };
        let sources = twin_sources(root, &twin.program)?;
        let (commits, files) = changed_since(root, &measured.commit, &sources)?;
        if !commits.is_empty() {
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let why = format!("{} in {}", files.join(", "), commits.join(", "));
            stale.insert(w.name.clone(), why);
        }
        if !dir.join(format!("twin-{}.csv", w.name)).exists() {
            // A twin added after the measurements: reported, not compared.
            stale.insert(
                w.name.clone(),
                format!("the stored measurements have no twin-{}.csv", w.name),
            );
            continue;
        }
        let figures = twin_figures(dir, &w.name).map_err(|e| format!("{e:#}"));
        twins.insert(w.name.clone(), figures);
    }
    let short = &measured.commit[..measured.commit.len().min(7)];
    Ok(GpuOutcome::Ran {
        device: measured.device.clone(),
        source: GpuSource::Stored {
            dir: dir.strip_prefix(root).unwrap_or(dir).display().to_string(),
            date: measured.date.clone(),
            commit: short.to_string(),
            tools: measured.tools.clone(),
            build: measured.build.clone(),
        },
        twins,
        stale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    /// The stored CSVs give the figures the measurements' README states
    /// (all launches summed).
    #[test]
    fn stored_h100_csvs_give_the_readme_figures() {
        let dir = root().join(H100_DIR);
        let get = |name: &str| twin_figures(&dir, name).unwrap();
        let close = |a: f64, b: f64, eps: f64| (a - b).abs() < eps;
        let vecadd = get("vecadd");
        assert_eq!(vecadd.launches, 1);
        assert!(close(vecadd.simt, 1.0, 1e-12));
        assert_eq!(
            (vecadd.load_sectors, vecadd.store_sectors),
            (Some(4.0), Some(4.0))
        );
        for (name, simt) in [
            ("divergence-oddeven", 0.5155),
            ("divergence-triangle", 0.3508),
            ("pool", 0.4931),
        ] {
            assert!(
                close(get(name).simt, simt, 5e-5),
                "{name}: {}",
                get(name).simt
            );
        }
        let bfs = get("bfs");
        assert_eq!(bfs.launches, 9);
        assert!(close(bfs.simt, 0.2637, 5e-5), "{}", bfs.simt);
        assert!(close(bfs.load_sectors.unwrap(), 2.914, 5e-4));
        assert!(close(bfs.store_sectors.unwrap(), 1.996, 5e-4));
        // One twin for every OpenMP schedule: consecutive threads, 24-byte
        // structs, 24 sectors per request of 32 lanes.
        for schedule in [
            "static", "static5", "dynamic", "dynamic3", "guided", "collapse",
        ] {
            let g = get(&format!("sched_{schedule}"));
            assert_eq!(g.launches, 1);
            assert!(close(g.simt, 1.0, 1e-12), "{schedule}");
            assert_eq!((g.load_sectors, g.store_sectors), (Some(24.0), Some(24.0)));
        }
        // The duplicated-latch twin: 34 816 thread instructions in 1 600
        // warp instructions; the sectors omp_latch.c derives.
        let latch = get("latch");
        assert!(close(latch.simt, 0.68, 1e-12));
        assert_eq!(
            (latch.load_sectors, latch.store_sectors),
            (Some(1364.0 / 64.0), Some(939.0 / 64.0))
        );
        let m = Measured::load(&dir).unwrap();
        assert_eq!(
            (m.device.as_str(), m.date.as_str()),
            ("NVIDIA H100 80GB HBM3", "2026-11-25")
        );
    }

    #[test]
    fn twin_sources_follow_quoted_includes() {
        let files = twin_sources(&root(), "vecadd").unwrap();
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        for want in [
            "workloads/cuda/vecadd.cu",
            "workloads/cuda/common.cuh",
            "workloads/vecadd.h",
            "workloads/twin.h",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
        }
        assert!(names.iter().all(|n| !n.contains("..")), "{names:?}");
    }

    /// A file changed after the measured commit is found; one untouched
    /// since is not (in a scratch repository of two commits).
    #[test]
    fn changes_after_the_measured_commit_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{:?}", out);
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.cu"), "1").unwrap();
        std::fs::write(dir.path().join("b.h"), "1").unwrap();
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "measured"]);
        let measured = git(&["rev-parse", "HEAD"]);
        std::fs::write(dir.path().join("a.cu"), "2").unwrap();
        git(&["commit", "-q", "-am", "changed"]);
        let both = [PathBuf::from("a.cu"), PathBuf::from("b.h")];
        let (commits, files) = changed_since(dir.path(), &measured, &both).unwrap();
        assert_eq!(commits, [git(&["rev-parse", "--short", "HEAD"])]);
        assert_eq!(files.into_iter().collect::<Vec<_>>(), ["a.cu"]);
        let (commits, files) =
            changed_since(dir.path(), &measured, &[PathBuf::from("b.h")]).unwrap();
        assert!(commits.is_empty() && files.is_empty());
        assert!(changed_since(dir.path(), "0123456", &[PathBuf::from("b.h")]).is_err());
    }
}
