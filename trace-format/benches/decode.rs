//! Decoding speed of the thread-stream reader on synthetic traces.
//!
//! ```text
//! cargo bench -p tf-trace
//! ```
//!
//! Two workloads of about 6 instructions and 2 memory operands per block:
//! `loops` (strided arrays, mostly runs) and `irregular` (pointer chasing:
//! random addresses and branch outcomes, few runs). For each it prints the
//! trace size (bytes per instruction) and, best of several passes, the
//! speed of the streaming reader (file → events with addresses), of
//! chunk decoding alone (payload in memory → events), and of the
//! validation pass alone (control flow and structure, no addresses).
//!
//! With `TF_BENCH_TRACE=DIR` it reads a recorded trace instead, checked
//! and unchecked (as `tf analyze` reads it once the first pass has run).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tf_trace::{BlockDef, ChunkDecoder, EndKind, Event, Trace, TraceWriter};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Writes `n` block executions; `irregular` in 0..=100 is the percentage of
/// random addresses and random branch outcomes.
fn write_trace(dir: &Path, n: u64, irregular: u64) -> tf_trace::Result<()> {
    let mut w = TraceWriter::create(dir)?;
    let mut rng = Rng(42);
    // 64 functions of 4 blocks: head (2 loads), body (load + store), a
    // call-free tail, and a return block.
    let mut blocks = Vec::new();
    for f in 0..64u64 {
        let base = 0x40_0000 + f * 0x100;
        let fid = w.function(base, 0, format!("f{f}")).unwrap();
        let head = BlockDef::new(base)
            .function(fid)
            .insn(4)
            .read(8)
            .insn(3)
            .insn(4)
            .read(4)
            .insn(3)
            .insn(2)
            .insn(2)
            .end(EndKind::Branch);
        let body = BlockDef::new(base + 0x20)
            .function(fid)
            .insn(4)
            .read(8)
            .insn(3)
            .insn(3)
            .write(8)
            .insn(4)
            .insn(3)
            .insn(2)
            .end(EndKind::Branch);
        let tail = BlockDef::new(base + 0x40)
            .function(fid)
            .insn(3)
            .insn(4)
            .read(4)
            .insn(3)
            .insn(3)
            .insn(2)
            .end(EndKind::Jump);
        let ret = BlockDef::new(base + 0x60)
            .function(fid)
            .insn(3)
            .insn(1)
            .insn(1)
            .write(8)
            .insn(1)
            .insn(1)
            .insn(1)
            .end(EndKind::Return);
        blocks.push([head, body, tail, ret].map(|d| w.block(&d).unwrap()));
    }
    let mut t = w.thread(1).unwrap();
    let mut i = 0u64;
    let mut f = 0usize;
    let heap = 0x5555_0000_0000u64;
    while i < n {
        let [head, body, tail, ret] = blocks[f];
        let trip = 8 + (f as u64 % 24);
        let arr = heap + (f as u64) * 0x10_0000;
        for k in 0..trip {
            let rnd = rng.next() % 100 < irregular;
            let a = if rnd {
                heap + (rng.next() & 0xff_fff8)
            } else {
                arr + 8 * k
            };
            t.exec(head, &[a, a + 0x1000])?;
            let b = if rnd {
                heap + (rng.next() & 0xff_fff8)
            } else {
                arr + 0x8000 + 8 * k
            };
            t.exec(body, &[b, b + 0x40])?;
            i += 2;
            if rnd && rng.next().is_multiple_of(2) {
                t.exec(tail, &[arr + 0x20_000])?;
                i += 1;
            }
        }
        t.exec(ret, &[0x7ffd_0000 - 8 * (f as u64 % 4)])?;
        i += 1;
        f = (f + 1 + (rng.next() % 3) as usize * (irregular > 0) as usize) % blocks.len();
    }
    w.finish()
}

