//! Seeded randomized round trips: random block tables (defined while the
//! threads run), random walks with calls and returns, random address
//! patterns, partial executions, events, flushes, table sizes and chunk
//! targets. The reader must return exactly what was written, through the
//! streaming reader and through chunk-by-chunk decoding alike.

mod common;

use common::{read_ok, Op, Rec, Rng, TempDir};
use tf_trace::{
    BlockDef, ChunkDecoder, EndKind, LoopChunk, StaticLoop, TableParams, Trace, TraceWriter,
    WriterOptions,
};

struct Blk {
    addr: u64,
    len: u64,
    end: EndKind,
    cond: Vec<bool>,
    succ: [usize; 2],
    pattern: Vec<(u8, u64, u64)>,
}

fn random_def(rng: &mut Rng, addr: u64) -> (BlockDef, Blk) {
    let end = EndKind::ALL[rng.below(9) as usize];
    let mut def = BlockDef::new(addr).end(end).function(0);
    let n = 1 + rng.below(6);
    let mut len = 0;
    let mut cond = Vec::new();
    let mut pattern = Vec::new();
    for _ in 0..n {
        let l = 1 + rng.below(15) as u8;
        len += l as u64;
        def = def.insn(l);
        for _ in 0..rng.below(3) {
            let c = rng.chance(25);
            def = def.operand(
                [1, 2, 4, 8, 16, 64, 4096][rng.below(7) as usize],
                rng.chance(50),
                c,
            );
            cond.push(c);
            let base = match rng.below(4) {
                0 => u64::MAX - rng.below(64) * 8,
                1 => rng.below(256),
                _ => rng.next() >> rng.below(20),
            };
            pattern.push((
                rng.below(5) as u8,
                base,
                (rng.below(33) * 8).wrapping_sub(128),
            ));
        }
    }
    let blk = Blk {
        addr,
        len,
        end,
        cond,
        succ: [0, 0],
        pattern,
    };
    (def, blk)
}

fn addresses(rng: &mut Rng, b: &Blk, iter: u64) -> Vec<Option<u64>> {
    let mut out: Vec<Option<u64>> = Vec::new();
    let mut prev = None;
    for (j, &(kind, base, k)) in b.pattern.iter().enumerate() {
        let mut a = match kind {
            0 => base.wrapping_add(iter.wrapping_mul(k)),
            1 => prev.map_or(base, |p: u64| p.wrapping_add(k)),
            2 => base,
            3 => rng.next(),
            _ => base.wrapping_add(8 * rng.below(4)),
        };
        if rng.chance(4) {
            a = a.wrapping_add(8 * rng.below(100));
        }
        if b.cond[j] && rng.chance(30) {
            out.push(None);
        } else {
            out.push(Some(a));
            prev = Some(a);
        }
    }
    out
}

