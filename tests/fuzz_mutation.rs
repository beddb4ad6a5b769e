//! The fuzz targets' harness on stable Rust, with fixed seeds: real traces
//! made by the tracer, mutated (checksums recomputed, so that mutants reach
//! the decoders), read, analysed and exported; real exports made by tf
//! export, mutated and checked; random code translated for the export. Nothing may panic, and no input may cost more than
//! its size justifies (the limits of FORMAT.md §9); the time bound here is
//! loose, to catch hangs, not to measure speed.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tf_accelsim::translate::{translate, TraceOperand};
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

/// Runs `target` (given the mutant's number) on `n` mutants of `packed`,
/// made with seed `seed`, each unpacked into `work` first, and holds each
/// to the time bound; gives the slowest in seconds per MB, and which it was.
fn on_mutants(
    name: &str,
    packed: &[u8],
    seed: u64,
    n: usize,
    work: &Path,
    mut target: impl FnMut(usize),
) -> (f64, String) {
    let mut rng = Rng::new(seed);
    let mut slowest = (0.0f64, String::new());
    for i in 0..n {
        let mutant = mutate(packed, &mut rng);
        unpack(&mutant, work).unwrap();
        let t = Instant::now();
        target(i);
        let took = t.elapsed();
        let per_mb = took.as_secs_f64() / (mutant.len() as f64 / 1e6);
        if per_mb > slowest.0 {
            slowest = (per_mb, format!("{name} mutant {i}"));
        }
        assert!(
            took <= allowed(mutant.len()),
            "{name} mutant {i} ({} bytes) took {took:?}",
            mutant.len()
        );
    }
    slowest
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
        let slowest = on_mutants(
            name,
            &packed,
            0x7f00 + k as u64,
            READ_MUTANTS + ANALYZE_MUTANTS,
            &work,
            |i| {
                if i < READ_MUTANTS {
                    read(&work);
                } else {
                    analyze(&work);
                }
            },
        );
        if slowest.0 > worst.0 {
            worst = slowest;
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

/// Traces of the workers of two workloads (a divergent warp, and lock
/// rounds: serialized issues), each with its name, in `dir`.
fn workers_traces(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let seeds = [
        ("divergence", vec!["oddeven", "64"]),
        ("locks", vec!["2", "5"]),
    ];
    (seeds.into_iter())
        .map(|(name, args)| {
            let trace = dir.join(name);
            let out = common::trace_with(
                &trace,
                &["--only", "worker"],
                &common::workload(name),
                &args,
            );
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            (name, trace)
        })
        .collect()
}

#[test]
fn mutated_exports_neither_panic_nor_hang_the_check() {
    let tmp = common::tempdir();
    let work = tmp.path().join("work");
    for (k, (name, trace)) in workers_traces(tmp.path()).into_iter().enumerate() {
        let export = tmp.path().join(format!("{name}-export"));
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
        let mut found = 0;
        on_mutants(
            name,
            &packed,
            0x7e00 + k as u64,
            CHECK_MUTANTS,
            &work,
            |i| {
                let problems = check_export(&work);
                // Each problem names a file of the directory, and a line of it.
                for p in &problems {
                    let file = p
                        .file
                        .strip_prefix(&work)
                        .unwrap_or_else(|_| panic!("{name} mutant {i}: {p}"));
                    assert!(p.line <= lines_of(&work, file), "{name} mutant {i}: {p}");
                }
                found += usize::from(!problems.is_empty());
            },
        );
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
    let (work, out) = (tmp.path().join("work"), tmp.path().join("out"));
    for (k, (name, trace)) in workers_traces(tmp.path()).into_iter().enumerate() {
        let packed = pack(&trace).unwrap();
        assert_eq!(
            export(&trace, &out),
            Some(vec![]),
            "{name}: the trace as recorded"
        );
        let mut exported = 0;
        on_mutants(
            name,
            &packed,
            0x7d00 + k as u64,
            EXPORT_MUTANTS,
            &work,
            |i| {
                if let Some(problems) = export(&work, &out) {
                    let errors: Vec<String> = (problems.iter().filter(|p| p.error))
                        .map(|p| p.to_string())
                        .collect();
                    assert!(errors.is_empty(), "{name} mutant {i}: {errors:#?}");
                    exported += 1;
                }
            },
        );
        // Many mutants still analyse, up to their damage, and export.
        assert!(
            exported > EXPORT_MUTANTS / 4,
            "{name}: {exported} of {EXPORT_MUTANTS} exported"
        );
        eprintln!("{name}: {exported} of {EXPORT_MUTANTS} mutants exported");
    }
}

#[test]
fn any_instruction_with_any_recorded_operands_translates() {
    // A hostile or damaged trace gives the export any code bytes, any
    // lengths and any operands: blocks of one to four instructions, each
    // one iced-x86 decodes from random bytes or random bytes that do not
    // decode, with up to five operands on random instructions, of random
    // sizes (up to a 64-byte vector's), read or written, translate without
    // a panic, every operand kept.
    let mut rng = Rng::new(0x5eed);
    let (mut decoded, mut undecoded) = (0, 0);
    for _ in 0..100_000 {
        let (mut code, mut lens) = (Vec::new(), Vec::new());
        for _ in 0..1 + rng.below(4) {
            let bytes: Vec<u8> = (0..15).map(|_| rng.next() as u8).collect();
            let i = iced_x86::Decoder::new(64, &bytes, iced_x86::DecoderOptions::NONE).decode();
            let len = if i.is_invalid() {
                1 + rng.below(15)
            } else {
                i.len()
            };
            code.extend_from_slice(&bytes[..len]);
            lens.push(len as u8);
        }
        let mut operands: Vec<TraceOperand> = (0..rng.below(6))
            .map(|_| TraceOperand {
                insn: rng.below(lens.len()) as u16,
                size: 1 + rng.below(64) as u16,
                write: rng.below(2) == 1,
            })
            .collect();
        operands.sort_by_key(|o| o.insn);
        let b = translate(&code, rng.next(), &lens, &operands).unwrap();
        assert_eq!(b.insns.len(), lens.len());
        let mut kept: Vec<_> = (b.insns.iter().flat_map(|i| i.ops.iter()))
            .filter_map(|o| o.mem.map(|m| m.operand))
            .collect();
        kept.dedup();
        assert_eq!(kept.len(), operands.len(), "{code:02x?}: {b:?}");
        decoded += lens.len() - b.undecoded;
        undecoded += b.undecoded;
    }
    // both kinds were made often
    assert!(
        decoded > 100_000 && undecoded > 1_000,
        "{decoded} {undecoded}"
    );
}
