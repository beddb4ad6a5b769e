//! `tf export --accelsim` end to end through the real tracer, on workloads
//! whose lines can be derived by hand; every export passes `tf export --check`.

mod common;

use common::accelsim::{check, export, trace_env, warps, Line};
use common::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The trace of `divergence oddeven 64`, made once for the tests that
/// export it.
fn oddeven_64() -> &'static Path {
    static TRACE: OnceLock<PathBuf> = OnceLock::new();
    TRACE.get_or_init(|| {
        let dir = made_once("export-oddeven-64", |dir| {
            trace_env(
                &dir.join("trace"),
                &workload("divergence"),
                &["oddeven", "64"],
                &[],
            );
        });
        dir.join("trace")
    })
}

/// Memory lines of `lines` (loads, stores, atomics).
fn memory(lines: &[&Line]) -> Vec<Line> {
    lines
        .iter()
        .filter(|l| l.width > 0)
        .map(|l| (*l).clone())
        .collect()
}

#[test]
fn odd_and_even_lanes_run_their_loops_with_their_own_masks() {
    // divergence oddeven 64, one unit per call of worker(i), W = 32: warp w
    // holds items 32w..32w+31 in lane order. Odd lanes call odd_work(i),
    // even lanes even_work(i): each runs `sink[k] += i` (or -=) for k in
    // 0..64 on the global array `long sink[64]`. So in every warp, the lines
    // with mask 0xaaaaaaaa (odd lanes) hold exactly 64 loads and 64 stores
    // of 8 bytes (LDG.E.64 / STG.E.64), alternating, the k-th pair at
    // sink + 8k in every lane; the same for 0x55555555 (even lanes). Both
    // groups meet again for worker's return, and each warp ends with one
    // EXIT of all 32 lanes.
    let (dir, trace) = (tempdir(), oddeven_64());
    let out = dir.path().join("out");
    let args = ["--unit", "call:worker", "--warp", "32"];
    let summary = export(trace, &out, &args);
    assert_eq!(
        check(&out),
        (true, format!("{}: 0 errors, 0 warnings\n", out.display()))
    );
    let ws = warps(&out.join("kernel-1.traceg"));
    assert_eq!(ws.len(), 2);
    let mut sink = None;
    for w in &ws {
        for mask in [0xaaaa_aaaau32, 0x5555_5555] {
            let lines: Vec<&Line> = w.iter().filter(|l| l.mask == mask).collect();
            let mem: Vec<Line> = memory(&lines)
                .into_iter()
                .filter(|l| l.op() == "LDG" || l.op() == "STG")
                .collect();
            assert_eq!(mem.len(), 128, "mask {mask:08x}");
            let base = *sink.get_or_insert(mem[0].addrs[0]);
            for (k, pair) in mem.chunks(2).enumerate() {
                assert_eq!(pair[0].opcode, "LDG.E.64");
                assert_eq!(pair[1].opcode, "STG.E.64");
                for l in pair {
                    assert_eq!(l.addrs, vec![base + 8 * k as u64; 16], "k = {k}");
                }
            }
            // Every iteration issues the same static instructions.
            let first = lines.iter().position(|l| l.pc == mem[0].pc).unwrap();
            let period = lines[first + 1..]
                .iter()
                .position(|l| l.pc == mem[0].pc)
                .unwrap()
                + 1;
            for (i, l) in lines[first..first + 63 * period].iter().enumerate() {
                assert_eq!(l.pc, lines[first + i % period].pc);
            }
        }
        let exits: Vec<&Line> = w.iter().filter(|l| l.opcode == "EXIT").collect();
        assert_eq!(exits.len(), 1);
        assert_eq!(
            (w.last().unwrap().opcode.as_str(), w.last().unwrap().mask),
            ("EXIT", u32::MAX)
        );
    }
    // The x86 counts are tf analyze's.
    let report = analyze_json(trace, &args);
    let r = width(&report, 32);
    let t = &summary["total"];
    assert_eq!(t["x86_thread_instructions"], r["thread_instructions"]);
    assert_eq!(t["x86_warp_instructions"], r["warp_instructions"]);

    // Only the two work functions: 50% SIMT efficiency, as tf analyze says.
    let out2 = dir.path().join("out2");
    let mut args2 = args.to_vec();
    args2.extend(["--functions", "odd_work", "even_work"]);
    let s2 = export(trace, &out2, &args2);
    let (thread, warp) = ["odd_work", "even_work"].iter().fold((0, 0), |(t, w), f| {
        let f = function(r, f);
        (
            t + f["thread_instructions"].as_u64().unwrap(),
            w + f["warp_instructions"].as_u64().unwrap(),
        )
    });
    assert_eq!(s2["total"]["x86_thread_instructions"], thread);
    assert_eq!(s2["total"]["x86_warp_instructions"], warp);
    assert_eq!(thread * 2, warp * 32);
    for w in warps(&out2.join("kernel-1.traceg")) {
        let (last, body) = w.split_last().unwrap();
        assert_eq!(last.opcode, "EXIT");
        assert!(body
            .iter()
            .all(|l| l.mask == 0xaaaa_aaaa || l.mask == 0x5555_5555));
    }
}

