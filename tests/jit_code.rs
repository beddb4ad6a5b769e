//! Code written at run time, as a JIT compiler writes it: in anonymous
//! memory, without a module or a symbol, and rewritten with other
//! instructions at the same address. workloads/jit.c runs two versions of a
//! function at one address on four threads each; the figures are the ones
//! its header derives. Lanes that run the second version never issue with
//! lanes that ran the first: the two share an address range where their
//! first blocks start, not their instructions.

mod common;

use common::*;

#[test]
fn rewritten_code_is_traced_and_replayed_as_other_code() {
    let dir = tempdir();
    let t = dir.path().join("jit");
    let out = trace_ok(&t, &workload("jit"), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    // The program's own results under the tracer: A(n) = n(n-1)/2, B(n) = 3n.
    let code = lines.next().and_then(|l| l.strip_prefix("code=")).unwrap();
    assert_eq!(lines.next(), Some("0 1 3 6 3 6 9 12"), "{stdout}");
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
