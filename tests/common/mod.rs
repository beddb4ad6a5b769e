//! Helpers for the end-to-end tests: build the workloads, run `tf`.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The `tf` binary under test.
pub fn tf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tf"))
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the workloads once (at -O1) and returns the path of `name`.
pub fn workload(name: &str) -> PathBuf {
    workload_at(name, "-O1")
}

/// Builds the workloads at optimization level `opt` (once per level per test
/// binary) and returns the path of `name`.
pub fn workload_at(name: &str, opt: &str) -> PathBuf {
    static BUILT: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap();
    let build = root().join("workloads").join("build");
    let dir = build.join(opt.trim_start_matches('-'));
    if !built.iter().any(|o| o == opt) {
        // One make at a time across test processes: a make that rebuilds a
        // program while another test runs it fails that test.
        std::fs::create_dir_all(&build).unwrap();
        let status = locked(&build.join(".lock"), || {
            Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(root().join("workloads"))
                .arg(format!("OPT={opt}"))
                .status()
                .expect("make is installed (scripts/setup.sh)")
        });
        assert!(status.success(), "building the workloads at {opt} failed");
        built.push(opt.to_string());
    }
    dir.join(name)
}

/// Writes `bytes` bytes of generated English-like text to `path`
/// (workloads/gen_text.c), an input for the real programs the tests trace.
pub fn text_file(path: &Path, bytes: u64) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let status = Command::new(workload("gen_text"))
        .arg(bytes.to_string())
        .stdout(file)
        .status()
        .unwrap();
    assert!(status.success(), "gen_text {bytes} failed");
}

/// Runs `f` holding an exclusive lock on the file `lock` (made if missing):
/// test processes that run side by side take turns (under `cargo nextest`
/// every test is a process of its own).
pub fn locked<T>(lock: &Path, f: impl FnOnce() -> T) -> T {
    let file = std::fs::File::create(lock).unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("locking {}: {e}", lock.display()));
    f()
    // the lock goes with `file`
}

/// The directory `name` under the tests' scratch directory, filled by `make`
/// once per test run and shared by the run's tests: under `cargo test`, by
/// the tests of one test binary (call it inside a `OnceLock`); under `cargo
/// nextest`, where each test is a process, by every test of the run, the
/// first making it while the others wait. A directory made by an earlier run
/// is made again.
pub fn made_once(name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let parent = dir.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    let run = std::env::var("NEXTEST_RUN_ID")
        .unwrap_or_else(|_| format!("process {}", std::process::id()));
    let lock = parent.join(format!(
        "{}.lock",
        dir.file_name().unwrap().to_string_lossy()
    ));
    locked(&lock, || {
        let stamp = dir.join(".made-by");
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(run.as_str()) {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            make(&dir);
            std::fs::write(&stamp, &run).unwrap();
        }
    });
    dir
}

/// Runs `tf trace -o DIR -- program args` and returns the output; the trace
/// is in `dir`.
pub fn trace(dir: &Path, program: &Path, args: &[&str]) -> Output {
    trace_with(dir, &[], program, args)
}

/// Runs `tf trace -o DIR OPTIONS -- program args` and returns the output.
pub fn trace_with(dir: &Path, options: &[&str], program: &Path, args: &[&str]) -> Output {
    trace_command(dir, options, program, args)
        .output()
        .expect("run tf trace")
}

/// The command `tf trace -o DIR OPTIONS -- program args`, to run as it is or
/// with an environment of its own. The program binds its library functions
/// at start-up (`LD_BIND_NOW=1`): the tracers skip lazy binding itself, but
/// the first call of each function still takes the PLT's longer path into
/// the dynamic linker (a push and two jumps more), which the workloads'
/// hand-derived figures leave out; a test of lazy binding removes it.
pub fn trace_command(dir: &Path, options: &[&str], program: &Path, args: &[&str]) -> Command {
    let mut cmd = tf();
    cmd.env("LD_BIND_NOW", "1");
    cmd.arg("trace")
        .arg("-o")
        .arg(dir)
        .args(options)
        .arg("--")
        .arg(program)
        .args(args);
    cmd
}

