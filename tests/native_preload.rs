//! The preload library built natively (`libtf_omp.so`, what the Pin tool
//! has traced programs load) on real OpenMP programs, without Pin: a
//! stand-in for the Pin tool's request handler
//! (`tracer-pintool/tests/requests_log.c`) runs the requests through the
//! bookkeeping both tracers share (`tf_worksharing.h`) while the program's
//! threads run in parallel. Its loop instances must be those the Valgrind
//! tool records for the same program, each iteration handed out once.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tf_trace::{Event, LoopChunk, StaticLoop, Trace};

/// What a run's events say about each loop instance.
#[derive(Debug, Default, PartialEq)]
struct Instances {
    /// By instance: the trip count.
    chunked: BTreeMap<u64, u64>,
    /// By instance: the team size.
    statics: BTreeMap<u64, u64>,
}

/// Every instance's iterations, each handed out exactly once (chunks), and
/// every thread of the team placed exactly once (inline static schedules).
fn check_coverage(what: &str, chunks: &[LoopChunk], places: &[StaticLoop]) -> Instances {
    let mut got = Instances::default();
    let mut seen: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for c in chunks {
        let trip = *got.chunked.entry(c.loop_id).or_insert(c.trip);
        assert_eq!(c.trip, trip, "{what}: loop instance {}: trip", c.loop_id);
        let hits = seen
            .entry(c.loop_id)
            .or_insert_with(|| vec![0; c.trip as usize]);
        for k in 0..c.iterations() {
            let i = c.number(k);
            assert!(i < trip, "{what}: {c:?} hands out iteration {i}");
            hits[i as usize] += 1;
        }
    }
    for (id, hits) in &seen {
        assert!(
            hits.iter().all(|&h| h == 1),
            "{what}: loop instance {id} does not hand out each of its {} iterations once",
            hits.len()
        );
    }
    let mut teams: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for p in places {
        got.statics.insert(p.loop_id, p.threads);
        teams.entry(p.loop_id).or_default().push(p.thread);
    }
    for (id, mut threads) in teams {
        threads.sort_unstable();
        let want: Vec<u64> = (0..got.statics[&id]).collect();
        assert_eq!(
            threads, want,
            "{what}: static instance {id}: thread numbers"
        );
    }
    got
}

/// `libtf_omp.so` (by the Pin tool's own make rule) and the stand-in.
fn build_libraries(dir: &Path) -> (PathBuf, PathBuf) {
    let lib = dir.join("libtf_omp.so");
    run_ok(
        Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(root().join("tracer-pintool"))
            .args(["-f", "makefile.rules"])
            .arg(format!("OBJDIR={}/", dir.display()))
            .arg(&lib),
    );
    let log = dir.join("requests_log.so");
    compile(
        &["cc", "-O2", "-Wall", "-Werror", "-fpic", "-shared"],
        &[root().join("tracer-pintool/tests/requests_log.c")],
        &log,
        &[
            format!("-I{}", root().join("trace-format/include").display()),
            "-lpthread".into(),
        ],
    );
    (lib, log)
}

/// The program run natively with the library and the stand-in (the
/// workloads ask for 4 threads themselves).
fn native(libs: &(PathBuf, PathBuf), program: &Path, args: &[&str], dir: &Path) -> Instances {
    let log = dir.join("requests.log");
    run_ok(
        Command::new(program)
            .args(args)
            .env("TF_REQUESTS_LOG", &log)
            .env(
                "LD_PRELOAD",
                format!("{}:{}", libs.1.display(), libs.0.display()),
            ),
    );
    let text = std::fs::read_to_string(&log).expect("the stand-in wrote its log");
    let (mut chunks, mut places) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let w: Vec<&str> = line.split(' ').collect();
        let n = |i: usize| w[i].parse::<u64>().unwrap();
        match w[0] {
            "chunk" => chunks.push(LoopChunk {
                loop_id: n(1),
                first: n(2),
                count: n(3),
                stride: n(4),
                trip: n(5),
            }),
            "static" => places.push(StaticLoop {
                loop_id: n(1),
                thread: n(2),
                threads: n(3),
            }),
            _ => assert_eq!(
                line,
                "lost 0",
                "{}: chunks of unknown loops",
                program.display()
            ),
        }
    }
    check_coverage(&format!("{} natively", program.display()), &chunks, &places)
}

