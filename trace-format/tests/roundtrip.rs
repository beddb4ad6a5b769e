//! Rust writer → Rust reader round trips.

mod common;

use common::{finish_with, payloads, read_all, read_ok, read_via, x, Op, Rec, Rng, TempDir};
use tf_trace::{
    BlockDef, ChunkDecoder, EndKind, TableParams, Trace, TraceWriter, Via, WriterOptions,
};

use Via::{Candidate0 as C0, Candidate1 as C1, Explicit as E, Run};

fn no_ops_block(w: &mut TraceWriter, addr: u64, len: u8, end: EndKind) -> u32 {
    w.block(&BlockDef::new(addr).insn(len).end(end)).unwrap()
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
    let via: Vec<Via> = read_via(&t, 1).into_iter().map(|(_, v)| v).collect();
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
    let via: Vec<Via> = read_via(&t, 1).into_iter().map(|(_, v)| v).collect();
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
    let via: Vec<Via> = read_via(&trace, 1).into_iter().map(|(_, v)| v).collect();
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
    let via: Vec<Via> = read_via(&trace, 1).into_iter().map(|(_, v)| v).collect();
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
    let via: Vec<Via> = read_via(&trace, 1).into_iter().map(|(_, v)| v).collect();
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
    let via: Vec<Via> = read_via(&trace, 1).into_iter().map(|(_, v)| v).collect();
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

#[test]
fn every_event_type_and_unknown_types() {
    let d = TempDir::new("events");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x40, "1r4").unwrap();
    let ops = vec![
        Op::Start(3, 0x7ff0_0000, 0x7ff8_0000, 0x40_1234),
        x(b, None, vec![Some(0x10)]),
        Op::Acquire(0, 0x60_1040),
        x(b, None, vec![Some(0x10)]),
        Op::Release(0, 0x60_1040),
        Op::Skip(0, 140),
        Op::Acquire(7, u64::MAX),
        Op::Release(99, 1),
        Op::Skip(4, 0),
        Op::Skip(17, u64::MAX),
        Op::Syscall(231, 12_345_678),
        Op::Signal(11),
        x(b, None, vec![Some(0x10)]),
        Op::SignalReturn(11),
        Op::Marker(1, 42),
        Op::Raw(13, vec![1, 2, 3]),
        Op::RegionEntry(0x7ffd_1234_5678),
        Op::Raw(1 << 40, vec![]),
        x(b, None, vec![Some(0x10)]),
        Op::Exit(1),
        Op::Exit(5),
    ];
    let (trace, expect) = finish_with(w, 7, &ops);
    assert_eq!(read_ok(&trace, 7), expect);
    let m = trace.manifest().unwrap();
    assert_eq!(m.threads[0].tid, 7);
    assert_eq!(m.threads[0].parent, 3);
    assert_eq!(m.threads[0].start_routine, 0x40_1234);
    assert_eq!(m.skipped_instructions, u64::MAX, "saturated");
    assert_eq!(m.traced_instructions, 4);
    let (stats, _) = trace.thread_stats(7).unwrap();
    assert_eq!((stats[0].events, stats[0].unknown_events), (17, 2));
}

#[test]
fn small_chunks_and_flushes() {
    for target in [1usize, 5, 40] {
        let d = TempDir::new("chunks");
        let opts = WriterOptions {
            chunk_target: target,
            ..Default::default()
        };
        let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
        let a = w.block_spec(0x1000, "4r8 branch").unwrap();
        let b = no_ops_block(&mut w, 0x1004, 2, EndKind::Jump);
        let mut ops = Vec::new();
        for i in 0..200u64 {
            ops.push(x(a, None, vec![Some(0x8000 + 8 * (i % 17))]));
            ops.push(x(b, None, vec![]));
            if i % 50 == 0 {
                ops.push(Op::Flush);
                ops.push(Op::Marker(0, i));
            }
        }
        let (trace, expect) = finish_with(w, 1, &ops);
        assert_eq!(read_ok(&trace, 1), expect, "target {target}");
        let p = payloads(&d.join("thread-1.tfc"));
        assert!(p.len() > 4, "target {target}: {} chunks", p.len());
        // Canonical: a chunk ends as soon as it reaches the target, or at a flush.
        let full = p[..p.len() - 1]
            .iter()
            .filter(|c| c.len() >= target)
            .count();
        assert!(full + 4 >= p.len() - 1, "target {target}");
        // Every chunk decodes on its own.
        let mut dec = ChunkDecoder::new(trace.blocks(), TableParams::default());
        let mut n = 0;
        for c in &p {
            let mut ev = dec.decode(c).unwrap();
            while let Some(e) = ev.next_event() {
                e.unwrap();
                n += 1;
            }
        }
        assert_eq!(n, ops.iter().filter(|o| !matches!(o, Op::Flush)).count());
    }
}