/// The rows of the CSV file `path`, each as its cells by column name.
pub fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    reader.deserialize().map(|row| row.unwrap()).collect()
}

/// Like [`trace`], and checks that the program exited with 0.
pub fn trace_ok(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let out = trace(dir, program, args);
    assert!(
        out.status.success(),
        "tf trace {} failed: {}\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The cells of thread `tid`'s row in `tf info`'s output `info` (the
/// first row of more than four cells that starts with it: the module and
/// function tables below have four), failing the test if there is none.
pub fn info_thread_row(info: &str, tid: u64) -> Vec<&str> {
    let tid = tid.to_string();
    (info.lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.first() == Some(&tid.as_str()) && f.len() > 4)
        .unwrap_or_else(|| panic!("tf info shows no thread {tid}:\n{info}"))
}

/// Runs `cmd` and returns its output, failing the test with its stderr if it
/// did not succeed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `tf analyze TRACE ARGS --json FILE` and returns the JSON.
pub fn analyze_json(trace: &Path, args: &[&str]) -> Value {
    let json = trace.with_extension("json");
    let out = tf()
        .arg("analyze")
        .arg(trace)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run tf analyze");
    assert!(
        out.status.success(),
        "tf analyze failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

/// The result for warp width `w`.
pub fn width(report: &Value, w: u64) -> &Value {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["warp_size"] == w)
        .unwrap_or_else(|| panic!("no result for W = {w}"))
}

/// The entry of function `name` in a width's result.
pub fn function<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name} in the result"))
}

/// Runs the compiler `flags[0]` with the other flags on `sources`, writing
/// `out`, with `extra` (libraries, linker options) after the sources.
pub fn compile(flags: &[&str], sources: &[PathBuf], out: &Path, extra: &[String]) {
    let status = Command::new(flags[0])
        .args(&flags[1..])
        .arg("-o")
        .arg(out)
        .args(sources)
        .args(extra)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", flags[0]));
    assert!(status.success(), "compiling {} failed", out.display());
}

/// workloads/NAME.c built with clang at `opt` with -fopenmp (libomp), if
/// clang and libomp are installed; with libatomic, which clang calls for an
/// atomic update of a long double.
pub fn build_with_clang(name: &str, opt: &str) -> Option<std::path::PathBuf> {
    let out = root()
        .join("workloads/build/clang")
        .join(opt.trim_start_matches('-'));
    std::fs::create_dir_all(&out).ok()?;
    let bin = out.join(name);
    let src = root().join(format!("workloads/{name}.c"));
    let ok = Command::new("clang")
        .args([opt, "-g", "-fopenmp", "-o"])
        .arg(&bin)
        .arg(&src)
        .arg("-latomic")
        .status()
        .ok()?
        .success();
    (ok && Path::new(&bin).exists()).then_some(bin)
}

/// An OpenMP workload built with GCC at -O1 (libgomp), and with clang at -O1
/// (libomp) where clang and libomp are installed: GCC's build first.
pub fn gcc_and_clang(name: &str) -> Vec<PathBuf> {
    let mut programs = vec![workload(name)];
    programs.extend(build_with_clang(name, "-O1"));
    programs
}

/// The functions of a width's results that are a shared library's (the
/// OpenMP runtime's, libc's): none is in a unit where the runtime's work
/// is skipped.
pub fn library_functions(res: &Value) -> Vec<&Value> {
    (res["functions"].as_array().unwrap().iter())
        .filter(|f| f["module"].as_str().unwrap().starts_with("lib"))
        .collect()
}

/// A fresh temporary directory for a trace (removed when dropped).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("tf-test-")
        .tempdir()
        .unwrap()
}
pub mod accelsim;