fn one_case(seed: u64) {
    let mut rng = Rng(seed);
    let params = TableParams {
        addr_table_bits: 8 + rng.below(7) as u8,
        succ_table_bits: 8 + rng.below(5) as u8,
        ret_stack_depth: [1, 2, 3, 8, 64, 255][rng.below(6) as usize],
        run_prefix: true,
    };
    let chunk_target = [1, 3, 17, 64, 500, 1 << 20][rng.below(6) as usize];
    let d = TempDir::new("random");
    let mut w = TraceWriter::create_with(
        d.path(),
        WriterOptions {
            chunk_target,
            params,
        },
    )
    .unwrap();
    let mut blks: Vec<Blk> = Vec::new();
    let define = |w: &mut TraceWriter, rng: &mut Rng, blks: &mut Vec<Blk>, addr: u64| {
        let (def, mut b) = random_def(rng, addr);
        let id = w.block(&def).unwrap();
        assert_eq!(id as usize, blks.len());
        b.succ = [
            rng.below(blks.len() as u64 + 1) as usize,
            rng.below(blks.len() as u64 + 1) as usize,
        ];
        blks.push(b);
    };
    for i in 0..(2 + rng.below(20)) {
        define(&mut w, &mut rng, &mut blks, 0x40_0000 + 0x40 * i);
    }
    let n_threads = 1 + rng.below(3);
    let mut ops: Vec<Vec<Op>> = (0..n_threads).map(|_| Vec::new()).collect();
    let mut cur = vec![0usize; n_threads as usize];
    let mut stacks: Vec<Vec<u64>> = vec![Vec::new(); n_threads as usize];
    let mut iters = std::collections::HashMap::new();
    let n_ops = 200 + rng.below(1500);
    for _ in 0..n_ops {
        let t = rng.below(n_threads) as usize;
        // Sometimes a new block: anywhere, at an existing address, or at a
        // pending return site.
        if rng.chance(3) {
            let addr = match rng.below(3) {
                0 => blks[rng.below(blks.len() as u64) as usize].addr,
                1 => stacks[t].last().copied().unwrap_or(0x50_0000),
                _ => 0x40_0000 + 0x40 * rng.below(4096),
            };
            define(&mut w, &mut rng, &mut blks, addr);
        }
        let id = cur[t];
        let b = &blks[id];
        let it = iters.entry((t, id)).or_insert(0u64);
        *it += 1;
        let addrs = addresses(&mut rng, b, *it);
        let op = if rng.chance(4) {
            let n_insns = 1 + rng.below(b.len.min(6)) as u32;
            let n = rng.below(addrs.len() as u64 + 1) as usize;
            Op::Exec {
                block: id as u32,
                partial: Some(n_insns.min(1 + (b.len as u32 - 1).min(5))),
                addrs: addrs[..n].to_vec(),
            }
        } else {
            Op::Exec {
                block: id as u32,
                partial: None,
                addrs,
            }
        };
        // Partial executions must not exceed the block's instruction count.
        let op = match op {
            Op::Exec {
                block,
                partial: Some(_),
                addrs,
            } => {
                let n_insns = w.blocks().block(block).unwrap().n_insns() as u64;
                Op::Exec {
                    block,
                    partial: Some(1 + rng.below(n_insns) as u32),
                    addrs,
                }
            }
            op => op,
        };
        op.apply(&mut w.thread(t as u64 + 1).unwrap()).unwrap();
        ops[t].push(op);
        if rng.chance(6) {
            let e = match rng.below(14) {
                0 => Op::Start(rng.below(4), rng.next(), rng.next(), rng.next()),
                1 => Op::Exit(rng.below(3)),
                2 => Op::Acquire(rng.below(9), rng.next()),
                3 => Op::Release(rng.below(9), rng.next()),
                4 => Op::Skip(rng.below(6), rng.next() >> rng.below(64)),
                5 => Op::Syscall(rng.below(400), rng.next() >> 40),
                6 => Op::Signal(1 + rng.below(64)),
                7 => Op::SignalReturn(1 + rng.below(64)),
                8 => Op::Marker(rng.next(), rng.next()),
                9 => Op::Raw(
                    13 + rng.below(1000),
                    (0..rng.below(20)).map(|_| rng.next() as u8).collect(),
                ),
                10 => Op::LoopChunk(LoopChunk {
                    loop_id: 1 + rng.below(9),
                    first: rng.next() >> rng.below(64),
                    count: rng.below(100),
                    stride: rng.below(64),
                    trip: rng.next(),
                }),
                11 => Op::StaticLoop(StaticLoop {
                    loop_id: 1 + rng.below(9),
                    thread: rng.below(64),
                    threads: 1 + rng.below(64),
                }),
                12 => Op::RegionEntry(rng.next() >> rng.below(64)),
                _ => Op::Flush,
            };
            e.apply(&mut w.thread(t as u64 + 1).unwrap()).unwrap();
            ops[t].push(e);
        }
        // Control flow.
        let b = &blks[id];
        cur[t] = if b.end.is_call() {
            stacks[t].push(b.addr.wrapping_add(b.len));
            if rng.chance(80) {
                b.succ[0]
            } else {
                // A skipped call: straight to the return site, if a block is there.
                let ret = stacks[t].pop().unwrap();
                w.blocks().block_at(ret).map_or(b.succ[1], |x| x as usize)
            }
        } else if b.end == EndKind::Return && !stacks[t].is_empty() {
            let ret = stacks[t].pop().unwrap();
            match w.blocks().block_at(ret) {
                Some(x) if rng.chance(90) => x as usize,
                _ => rng.below(blks.len() as u64) as usize,
            }
        } else if rng.chance(85) {
            b.succ[rng.below(2) as usize]
        } else {
            rng.below(blks.len() as u64) as usize
        };
    }
    w.finish().unwrap();

    let trace = Trace::open(d.path()).unwrap();
    assert!(trace.problems().is_empty());
    assert_eq!(trace.blocks().len(), blks.len());
    let m = trace.manifest().unwrap();
    for (t, ops) in ops.iter().enumerate() {
        let tid = t as u64 + 1;
        if ops.is_empty() {
            continue;
        }
        let expect: Vec<Rec> = ops
            .iter()
            .filter_map(|o| o.expected(trace.blocks()))
            .collect();
        let got = read_ok(&trace, tid);
        assert_eq!(got.len(), expect.len(), "seed {seed} thread {tid}");
        for (i, (g, e)) in got.iter().zip(&expect).enumerate() {
            assert_eq!(g, e, "seed {seed} thread {tid} record {i}");
        }
        // Chunk by chunk, the same records.
        let mut chunks = trace.chunks(tid).unwrap();
        let mut dec = ChunkDecoder::new(trace.blocks(), params);
        let mut by_chunk = Vec::new();
        while let Some(c) = chunks.next_chunk() {
            let c = c.unwrap().to_owned();
            let mut ev = dec.decode(&c.payload).unwrap();
            while let Some(e) = ev.next_event() {
                by_chunk.push(Rec::of(&e.unwrap()));
            }
        }
        assert_eq!(by_chunk, got, "seed {seed} thread {tid}: chunk decoding");
        // Statistics agree with the records and the manifest.
        let (stats, damage) = trace.thread_stats(tid).unwrap();
        assert!(damage.is_none());
        let mut total = tf_trace::ChunkStats::default();
        stats.iter().for_each(|s| total.add(s));
        let execs = expect
            .iter()
            .filter(|r| matches!(r, Rec::Exec { .. }))
            .count() as u64;
        let accesses: u64 = expect
            .iter()
            .map(|r| {
                if let Rec::Exec { accesses, .. } = r {
                    accesses.len() as u64
                } else {
                    0
                }
            })
            .sum();
        assert_eq!(
            (total.block_execs, total.accesses),
            (execs, accesses),
            "seed {seed}"
        );
        let summary = m.threads.iter().find(|s| s.tid == tid).unwrap();
        assert_eq!(total.insns, summary.traced_instructions, "seed {seed}");
        assert_eq!(
            total.skipped_insns, summary.skipped_instructions,
            "seed {seed}"
        );
    }
}

#[test]
fn random_round_trips() {
    let cases: u64 = std::env::var("TF_RANDOM_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    for seed in 0..cases {
        one_case(seed);
    }
}
