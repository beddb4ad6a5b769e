//! The validator: every check of an Accel-Sim trace directory that its
//! files can show (the checklist of `docs/accelsim-export.md`, items 1–28).
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! let dir = std::env::temp_dir().join(format!("tf-doc-check-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n")?;
//! std::fs::write(dir.join("kernel-1.traceg"), "-grid dim = (1,1,1)\n")?;
//! let problems = tf_accelsim::check::check_dir(&dir);
//! assert!(problems.iter().any(|p| p.error && p.check == 6)); // no block dim, …
//! assert!(problems[0].to_string().contains("kernel-1.traceg"));
//! # std::fs::remove_dir_all(&dir)?; Ok(()) }
//! ```

mod ahead;
mod canonical;
mod header;
mod insn;
mod kernel;
mod opcode;
mod tokens;

use std::fmt;
use std::path::{Path, PathBuf};
use tf_analyzer::{Progress, Silent};

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// Its line (1-based; 0 = the file as a whole).
    pub line: usize,
    /// The checklist item.
    pub check: u8,
    /// True when the simulator would abort, crash or misread; false when
    /// the trace is accepted but wrong or not portable.
    pub error: bool,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        let kind = if self.error { "error" } else { "warning" };
        write!(f, ": {kind} (check {}): {}", self.check, self.message)
    }
}

/// Problems of one file, and how many were left out.
pub(crate) struct Report {
    file: PathBuf,
    problems: Vec<Problem>,
    left_out: usize,
}

/// At most this many problems are kept per file.
const KEEP: usize = 100;

impl Report {
    fn new(file: PathBuf) -> Report {
        Report {
            file,
            problems: Vec::new(),
            left_out: 0,
        }
    }

    fn add(&mut self, line: usize, check: u8, error: bool, message: String) {
        if self.problems.len() >= KEEP {
            self.left_out += 1;
            return;
        }
        self.problems.push(Problem {
            file: self.file.clone(),
            line,
            check,
            error,
            message,
        });
    }

    pub(crate) fn error(&mut self, line: usize, check: u8, message: String) {
        self.add(line, check, true, message);
    }

    pub(crate) fn warn(&mut self, line: usize, check: u8, message: String) {
        self.add(line, check, false, message);
    }

    pub(crate) fn error_none<T>(&mut self, line: usize, check: u8, message: String) -> Option<T> {
        self.error(line, check, message);
        None
    }

    fn finish(mut self) -> Vec<Problem> {
        if self.left_out > 0 {
            let error = self.problems.iter().any(|p| p.error);
            let n = self.left_out;
            self.problems.push(Problem {
                file: self.file,
                line: 0,
                check: 0,
                error,
                message: format!("{n} more problems not shown"),
            });
        }
        self.problems
    }
}

/// Checks the trace directory `dir` (its `kernelslist.g` and every kernel
/// it lists); returns every problem found, errors and warnings.
pub fn check_dir(dir: &Path) -> Vec<Problem> {
    check_dir_with(dir, &Silent)
}