#[test]
fn one_record_per_chunk_starts_every_chunk_fresh() {
    let d = TempDir::new("tiny");
    let opts = WriterOptions {
        chunk_target: 1,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    let a = no_ops_block(&mut w, 0x1000, 2, EndKind::Jump);
    w.thread(1).unwrap().seq(&[a, a, a]).unwrap();
    w.finish().unwrap();
    assert_eq!(
        payloads(&d.join("thread-1.tfc")),
        vec![vec![64], vec![64], vec![64]]
    );
}

#[test]
fn table_collisions_with_small_tables() {
    let d = TempDir::new("collide");
    let opts = WriterOptions {
        chunk_target: 1 << 20,
        params: TableParams {
            addr_table_bits: 8,
            succ_table_bits: 8,
            ret_stack_depth: 2,
            run_prefix: true,
        },
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    // 600 blocks with 3 operands each: far more keys than 256 slots.
    let blocks: Vec<u32> = (0..600u64)
        .map(|i| {
            w.block_spec(0x10_0000 + 16 * i, "3r8 3w4r4 branch")
                .unwrap()
        })
        .collect();
    let mut rng = Rng(99);
    let mut ops = Vec::new();
    let mut cur = 0usize;
    for i in 0..20_000u64 {
        let b = blocks[cur];
        let base = 0x7000_0000 + 64 * (b as u64);
        ops.push(x(
            b,
            None,
            vec![
                Some(base + 8 * (i % 5)),
                Some(base + 0x100),
                Some(base + 0x100),
            ],
        ));
        cur = if rng.chance(70) {
            (cur + 1) % blocks.len()
        } else {
            rng.below(blocks.len() as u64) as usize
        };
    }
    let (trace, expect) = finish_with(w, 1, &ops);
    let (got, err) = read_all(&trace, 1);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), expect.len());
    assert_eq!(got, expect);
}

