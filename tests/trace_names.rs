//! `tf trace --only FN` / `--exclude FN` take the names `tf analyze` prints
//! (demangled C++ names, OpenMP outlined clones included), and a name that
//! no function of the program or its libraries has is refused before the
//! program runs.

mod common;

use common::*;
use object::{Object, ObjectSymbol};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use tf_analyzer::symbols::demangle;

/// A template whose OpenMP loop body becomes an outlined clone, and a
/// static function of known length called from `main`.
const PROGRAM: &str = r#"
#include <cstdio>
static volatile long sink;
template <typename T> void bs(T *a, int n) {
#pragma omp parallel for num_threads(2)
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 2 + 1;
}
__attribute__((noinline)) static void heavy(long k) {
    for (long j = 0; j < 1000; j++)
        sink += j ^ k;
}
int main() {
    float a[64];
    for (int i = 0; i < 64; i++)
        a[i] = i;
    bs(a, 64);
    heavy(3);
    std::printf("%g\n", a[3]);
    return 0;
}
"#;

/// Builds the program (once per test binary).
fn program() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = made_once("trace-names", |dir| {
                let src = dir.join("names.cpp");
                std::fs::write(&src, PROGRAM).unwrap();
                compile(
                    &["g++", "-O1", "-g", "-fopenmp", "-fno-omit-frame-pointer"],
                    &[src],
                    &dir.join("names"),
                    &[],
                );
            });
            dir.join("names")
        })
        .clone()
}

/// The demangled names of the program's own function symbols.
fn demangled_functions(exe: &Path) -> Vec<String> {
    let data = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text)
        .filter_map(|s| s.name().ok().map(demangle))
        .collect()
}

fn trace_with(dir: &Path, options: &[&str]) -> Output {
    tf().arg("trace")
        .arg("-o")
        .arg(dir)
        .args(options)
        .arg("--")
        .arg(program())
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap()
}

fn traced_ok(dir: &Path, options: &[&str]) -> Value {
    let out = trace_with(dir, options);
    assert!(
        out.status.success(),
        "tf trace {options:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    analyze_json(dir, &["--unit", "thread"])
}

/// Thread instructions by function name at W = 32.
fn instructions(report: &Value) -> Vec<(String, u64)> {
    width(report, 32)["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["thread_instructions"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn only_and_exclude_take_the_names_tf_analyze_prints() {
    let d = tempdir();
    let names = demangled_functions(&program());
    let clone = names
        .iter()
        .find(|n| n.starts_with("void bs<float>(float*, int) [clone ._omp_fn."))
        .unwrap_or_else(|| panic!("no outlined clone of bs<float> among {names:?}"))
        .clone();
    assert!(names.iter().any(|n| n == "heavy(long)"), "{names:?}");

    // --only with the clone's demangled name: its instructions, and
    // nothing of main or heavy, which run outside it.
    let only = traced_ok(&d.path().join("only"), &["--only", &clone]);
    let got = instructions(&only);
    let inside = got.iter().find(|(n, _)| *n == clone).map(|(_, i)| *i);
    assert!(inside.is_some_and(|i| i > 0), "{clone} not traced: {got:?}");
    for outside in ["main", "heavy(long)"] {
        assert!(got.iter().all(|(n, _)| n != outside), "{outside}: {got:?}");
    }
    assert!(only["skipped"]["outside_only"].as_u64().unwrap() > 0);
    assert_eq!(only["skipped"]["excluded"], 0);

    // heavy(long) alone, by its demangled name, then skipped with
    // --exclude by the same name: what was recorded inside it the first
    // time is exactly what the second run counts as excluded.
    let heavy_only = traced_ok(&d.path().join("heavy"), &["--only", "heavy(long)"]);
    let heavy: u64 = instructions(&heavy_only)
        .iter()
        .filter(|(n, _)| n == "heavy(long)")
        .map(|(_, i)| i)
        .sum();
    assert!(heavy >= 1000, "heavy(long) ran {heavy} instructions");
    let excluded = traced_ok(&d.path().join("exclude"), &["--exclude", "heavy(long)"]);
    assert_eq!(excluded["skipped"]["excluded"], heavy);
    let got = instructions(&excluded);
    assert!(got.iter().all(|(n, _)| n != "heavy(long)"), "{got:?}");
    assert!(got.iter().any(|(n, i)| n == "main" && *i > 0), "{got:?}");
    assert!(got.iter().any(|(n, i)| *n == clone && *i > 0), "{got:?}");
}

#[test]
fn a_name_no_function_has_is_refused_before_the_program_runs() {
    let d = tempdir();
    let exe = program();
    for (option, name) in [("--only", "nosuchfn"), ("--exclude", "heav")] {
        let dir = d.path().join("t");
        let out = trace_with(&dir, &[option, name]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(
            err.trim(),
            format!(
                "tf: {option} {name}: no function of {} or its libraries is named {name} \
                 (give a name as tf analyze prints it, or a mangled name){}",
                exe.display(),
                if name == "heav" {
                    "; names containing it: 'heavy(long)'"
                } else {
                    ""
                }
            )
        );
        assert!(out.stdout.is_empty(), "the program ran");
        assert!(!dir.exists(), "a trace directory was created");
    }
}
