//! `tf-validate`: runs the validation suite and writes its report.

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use tf_validate::expect::{Expectations, Workload};
use tf_validate::measure::{build_workloads, run, Tracer};
use tf_validate::model::Model;
use tf_validate::outcome::{GpuOutcome, Outcome};
use tf_validate::report;
use tf_validate::{gpu, pigz, stored, suite};

/// Traces and analyzes the workloads of `workloads/` at every -O level and
/// warp width, compares with the hand-derived expectations of
/// `workloads/expectations.toml` (and with a GPU where one is available),
/// and writes a Markdown report and a CSV. Exits with 1 when a check misses.
#[derive(Parser, Debug)]
#[command(name = "tf-validate", version)]
struct Args {
    /// Markdown report. When the file exists, only the sections between
    /// tf-validate markers are replaced [default: docs/validation.md;
    /// with --quick: target/tf-validate/quick.md]
    #[arg(long)]
    out: Option<PathBuf>,
    /// CSV, one line per figure [default: the report's path with .csv]
    #[arg(long)]
    csv: Option<PathBuf>,
    /// The fast subset: workloads marked `quick`, at -O1 only
    #[arg(long)]
    quick: bool,
    /// -O levels, comma-separated (O0,O1,...) [default: the expectations file's]
    #[arg(long, value_delimiter = ',')]
    levels: Vec<String>,
    /// Only these workloads, comma-separated
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The tf binary [default: built with `cargo build --release -p tf`]
    #[arg(long)]
    tf: Option<PathBuf>,
    /// The expectations file [default: workloads/expectations.toml]
    #[arg(long)]
    expectations: Option<PathBuf>,
    /// Directory for traces [default: a temporary directory, removed at the end]
    #[arg(long)]
    work: Option<PathBuf>,
    /// Keep the traces and tf's JSON in --work
    #[arg(long, requires = "work")]
    keep: bool,
    /// Also trace pigz with 32 and 128 threads (a few minutes)
    #[arg(long)]
    pigz: bool,
    /// Skip the GPU comparison even where a GPU, nvcc and ncu are available
    #[arg(long, conflicts_with = "gpu_data")]
    no_gpu: bool,
    /// Compare with GPU measurements stored in this directory instead of
    /// profiling the twins [default without a GPU, nvcc and ncu:
    /// validation/gpu/h100, measured on an H100]
    #[arg(long, value_name = "DIR")]
    gpu_data: Option<PathBuf>,
    /// Replay models to compare against the GPU, comma-separated: parts
    /// joined by `+`, each a `--reconverge` model (ipdom, none, min-pc),
    /// `predicateN` (`--predicate N`), `spin`/`serialize` (`--lock-model`)
    /// or `merge-tails` (`--merge-tails`);
    /// e.g. ipdom,none,min-pc,ipdom+predicate4,ipdom+spin,ipdom+merge-tails
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    /// Options added to every `tf analyze` run, whitespace-separated
    /// (e.g. "--reconverge none")
    #[arg(long, allow_hyphen_values = true, value_name = "ARGS")]
    analyze_args: Option<String>,
    /// Only check the CUDA twins on the CPU: build them with the host C++
    /// compiler (workloads/cuda/host_stub.h) and compare what they print with
    /// what the C workloads print
    #[arg(long, conflicts_with_all = ["pigz", "quick"])]
    twins_on_host: bool,
}

/// The repository root (this package's parent directory).
fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// Builds `tf` with cargo and returns the binary's path.
fn build_tf(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("tf-validate: building tf (cargo build --release -p tf)");
    run(Command::new(cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "tf"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release").join("tf"))
}

/// The first line of `program arg`'s output (stdout, else stderr).
fn version_of(program: &str, arg: &str) -> Option<String> {
    let out = Command::new(program).arg(arg).output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(str::to_string)
}

fn versions(root: &Path, pigz: bool) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(gcc) = version_of("gcc", "--version") {
        v.push(format!("compiler: {gcc}"));
    }
    if let Some(vg) = version_of("valgrind", "--version") {
        v.push(format!("tracer: {vg}"));
    }
    let commit = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(c) = commit {
        v.push(format!("tf: commit {c}"));
    }
    if pigz {
        if let Some(p) = version_of("pigz", "--version") {
            v.push(format!("pigz: {p}"));
        }
    }
    v
}

fn select<'a>(e: &'a Expectations, args: &Args) -> Result<Vec<&'a Workload>> {
    for name in &args.only {
        if !e.workloads.iter().any(|w| &w.name == name) {
            bail!("--only {name}: no such workload in the expectations file");
        }
    }
    Ok(e.workloads
        .iter()
        .filter(|w| !args.quick || w.quick)
        .filter(|w| args.only.is_empty() || args.only.contains(&w.name))
        .collect())
}

fn levels(e: &Expectations, args: &Args) -> Result<Vec<String>> {
    let levels = if !args.levels.is_empty() {
        args.levels
            .iter()
            .map(|l| l.trim_start_matches('-').to_string())
            .collect()
    } else if args.quick {
        vec!["O1".to_string()]
    } else {
        e.levels.clone()
    };
    for l in &levels {
        if !e.levels.contains(l) {
            bail!(
                "--levels {l}: the expectations file has {}",
                e.levels.join(", ")
            );
        }
    }
    Ok(levels)
}

/// How the report says it was made: the command, as run from the
/// repository root.
fn command_text() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut c = "cargo run --release -p tf-validate".to_string();
    if !args.is_empty() {
        c.push_str(" -- ");
        c.push_str(&args.join(" "));
    }
    c
}

