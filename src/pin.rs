//! The Pin backend: builds the Pin tool embedded in `tf` (the sources of
//! `tracer-pintool/` and the trace-format headers) with the user's Pin kit,
//! once per kit and tool version, into the cache directory, and runs it.
//! Beside the tool it builds the preload library natively (`libtf_omp.so`,
//! from the Valgrind tool's `tf_omp_preload.c`), which the traced program
//! loads so that the tool learns what the OpenMP runtime hands each thread.
//!
//! Pin is downloaded by the user from Intel; `tf` finds it through
//! `--pin-root DIR` or `$PIN_ROOT` and never downloads anything.

use crate::valgrind::cache_root;
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `(name, text)` of the file `name` in the repository's directory `dir`,
/// built into `tf`.
macro_rules! embed {
    ($dir:literal, $name:literal) => {
        ($name, include_str!(concat!("../", $dir, "/", $name)))
    };
}

/// The tool's sources, by the file name they are built under.
const SOURCES: &[(&str, &str)] = &[
    embed!("tracer-pintool", "tf_pin.h"),
    embed!("tracer-pintool", "tf_pin.cpp"),
    embed!("tracer-pintool", "tf_pin_blocks.cpp"),
    embed!("tracer-pintool", "tf_pin_threads.cpp"),
    embed!("tracer-pintool", "makefile"),
    embed!("tracer-pintool", "makefile.rules"),
    embed!("trace-format/include", "tf_trace.h"),
    embed!("trace-format/include", "tf_trace_format.h"),
    embed!("trace-format/include", "tf_trace_stream.h"),
    embed!("trace-format/include", "tf_trace_table.h"),
    embed!("trace-format/include", "tf_trace_encoder.h"),
    embed!("trace-format/include", "tf_trace_predict.h"),
    embed!("trace-format/include", "tf_trace_records.h"),
    embed!("trace-format/include", "tf_trace_msgpack.h"),
    embed!("trace-format/include", "tf_tracer.h"),
    embed!("trace-format/include", "tf_roles.h"),
    embed!("trace-format/include", "tf_skip.h"),
    embed!("trace-format/include", "tf_wait_call.h"),
    embed!("trace-format/include", "tf_worksharing.h"),
    embed!("trace-format/include", "tf_requests.h"),
    embed!("tracer-valgrind", "tf_omp_preload.c"),
    embed!("tracer-valgrind", "tf_omp_preload_gomp.h"),
    embed!("tracer-valgrind", "tf_omp_preload_kmp.h"),
];
const TOOL: &str = "obj-intel64/tf_pin.so";
/// The preload library, built natively by the same makefile.
const PRELOAD: &str = "obj-intel64/libtf_omp.so";

/// A Pin kit with the tool built for it.
pub struct Pin {
    /// The kit's `pin` launcher.
    pub launcher: PathBuf,
    /// The built tool.
    pub tool: PathBuf,
    /// The preload library the traced program loads.
    pub preload: PathBuf,
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
        let dir = build(&root)?;
        Ok(Pin {
            launcher: root.join("pin"),
            tool: dir.join(TOOL),
            preload: dir.join(PRELOAD),
        })
    }

    /// `pin -t TOOL -o DIR [-only FN]… [-exclude FN]… --`, with the preload
    /// library in the program's `LD_PRELOAD`. Pin's launcher keeps
    /// `LD_PRELOAD` from itself and hands `PIN_APP_LD_PRELOAD` to the
    /// program; the user's own preloads follow tf's.
    pub fn command(&self, dir: &Path, only: &[String], exclude: &[String]) -> Command {
        let mut cmd = Command::new(&self.launcher);
        let mut preload = self.preload.clone().into_os_string();
        for var in ["PIN_APP_LD_PRELOAD", "LD_PRELOAD"] {
            if let Some(user) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                preload.push(":");
                preload.push(user);
            }
        }
        cmd.env("PIN_APP_LD_PRELOAD", preload)
            .env_remove("LD_PRELOAD");
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

/// Builds the tool and the preload library for the kit at `root` into the
/// cache (once) and returns their directory: the sources go into a
/// temporary directory, the kit's makefiles build there, and the directory
/// is renamed into place, so that concurrent runs never see half of it.
fn build(root: &Path) -> Result<PathBuf> {
    let mut hash = fnv1a(root.as_os_str().as_encoded_bytes());
    for (name, text) in SOURCES {
        hash = fnv1a_from(hash, name.as_bytes());
        hash = fnv1a_from(hash, text.as_bytes());
    }
    let cache = cache_root();
    let dir = cache.join(format!("pin-{hash:016x}"));
    if dir.join(TOOL).is_file() && dir.join(PRELOAD).is_file() {
        return Ok(dir);
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
        .arg("TF_PRELOAD_SRC=tf_omp_preload.c")
        .arg(TOOL)
        .arg(PRELOAD)
        .output()
        .context("cannot run make (install it: apt-get install -y make g++)")?;
    if !out.status.success() || !tmp.join(TOOL).is_file() || !tmp.join(PRELOAD).is_file() {
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
    Ok(dir)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_from(0xcbf2_9ce4_8422_2325, bytes)
}

fn fnv1a_from(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    /// The preload library reaches the program through Pin's launcher, first
    /// in its preload list, and not Pin itself.
    #[test]
    fn the_program_loads_the_preload_library_and_pin_does_not() {
        let pin = Pin {
            launcher: "/kit/pin".into(),
            tool: "/cache/obj-intel64/tf_pin.so".into(),
            preload: "/cache/obj-intel64/libtf_omp.so".into(),
        };
        let cmd = pin.command(Path::new("/trace"), &["f".into()], &[]);
        let envs: Vec<_> = cmd.get_envs().collect();
        let app = envs
            .iter()
            .find(|(k, _)| *k == OsStr::new("PIN_APP_LD_PRELOAD"))
            .and_then(|(_, v)| *v)
            .expect("PIN_APP_LD_PRELOAD is set");
        assert!(app
            .to_string_lossy()
            .starts_with("/cache/obj-intel64/libtf_omp.so"));
        assert!(envs.contains(&(OsStr::new("LD_PRELOAD"), None)));
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(
            args,
            [
                "-t",
                "/cache/obj-intel64/tf_pin.so",
                "-o",
                "/trace",
                "-only",
                "f",
                "--"
            ]
        );
    }

    /// The build directory holds every file the sources include by a
    /// quoted name, but the kit's header (`pin.H`) and Valgrind's (the
    /// preload library includes it only when built for Valgrind): a header
    /// added to the trace format and not embedded would break the build only
    /// where users have a kit.
    #[test]
    fn every_included_file_is_embedded() {
        let names: Vec<&str> = SOURCES.iter().map(|(n, _)| *n).collect();
        for (name, text) in SOURCES {
            for line in text.lines() {
                let Some(rest) = line.trim_start().strip_prefix("#include \"") else {
                    continue;
                };
                let included = rest.split('"').next().unwrap_or_default();
                assert!(
                    ["pin.H", "valgrind.h"].contains(&included) || names.contains(&included),
                    "{name} includes {included}, which the Pin build does not embed"
                );
            }
        }
    }
}
