//! Tracer conformance: the small programs of `workloads/conformance/`, each
//! traced with `tf trace`, must produce exactly the trace written down by
//! hand in its `.expect` file (see `conformance/expect.rs` for the
//! statements). The checks look at executed instructions, memory operands,
//! events and threads, never at how a tracer cuts blocks, so every tracer
//! must pass them: the Valgrind tool always, the Pin tool where a Pin kit is
//! installed (`PIN_ROOT`).

mod common;
mod conformance {
    pub mod check;
    pub mod expect;
    pub mod flat;
}

use common::*;
use conformance::{check, expect, flat};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tf_trace::Trace;

#[test]
fn the_valgrind_tool_records_what_each_program_must_produce() {
    suite("valgrind");
}

#[test]
fn the_pin_tool_records_what_each_program_must_produce() {
    if std::env::var_os("PIN_ROOT").is_none() {
        eprintln!(
            "conformance of the Pin tool skipped: PIN_ROOT is not set (point it at a Pin kit)"
        );
        return;
    }
    suite("pin");
}

#[test]
fn the_pin_backend_without_a_kit_says_what_to_set_in_one_line() {
    let dir = tempdir();
    let out_dir = dir.path().join("trace");
    for (root, want) in [
        (None, "set PIN_ROOT"),
        (Some(dir.path()), "is not a Pin kit"),
    ] {
        let mut cmd = tf();
        cmd.env_remove("PIN_ROOT")
            .args(["trace", "--backend", "pin"])
            .arg("-o")
            .arg(&out_dir);
        if let Some(r) = root {
            cmd.arg("--pin-root").arg(r);
        }
        let out = cmd.args(["--", "/bin/true"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("tf: ") && err.contains(want), "{err}");
        assert!(!out_dir.exists(), "a trace directory was created");
    }
}

/// Traces every program with `backend`; fails listing every mismatch.
fn suite(backend: &str) {
    let dir = root().join("workloads/conformance");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "expect"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 15, "only {} expected traces", specs.len());
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("conformance-{backend}"));
    std::fs::create_dir_all(&bin).unwrap();
    let mut failures = Vec::new();
    for path in &specs {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let spec = match expect::parse(&name, &std::fs::read_to_string(path).unwrap()) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags: Vec<&str> = cpu.split_whitespace().collect();
        if let Some(f) = spec.requires.iter().find(|f| !flags.contains(&f.as_str())) {
            eprintln!("conformance: {name} skipped: this CPU has no {f}");
            continue;
        }
        failures.extend(run_one(backend, &dir, &bin, &name, &spec));
    }
    assert!(
        failures.is_empty(),
        "{} of {} conformance checks failed with --backend {backend}:\n{}",
        failures.len(),
        specs.len(),
        failures.join("\n")
    );
}

/// Builds, traces and checks one program; returns its failures.
fn run_one(backend: &str, src: &Path, bin: &Path, name: &str, spec: &expect::Spec) -> Vec<String> {
    let (exe, libs) = build(src, bin, &spec.program, spec);
    let trace_dir = bin.join(format!("{name}.trace"));
    let _ = std::fs::remove_dir_all(&trace_dir);
    let out = tf()
        .args(["trace", "--backend", backend, "-o"])
        .arg(&trace_dir)
        .args(&spec.options)
        .arg("--")
        .arg(&exe)
        .output()
        .expect("run tf trace");
    let trace = match Trace::open(&trace_dir) {
        Ok(t) => t,
        Err(e) => {
            return vec![format!(
                "{name}: no readable trace ({e}); tf said: {}",
                String::from_utf8_lossy(&out.stderr)
            )]
        }
    };
    let syms = check::Symbols::load(&exe, &libs, &trace);
    let threads: HashMap<u64, flat::Thread> = trace
        .threads()
        .iter()
        .map(|t| (t.tid, flat::read(&trace, t.tid)))
        .collect();
    let mut run = check::Run {
        trace: &trace,
        syms: &syms,
        threads: &threads,
        status: out.status.code().unwrap_or(-1),
        labels: HashMap::new(),
    };
    spec.checks
        .iter()
        .filter_map(|(line, tid, c)| {
            run.check(*tid, c)
                .err()
                .map(|e| format!("{name}.expect:{line} (thread {tid}): {e}"))
        })
        .collect()
}

/// Compiles `program` (and its libraries) with the spec's fixed flags.
fn build(src: &Path, bin: &Path, program: &str, spec: &expect::Spec) -> (PathBuf, Vec<PathBuf>) {
    let mut libs = Vec::new();
    for lib in &spec.libs {
        let so = bin.join(format!("lib{lib}.so"));
        compile(
            &["gcc", "-O1", "-g", "-shared", "-fPIC"],
            &[src.join(format!("{lib}.c"))],
            &so,
            &[],
        );
        libs.push(so);
    }
    let cpp = src.join(format!("{program}.cpp"));
    let source = if cpp.exists() {
        cpp
    } else {
        src.join(format!("{program}.c"))
    };
    let default: Vec<String> = [
        if source.extension().unwrap() == "cpp" {
            "g++"
        } else {
            "gcc"
        },
        "-O1",
        "-g",
        "-no-pie",
        "-fno-omit-frame-pointer",
        "-pthread",
    ]
    .map(String::from)
    .to_vec();
    let flags = spec.build.clone().unwrap_or(default);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut extra: Vec<String> = libs.iter().map(|l| l.display().to_string()).collect();
    if !libs.is_empty() {
        // Bound at load time, so that every call goes PLT stub → function
        // (a lazy first call would enter through the dynamic linker).
        extra.push(format!("-Wl,-rpath,{}", bin.display()));
        extra.push("-Wl,-z,now".into());
    }
    let exe = bin.join(program);
    compile(&flags, &[source], &exe, &extra);
    (exe, libs)
}
