//! Finding Valgrind and installing the embedded `tf` tool beside it.
//!
//! The tool is a static executable (`tf-amd64-linux`) built against the
//! Valgrind headers and libraries at build time and embedded in the `tf`
//! binary. Valgrind's launcher looks for tools in `$VALGRIND_LIB`, so `tf`
//! writes the tool once into a cache directory next to links to the stock
//! files of the installed Valgrind (preload libraries, suppressions), and points
//! `VALGRIND_LIB` there.

use anyhow::{bail, Context, Result};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool binary, empty when `tf` was built without Valgrind's development files.
static TOOL: &[u8] = include_bytes!(env!("TF_TOOL_PATH"));
const TOOL_HASH: &str = env!("TF_TOOL_HASH");
const TOOL_VALGRIND_VERSION: &str = env!("TF_TOOL_VALGRIND_VERSION");
const TOOL_FILE: &str = "tf-amd64-linux";
/// The tool's preload library: Valgrind loads it into the traced program,
/// where it reports the chunks OpenMP runtimes hand out.
static PRELOAD: &[u8] = include_bytes!(env!("TF_PRELOAD_PATH"));
const PRELOAD_FILE: &str = "vgpreload_tf-amd64-linux.so";

/// Directories where distributions keep Valgrind's tools and preload libraries.
const LIBEXEC_CANDIDATES: &[&str] = &[
    "/usr/libexec/valgrind",
    "/usr/lib/x86_64-linux-gnu/valgrind",
    "/usr/lib64/valgrind",
    "/usr/lib/valgrind",
    "/usr/local/libexec/valgrind",
    "/usr/local/lib/valgrind",
];

/// A ready-to-run Valgrind with the `tf` tool.
pub struct Valgrind {
    /// The launcher (`valgrind` on the `PATH`).
    pub launcher: PathBuf,
    /// The directory to pass as `VALGRIND_LIB`.
    pub lib_dir: PathBuf,
}

impl Valgrind {
    /// Checks the installed Valgrind and installs the tool for it.
    pub fn prepare() -> Result<Valgrind> {
        if TOOL.is_empty() {
            bail!(
                "tf was built without its Valgrind tool: install valgrind \
                 (apt-get install -y valgrind) and rebuild tf"
            );
        }
        let launcher = find_on_path("valgrind").context(
            "valgrind is not installed: install it (apt-get install -y valgrind) and try again",
        )?;
        let installed = installed_version(&launcher)?;
        if installed != TOOL_VALGRIND_VERSION {
            bail!(
                "tf's Valgrind tool was built for valgrind {TOOL_VALGRIND_VERSION} but valgrind \
                 {installed} is installed: rebuild tf (cargo build --release)"
            );
        }
        let stock = stock_dir()?;
        let lib_dir = install(&stock)?;
        Ok(Valgrind { launcher, lib_dir })
    }

    /// `valgrind --tool=tf … --tf-out=DIR [--tf-only=FN]… [--tf-exclude=FN]…`
    pub fn command(&self, dir: &Path, only: &[String], exclude: &[String]) -> Command {
        let mut cmd = Command::new(&self.launcher);
        cmd.env("VALGRIND_LIB", &self.lib_dir)
            .arg("--tool=tf")
            .arg("--vex-guest-chase=no")
            .arg("--demangle=no")
            .arg("-q")
            .arg(format!("--tf-out={}", dir.display()));
        for f in only {
            cmd.arg(format!("--tf-only={f}"));
        }
        for f in exclude {
            cmd.arg(format!("--tf-exclude={f}"));
        }
        // For profiling the tracer (benches/trace_overhead.sh): e.g.
        // `--tf-bench=1` drops the raw records, `--tf-encoders=N`.
        if let Some(extra) = std::env::var_os("TF_TRACER_ARGS") {
            cmd.args(extra.to_string_lossy().split_whitespace());
        }
        cmd
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn installed_version(launcher: &Path) -> Result<String> {
    let output = Command::new(launcher)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run {}", launcher.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text.trim().trim_start_matches("valgrind-").to_string())
}

/// Where the installed Valgrind keeps its stock files.
fn stock_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TF_VALGRIND_LIBEXEC") {
        return Ok(PathBuf::from(dir));
    }
    LIBEXEC_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|dir| dir.join("vgpreload_core-amd64-linux.so").exists())
        .context(
            "cannot find Valgrind's support files (vgpreload_core-amd64-linux.so); \
             reinstall valgrind or set TF_VALGRIND_LIBEXEC to their directory",
        )
}

/// The per-user cache directory for installed tools.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("TF_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("tf");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache").join("tf");
    }
    std::env::temp_dir().join(format!("tf-{}", current_uid()))
}

fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Writes the tool and links to the stock files into a directory named after
/// the tool's content hash; does nothing when it already exists. The directory
/// is assembled under a temporary name and renamed, so that concurrent runs
/// never see half of it.
fn install(stock: &Path) -> Result<PathBuf> {
    let root = cache_root();
    let dir = root.join(format!("valgrind-{TOOL_VALGRIND_VERSION}-{TOOL_HASH}"));
    if dir.join(TOOL_FILE).is_file() {
        return Ok(dir);
    }
    fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    let tmp = root.join(format!(".install-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    for entry in fs::read_dir(stock).with_context(|| format!("cannot read {}", stock.display()))? {
        let entry = entry?;
        if entry.file_name() != TOOL_FILE && entry.file_name() != PRELOAD_FILE {
            symlink(entry.path(), tmp.join(entry.file_name()))?;
        }
    }
    let tool = tmp.join(TOOL_FILE);
    fs::write(&tool, TOOL).with_context(|| format!("cannot write {}", tool.display()))?;
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755))?;
    let preload = tmp.join(PRELOAD_FILE);
    fs::write(&preload, PRELOAD).with_context(|| format!("cannot write {}", preload.display()))?;
    fs::set_permissions(&preload, fs::Permissions::from_mode(0o755))?;
    if fs::rename(&tmp, &dir).is_err() {
        // Another tf installed it first.
        let _ = fs::remove_dir_all(&tmp);
        if !dir.join(TOOL_FILE).is_file() {
            bail!("cannot install the Valgrind tool into {}", dir.display());
        }
    }
    Ok(dir)
}
