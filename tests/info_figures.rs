//! `tf info`'s per-thread figures on a trace written by hand, whose counts
//! are known: traced and skipped instructions, block executions, memory
//! accesses (absent conditional operands left out, predicted runs
//! included) and lock acquisitions, per thread and in all, and the skipped
//! ones by reason.

mod common;

use common::{tempdir, tf};
use std::path::Path;
use tf_trace::{LockKind, SkipReason, TraceWriter, WriterOptions};

/// The fields of `tf info`'s row whose first field is `first`.
fn row(stdout: &str, first: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .find(|f| f.first().map(String::as_str) == Some(first))
        .unwrap_or_else(|| panic!("no row {first}:\n{stdout}"))
}

/// Thread 1 runs block A (a load, and a store that may not happen) 13 times,
/// the store absent the last 3, then takes and releases a lock, skips 500
/// instructions and runs block B (no operands) 5 times. Thread 2 runs A
/// twice, then its first instruction alone (a partial execution with one
/// operand), then block C (one load, none conditional) 3 times at addresses
/// no stride predicts, then skips 40 instructions of lazy binding (other). Small chunks, so that the counts span many.
fn write(dir: &Path) {
    let opts = WriterOptions {
        chunk_target: 24,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(dir, opts).unwrap();
    let a = w.block_spec(0x1000, "2r8 3w8? jump").unwrap();
    let b = w.block_spec(0x2000, "4 1").unwrap();
    let c = w.block_spec(0x3000, "3r4").unwrap();
    let mut t = w.thread(1).unwrap();
    // Constant strides: after the first executions, records are predicted
    // (runs, without addresses).
    for i in 0..10 {
        t.exec_opt(a, &[Some(0x8000 + 8 * i), Some(0x9000 + 8 * i)])
            .unwrap();
    }
    for i in 0..3 {
        t.exec_opt(a, &[Some(0x8100 + 8 * i), None]).unwrap();
    }
    t.lock_acquire(LockKind::Mutex, 0x60_1040).unwrap();
    t.lock_release(LockKind::Mutex, 0x60_1040).unwrap();
    t.skip(SkipReason::LockRuntime, 500).unwrap();
    t.syscall(1, 0).unwrap();
    for _ in 0..5 {
        t.exec(b, &[]).unwrap();
    }
    let mut t = w.thread(2).unwrap();
    t.exec(a, &[0x7000, 0x7100]).unwrap();
    t.exec(a, &[0x7008, 0x7108]).unwrap();
    t.exec_partial(a, 1, &[Some(0x7010)]).unwrap();
    for addr in [0x100, 0x5000, 0x30] {
        t.exec(c, &[addr]).unwrap();
    }
    t.skip(SkipReason::Other, 40).unwrap();
    w.finish().unwrap();
}

#[test]
fn info_counts_what_each_thread_recorded() {
    let d = tempdir();
    write(d.path());
    let out = tf().arg("info").arg(d.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // tid, parent, start routine, then: traced, skipped, blocks, accesses, locks
    let figures = |first: &str| -> Vec<String> { row(&stdout, first)[3..8].to_vec() };
    // 13 × 2 + 5 × 2 instructions; 13 + 5 blocks; 10 × 2 + 3 × 1 accesses
    assert_eq!(figures("1"), ["36", "500", "18", "23", "1"], "{stdout}");
    // 2 × 2 + 1 + 3 instructions; 6 blocks; 2 × 2 + 1 + 3 accesses
    assert_eq!(figures("2"), ["8", "40", "6", "8", "0"], "{stdout}");
    // "all", "", "2 threads": the figures start a field later
    let all = row(&stdout, "all");
    assert_eq!(all[3..8], ["44", "540", "24", "31", "1"], "{stdout}");
    assert!(
        stdout.contains(
            "\nskipped by reason: lock runtime 500, waits 0, loop scheduling 0, excluded 0, \
             outside --only 0, other 40\n"
        ),
        "{stdout}"
    );
}