/// What [`check_dir`] does, telling `progress` of a stage, "checking the export",
/// whose steps are the bytes of the kernel files to check, as they are
/// checked (a file checked only in part, after a problem that stops its
/// check, moves it on only by what was read).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use std::sync::atomic::{AtomicU64, Ordering};
/// struct Bytes(AtomicU64, AtomicU64);
/// impl tf_analyzer::Progress for Bytes {
///     fn stage(&self, _: &str, total: u64) { self.0.store(total, Ordering::Relaxed) }
///     fn advance(&self, n: u64) { self.1.fetch_add(n, Ordering::Relaxed); }
/// }
/// let dir = std::env::temp_dir().join(format!("tf-doc-check-with-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n")?;
/// std::fs::write(dir.join("kernel-1.traceg"), "-grid dim = (1,1,1)\n")?;
/// let bytes = Bytes(AtomicU64::new(0), AtomicU64::new(0));
/// tf_accelsim::check::check_dir_with(&dir, &bytes);
/// assert_eq!(bytes.0.load(Ordering::Relaxed), 20); // the kernel file's size
/// assert_eq!(bytes.1.load(Ordering::Relaxed), 20); // all of it checked
/// # std::fs::remove_dir_all(&dir)?; Ok(()) }
/// ```
pub fn check_dir_with(dir: &Path, progress: &dyn Progress) -> Vec<Problem> {
    let list = dir.join("kernelslist.g");
    let mut r = Report::new(list.clone());
    // 5: the simulator takes the list's directory from the text before the
    // last '/' of its -trace argument.
    if !list.to_string_lossy().contains('/') {
        r.error(0, 5, "the path given to -trace must contain a '/'".into());
    }
    let text = match std::fs::read(&list) {
        Ok(t) => t,
        Err(e) => {
            r.error(0, 3, format!("cannot read it: {e}"));
            return r.finish();
        }
    };
    text_conventions(&text, &mut r);
    let mut kernels = Vec::new();
    for (i, line) in String::from_utf8_lossy(&text).lines().enumerate() {
        let n = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with("MemcpyHtoD") {
            let f: Vec<&str> = line.split(',').collect();
            let ok = f.len() == 3
                && f[1]
                    .strip_prefix("0x")
                    .or_else(|| f[1].strip_prefix("0X"))
                    .is_some_and(|h| u64::from_str_radix(h, 16).is_ok())
                && f[2].trim().parse::<u64>().is_ok();
            if !ok {
                r.error(
                    n,
                    2,
                    format!("{line:?} is not MemcpyHtoD,0x<hex>,<decimal>"),
                );
            }
        } else if line.starts_with("kernel") {
            if !(line.ends_with(".traceg") || line.ends_with(".xz")) {
                r.error(
                    n,
                    2,
                    format!("kernel file {line:?} does not end in .traceg or .xz"),
                );
            } else if !dir.join(line).is_file() {
                r.error(n, 3, format!("kernel file {line} does not exist"));
            } else if line.ends_with(".xz") {
                r.warn(
                    n,
                    2,
                    format!("{line} is compressed: its contents were not checked"),
                );
            } else {
                kernels.push(dir.join(line));
            }
        } else {
            r.warn(n, 4, format!("{line:?} is neither a memcpy nor a kernel"));
        }
    }
    let mut problems = r.finish();
    let mut units = [false; 4];
    let bytes = kernels
        .iter()
        .filter_map(|k| std::fs::metadata(k).ok())
        .map(|m| m.len())
        .sum();
    progress.stage("checking the export", bytes);
    for k in kernels {
        problems.extend(kernel::check_kernel(&k, &mut units, progress));
    }
    problems.extend(run_config(dir, &units));
    problems
}

/// Checklist 1: ASCII, LF line ends, no `\r`, a final newline.
fn text_conventions(text: &[u8], r: &mut Report) {
    if let Some(p) = text.iter().position(|&b| b == b'\r') {
        r.error(
            0,
            1,
            format!("carriage return at byte {p} (lines must end in LF alone)"),
        );
    }
    if let Some(p) = text.iter().position(|&b| !b.is_ascii()) {
        r.error(0, 1, format!("non-ASCII byte at offset {p}"));
    }
    if !text.is_empty() && text.last() != Some(&b'\n') {
        r.error(0, 1, "the last line does not end in a newline".into());
    }
}

/// Checklist 28: the simulator's configuration enables every specialized
/// unit the opcodes need. Checked when the directory holds a `trace.config`;
/// otherwise the run must pass one (the tested configurations do).
fn run_config(dir: &Path, units: &[bool; 4]) -> Vec<Problem> {
    let path = dir.join("trace.config");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let mut r = Report::new(path);
    for (unit, &needed) in units.iter().enumerate().skip(1) {
        let key = format!("-specialized_unit_{unit}");
        let enabled = text.lines().any(|l| {
            let mut t = l.split_whitespace();
            t.next() == Some(key.as_str()) && t.next().is_some_and(|v| v.starts_with('1'))
        });
        if needed && !enabled {
            r.error(0, 28, format!("the trace needs {key} enabled"));
        }
    }
    r.finish()
}