#[test]
fn threads_interleaved_with_definitions() {
    let d = TempDir::new("interleave");
    let opts = WriterOptions {
        chunk_target: 64,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    let mut expect: Vec<Vec<Op>> = vec![Vec::new(); 3];
    let mut blocks = Vec::new();
    for i in 0..300u64 {
        if i % 7 == 0 {
            blocks.push(w.block_spec(0x1000 + i, "1r4 jump").unwrap());
        }
        let tid = i % 3;
        let b = blocks[(i as usize * 13) % blocks.len()];
        let op = x(b, None, vec![Some(0x100 * tid + i)]);
        op.apply(&mut w.thread(tid + 1).unwrap()).unwrap();
        expect[tid as usize].push(op);
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    assert_eq!(trace.threads().len(), 3);
    for (tid, ops) in (1..).zip(&expect) {
        let e: Vec<Rec> = ops
            .iter()
            .filter_map(|o| o.expected(trace.blocks()))
            .collect();
        assert_eq!(read_ok(&trace, tid), e);
    }
}

#[test]
fn writer_rejects_what_the_format_cannot_say() {
    let d = TempDir::new("reject");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x40, "3r8r8?").unwrap();
    assert!(w.thread(0).is_err());
    let mut t = w.thread(1).unwrap();
    let msg = |r: tf_trace::Result<()>| r.unwrap_err().to_string();
    assert_eq!(
        msg(t.exec(b, &[1])),
        "block 0 has 2 operands, 1 addresses given"
    );
    assert_eq!(msg(t.exec(5, &[])), "block 5 not defined (1 blocks)");
    assert_eq!(
        msg(t.exec_opt(b, &[None, None])),
        "block 0 operand 0 is not conditional: it needs an address"
    );
    assert!(msg(t.exec_partial(b, 2, &[])).starts_with("partial execution of 2 instructions"));
    assert!(msg(t.exec_partial(b, 0, &[])).starts_with("partial execution of 0 instructions"));
    assert!(t.raw_event(0, &[]).is_err());
    // 2^63 from its prediction (last_any = 0): not expressible for a
    // conditional operand.
    assert!(msg(t.exec(b, &[0x10, 0x10 + (1 << 63)])).contains("2^63"));
    assert!(msg(t.exec(b, &[0x10, 0x10])).contains("failed earlier"));
    // Definitions are checked against §5.
    assert!(w.block_spec(0x40, "").is_err());
    assert!(w.block_spec(0x40, "16").is_err());
    assert!(w.block_spec(0x40, "1r0").is_err());
    assert!(w.block(&BlockDef::new(0x40).insn(2).code(&[0x90])).is_err());
    assert!(w.block(&BlockDef::new(0x40).insn(1).function(3)).is_err());
    assert!(w.function(0x40, 2, "f").is_err());
    assert_eq!(w.blocks().len(), 1);
}

/// A thread of 1000 block executions and lock events in small chunks.
fn chunked(name: &str) -> (TempDir, Trace) {
    let d = TempDir::new(name);
    let opts = WriterOptions {
        chunk_target: 64,
        ..WriterOptions::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    let a = w
        .block(&BlockDef::new(0x1000).insn(3).read(8).end(EndKind::Branch))
        .unwrap();
    let b = w
        .block(&BlockDef::new(0x1003).insn(2).write(4).end(EndKind::Jump))
        .unwrap();
    {
        let mut t = w.thread(1).unwrap();
        for i in 0..500u64 {
            t.exec(a, &[0x10_0000 + 8 * i]).unwrap();
            t.exec(b, &[0x20_0000 + 4 * (i * i % 97)]).unwrap();
            if i % 17 == 0 {
                t.lock_acquire(tf_trace::LockKind::Mutex, 0x6000).unwrap();
                t.lock_release(tf_trace::LockKind::Mutex, 0x6000).unwrap();
            }
        }
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    (d, trace)
}

#[test]
fn seeking_to_a_chunk_reads_the_same_events_as_reading_through() {
    let (_d, trace) = chunked("seek");
    // Read through, noting where each chunk starts.
    let mut all = Vec::new();
    let mut starts = Vec::new();
    let mut r = trace.read_thread(1).unwrap();
    let mut seq = u32::MAX;
    while let Some(ev) = r.next_event() {
        all.push(Rec::of(&ev.unwrap()));
        let s = *r.chunk_stats();
        if s.seq != seq {
            seq = s.seq;
            starts.push((s.offset, s.seq, all.len() - 1));
        }
    }
    assert!(starts.len() > 10, "{} chunks", starts.len());
    // Seek to every chunk, in any order: the rest of the stream is the same.
    for &(offset, seq, first) in starts.iter().rev().chain(starts.iter()) {
        let mut r = trace.read_thread(1).unwrap();
        r.seek_chunk(offset, seq).unwrap();
        let mut got = Vec::new();
        while let Some(ev) = r.next_event() {
            got.push(Rec::of(&ev.unwrap()));
        }
        assert_eq!(got, all[first..], "from chunk {seq}");
    }
}

/// `advance` then `current` reads what `next_event` returns, event by event
/// and across chunks; `current` is `None` before the first event, after a
/// seek and at the end.
#[test]
fn advance_and_current_read_what_next_event_reads() {
    let (_d, trace) = chunked("advance");
    let all = read_ok(&trace, 1);
    let mut r = trace.read_thread(1).unwrap();
    assert!(r.current().is_none(), "before the first event");
    let mut got = Vec::new();
    let mut second_chunk = None;
    while r.advance().unwrap() {
        let ev = r.current().expect("advance read an event");
        got.push(Rec::of(&ev));
        let s = *r.chunk_stats();
        if s.seq == 1 && second_chunk.is_none() {
            second_chunk = Some((s.offset, got.len() - 1));
        }
    }
    assert_eq!(got, all);
    assert!(r.current().is_none(), "at the end");
    assert!(!r.advance().unwrap(), "still at the end");
    let (offset, first) = second_chunk.expect("several chunks");
    let mut r = trace.read_thread(1).unwrap();
    r.advance().unwrap();
    r.seek_chunk(offset, 1).unwrap();
    assert!(r.current().is_none(), "after a seek");
    assert!(r.advance().unwrap());
    assert_eq!(Rec::of(&r.current().unwrap()), all[first]);
}
