//! The fuzz targets' harness on stable Rust, with fixed seeds: real traces
//! made by the tracer, mutated (checksums recomputed, so that mutants reach
//! the decoders), read and analysed. Nothing may panic, and no input may
//! cost more than its size justifies (the limits of FORMAT.md §9); the
//! time bound here is loose, to catch hangs, not to measure speed.

mod common;

use std::time::{Duration, Instant};
use tf_fuzz_harness::{analyze, mutate, pack, read, unpack, Rng};

/// Mutants per trace for the reader and for the whole analysis.
const READ_MUTANTS: usize = 5000;
const ANALYZE_MUTANTS: usize = 2000;

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
