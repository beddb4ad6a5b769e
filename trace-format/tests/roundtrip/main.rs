//! Rust writer → Rust reader round trips: block executions and their
//! prediction here; events, chunks and tables in `streams`, ways of reading
//! in `reading`.

#[path = "../common/mod.rs"]
mod common;

use common::{finish_with, payloads, read_all, read_ok, read_via, x, Op, Rec, Rng, TempDir};
use tf_trace::{
    BlockDef, ChunkDecoder, EndKind, TableParams, Trace, TraceWriter, Via, WriterOptions,
};

use Via::{Candidate0 as C0, Candidate1 as C1, Explicit as E, Run};

mod reading;
mod streams;

fn no_ops_block(w: &mut TraceWriter, addr: u64, len: u8, end: EndKind) -> u32 {
    w.block(&BlockDef::new(addr).insn(len).end(end)).unwrap()
}

/// How each block execution of thread `tid` was read, in order.
fn vias(trace: &Trace, tid: u64) -> Vec<Via> {
    read_via(trace, tid).into_iter().map(|(_, v)| v).collect()
}

#[test]
fn canonical_bytes_of_a_self_loop() {
    let d = TempDir::new("selfloop");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = no_ops_block(&mut w, 0x1000, 2, EndKind::Jump);
    w.thread(1).unwrap().seq(&[b, b, b, b]).unwrap();
    w.finish().unwrap();
    // explicit 0 (h = 2 << 5), explicit 0 again (no successor learned yet),
    // then a run of 2 (h = (2 - 1) << 1 | 1).
    assert_eq!(payloads(&d.join("thread-1.tfc")), vec![vec![64, 64, 3]]);
    let t = Trace::open(d.path()).unwrap();
    assert_eq!(read_via(&t, 1), vec![(b, E), (b, E), (b, Run), (b, Run)]);
}

/// A run of at most 3 executions is the prefix of the block record after
/// it (FORMAT.md §6.1, bits 3-4 of the header); a longer one, or one before
/// a partial execution, is a record of its own.
#[test]
fn short_runs_are_prefixes_of_the_next_block_record() {
    let d = TempDir::new("prefix");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = no_ops_block(&mut w, 0x1000, 2, EndKind::Jump);
    let c = no_ops_block(&mut w, 0x2000, 2, EndKind::Jump);
    w.thread(1)
        .unwrap()
        .seq(&[b, b, b, b, c, b, b, b, b, b, b, c])
        .unwrap();
    w.thread(1).unwrap().exec_partial(b, 1, &[]).unwrap();
    w.finish().unwrap();
    // b, b explicit (64); a run of 2 as the prefix of c, explicit:
    // (1 + 2) << 5 | 2 << 3 = 112; c -> b learnt nothing yet: b explicit (64);
    // b explicit again (the table holds b -> c, so b is candidate 1: 1 << 5);
    // then a run of 4 (7) before c, candidate 1 of b (32); b, after c, is
    // candidate 0 of c but partial: the partial event (2, 2, 1, 0) and b (0).
    assert_eq!(
        payloads(&d.join("thread-1.tfc")),
        vec![vec![64, 64, 112, 64, 32, 7, 32, 2, 2, 1, 0, 0]]
    );
    let t = Trace::open(d.path()).unwrap();
    let via = vias(&t, 1);
    assert_eq!(
        via,
        vec![E, E, Run, Run, E, E, C1, Run, Run, Run, Run, C1, C0]
    );
}

#[test]
fn both_successor_candidates() {
    let d = TempDir::new("cands");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let a = no_ops_block(&mut w, 0x1000, 2, EndKind::Branch);
    let b = no_ops_block(&mut w, 0x1002, 2, EndKind::Jump);
    let c = no_ops_block(&mut w, 0x2000, 2, EndKind::Jump);
    w.thread(1)
        .unwrap()
        .seq(&[a, b, a, c, a, b, a, c, a, b])
        .unwrap();
    w.finish().unwrap();
    let t = Trace::open(d.path()).unwrap();
    let via = vias(&t, 1);
    assert_eq!(via, [E, E, E, E, E, C1, Run, C1, Run, C1]);
}