fn main() -> ExitCode {
    let args = Args::parse();
    match validate(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("tf-validate: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn validate(args: &Args) -> Result<bool> {
    let root = root();
    let workloads_dir = root.join("workloads");
    let e = Expectations::load(
        &args
            .expectations
            .clone()
            .unwrap_or_else(|| workloads_dir.join("expectations.toml")),
    )?;
    let selected = select(&e, args)?;
    if args.twins_on_host {
        build_workloads(&workloads_dir, &["O1".to_string()])?;
        let mut ok = true;
        for (name, verdict) in gpu::check_twins_on_host(&selected, &workloads_dir)? {
            match verdict {
                Ok(()) => {
                    eprintln!("tf-validate: {name}: the twin prints what the workload prints")
                }
                Err(why) => {
                    eprintln!("tf-validate: {name}: {why}");
                    ok = false;
                }
            }
        }
        return Ok(ok);
    }
    let levels = levels(&e, args)?;
    let models = Model::parse_all(&args.models)?;
    let tf = match &args.tf {
        Some(p) => p.clone(),
        None => build_tf(&root)?,
    };
    if !tf.is_file() {
        bail!("{}: no tf binary there", tf.display());
    }
    let mut build_levels = levels.clone();
    if args.pigz && !build_levels.iter().any(|l| l == "O1") {
        build_levels.push("O1".into()); // gen_text
    }
    eprintln!(
        "tf-validate: building the workloads at -{}",
        build_levels.join(", -")
    );
    build_workloads(&workloads_dir, &build_levels)?;
    let temp;
    let work = match &args.work {
        Some(w) => {
            std::fs::create_dir_all(w).with_context(|| format!("creating {}", w.display()))?;
            w.clone()
        }
        None => {
            temp = tempfile::Builder::new().prefix("tf-validate-").tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let tracer = Tracer {
        tf,
        work: work.clone(),
        keep: args.keep,
        analyze_args: args
            .analyze_args
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    };
    let build = workloads_dir.join("build");
    let mut outcome = Outcome {
        command: command_text(),
        versions: versions(&root, args.pigz),
        levels: levels.clone(),
        widths: e.widths.clone(),
        tolerance: Some(e.tolerance),
        models: models.iter().map(|m| m.name.clone()).collect(),
        ..Outcome::default()
    };
    // Before the long part, so that a bad --gpu-data fails at once.
    outcome.gpu = gpu_outcome(args, &root, &selected, &work)?;
    for w in &selected {
        outcome.workloads.push(suite::run_workload_models(
            w, &e, &levels, &build, &tracer, &models,
        ));
    }
    if let GpuOutcome::Skipped(why) = &outcome.gpu {
        eprintln!("tf-validate: GPU comparison skipped: {why}");
    }
    if args.pigz {
        let gen_text = build.join("O1").join("gen_text");
        outcome.pigz =
            Some(pigz::run_all(&tracer, &gen_text, &e.widths).map_err(|e| format!("{e:#}")));
    }
    write_outputs(args, &root, &outcome)?;
    let s = outcome.summary(None);
    eprintln!(
        "tf-validate: {} of {} checks passed{}",
        s.passed,
        s.count,
        if outcome.all_passed() {
            String::new()
        } else {
            format!(
                "; failed runs: {}",
                outcome
                    .workloads
                    .iter()
                    .map(|w| w.failures.len()
                        + w.models.iter().filter(|m| m.figures.is_err()).count())
                    .sum::<usize>()
            )
        }
    );
    Ok(outcome.all_passed())
}

/// The GPU part: skipped with --no-gpu; the stored measurements of
/// --gpu-data; else the twins profiled here, or the stored H100
/// measurements where this machine cannot profile them.
fn gpu_outcome(
    args: &Args,
    root: &Path,
    selected: &[&Workload],
    work: &Path,
) -> Result<GpuOutcome> {
    if args.no_gpu {
        return Ok(GpuOutcome::Skipped("--no-gpu was given".into()));
    }
    if let Some(dir) = &args.gpu_data {
        return stored::load(dir, root, selected)
            .with_context(|| format!("--gpu-data {}", dir.display()));
    }
    Ok(match gpu::detect() {
        Ok(_) => suite::run_gpu(selected, &root.join("workloads"), work),
        Err(why) => {
            let dir = root.join(stored::H100_DIR);
            eprintln!(
                "tf-validate: cannot profile the twins here ({why}); comparing with {}",
                dir.display()
            );
            stored::load(&dir, root, selected).unwrap_or_else(|e| {
                GpuOutcome::Skipped(format!("{why}, and the stored measurements: {e:#}"))
            })
        }
    })
}

fn write_outputs(args: &Args, root: &Path, outcome: &Outcome) -> Result<()> {
    let out = args.out.clone().unwrap_or_else(|| {
        if args.quick {
            root.join("target/tf-validate/quick.md")
        } else {
            root.join("docs/validation.md")
        }
    });
    let csv = args
        .csv
        .clone()
        .unwrap_or_else(|| out.with_extension("csv"));
    for p in [&out, &csv] {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    let old = std::fs::read_to_string(&out).unwrap_or_default();
    let mut doc = report::replace_section(&old, "results", &report::results_markdown(outcome));
    if let Some(p) = &outcome.pigz {
        doc = report::replace_section(&doc, "pigz", &report::pigz_markdown(p, &outcome.widths));
    }
    std::fs::write(&out, doc).with_context(|| format!("writing {}", out.display()))?;
    std::fs::write(&csv, report::csv(outcome))
        .with_context(|| format!("writing {}", csv.display()))?;
    eprintln!("tf-validate: wrote {} and {}", out.display(), csv.display());
    Ok(())
}
