//! A real program: Debian's pigz, traced compressing generated text with
//! many threads, analyzed with tf's default units (each thread's start
//! routine).

use crate::measure::{read_report, Run, Tracer};
use crate::outcome::PigzOutcome;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

/// The runs: pigz threads and input bytes. pigz compresses 128 KiB per
/// job, so 8 MiB keeps 32 threads busy with two blocks each and 16 MiB gives
/// each of 128 threads one block.
pub const RUNS: [(u32, u64); 2] = [(32, 8 << 20), (128, 16 << 20)];

/// Traces and analyzes every run of [`RUNS`]; `gen_text` is the workloads'
/// text generator.
pub fn run_all(tracer: &Tracer, gen_text: &Path, widths: &[u32]) -> Result<Vec<PigzOutcome>> {
    let pigz = which("pigz").context("pigz is not installed (apt-get install -y pigz)")?;
    RUNS.iter()
        .map(|&(threads, bytes)| {
            let input = tracer.work.join(format!("text-{bytes}.txt"));
            if !input.exists() {
                let out = File::create(&input)
                    .with_context(|| format!("creating {}", input.display()))?;
                let status = Command::new(gen_text)
                    .arg(bytes.to_string())
                    .stdout(Stdio::from(out))
                    .status()
                    .with_context(|| format!("running {}", gen_text.display()))?;
                anyhow::ensure!(status.success(), "{} failed", gen_text.display());
            }
            eprintln!("tf-validate: pigz -p {threads} on {} MiB", bytes >> 20);
            let args = vec![
                "-p".to_string(),
                threads.to_string(),
                "-c".to_string(),
                input.display().to_string(),
            ];
            let report = tracer.trace_and_analyze(&Run {
                name: format!("pigz-p{threads}"),
                program: &pigz,
                args: &args,
                env: &BTreeMap::new(),
                unit: None,
                widths,
            })?;
            let figures = read_report(&report, widths, &[], "pigz")?;
            let first = &report["results"][0];
            Ok(PigzOutcome {
                threads,
                bytes,
                command: format!(
                    "gen_text {bytes} > text; tf trace -- pigz -p {threads} -c text > /dev/null"
                ),
                units: first["units"].as_u64().unwrap_or_default(),
                thread_instructions: first["thread_instructions"].as_u64().unwrap_or_default(),
                efficiency: figures
                    .iter()
                    .filter_map(|f| {
                        f.whole
                            .get(crate::expect::Metric::Simt)
                            .map(|e| (f.width, e))
                    })
                    .collect(),
            })
        })
        .collect()
}

/// The path of `program` on PATH.
fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}