/// The loop events the Valgrind tool records for the same run.
fn traced(program: &Path, args: &[&str], dir: &Path) -> Instances {
    let t = dir.join("trace");
    trace_ok(&t, program, args);
    let trace = Trace::open(&t).unwrap();
    let (mut chunks, mut places) = (Vec::new(), Vec::new());
    for f in trace.threads() {
        let mut r = trace.read_thread(f.tid).unwrap();
        while let Some(e) = r.next_event() {
            match e.unwrap() {
                Event::LoopChunk(c) => chunks.push(c),
                Event::StaticLoop(s) => places.push(s),
                _ => {}
            }
        }
    }
    check_coverage(&format!("{} traced", program.display()), &chunks, &places)
}

fn same_instances(libs: &(PathBuf, PathBuf), program: &Path, args: &[&str]) -> Instances {
    let dir = tempdir();
    let native = native(libs, program, args, dir.path());
    let traced = traced(program, args, dir.path());
    assert!(
        !native.chunked.is_empty() || !native.statics.is_empty(),
        "{}: no loop seen",
        program.display()
    );
    assert_eq!(native, traced, "{}: loop instances", program.display());
    native
}

/// gcc's libgomp: every schedule (runtime-handed chunks and inline static
/// schedules), combined `parallel for`s started in one call, sections and
/// doacross loops.
#[test]
fn native_preload_sees_the_loops_the_valgrind_tool_records_with_libgomp() {
    let dir = tempdir();
    let libs = build_libraries(dir.path());
    for opt in ["-O0", "-O2"] {
        same_instances(&libs, &workload_at("omp_schedules", opt), &["256", "all"]);
        same_instances(&libs, &workload_at("omp_latch", opt), &["256"]);
        same_instances(&libs, &workload_at("omp_target", opt), &["256"]);
        // combined parallel loops (the master announces the bounds): two
        // instances, of 256 iterations and of 128 (by 2 from 1)
        let combined = same_instances(&libs, &workload_at("omp_combined", opt), &["256"]);
        assert_eq!(
            combined.chunked,
            BTreeMap::from([(1, 256), (2, 128)]),
            "{opt}: omp_combined"
        );
        // sections, in a region and as `parallel sections`: three
        // instances of eight sections each
        for form in ["separate", "combined"] {
            let sections = same_instances(&libs, &workload_at("omp_sections", opt), &[form, "3"]);
            let want = BTreeMap::from([(1, 8), (2, 8), (3, 8)]);
            assert_eq!(sections.chunked, want, "{opt}: omp_sections {form}");
        }
        // doacross loops: 16 iterations of a chain, 15 rows of a grid
        for (mode, trip) in [("chain", 16), ("grid", 15)] {
            let doacross = same_instances(&libs, &workload_at("omp_doacross", opt), &["16", mode]);
            assert_eq!(
                doacross.chunked,
                BTreeMap::from([(1, trip)]),
                "{opt}: {mode}"
            );
        }
    }
}

/// clang's libomp (where clang and libomp are installed): dispatch and
/// static-init entry points.
#[test]
fn native_preload_sees_the_loops_the_valgrind_tool_records_with_libomp() {
    let dir = tempdir();
    let libs = build_libraries(dir.path());
    let mut ran = 0;
    for name in ["omp_schedules", "omp_target"] {
        if let Some(bin) = build_with_clang(name, "-O2") {
            let args: &[&str] = if name == "omp_schedules" {
                &["256", "all"]
            } else {
                &["256"]
            };
            same_instances(&libs, &bin, args);
            ran += 1;
        }
    }
    if ran == 0 {
        eprintln!("libomp test skipped: clang with -fopenmp (libomp-dev) is not installed");
    }
}

/// The headers the tracers share compile as the Pin tool's C++ and give
/// the events hand-derived in `tracer-pintool/tests/headers_cpp.cpp`.
#[test]
fn the_shared_headers_work_as_cpp() {
    let dir = tempdir();
    let exe = dir.path().join("headers_cpp");
    compile(
        &["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror"],
        &[root().join("tracer-pintool/tests/headers_cpp.cpp")],
        &exe,
        &[format!(
            "-I{}",
            root().join("trace-format/include").display()
        )],
    );
    let out = run_ok(&mut Command::new(&exe));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "none\n\
         chunk 1 0 2 0 5\n\
         none\n\
         chunk 1 2 3 0 5\n\
         chunk 1 0 0 0 5\n\
         static 2 1 2\n\
         unknown\n"
    );
}
