//! The reader allocates nothing per record: events borrow its buffers.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use common::TempDir;
use tf_trace::{ChunkDecoder, Event, Trace, TraceWriter, WriterOptions};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn no_allocation_per_record() {
    let d = TempDir::new("alloc");
    let opts = WriterOptions {
        chunk_target: 4096,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    let a = w.block_spec(0x1000, "4r8 3w8 branch").unwrap();
    let b = w.block_spec(0x1007, "2r4? jump").unwrap();
    let mut t = w.thread(1).unwrap();
    for i in 0..50_000u64 {
        t.exec(a, &[0x10_0000 + 8 * i, 0x20_0000 + (i * 7919) % 4096 * 8])
            .unwrap();
        t.exec_opt(b, &[(i % 3 == 0).then_some(0x30_0000 + i)])
            .unwrap();
        if i % 100 == 0 {
            t.marker(1, i).unwrap();
        }
    }
    w.finish().unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let (stats, _) = trace.thread_stats(1).unwrap();
    assert!(stats.len() > 20, "{} chunks", stats.len());

    // Streaming reader: after the first event (buffers set up), at most one
    // allocation per chunk (a larger payload than any before).
    let mut r = trace.read_thread(1).unwrap();
    r.next_event().unwrap().unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let mut n = 1u64;
    let mut sum = 0u64;
    while let Some(ev) = r.next_event() {
        if let Event::Block(x) = ev.unwrap() {
            sum = sum.wrapping_add(x.accesses().iter().map(|a| a.addr).sum::<u64>());
        }
        n += 1;
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(n, 100_000 + 500);
    assert!(sum != 0);
    assert!(
        allocs <= stats.len() as u64,
        "{allocs} allocations for {n} records"
    );

    // Chunk decoding of payloads in memory: no allocation at all.
    let mut chunks = trace.chunks(1).unwrap();
    let mut payloads = Vec::new();
    while let Some(c) = chunks.next_chunk() {
        payloads.push(c.unwrap().payload.to_vec());
    }
    let mut dec = ChunkDecoder::new(trace.blocks(), chunks.header().params);
    let before = ALLOCS.load(Ordering::Relaxed);
    let mut m = 0;
    for p in &payloads {
        let mut ev = dec.decode(p).unwrap();
        while let Some(e) = ev.next_event() {
            e.unwrap();
            m += 1;
        }
    }
    assert_eq!(m, n);
    assert_eq!(ALLOCS.load(Ordering::Relaxed) - before, 0);
}
