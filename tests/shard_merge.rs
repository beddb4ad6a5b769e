//! `tf analyze --shard i/N` and `tf merge`: the shards of an analysis,
//! merged, give exactly what one run gives.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// Runs `cmd` and checks that it succeeded.
fn succeed(cmd: &mut std::process::Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `tf analyze TRACE ARGS --shard i/N --json` for every i, then `tf merge`.
fn merged(trace: &Path, args: &[&str], n: usize) -> Value {
    let dir = trace.parent().unwrap();
    let mut parts = Vec::new();
    for i in 0..n {
        let part = dir.join(format!("part-{i}-of-{n}.json"));
        let shard = format!("{i}/{n}");
        succeed(
            tf().arg("analyze")
                .arg(trace)
                .args(args)
                .args(["--shard", &shard, "--json"])
                .arg(&part),
        );
        parts.push(part);
    }
    let all = dir.join(format!("merged-{n}.json"));
    succeed(tf().arg("merge").args(&parts).arg("--json").arg(&all));
    serde_json::from_slice(&std::fs::read(&all).unwrap()).unwrap()
}

#[test]
fn merging_every_shard_gives_the_unsharded_result() {
    let dir = tempdir();
    let cases = [
        (
            "deep_unlock",
            vec!["8", "5"],
            vec!["--unit", "call:worker", "--warp", "1,2,4"],
        ),
        (
            "memory",
            vec!["64"],
            vec!["--unit", "call:load_stride", "--warp", "4,8"],
        ),
        // spin-wait loops in every unit: each shard warns of its own, the
        // merged report of the whole
        ("spin_wait", vec!["8", "100"], vec!["--warp", "1,2,4"]),
        // ... and left out of the figures, which the shards count apart
        (
            "spin_wait",
            vec!["8", "100"],
            vec!["--warp", "1,2,4", "--spin-wait", "exclude"],
        ),
    ];
    for (k, (name, program_args, args)) in cases.into_iter().enumerate() {
        let t = dir.path().join(format!("{k}-{name}"));
        let pargs: Vec<&str> = program_args.iter().map(|s| &**s).collect();
        trace_ok(&t, &workload(name), &pargs);
        let whole = analyze_json(&t, &args);
        for n in [1, 2, 7] {
            assert_eq!(merged(&t, &args, n), whole, "{name}: {n} shards");
        }
    }
}

#[test]
fn merge_refuses_a_missing_or_doubled_shard() {
    let dir = tempdir();
    let t = dir.path().join("trace");
    trace_ok(&t, &workload("deep_unlock"), &["4", "2"]);
    let part = dir.path().join("p0.json");
    let shard = [
        "--unit",
        "call:worker",
        "--warp",
        "1",
        "--shard",
        "0/2",
        "--json",
    ];
    succeed(tf().arg("analyze").arg(&t).args(shard).arg(&part));
    let out = tf().arg("merge").arg(&part).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shard 1/2 is missing"), "{err}");
    let out = tf().arg("merge").arg(&part).arg(&part).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shard 0/2 is given twice"), "{err}");
    // the other shard, with spin-wait loops left out where the first counts them
    let other = dir.path().join("p1.json");
    let mut args = shard.to_vec();
    args[5] = "1/2";
    succeed(
        tf().arg("analyze")
            .arg(&t)
            .args(&args)
            .arg(&other)
            .args(["--spin-wait", "exclude"]),
    );
    let out = tf().arg("merge").arg(&part).arg(&other).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("options"), "{err}");
    let out = tf()
        .args(["analyze", "x", "--shard", "2/2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2/2: a shard is i/N with 0 <= i < N"), "{err}");
}