fn best<F: FnMut() -> u64>(mut f: F) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut out = 0;
    for _ in 0..5 {
        let t = Instant::now();
        out = black_box(f());
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn report(what: &str, d: Duration, blocks: u64, insns: u64, bytes: u64) {
    let s = d.as_secs_f64();
    println!(
        "  {what:<28} {:>7.1} M blocks/s {:>8.1} M insns/s {:>7.1} MB/s  ({:.1} ms)",
        blocks as f64 / s / 1e6,
        insns as f64 / s / 1e6,
        bytes as f64 / s / 1e6,
        s * 1e3
    );
}

fn bench(name: &str, dir: &Path, n: u64, irregular: u64) {
    write_trace(dir, n, irregular).unwrap();
    let trace = Trace::open(dir).unwrap();
    let bytes = trace.threads()[0].size;

    // Streaming reader: every event, every address touched.
    let (d, insns) = best(|| {
        let mut r = trace.read_thread(1).unwrap();
        let mut insns = 0u64;
        let mut sum = 0u64;
        while let Some(ev) = r.next_event() {
            if let Event::Block(x) = ev.unwrap() {
                insns += x.insns as u64;
                for a in x.accesses() {
                    sum = sum.wrapping_add(a.addr);
                }
            }
        }
        black_box(sum);
        insns
    });
    let (stats, _) = trace.thread_stats(1).unwrap();
    let mut total = tf_trace::ChunkStats::default();
    stats.iter().for_each(|s| total.add(s));
    assert_eq!(insns, total.insns);
    println!(
        "{name}: {} block executions, {} instructions, {} accesses, {} bytes ({:.3} bytes/insn), {} chunks, {:.1}% of blocks in runs",
        total.block_execs,
        total.insns,
        total.accesses,
        bytes,
        bytes as f64 / total.insns as f64,
        stats.len(),
        100.0 * total.run_blocks as f64 / total.block_execs as f64
    );
    report("streaming reader", d, total.block_execs, total.insns, bytes);

    // Chunk decoding alone (payloads in memory), includes validation.
    let mut chunks = trace.chunks(1).unwrap();
    let params = chunks.header().params;
    let mut payloads = Vec::new();
    while let Some(c) = chunks.next_chunk() {
        payloads.push(c.unwrap().payload.to_vec());
    }
    let mut dec = ChunkDecoder::new(trace.blocks(), params);
    let (d, _) = best(|| {
        let mut sum = 0u64;
        for p in &payloads {
            let mut ev = dec.decode(p).unwrap();
            while let Some(e) = ev.next_event() {
                if let Event::Block(x) = e.unwrap() {
                    for a in x.accesses() {
                        sum = sum.wrapping_add(a.addr);
                    }
                }
            }
        }
        sum
    });
    report(
        "chunk decode (in memory)",
        d,
        total.block_execs,
        total.insns,
        bytes,
    );
    let (d, _) = best(|| {
        payloads
            .iter()
            .map(|p| dec.stats(p).unwrap().block_execs)
            .sum()
    });
    report(
        "validation pass only",
        d,
        total.block_execs,
        total.insns,
        bytes,
    );
}

/// The streaming reader on every thread of a recorded trace.
fn bench_recorded(dir: &str) {
    let trace = Trace::open(dir).unwrap();
    let (mut blocks, mut insns, mut bytes) = (0u64, 0u64, 0u64);
    for t in trace.threads() {
        let (stats, damage) = trace.thread_stats(t.tid).unwrap();
        assert!(damage.is_none());
        for s in &stats {
            blocks += s.block_execs;
            insns += s.insns;
        }
        bytes += t.size;
    }
    println!(
        "{dir}: {} threads, {blocks} block executions, {insns} instructions, {bytes} bytes ({:.3} bytes/insn)",
        trace.threads().len(),
        bytes as f64 / insns as f64
    );
    // Checked: each chunk decoded completely before its first event, as by
    // default, each event returned by `next_event`. Unchecked: each chunk
    // decoded once, as the analyzer's lanes read it (`set_validate(false)`
    // after the first pass has found every chunk to decode, each event read
    // in place with `advance`): the ceiling of a replay's speed on one
    // core, which must decode every lane's stream with its addresses.
    for (what, checked) in [
        ("streaming reader, one core", true),
        ("unchecked, as tf analyze", false),
    ] {
        let (d, n) = best(|| {
            let mut n = 0u64;
            for t in trace.threads() {
                let mut r = trace.read_thread(t.tid).unwrap();
                r.set_validate(checked);
                let mut count = |e: Event<'_>| {
                    if let Event::Block(x) = e {
                        n += x.insns as u64 + x.accesses().iter().map(|a| a.addr & 1).sum::<u64>();
                    }
                };
                if checked {
                    while let Some(ev) = r.next_event() {
                        count(ev.unwrap());
                    }
                } else {
                    // as the analyzer's lanes read: the event read in place
                    while r.advance().unwrap() {
                        count(r.current().expect("an event"));
                    }
                }
            }
            n
        });
        assert!(n >= insns);
        report(what, d, blocks, insns, bytes);
    }
}

fn main() {
    if let Ok(dir) = std::env::var("TF_BENCH_TRACE") {
        bench_recorded(&dir);
        return;
    }
    // `cargo test --benches` runs this with --bench absent: keep it short.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = if quick { 200_000 } else { 8_000_000 };
    let dir: PathBuf = std::env::temp_dir().join(format!("tf-trace-bench-{}", std::process::id()));
    // Other arguments select workloads by name.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for (name, irregular) in [("loops", 0), ("irregular", 30)] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let _ = std::fs::remove_dir_all(&dir);
        bench(name, &dir, n, irregular);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
