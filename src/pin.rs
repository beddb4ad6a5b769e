//! The Pin backend: builds the Pin tool embedded in `tf` (the sources of
//! `tracer-pintool/` and the trace-format headers) with the user's Pin kit,
//! once per kit and tool version, into the cache directory, and runs it.
//!
//! Pin is downloaded by the user from Intel; `tf` finds it through
//! `--pin-root DIR` or `$PIN_ROOT` and never downloads anything.

use crate::valgrind::cache_root;
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool's sources, by the file name they are built under.
const SOURCES: &[(&str, &str)] = &[
    ("tf_pin.h", include_str!("../tracer-pintool/tf_pin.h")),
    ("tf_pin.cpp", include_str!("../tracer-pintool/tf_pin.cpp")),
    (
        "tf_pin_blocks.cpp",
        include_str!("../tracer-pintool/tf_pin_blocks.cpp"),
    ),
    (
        "tf_pin_threads.cpp",
        include_str!("../tracer-pintool/tf_pin_threads.cpp"),
    ),
    ("makefile", include_str!("../tracer-pintool/makefile")),
    (
        "makefile.rules",
        include_str!("../tracer-pintool/makefile.rules"),
    ),
    (
        "tf_trace.h",
        include_str!("../trace-format/include/tf_trace.h"),
    ),
    (
        "tf_tracer.h",
        include_str!("../trace-format/include/tf_tracer.h"),
    ),
    (
        "tf_skip.h",
        include_str!("../trace-format/include/tf_skip.h"),
    ),
];
const TOOL: &str = "obj-intel64/tf_pin.so";

/// A Pin kit with the tool built for it.
pub struct Pin {
    /// The kit's `pin` launcher.
    pub launcher: PathBuf,
    /// The built tool.
    pub tool: PathBuf,
}

impl Pin {
    /// Finds the kit (`root`, else `$PIN_ROOT`) and builds the tool on first use.
    pub fn prepare(root: Option<&Path>) -> Result<Pin> {
        let root = match root.map(Path::to_path_buf).or_else(|| {
            std::env::var_os("PIN_ROOT")
                .filter(|r| !r.is_empty())
                .map(PathBuf::from)
        }) {
            Some(r) => r,
            None => bail!(
                "the Pin backend needs a Pin kit: download Pin 3.x for Linux from Intel, \
                 extract it and set PIN_ROOT (or pass --pin-root DIR)"
            ),
        };
        let launcher = root.join("pin");
        if !launcher.is_file() || !root.join("source/tools/Config/makefile.config").is_file() {
            bail!(
                "{} is not a Pin kit (no pin launcher or source/tools/Config): \
                 point PIN_ROOT or --pin-root at the extracted Pin kit",
                root.display()
            );
        }
        let root = fs::canonicalize(&root)
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        let tool = build(&root)?;
        Ok(Pin {
            launcher: root.join("pin"),
            tool,
        })
    }

    /// `pin -t TOOL -o DIR [-only FN]… [-exclude FN]… --`
    pub fn command(&self, dir: &Path, only: &[String], exclude: &[String]) -> Command {
        let mut cmd = Command::new(&self.launcher);
        cmd.arg("-t").arg(&self.tool).arg("-o").arg(dir);
        for f in only {
            cmd.arg("-only").arg(f);
        }
        for f in exclude {
            cmd.arg("-exclude").arg(f);
        }
        cmd.arg("--");
        cmd
    }
}

/// Builds the tool for the kit at `root` into the cache (once): the sources
/// go into a temporary directory, the kit's makefiles build there, and the
/// directory is renamed into place, so that concurrent runs never see half
/// of it.
fn build(root: &Path) -> Result<PathBuf> {
    let mut hash = fnv1a(root.as_os_str().as_encoded_bytes());
    for (name, text) in SOURCES {
        hash = fnv1a_from(hash, name.as_bytes());
        hash = fnv1a_from(hash, text.as_bytes());
    }
    let cache = cache_root();
    let dir = cache.join(format!("pin-{hash:016x}"));
    if dir.join(TOOL).is_file() {
        return Ok(dir.join(TOOL));
    }
    let tmp = cache.join(format!(".build-pin-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    for (name, text) in SOURCES {
        fs::write(tmp.join(name), text)
            .with_context(|| format!("cannot write {}", tmp.join(name).display()))?;
    }
    eprintln!("tf: building the Pin tool for {} (once)", root.display());
    let out = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(&tmp)
        .arg(format!("PIN_ROOT={}", root.display()))
        .arg("TF_TRACE_INC=.")
        .arg(TOOL)
        .output()
        .context("cannot run make (install it: apt-get install -y make g++)")?;
    if !out.status.success() || !tmp.join(TOOL).is_file() {
        let err = String::from_utf8_lossy(&out.stderr);
        // The first line that names the problem (a compiler error, a missing
        // kit library), else the last one.
        let last = err
            .lines()
            .find(|l| l.contains("error:") || l.contains("cannot find"))
            .or_else(|| err.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        bail!(
            "building the Pin tool with the kit at {} failed (in {}): {last}",
            root.display(),
            tmp.display()
        );
    }
    if fs::rename(&tmp, &dir).is_err() {
        // Another tf built it first.
        let _ = fs::remove_dir_all(&tmp);
    }
    if !dir.join(TOOL).is_file() {
        bail!("cannot install the Pin tool into {}", dir.display());
    }
    Ok(dir.join(TOOL))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_from(0xcbf2_9ce4_8422_2325, bytes)
}

fn fnv1a_from(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
