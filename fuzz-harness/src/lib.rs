//! What tf's fuzz targets (`fuzz/`, cargo-fuzz) and its mutation test
//! (`tests/fuzz_mutation.rs`, stable Rust, run in CI) feed a trace or an
//! Accel-Sim export to: one harness, so that both exercise the same code.
//!
//! A trace is a directory, and so is an export; a fuzzer works on byte
//! strings. [`pack`] turns a directory into one byte string and [`unpack`]
//! writes it back (a file name and its bytes, for each file).
//! [`fix_checksums`] recomputes every CRC that it can find, so that
//! mutations reach the decoders behind the checksums instead of stopping at
//! them. [`read`], [`analyze`], [`export`] and [`check_export`] are the
//! targets: they must never panic, and must cost time in proportion to the
//! input's size.
//!
//! ```
//! let packed = tf_fuzz_harness::pack_files(&[("manifest", b"x".to_vec())]);
//! let dir = std::env::temp_dir().join(format!("tf-harness-doc-{}", std::process::id()));
//! tf_fuzz_harness::unpack(&packed, &dir).unwrap();
//! assert_eq!(std::fs::read(dir.join("manifest")).unwrap(), b"x");
//! # std::fs::remove_dir_all(&dir).ok();
//! ```

mod mutate;

pub use mutate::{fix_checksums, mutate, Rng};

use std::path::Path;
use tf_analyzer::{Options, Silent};
use tf_trace::{Event, Trace};

/// Names a packed directory may hold: a trace's (`manifest`, `blocks.tfc`,
/// `thread-<n>.tfc`) or an Accel-Sim export's (`kernelslist.g`,
/// `kernel-<n>.traceg`).
fn allowed(name: &str) -> bool {
    let numbered = |prefix: &str, suffix: &str| {
        name.strip_prefix(prefix)
            .and_then(|n| n.strip_suffix(suffix))
            .is_some_and(|n| !n.is_empty() && n.len() <= 6 && n.bytes().all(|b| b.is_ascii_digit()))
    };
    name == "manifest"
        || name == "blocks.tfc"
        || name == "kernelslist.g"
        || numbered("thread-", ".tfc")
        || numbered("kernel-", ".traceg")
}

/// Packs files: for each, a one-byte name length, the name, a 4-byte
/// little-endian length and the bytes.
pub fn pack_files(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// Packs the trace or export files of a directory (sorted by name).
pub fn pack(dir: &Path) -> std::io::Result<Vec<u8>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if allowed(&name) {
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    files.sort();
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    Ok(pack_files(&refs))
}

/// The files of a packed directory; a cut-short file takes what is left, and
/// names other than a trace's or an export's are dropped.
pub fn files(packed: &[u8]) -> Vec<(String, &[u8])> {
    let mut out = Vec::new();
    let mut rest = packed;
    while let Some((&n, tail)) = rest.split_first() {
        let n = n as usize;
        if tail.len() < n {
            break;
        }
        let name = String::from_utf8_lossy(&tail[..n]).into_owned();
        let tail = &tail[n..];
        let len = tail.get(..4).map_or(0, |b| {
            u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize
        });
        let tail = tail.get(4..).unwrap_or(&[]);
        let len = len.min(tail.len());
        if allowed(&name) && !out.iter().any(|(o, _)| *o == name) {
            out.push((name, &tail[..len]));
        }
        rest = &tail[len..];
    }
    out
}

/// Writes a packed directory into `dir` (emptied first).
pub fn unpack(packed: &[u8], dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        for entry in std::fs::read_dir(dir)? {
            std::fs::remove_file(entry?.path())?;
        }
    } else {
        std::fs::create_dir_all(dir)?;
    }
    for (name, bytes) in files(packed) {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

/// What [`read`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Instructions of the block executions read.
    pub instructions: u64,
    /// Memory accesses read.
    pub accesses: u64,
    /// Errors met (damage while opening or reading).
    pub errors: u64,
}

/// The reader's target: opens the trace in `dir` and reads every thread
/// with addresses and for statistics, as `tf info` and the analyzer do.
pub fn read(dir: &Path) -> ReadCounts {
    let mut c = ReadCounts::default();
    let trace = match Trace::open(dir) {
        Ok(t) => t,
        Err(_) => {
            c.errors += 1;
            return c;
        }
    };
    c.errors += trace.problems().len() as u64;
    let tids: Vec<u64> = trace.threads().iter().map(|t| t.tid).collect();
    for tid in tids {
        match trace.thread_stats(tid) {
            Ok((_, Some(_))) | Err(_) => c.errors += 1,
            Ok(_) => {}
        }
        let Ok(mut r) = trace.read_thread(tid) else {
            c.errors += 1;
            continue;
        };
        r.set_validate(false);
        while let Some(ev) = r.next_event() {
            match ev {
                Ok(Event::Block(x)) => {
                    c.instructions += u64::from(x.insns);
                    c.accesses += x.accesses().len() as u64;
                }
                Ok(_) => {}
                Err(_) => {
                    c.errors += 1;
                    break;
                }
            }
        }
    }
    c
}

/// The whole analysis' target: analyses the trace in `dir` at warp widths
/// 4 and 32 with the default options; returns the thread instructions
/// replayed at width 4 (0 if the analysis refused the trace).
pub fn analyze(dir: &Path) -> u64 {
    let Ok(trace) = Trace::open(dir) else {
        return 0;
    };
    let opts = Options {
        widths: vec![4, 32],
        ..Options::default()
    };
    match tf_analyzer::analyze(&trace, &opts, &Silent) {
        Ok(report) => report.results.first().map_or(0, |r| r.thread_instructions),
        Err(_) => 0,
    }
}

/// The export validator's target: checks the Accel-Sim trace directory
/// `dir` as `tf export --check` does; returns the problems it names.
pub fn check_export(dir: &Path) -> Vec<tf_accelsim::check::Problem> {
    tf_accelsim::check::check_dir(dir)
}

/// The export's target: exports the trace in `dir` at warp width 32 into
/// `out` (emptied first), as `tf export --accelsim` does, and checks what it
/// wrote; `None` when the analysis or the writing refused the trace.
pub fn export(dir: &Path, out: &Path) -> Option<Vec<tf_accelsim::check::Problem>> {
    if out.exists() {
        std::fs::remove_dir_all(out).ok()?;
    }
    std::fs::create_dir_all(out).ok()?;
    let trace = Trace::open(dir).ok()?;
    let exporter = tf_accelsim::export::Exporter::new(tf_accelsim::export::ExportOptions {
        block_size: 256,
        functions: Vec::new(),
        spill_dir: out.join(".warps"),
    });
    let opts = Options {
        widths: vec![32],
        ..Options::default()
    };
    tf_analyzer::analyze_observed(&trace, &opts, &Silent, &exporter).ok()?;
    exporter.finish(out, 32, &|_| {}).ok()?;
    Some(check_export(out))
}
