//! Round trips of everything besides block executions: every event type,
//! chunking and flushes, small prediction tables, threads written
//! interleaved with block definitions, and what the writer refuses.

use super::*;

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