#[test]
fn return_stack_predicts_returns() {
    let d = TempDir::new("ret");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let s1 = no_ops_block(&mut w, 0x100, 5, EndKind::Call); // returns to 0x105
    let f = no_ops_block(&mut w, 0x900, 1, EndKind::Return);
    let r1 = no_ops_block(&mut w, 0x105, 2, EndKind::Jump);
    let s2 = no_ops_block(&mut w, 0x200, 5, EndKind::Call); // returns to 0x205
    let r2 = no_ops_block(&mut w, 0x205, 2, EndKind::Jump);
    let round = [s1, f, r1, s2, f, r2];
    let mut t = w.thread(1).unwrap();
    for _ in 0..5 {
        t.seq(&round).unwrap();
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let via = vias(&trace, 1);
    // The first round (and the jump back to its start) learns everything;
    // then f's successor alternates between r1 and r2 but the return stack
    // predicts it: one long run.
    let mut expect = vec![E; 7];
    expect.extend([Run; 23]);
    assert_eq!(via, expect);
    let (stats, damage) = trace.thread_stats(1).unwrap();
    assert!(damage.is_none());
    assert_eq!(
        (stats[0].run_records, stats[0].run_blocks, stats[0].explicit),
        (1, 23, 7)
    );
}

#[test]
fn skipped_call_pops_on_arrival() {
    let d = TempDir::new("skipcall");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let s = no_ops_block(&mut w, 0x100, 5, EndKind::Call);
    let r = no_ops_block(&mut w, 0x105, 2, EndKind::Jump);
    let f = no_ops_block(&mut w, 0x900, 1, EndKind::Return);
    let z = no_ops_block(&mut w, 0x500, 2, EndKind::Jump);
    let mut t = w.thread(1).unwrap();
    for _ in 0..2 {
        t.exec(s, &[]).unwrap();
        t.skip(tf_trace::SkipReason::Excluded, 40).unwrap();
        t.seq(&[r, f, z]).unwrap();
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let via = vias(&trace, 1);
    // Arriving at r (the return site) pops 0x105, so f's return is not
    // predicted to go to r (which would make z candidate 1): in round 2, z
    // is f's learned successor 0.
    assert_eq!(via, [E, E, E, E, E, Run, Run, Run]);
}

#[test]
fn block_at_is_bounded_by_max_exec() {
    // A return that does not go to the top of the return stack (as after a
    // C++ throw), and a block at that return address defined only later.
    let d = TempDir::new("maxexec");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let s = no_ops_block(&mut w, 0x100, 5, EndKind::Call);
    let f = no_ops_block(&mut w, 0x300, 1, EndKind::Return);
    let y = no_ops_block(&mut w, 0x400, 2, EndKind::Jump);
    let mut t = w.thread(1).unwrap();
    for _ in 0..3 {
        t.seq(&[s, f, y]).unwrap();
    }
    let x = no_ops_block(&mut w, 0x105, 1, EndKind::Return);
    w.thread(1).unwrap().seq(&[x]).unwrap();
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    assert_eq!(trace.blocks().block_at(0x105), Some(x));
    let got: Vec<u32> = read_via(&trace, 1).into_iter().map(|(b, _)| b).collect();
    assert_eq!(got, [s, f, y, s, f, y, s, f, y, x]);
}

#[test]
fn address_stride_and_offset_modes() {
    let d = TempDir::new("addr");
    let mut w = TraceWriter::create(d.path()).unwrap();
    // Loop body: a load at a stride, a store at a fixed offset from it.
    let l = w.block_spec(0x1000, "4r8 4w8 branch").unwrap();
    let mut t = w.thread(1).unwrap();
    let mut expect = Vec::new();
    for i in 0..50u64 {
        let a = [0x10_0000 + 8 * i, 0x10_0000 + 8 * i + 0x40];
        t.exec(l, &a).unwrap();
        expect.push(Rec::Exec {
            block: l,
            insns: 2,
            complete: true,
            operands: 2,
            accesses: vec![(0, a[0]), (1, a[1])],
        });
    }
    // Now the base jumps around but the offset holds: operand 1 is in
    // offset mode after one miss, so only operand 0 is a surprise.
    let mut rng = Rng(7);
    for _ in 0..50 {
        let base = rng.below(1 << 40) & !7;
        let a = [base, base + 0x40];
        t.exec(l, &a).unwrap();
        expect.push(Rec::Exec {
            block: l,
            insns: 2,
            complete: true,
            operands: 2,
            accesses: vec![(0, a[0]), (1, a[1])],
        });
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    assert_eq!(read_ok(&trace, 1), expect);
    let via = vias(&trace, 1);
    // The second execution is the first to know its successor, but its
    // load is a surprise (stride 0 predicted); then stride 8 holds.
    assert_eq!(via[..4], [E, E, Run, Run]);
    assert!(via[2..50].iter().all(|&v| v == Run));
    assert!(via[50..].iter().all(|&v| v == C0));
    let (stats, _) = trace.thread_stats(1).unwrap();
    assert_eq!(stats[0].run_records, 1);
    assert_eq!(stats[0].run_blocks, 48);
    // Operand 1's value is zigzag(0) = one byte once it is in offset mode:
    // each random record is header + operand 0 (6 bytes for 40-bit deltas
    // at most) + 1 byte.
    assert!(
        stats[0].payload_bytes < 50 * 8 + 40,
        "{}",
        stats[0].payload_bytes
    );
}

#[test]
fn conditional_operands_absent_and_present() {
    let d = TempDir::new("cond");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x1000, "2r8?w8? 3r4 branch").unwrap();
    let mut ops = Vec::new();
    for i in 0..40u64 {
        let src = (i % 4 != 0).then_some(0x5000 + 8 * i);
        let dst = (i % 3 != 0).then_some(0x9000 + 8 * i);
        ops.push(x(b, None, vec![src, dst, Some(0x7ff0_0000)]));
    }
    // All present and predicted: conditional operands may be in runs.
    for i in 40..45u64 {
        ops.push(x(
            b,
            None,
            vec![
                Some(0x5000 + 8 * i),
                Some(0x9000 + 8 * i),
                Some(0x7ff0_0000),
            ],
        ));
    }
    let (trace, expect) = finish_with(w, 1, &ops);
    assert_eq!(read_ok(&trace, 1), expect);
    let via = vias(&trace, 1);
    // Operand 0 keeps its stride across absences, operand 1 its offset from
    // operand 0 (offset mode), operand 2 is constant: all predicted.
    assert_eq!(via[40..], [Run; 5], "{via:?}");
}

#[test]
fn partial_executions() {
    let d = TempDir::new("partial");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let call = w.block_spec(0x100, "3r8 5 call").unwrap();
    let f = no_ops_block(&mut w, 0x900, 1, EndKind::Return);
    let after = no_ops_block(&mut w, 0x108, 1, EndKind::Jump);
    let ops = vec![
        x(call, None, vec![Some(0x7000)]),
        x(f, None, vec![]),
        x(after, None, vec![]),
        // Faults in the load: one instruction, no operand; no call, so no push.
        x(call, Some(1), vec![]),
        x(call, Some(1), vec![Some(0x7008)]),
        // A partial execution that names every instruction and operand is
        // still partial.
        x(call, Some(2), vec![Some(0x7010)]),
        x(f, None, vec![]),
        x(after, None, vec![]),
        x(call, None, vec![Some(0x7018)]),
        x(f, None, vec![]),
        x(after, None, vec![]),
        x(f, Some(1), vec![]),
        x(after, None, vec![]),
    ];
    let (trace, expect) = finish_with(w, 1, &ops);
    assert_eq!(read_ok(&trace, 1), expect);
    let (stats, _) = trace.thread_stats(1).unwrap();
    assert_eq!(stats[0].partial, 4);
    assert_eq!(stats[0].insns, 8 + 1 + 1 + 1 + 1 + 2 + 1 + 1);
}
