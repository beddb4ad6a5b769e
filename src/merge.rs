//! `tf merge`: the report of a whole analysis from the JSON reports of its
//! shards (`tf analyze --shard i/N --json part-i.json`).

use anyhow::{Context, Result};
use std::path::PathBuf;
use tf_analyzer::results::Report;

/// Reads the shards' reports, merges them, prints and writes the result;
/// returns the exit status.
pub fn run(parts: &[PathBuf], outputs: &crate::analyze::Outputs) -> Result<i32> {
    let reports = parts
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            serde_json::from_slice::<Report>(&bytes)
                .with_context(|| format!("{}: not a tf analyze JSON report", p.display()))
        })
        .collect::<Result<Vec<Report>>>()?;
    let report = tf_analyzer::merge::merge(reports).context("cannot merge the shards")?;
    crate::analyze::emit(&report, outputs)
}
