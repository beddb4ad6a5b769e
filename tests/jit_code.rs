//! Code written at run time, as a JIT compiler writes it: in anonymous
//! memory, without a module or a symbol, and rewritten with other
//! instructions at the same address. workloads/jit.c runs two versions of a
//! function at one address on four threads each; the figures are the ones
//! its header derives. Lanes that run the second version never issue with
//! lanes that ran the first: the two share an address range where their
//! first blocks start, not their instructions.

mod common;

use common::*;

/// workloads/jit.c traced: the trace (in the directory returned), and the
/// address of the code, as tf names it.
fn traced_jit() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempdir();
    let t = dir.path().join("jit");
    let out = trace_ok(&t, &workload("jit"), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let code = lines.next().and_then(|l| l.strip_prefix("code=")).unwrap();
    // The program's own results under the tracer: A(n) = n(n-1)/2, B(n) = 3n.
    assert_eq!(lines.next(), Some("0 1 3 6 3 6 9 12"), "{stdout}");
    let code = code.to_string();
    (dir, t, code)
}

#[test]
fn rewritten_code_is_traced_and_replayed_as_other_code() {
    let (_dir, t, code) = traced_jit();
    let code = code.as_str();
    let r = analyze_json(&t, &["--warp", "4,8", "--unit", "call:worker"]);
    assert!(r["warnings"].as_array().unwrap().is_empty(), "{r}");
    // W = 4: each version's four calls in a warp of their own; W = 8: one
    // warp, whose lanes split at the call, by the version they run.
    for (w, warps) in [(4u64, 2u64), (8, 1)] {
        let res = width(&r, w);
        assert_eq!(
            (res["units"].as_u64(), res["warps"].as_u64()),
            (Some(8), Some(warps))
        );
        let jit = function(res, code);
        assert_eq!(jit["module"], "", "W={w}: code in no module");
        assert_eq!(jit["thread_instructions"], 86, "W={w}");
        assert_eq!(jit["warp_instructions"], 29, "W={w}");
        assert_eq!(jit["simt_efficiency"], 86.0 / (29.0 * w as f64), "W={w}");
    }
}

/// `--unit call:0xADDRESS` takes the name tf prints for code outside every
/// module: the eight calls of the code at that address are the units, with
/// the same 86 thread and 29 warp instructions as when the workers around
/// them are.
#[test]
fn code_outside_every_module_is_cut_by_its_address() {
    let (_dir, t, code) = traced_jit();
    let r = analyze_json(&t, &["--warp", "8", "--unit", &format!("call:{code}")]);
    let res = width(&r, 8);
    let n = |k: &str| res[k].as_u64().unwrap();
    assert_eq!(
        (n("units"), n("thread_instructions"), n("warp_instructions")),
        (8, 86, 29)
    );
}
