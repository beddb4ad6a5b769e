//! Valgrind client requests (`RUNNING_ON_VALGRIND`, which glib makes) through
//! the real tracer: Valgrind decodes the sequence as one 19-byte instruction,
//! the trace records the five x86 instructions it is (FORMAT.md, section 5).

mod common;

use common::*;
use std::collections::HashMap;
use tf_analyzer::blocks::{steps, CanonicalBlocks};
use tf_analyzer::symbols::Symbols;
use tf_trace::{Event, Trace};

/// valgrind.h's preamble: `rol $3, $13, $61, $51, %rdi`, 4 bytes each.
const PREAMBLE: [u8; 16] = [
    0x48, 0xC1, 0xC7, 0x03, 0x48, 0xC1, 0xC7, 0x0D, 0x48, 0xC1, 0xC7, 0x3D, 0x48, 0xC1, 0xC7, 0x33,
];

#[test]
fn a_program_making_client_requests_traces_completely() {
    let (threads, n) = (4u64, 1000u64);
    let dir = tempdir();
    let t = dir.path().join("trace");
    let out = trace_ok(
        &t,
        &workload("client_request"),
        &[&threads.to_string(), &n.to_string()],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("running_on_valgrind=1 sum={}", threads * n * (n - 1) / 2)
    );

    // `tf info` reads every chunk of the block table and of every thread.
    let info = tf().arg("info").arg(&t).output().unwrap();
    assert!(
        info.status.success(),
        "tf info: {}",
        String::from_utf8_lossy(&info.stderr)
    );
    let trace = Trace::open(&t).unwrap();
    assert!(trace.problems().is_empty(), "{:?}", trace.problems());

    // Each request is five instructions: the four rotations and the xchg
    // (48 87 /r), main's and the workers' (one site at least).
    let requests: Vec<_> = trace
        .blocks()
        .iter()
        .filter_map(|b| {
            let at = b.code().windows(19).position(|w| w[..16] == PREAMBLE)?;
            Some((b, b.insn_index_at(b.address() + at as u64)?))
        })
        .collect();
    assert!(!requests.is_empty(), "no block holds a client request");
    for (b, i) in &requests {
        assert_eq!(b.insn_lengths()[*i..*i + 5], [4, 4, 4, 4, 3]);
        let xchg = b.insn_address(*i + 4) - b.address();
        assert_eq!(b.code()[xchg as usize..xchg as usize + 2], [0x48, 0x87]);
    }

    // Every thread's stream decodes to its exit, and each worker runs
    // work()'s loop after its request: a canonical block of work() runs n
    // times, none more.
    let symbols = Symbols::new(trace.blocks());
    let canon = CanonicalBlocks::build(trace.blocks());
    for tf in trace.threads() {
        let mut r = trace.read_thread(tf.tid).unwrap();
        let mut exited = false;
        let mut counts: HashMap<u32, u64> = HashMap::new();
        while let Some(ev) = r.next_event() {
            match ev.unwrap_or_else(|e| panic!("thread {}: {e}", tf.tid)) {
                Event::ThreadExit { .. } => exited = true,
                Event::Block(x) => {
                    for s in steps(&canon, x.block, x.insns, x.complete, x.accesses()) {
                        if symbols.name(canon.block(s.cblock).function) == "work" {
                            *counts.entry(s.cblock).or_default() += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        assert!(exited, "thread {} has no exit event", tf.tid);
        if tf.tid > 1 {
            assert!(
                counts.values().any(|&c| c == n),
                "thread {}: {counts:?}",
                tf.tid
            );
            assert!(
                counts.values().all(|&c| c <= n),
                "thread {}: {counts:?}",
                tf.tid
            );
        }
    }
}