#[test]
fn strided_accesses_are_base_plus_stride_twenty() {
    // omp_strided 1024 4, one unit per call of saxpy_strided(i): OpenMP's
    // static schedule gives thread t items 256t..256t+255 in order, so warp
    // w (formation order) holds items 32w..32w+31 in lane order. Item i
    // reads x[5i] and y[5i] and writes y[5i] (4-byte floats): each is one
    // line with all 32 lanes, mode 1 (base + stride) with stride 20, based
    // at x + 640w or y + 640w. A 20-byte stride over 32 lanes from a
    // 128-byte aligned base touches 20 sectors. Everything else global is a
    // scalar the lanes share (the pointers x and y, the constant 3.0):
    // stride 0, one sector. The return reads the lane's own stack: LDL.64
    // at the same local offset in every lane, which the simulator's
    // interleaved local memory lays out as 2 rows of 32 words: 8 sectors,
    // tf analyze's interleaved stack figure.
    let dir = tempdir();
    let trace = dir.path().join("trace");
    trace_env(
        &trace,
        &workload("omp_strided"),
        &["1024", "4"],
        &[("OMP_WAIT_POLICY", "passive")],
    );
    let out = dir.path().join("out");
    let args = [
        "--unit",
        "call:saxpy_strided",
        "--warp",
        "32",
        "--block-size",
        "256",
    ];
    let summary = export(&trace, &out, &args);
    assert!(check(&out).0);
    let k = &summary["kernels"][0];
    assert_eq!(
        (
            k["grid"][0].as_u64(),
            k["block"][0].as_u64(),
            k["warps"].as_u64()
        ),
        (Some(4), Some(256), Some(32))
    );
    let ws = warps(&out.join("kernel-1.traceg"));
    assert_eq!(ws.len(), 32);
    let (mut x0, mut y0) = (0, 0);
    for (w, lines) in ws.iter().enumerate() {
        assert!(lines.iter().all(|l| l.mask == u32::MAX));
        let strided: Vec<&Line> = lines
            .iter()
            .filter(|l| l.width > 0 && l.addrs[1].wrapping_sub(l.addrs[0]) == 20)
            .collect();
        assert_eq!(strided.len(), 3, "warp {w}");
        let store = strided.iter().find(|l| l.op() == "STG").unwrap();
        let loads: Vec<&&Line> = strided.iter().filter(|l| l.op() == "LDG").collect();
        assert_eq!(loads.len(), 2);
        let y = store.addrs[0];
        let x = loads.iter().map(|l| l.addrs[0]).find(|&a| a != y).unwrap();
        if w == 0 {
            (x0, y0) = (x, y);
        }
        assert_eq!((x, y), (x0 + 640 * w as u64, y0 + 640 * w as u64));
        for l in &strided {
            assert_eq!(l.opcode, if l.op() == "STG" { "STG.E" } else { "LDG.E" });
            assert_eq!(
                l.addrs,
                (0..32).map(|i| l.addrs[0] + 20 * i).collect::<Vec<_>>()
            );
            assert_eq!(l.sectors(), 20);
        }
        for l in lines
            .iter()
            .filter(|l| l.op() == "LDG" && !strided.contains(l))
        {
            assert!(l.addrs.iter().all(|&a| a == l.addrs[0]));
            assert_eq!(l.sectors(), 1);
        }
        let local: Vec<&Line> = lines
            .iter()
            .filter(|l| l.op() == "LDL" || l.op() == "STL")
            .collect();
        assert_eq!(local.len(), 1);
        assert_eq!(local[0].opcode, "LDL.64");
        assert!(local[0]
            .addrs
            .iter()
            .all(|&a| a == local[0].addrs[0] && a % 4 == 0));
        // GPGPU-Sim's local memory: word d of thread t at 4·(d·N + t).
        let word = local[0].addrs[0] / 4;
        let mut s: Vec<u64> = (0..32u64)
            .flat_map(|t| (0..2).map(move |j| (word + j) * 4 * 32 + 4 * t))
            .map(|a| a / 32)
            .collect();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 8);
    }
    let report = analyze_json(&trace, &args[..4]);
    let r = width(&report, 32);
    assert_eq!(r["memory"]["stack_interleaved"]["sectors_per_request"], 8.0);
    let m = &r["memory"];
    let req: u64 = ["heap", "global", "other"]
        .iter()
        .map(|s| m[s]["requests"].as_u64().unwrap())
        .sum();
    let sec: u64 = ["heap", "global", "other"]
        .iter()
        .map(|s| m[s]["sectors"].as_u64().unwrap())
        .sum();
    // From the files: one line per request here (no operand wider than 16 bytes).
    let lines: Vec<Line> = ws
        .concat()
        .into_iter()
        .filter(|l| l.op() == "LDG" || l.op() == "STG")
        .collect();
    assert_eq!(lines.len() as u64, req);
    assert_eq!(lines.iter().map(Line::sectors).sum::<u64>(), sec);
    assert_eq!(
        (
            summary["total"]["global_requests"].as_u64(),
            summary["total"]["global_sectors"].as_u64()
        ),
        (Some(req), Some(sec))
    );
}

#[test]
fn bad_requests_are_one_line_errors() {
    let dir = tempdir();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("x"), "").unwrap();
    let o = tf()
        .args(["export", "--accelsim", "nowhere", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not empty"));
    let o = tf()
        .args([
            "export",
            "--accelsim",
            "nowhere",
            "-o",
            "/tmp/x",
            "--warp",
            "64",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("--warp"));
    let o = tf()
        .args(["export", "--check"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no kernelslist.g"));
}

#[test]
fn timings_name_the_replay_the_writing_and_the_check() {
    let dir = tempdir();
    let out = dir.path().join("out");
    let o = tf()
        .args(["export", "--timings", "--unit", "call:worker", "--accelsim"])
        .arg(oddeven_64())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let stages: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("tf: "))
        .filter_map(|l| l.split(": ").next())
        .collect();
    for stage in [
        "replaying warps of 32",
        "writing kernels",
        "checking the export",
    ] {
        assert!(stages.contains(&stage), "{stage}: {stderr}");
    }
    // The export is checked once it is written.
    assert_eq!(stages.last(), Some(&"checking the export"), "{stderr}");
    let o = tf()
        .args(["export", "--timings", "--check"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.starts_with("tf: checking the export: "), "{stderr}");
}
