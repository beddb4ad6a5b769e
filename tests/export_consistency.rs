//! Every validation workload (`workloads/expectations.toml`), traced at -O1
//! and exported at W = 32, agrees with `tf analyze` on the same trace: the
//! x86 thread and warp instructions (so the SIMT efficiency), the global
//! requests and their sectors (so the sectors per request), the stack
//! requests; the files hold the lines and active lanes the export counts,
//! and pass the validator.

mod common;

use common::accelsim::{check, export, warps};
use common::*;
use tf_validate::expect::Expectations;
use tf_validate::measure::build_workloads;

#[test]
fn exports_agree_with_tf_analyze_on_every_validation_workload() {
    let workloads = root().join("workloads");
    let e = Expectations::load(&workloads.join("expectations.toml")).unwrap();
    assert!(e.workloads.len() >= 10);
    build_workloads(&workloads, &["O1".to_string()]).unwrap();
    let dir = tempdir();
    for w in &e.workloads {
        let trace = dir.path().join(&w.name);
        let program = workloads.join("build").join("O1").join(&w.program);
        let out = tf()
            .arg("trace")
            .arg("-o")
            .arg(&trace)
            .arg("--")
            .arg(&program)
            .args(&w.args)
            .envs(e.env_of(w))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            w.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let args = ["--unit", w.unit.as_str(), "--warp", "32"];
        let exported = dir.path().join(format!("{}.out", w.name));
        let s = export(&trace, &exported, &args);
        let (ok, said) = check(&exported);
        assert!(
            ok && said.ends_with(": 0 errors, 0 warnings\n"),
            "{}: {said}",
            w.name
        );
        let report = analyze_json(&trace, &args);
        let r = width(&report, 32);
        let t = &s["total"];
        let m = &r["memory"];
        let sum = |key: &str| -> u64 {
            ["heap", "global", "other"]
                .iter()
                .map(|g| m[g][key].as_u64().unwrap())
                .sum()
        };
        let name = &w.name;
        assert_eq!(
            t["x86_thread_instructions"], r["thread_instructions"],
            "{name}"
        );
        assert_eq!(t["x86_warp_instructions"], r["warp_instructions"], "{name}");
        assert_eq!(
            t["global_requests"].as_u64(),
            Some(sum("requests")),
            "{name}"
        );
        assert_eq!(t["global_sectors"].as_u64(), Some(sum("sectors")), "{name}");
        assert_eq!(t["local_requests"], m["stack"]["requests"], "{name}");
        // What the files hold is what the export counted.
        let (mut lines, mut lanes, mut n_warps) = (0u64, 0u64, 0u64);
        for k in s["kernels"].as_array().unwrap() {
            let ws = warps(&exported.join(k["file"].as_str().unwrap()));
            n_warps += ws.len() as u64;
            let (kl, kn): (u64, u64) = ws.iter().flatten().fold((0, 0), |(a, b), l| {
                (a + 1, b + u64::from(l.mask.count_ones()))
            });
            assert_eq!(k["counts"]["lines"].as_u64(), Some(kl), "{name}");
            lines += kl;
            lanes += kn;
        }
        assert_eq!(t["lines"].as_u64(), Some(lines), "{name}");
        assert_eq!(t["lane_instructions"].as_u64(), Some(lanes), "{name}");
        assert!(n_warps >= r["warps"].as_u64().unwrap(), "{name}");
    }
}
