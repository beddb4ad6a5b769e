//! The fuzz targets' harness on stable Rust, with fixed seeds: real traces
//! made by the tracer, mutated (checksums recomputed, so that mutants reach
//! the decoders), read and analysed; and real exports made by tf export,
//! mutated and checked. Nothing may panic, and no input may cost more than
//! its size justifies (the limits of FORMAT.md §9); the time bound here is
//! loose, to catch hangs, not to measure speed.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};
use tf_fuzz_harness::{analyze, check_export, export, mutate, pack, read, unpack, Rng};

/// Mutants per trace for the reader and for the whole analysis.
const READ_MUTANTS: usize = 5000;
const ANALYZE_MUTANTS: usize = 2000;
/// Mutants per export for its validator, and per trace for the export.
const CHECK_MUTANTS: usize = 10000;
const EXPORT_MUTANTS: usize = 400;

/// The time one input may take: 2 s (a loaded machine), plus 1 s per MB.
fn allowed(bytes: usize) -> Duration {
    Duration::from_secs(2) + Duration::from_secs_f64(bytes as f64 / 1e6)
}

#[test]
fn mutated_real_traces_neither_panic_nor_hang() {
    let tmp = common::tempdir();
    let seeds = [
        (
            "threads",
            common::workload("threads"),
            vec!["2"],
            vec!["--only", "worker"],
        ),
        (
            "locks",
            common::workload("locks"),
            vec!["2", "5"],
            vec!["--only", "worker"],
        ),
    ];
    let work = tmp.path().join("work");
    let mut worst = (0.0f64, String::new());
    for (k, (name, program, args, only)) in seeds.iter().enumerate() {
        let dir = tmp.path().join(name);
        let out = common::tf()
            .arg("trace")
            .args(only)
            .arg("-o")
            .arg(&dir)
            .arg("--")
            .arg(program)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let packed = pack(&dir).unwrap();
        // The unmutated trace reads without error.
        unpack(&packed, &work).unwrap();
        let clean = read(&work);
        assert_eq!(clean.errors, 0, "{name}: {clean:?}");
        assert!(clean.instructions > 0);
        assert!(analyze(&work) > 0);
        let mut rng = Rng::new(0x7f00 + k as u64);
        for i in 0..READ_MUTANTS + ANALYZE_MUTANTS {
            let mutant = mutate(&packed, &mut rng);
            unpack(&mutant, &work).unwrap();
            let t = Instant::now();
            if i < READ_MUTANTS {
                read(&work);
            } else {
                analyze(&work);
            }
            let took = t.elapsed();
            let per_mb = took.as_secs_f64() / (mutant.len() as f64 / 1e6);
            if per_mb > worst.0 {
                worst = (per_mb, format!("{name} mutant {i}"));
            }
            assert!(
                took <= allowed(mutant.len()),
                "{name} mutant {i} ({} bytes) took {took:?}",
                mutant.len()
            );
        }
    }
    eprintln!(
        "{} mutants; slowest input: {:.3} s per MB ({})",
        seeds.len() * (READ_MUTANTS + ANALYZE_MUTANTS),
        worst.0,
        worst.1
    );
}

/// The lines of file `name` in `dir` (0 when it is missing).
fn lines_of(dir: &Path, name: &Path) -> usize {
    std::fs::read(dir.join(name)).map_or(0, |b| b.split(|&c| c == b'\n').count())
}

#[test]
fn mutated_exports_neither_panic_nor_hang_the_check() {
    // A divergent warp, and lock rounds (serialized issues).
    let tmp = common::tempdir();
    let seeds = [
        ("divergence", "divergence", vec!["oddeven", "64"]),
        ("locks", "locks", vec!["2", "5"]),
    ];
    let work = tmp.path().join("work");
    for (k, (name, program, args)) in seeds.iter().enumerate() {
        let (trace, export) = (
            tmp.path().join(name),
            tmp.path().join(format!("{name}-export")),
        );
        let out = common::trace_with(
            &trace,
            &["--only", "worker"],
            &common::workload(program),
            args,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::run_ok(
            common::tf()
                .arg("export")
                .arg("--accelsim")
                .arg(&trace)
                .arg("-o")
                .arg(&export),
        );
        let packed = pack(&export).unwrap();
        unpack(&packed, &work).unwrap();
        assert_eq!(check_export(&work), vec![], "{name}: the export as written");
        let mut rng = Rng::new(0x7e00 + k as u64);
        let mut found = 0;
        for i in 0..CHECK_MUTANTS {
            let mutant = mutate(&packed, &mut rng);
            unpack(&mutant, &work).unwrap();
            let t = Instant::now();
            let problems = check_export(&work);
            let took = t.elapsed();
            assert!(
                took <= allowed(mutant.len()),
                "{name} mutant {i} ({} bytes) took {took:?}",
                mutant.len()
            );
            // Each problem names a file of the directory, and a line of it.
            for p in &problems {
                let file = p
                    .file
                    .strip_prefix(&work)
                    .unwrap_or_else(|_| panic!("{name} mutant {i}: {p}"));
                assert!(p.line <= lines_of(&work, file), "{name} mutant {i}: {p}");
            }
            found += usize::from(!problems.is_empty());
        }
        // Most changes to an export's bytes break it where the validator
        // can see it (a change inside an address or a mask may not).
        assert!(
            found > CHECK_MUTANTS / 2,
            "{name}: {found} of {CHECK_MUTANTS} mutants found wrong"
        );
        eprintln!("{name}: {found} of {CHECK_MUTANTS} mutants found wrong");
    }
}

#[test]
fn what_a_mutated_trace_exports_passes_its_check() {
    // However damaged the trace, what tf export writes of the part it
    // could analyse is valid Accel-Sim input.
    let tmp = common::tempdir();
    let seeds = [
        ("divergence", "divergence", vec!["oddeven", "64"]),
        ("locks", "locks", vec!["2", "5"]),
    ];
    let (work, out) = (tmp.path().join("work"), tmp.path().join("out"));
    for (k, (name, program, args)) in seeds.iter().enumerate() {
        let trace = tmp.path().join(name);
        let run = common::trace_with(
            &trace,
            &["--only", "worker"],
            &common::workload(program),
            args,
        );
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let packed = pack(&trace).unwrap();
        assert_eq!(
            export(&trace, &out),
            Some(vec![]),
            "{name}: the trace as recorded"
        );
        let mut rng = Rng::new(0x7d00 + k as u64);
        let mut exported = 0;
        for i in 0..EXPORT_MUTANTS {
            let mutant = mutate(&packed, &mut rng);
            unpack(&mutant, &work).unwrap();
            let t = Instant::now();
            let problems = export(&work, &out);
            let took = t.elapsed();
            assert!(
                took <= allowed(mutant.len()),
                "{name} mutant {i} ({} bytes) took {took:?}",
                mutant.len()
            );
            if let Some(problems) = problems {
                let errors: Vec<String> = (problems.iter().filter(|p| p.error))
                    .map(|p| p.to_string())
                    .collect();
                assert!(errors.is_empty(), "{name} mutant {i}: {errors:#?}");
                exported += 1;
            }
        }
        // Many mutants still analyse, up to their damage, and export.
        assert!(
            exported > EXPORT_MUTANTS / 4,
            "{name}: {exported} of {EXPORT_MUTANTS} exported"
        );
        eprintln!("{name}: {exported} of {EXPORT_MUTANTS} mutants exported");
    }
}
