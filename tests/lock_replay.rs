//! Lock replay on real programs: every lane finishes, and lanes reconverge
//! after a contended lock (workloads/deep_unlock.c's header derives the figures).

mod common;

use common::*;

#[test]
fn a_lock_released_two_calls_down_replays_every_instruction_and_reconverges() {
    let dir = tempdir();
    let t = dir.path().join("trace");
    let iters = 20u64;
    trace_ok(&t, &workload("deep_unlock"), &["4", &iters.to_string()]);
    let args = ["--unit", "call:worker", "--warp", "4"];
    let on = analyze_json(&t, &args);
    let off = analyze_json(&t, &[&args[..], &["--locks", "off"]].concat());
    let (w_on, w_off) = (width(&on, 4), width(&off, 4));
    // Every recorded instruction is replayed, with locks on as off.
    assert_eq!(on["incomplete"].as_array().unwrap().len(), 0);
    assert_eq!(w_on["unfinished_units"], 0);
    assert_eq!(
        w_on["thread_instructions"],
        w_on["recorded_thread_instructions"]
    );
    assert_eq!(w_on["thread_instructions"], w_off["thread_instructions"]);
    // crit: one lane at a time, 3 waiting lanes per round.
    let crit = function(w_on, "crit");
    assert_eq!(crit["simt_efficiency"], 0.25);
    let lock = &w_on["locks"][0];
    assert_eq!(lock["serialized_lanes"], 3 * iters);
    assert_eq!(lock["acquisitions"], 4 * iters);
    // After the release the lanes rejoin: work runs all lanes together.
    assert_eq!(function(w_on, "work")["simt_efficiency"], 1.0);
    assert_eq!(function(w_off, "work")["simt_efficiency"], 1.0);
}
