//! Damaged traces: truncation at every byte, flipped bytes, wrong headers,
//! chunks out of order, payloads that pass their checksum but do not decode.

#[path = "../common/mod.rs"]
mod common;

use std::path::Path;

use common::{read_all, Rec, TempDir};
use tf_trace::{
    ChunkDecoder, ChunkReader, LockKind, StreamHeader, StreamKind, TableParams, Trace, TraceWriter,
    WriterOptions,
};

mod framing;
mod kept;

/// A small trace of about a dozen chunks; returns the records of each chunk
/// and each chunk's (offset, end) in thread-1.tfc.
fn small_trace(dir: &Path) -> (Vec<Vec<Rec>>, Vec<(u64, u64)>) {
    let opts = WriterOptions {
        chunk_target: 48,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(dir, opts).unwrap();
    let a = w.block_spec(0x1000, "4r8 3w4? branch").unwrap();
    let b = w.block_spec(0x1007, "2 jump").unwrap();
    let mut t = w.thread(1).unwrap();
    t.thread_start(0, 0x7000, 0x8000, 0x1000).unwrap();
    for i in 0..60u64 {
        let w_addr = (i % 3 != 0).then_some(0x9_0000 + 0x1000 * (i % 7));
        t.exec_opt(a, &[Some(0x5_0000 + 8 * i * (i % 5)), w_addr])
            .unwrap();
        t.exec(b, &[]).unwrap();
        if i % 9 == 0 {
            t.lock_acquire(LockKind::Spin, 0x6000 + i).unwrap();
        }
    }
    w.finish().unwrap();
    let trace = Trace::open(dir).unwrap();
    let mut c = ChunkReader::open(dir.join("thread-1.tfc")).unwrap();
    let mut dec = ChunkDecoder::new(trace.blocks(), TableParams::default());
    let (mut recs, mut spans) = (Vec::new(), Vec::new());
    while let Some(ch) = c.next_chunk() {
        let ch = ch.unwrap();
        let mut ev = dec.decode(ch.payload).unwrap();
        let mut v = Vec::new();
        while let Some(e) = ev.next_event() {
            v.push(Rec::of(&e.unwrap()));
        }
        recs.push(v);
        spans.push((ch.offset, ch.offset + 16 + ch.payload.len() as u64));
    }
    assert!(spans.len() >= 8, "{} chunks", spans.len());
    (recs, spans)
}

fn copy_with(dir: &Path, from: &Path, thread: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(from.join("blocks.tfc"), dir.join("blocks.tfc")).unwrap();
    std::fs::write(dir.join("thread-1.tfc"), thread).unwrap();
}

#[test]
fn cut_at_every_byte() {
    let d = TempDir::new("cut");
    let src = d.join("src");
    let (recs, spans) = small_trace(&src);
    let full = std::fs::read(src.join("thread-1.tfc")).unwrap();
    assert_eq!(spans.last().unwrap().1, full.len() as u64);
    let cut_dir = d.join("cut");
    for len in 0..=full.len() {
        copy_with(&cut_dir, &src, &full[..len]);
        let trace = Trace::open(&cut_dir).unwrap();
        let (got, err) = read_all(&trace, 1);
        if len < 32 {
            let e = err.expect("a cut header is an error").to_string();
            assert!(
                e.contains("thread-1.tfc: bad file header: file is"),
                "{len}: {e}"
            );
            assert!(got.is_empty());
            continue;
        }
        let whole = spans.iter().filter(|s| s.1 <= len as u64).count();
        let expect: Vec<Rec> = recs[..whole].concat();
        assert_eq!(got, expect, "cut at {len}");
        match spans.get(whole) {
            Some(&(off, _)) if off < len as u64 => {
                let e = err.unwrap_or_else(|| panic!("cut at {len}: no error"));
                assert_eq!(e.chunk_offset(), Some(off), "cut at {len}: {e}");
                let s = e.to_string();
                assert!(
                    s.contains(&format!("thread-1.tfc: byte {off}: chunk ")),
                    "{s}"
                );
                assert!(s.ends_with("truncated file"), "{s}");
            }
            _ => assert!(err.is_none(), "cut at {len} (a chunk boundary): {err:?}"),
        }
    }
}

#[test]
fn every_flipped_byte_is_caught() {
    let d = TempDir::new("flip");
    let src = d.join("src");
    let (recs, spans) = small_trace(&src);
    let full = std::fs::read(src.join("thread-1.tfc")).unwrap();
    let dir = d.join("flipped");
    for i in 0..full.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = full.clone();
            bad[i] ^= mask;
            copy_with(&dir, &src, &bad);
            let trace = Trace::open(&dir).unwrap();
            let (got, err) = read_all(&trace, 1);
            let err = err.unwrap_or_else(|| panic!("byte {i} ^ {mask:#x}: not caught"));
            if i < 32 {
                assert!(got.is_empty());
                assert!(
                    err.to_string().contains("thread-1.tfc: bad file header"),
                    "{err}"
                );
                continue;
            }
            let k = spans.iter().position(|s| (i as u64) < s.1).unwrap();
            assert_eq!(
                err.chunk_offset(),
                Some(spans[k].0),
                "byte {i} ^ {mask:#x}: {err}"
            );
            assert_eq!(got, recs[..k].concat(), "byte {i} ^ {mask:#x}");
        }
    }
}

#[test]
fn flipped_block_table_bytes_are_caught() {
    let d = TempDir::new("flipbt");
    let src = d.join("src");
    small_trace(&src);
    let full = std::fs::read(src.join("blocks.tfc")).unwrap();
    let thread = std::fs::read(src.join("thread-1.tfc")).unwrap();
    let dir = d.join("flipped");
    for i in 0..full.len() {
        let mut bad = full.clone();
        bad[i] ^= 0x04;
        copy_with(&dir, &src, &thread);
        std::fs::write(dir.join("blocks.tfc"), &bad).unwrap();
        match Trace::open(&dir) {
            Err(e) => assert!(
                i < 32 && e.to_string().contains("blocks.tfc: bad file header"),
                "{i}: {e}"
            ),
            Ok(t) => {
                assert_eq!(t.problems().len(), 1, "byte {i}");
                let p = t.problems()[0].to_string();
                assert!(p.contains("blocks.tfc: byte 32: "), "{p}");
                assert!(t.blocks().is_empty());
            }
        }
    }
}

fn header_bytes(kind: StreamKind, tid: u64, params: TableParams) -> [u8; 32] {
    StreamHeader { kind, tid, params }.encode()
}

fn chunk(seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut c = b"TFCK".to_vec();
    c.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    c.extend_from_slice(&seq.to_le_bytes());
    let mut covered = c[4..12].to_vec();
    covered.extend_from_slice(payload);
    c.extend_from_slice(&tf_trace::stream::crc32c(&covered).to_le_bytes());
    c.extend_from_slice(payload);
    c
}

/// A trace whose block table has one block (id 0, no operands).
fn one_block_trace(dir: &Path) {
    let mut w = TraceWriter::create(dir).unwrap();
    w.block_spec(0x40, "1 jump").unwrap();
    w.finish().unwrap();
}
