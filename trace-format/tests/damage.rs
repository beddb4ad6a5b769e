//! Damaged traces: truncation at every byte, flipped bytes, wrong headers,
//! chunks out of order, payloads that pass their checksum but do not decode.

mod common;

use std::path::Path;

use common::{read_all, Rec, TempDir};
use tf_trace::{
    ChunkDecoder, ChunkReader, LockKind, StreamHeader, StreamKind, TableParams, Trace, TraceWriter,
    WriterOptions,
};

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

fn fix_crc(h: &mut [u8; 32]) {
    let crc = tf_trace::stream::crc32c(&h[..28]);
    h[28..].copy_from_slice(&crc.to_le_bytes());
}

/// A trace whose block table has one block (id 0, no operands).
fn one_block_trace(dir: &Path) {
    let mut w = TraceWriter::create(dir).unwrap();
    w.block_spec(0x40, "1 jump").unwrap();
    w.finish().unwrap();
}

fn thread_error(dir: &Path, name: &str, bytes: &[u8]) -> String {
    std::fs::write(dir.join(name), bytes).unwrap();
    let trace = Trace::open(dir).unwrap();
    let tid = trace.threads()[0].tid;
    let (got, err) = read_all(&trace, tid);
    std::fs::remove_file(dir.join(name)).unwrap();
    assert!(got.is_empty());
    err.expect("an error").to_string()
}

#[test]
fn wrong_headers_are_named() {
    let d = TempDir::new("headers");
    one_block_trace(d.path());
    let p = TableParams::default();
    let good = header_bytes(StreamKind::Thread, 1, p);
    let cases: Vec<([u8; 32], &str)> = vec![
        (
            {
                let mut h = good;
                h[0] = b'X';
                h
            },
            "magic is not TFSTREAM: not a tf stream",
        ),
        (
            {
                let mut h = good;
                h[8] = 1;
                fix_crc(&mut h);
                h
            },
            "version 1, this reader knows 2 to 4",
        ),
        (
            {
                let mut h = good;
                h[12] = 3;
                fix_crc(&mut h);
                h
            },
            "kind 3, expected 1 or 2",
        ),
        (
            header_bytes(
                StreamKind::BlockTable,
                0,
                TableParams {
                    addr_table_bits: 0,
                    succ_table_bits: 0,
                    ret_stack_depth: 0,
                    run_prefix: true,
                },
            ),
            "kind 1 (block table), expected 2 (thread)",
        ),
        (
            {
                let mut h = good;
                h[24] = 30;
                fix_crc(&mut h);
                h
            },
            "addr_table_bits 30 out of range 8..=16",
        ),
        (
            {
                let mut h = good;
                h[25] = 7;
                fix_crc(&mut h);
                h
            },
            "succ_table_bits 7 out of range 8..=16",
        ),
        (
            {
                let mut h = good;
                h[26] = 0;
                fix_crc(&mut h);
                h
            },
            "ret_stack_depth 0 out of range 1..=255",
        ),
        (
            {
                let mut h = good;
                h[27] = 1;
                fix_crc(&mut h);
                h
            },
            "reserved byte 27 is 1, expected 0",
        ),
        (
            {
                let mut h = good;
                h[24] = 15;
                h
            },
            "header_crc mismatch",
        ),
        (
            header_bytes(StreamKind::Thread, 2, p),
            "tid 2 does not match the file name",
        ),
    ];
    for (h, what) in cases {
        let e = thread_error(d.path(), "thread-1.tfc", &h);
        assert_eq!(
            e,
            format!(
                "{}: bad file header: {what}",
                d.join("thread-1.tfc").display()
            )
        );
    }
    // blocks.tfc must be a block table.
    std::fs::write(d.join("blocks.tfc"), good).unwrap();
    let e = Trace::open(d.path()).unwrap_err().to_string();
    assert!(
        e.ends_with("blocks.tfc: bad file header: kind 2 (thread), expected 1 (block table)"),
        "{e}"
    );
    std::fs::remove_file(d.join("blocks.tfc")).unwrap();
    let e = Trace::open(d.path()).unwrap_err().to_string();
    assert!(e.contains("blocks.tfc: No such file"), "{e}");
}

#[test]
fn chunk_framing_errors() {
    let d = TempDir::new("framing");
    one_block_trace(d.path());
    let mut f = header_bytes(StreamKind::Thread, 1, TableParams::default()).to_vec();
    let c0 = chunk(0, &[2 << 5]); // explicit block 0
    let name = d.join("thread-1.tfc").display().to_string();

    // Chunks out of order: the second chunk says seq 2.
    let mut g = f.clone();
    g.extend(&c0);
    g.extend(chunk(2, &[2 << 5]));
    std::fs::write(d.join("thread-1.tfc"), &g).unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let (got, err) = read_all(&trace, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(
        err.unwrap().to_string(),
        format!("{name}: byte 49: chunk sequence number 2, expected 1")
    );

    // Bad magic, zero length, oversize length.
    for (bytes, what) in [
        (
            b"TFCX\x01\0\0\0\0\0\0\0\0\0\0\0\x10".to_vec(),
            "bad chunk magic (not TFCK)",
        ),
        (
            b"TFCK\0\0\0\0\0\0\0\0\0\0\0\0".to_vec(),
            "chunk length 0 out of range 1..=67108864",
        ),
        (
            b"TFCK\x01\0\0\x04\0\0\0\0\0\0\0\0".to_vec(),
            "chunk length 67108865 out of range 1..=67108864",
        ),
        (
            b"TFCK\x05\0\0\0\0\0\0\0\0\0\0\0\x10".to_vec(),
            "chunk payload cut short (1 of 5 bytes): truncated file",
        ),
    ] {
        let mut g = f.clone();
        g.extend(&bytes);
        std::fs::write(d.join("thread-1.tfc"), &g).unwrap();
        let trace = Trace::open(d.path()).unwrap();
        let (_, err) = read_all(&trace, 1);
        assert_eq!(err.unwrap().to_string(), format!("{name}: byte 32: {what}"));
    }

    // A good chunk, then one that passes its checksum but does not decode:
    // nothing of the second chunk is returned, not even its first record.
    f.extend(&c0);
    f.extend(chunk(1, &[2 << 5, 1 << 5]));
    std::fs::write(d.join("thread-1.tfc"), &f).unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let (got, err) = read_all(&trace, 1);
    assert_eq!(
        got,
        vec![Rec::Exec {
            block: 0,
            insns: 1,
            complete: true,
            operands: 0,
            accesses: vec![]
        }]
    );
    assert_eq!(
        err.unwrap().to_string(),
        format!("{name}: byte 49: chunk does not decode: payload byte 1: successor candidate 1 does not exist")
    );
}

#[test]
fn payloads_that_do_not_decode() {
    let d = TempDir::new("decode");
    one_block_trace(d.path());
    let h = header_bytes(StreamKind::Thread, 1, TableParams::default());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![1], "payload byte 0: run: successor candidate 0 does not exist"),
        (vec![0], "payload byte 0: successor candidate 0 does not exist"),
        (vec![3 << 5], "payload byte 0: block 1 not in the block table (1 blocks)"),
        (vec![0x80], "payload byte 0: record cut short by the end of the chunk"),
        (vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], "payload byte 0: varint longer than 64 bits"),
        (vec![2, 2, 1, 1], "payload byte 0: partial event at the end of the chunk"),
        (vec![2, 2, 1, 0, 6, 0], "payload byte 0: partial event not followed by a block record"),
        (vec![64, 2, 2, 1, 0, 1], "payload byte 1: partial event followed by a run"),
        (vec![2, 2, 2, 0, 64], "payload byte 0: partial execution of 2 instructions and 0 operands of block 0 (1 and 0)"),
        (vec![2, 2, 0, 0, 64], "payload byte 0: partial execution of 0 instructions and 0 operands of block 0 (1 and 0)"),
        (vec![2, 2, 1, 1, 64], "payload byte 0: partial execution of 1 instructions and 1 operands of block 0 (1 and 0)"),
        (vec![2, 3, 1, 0, 0, 64], "payload byte 0: partial event: bytes left over in payload"),
        (vec![14, 3, 0, 1, 2], "payload byte 0: event type 3: 1 bytes left over in payload"),
        (vec![14, 1, 0], "payload byte 0: event type 3: payload too short"),
        (vec![14, 5, 0], "payload byte 1: 5 bytes announced, 1 left in the chunk"),
        // run prefixes (§6.1): r = 1 at the first record, which has no candidates
        (vec![1 << 3], "payload byte 0: run: successor candidate 0 does not exist"),
        (vec![64, 2, 2, 1, 0, 64 | 1 << 3], "payload byte 1: partial event followed by a block record with a run prefix"),
        (vec![64, 64, 3 << 5 | 1 << 3], "payload byte 2: block 1 not in the block table (1 blocks)"),
    ];
    for (payload, what) in cases {
        let mut f = h.to_vec();
        f.extend(chunk(0, &payload));
        let e = thread_error(d.path(), "thread-1.tfc", &f);
        assert_eq!(
            e,
            format!(
                "{}: byte 32: chunk does not decode: {what}",
                d.join("thread-1.tfc").display()
            ),
            "{payload:?}"
        );
    }
}

#[test]
fn block_table_damage_keeps_what_came_before() {
    let d = TempDir::new("btdamage");
    let opts = WriterOptions {
        chunk_target: 1,
        ..Default::default()
    };
    let mut w = TraceWriter::create_with(d.path(), opts).unwrap();
    for i in 0..5u64 {
        w.block_spec(0x100 * i, "1").unwrap();
    }
    w.thread(1).unwrap().seq(&[0, 1, 2, 3, 4]).unwrap();
    w.finish().unwrap();
    // One chunk per block: corrupt the fourth.
    let mut bt = std::fs::read(d.join("blocks.tfc")).unwrap();
    let mut c = ChunkReader::open(d.join("blocks.tfc")).unwrap();
    let offs: Vec<u64> = std::iter::from_fn(|| c.next_chunk().map(|x| x.unwrap().offset)).collect();
    assert_eq!(offs.len(), 5);
    bt[offs[3] as usize + 20] ^= 1;
    std::fs::write(d.join("blocks.tfc"), &bt).unwrap();
    let trace = Trace::open(d.path()).unwrap();
    assert_eq!(trace.blocks().len(), 3);
    assert_eq!(trace.problems().len(), 1);
    assert!(trace.problems()[0].to_string().ends_with(&format!(
        "blocks.tfc: byte {}: chunk checksum mismatch",
        offs[3]
    )));
    // Each thread record is its own chunk too; the fourth names a missing block.
    let (got, err) = read_all(&trace, 1);
    assert_eq!(got.len(), 3);
    assert!(err
        .unwrap()
        .to_string()
        .contains("block 3 not in the block table (3 blocks)"));
}

#[test]
fn manifest_missing_garbage_and_other_files() {
    let d = TempDir::new("manifest");
    one_block_trace(d.path());
    std::fs::write(d.join("thread-01.tfc"), b"ignored").unwrap();
    std::fs::write(d.join("notes.txt"), b"ignored").unwrap();
    let t = Trace::open(d.path()).unwrap();
    assert!(t.manifest().unwrap().complete);
    assert!(t.threads().is_empty());
    std::fs::write(d.join("manifest"), b"\x81\xa3pid\xa1x").unwrap();
    let t = Trace::open(d.path()).unwrap();
    assert!(t.manifest().is_none());
    assert!(
        t.problems()[0]
            .to_string()
            .contains("manifest: damaged: manifest does not decode"),
        "{}",
        t.problems()[0]
    );
    std::fs::remove_file(d.join("manifest")).unwrap();
    let t = Trace::open(d.path()).unwrap();
    assert!(t.manifest().is_none());
    let problems: Vec<String> = t.problems().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        problems,
        [format!(
            "{}: no thread files (thread-<tid>.tfc): nothing was recorded",
            d.path().display()
        )]
    );
    let e = t.read_thread(4).err().unwrap().to_string();
    assert_eq!(
        e,
        format!("{}: no thread 4 in the trace", d.path().display())
    );
}

#[test]
fn crash_without_finish_keeps_flushed_chunks() {
    let d = TempDir::new("crash");
    let mut w = TraceWriter::create(d.path()).unwrap();
    let b = w.block_spec(0x40, "1 jump").unwrap();
    w.thread(1).unwrap().seq(&[b, b, b]).unwrap();
    drop(w); // no finish: chunks are flushed, the manifest stays the first one
    let t = Trace::open(d.path()).unwrap();
    assert!(!t.manifest().unwrap().complete);
    assert_eq!(read_all(&t, 1).0.len(), 3);
}

/// A one-block trace whose thread 1 runs block 0 twice in its first chunk;
/// its second chunk (at byte 50) runs block 0 twice, then block 5, which the
/// table does not have.
fn second_chunk_does_not_decode(dir: &Path) {
    one_block_trace(dir);
    let mut f = header_bytes(StreamKind::Thread, 1, TableParams::default()).to_vec();
    f.extend(chunk(0, &[2 << 5, 2 << 5]));
    f.extend(chunk(1, &[2 << 5, 2 << 5, 0xe0, 0x01])); // (5 + 2) << 5, a varint
    std::fs::write(dir.join("thread-1.tfc"), &f).unwrap();
}

#[test]
fn unvalidated_readers_never_return_data_from_a_chunk_that_does_not_decode() {
    let d = TempDir::new("novalidate");
    second_chunk_does_not_decode(d.path());
    let trace = Trace::open(d.path()).unwrap();
    for round in 0..2 {
        let mut r = trace.read_thread(1).unwrap();
        r.set_validate(false);
        let mut blocks = 0;
        let mut err = None;
        while let Some(ev) = r.next_event() {
            match ev {
                Ok(_) => blocks += 1,
                Err(e) => err = Some(e.to_string()),
            }
        }
        // The first chunk's two blocks, never the second chunk's.
        assert_eq!(blocks, 2, "round {round}");
        assert!(
            err.unwrap()
                .ends_with("byte 50: chunk does not decode: payload byte 2: block 5 not in the block table (1 blocks)"),
            "round {round}"
        );
    }
}

/// Read without checking ahead, a chunk that does not decode returns its
/// first events and then the same error, and the reader says so; the chunk
/// before it counts as checked for later readers, the damaged one does not
/// (a later reader checking ahead returns nothing of it).
#[test]
fn streaming_readers_say_when_they_returned_events_of_a_damaged_chunk() {
    let d = TempDir::new("stream");
    second_chunk_does_not_decode(d.path());
    let trace = Trace::open(d.path()).unwrap();
    let read = |check_ahead: bool| {
        let mut r = trace.read_thread(1).unwrap();
        r.set_validate(false);
        r.set_check_ahead(check_ahead);
        let (mut blocks, mut err) = (0, None);
        while let Some(ev) = r.next_event() {
            match ev {
                Ok(_) => blocks += 1,
                Err(e) => err = Some(e.to_string()),
            }
        }
        (blocks, err.expect("an error"), r.returned_damaged_events())
    };
    let (blocks, err, damaged) = read(false);
    assert_eq!(
        (blocks, damaged),
        (4, true),
        "the damaged chunk's two blocks came out"
    );
    assert!(err.ends_with("byte 50: chunk does not decode: payload byte 2: block 5 not in the block table (1 blocks)"), "{err}");
    let (blocks, again, damaged) = read(true);
    assert_eq!((blocks, damaged), (2, false));
    assert_eq!(again, err);
    // A whole good trace read streaming returns no such flag.
    let d = TempDir::new("stream-good");
    one_block_trace(d.path());
    let mut f = header_bytes(StreamKind::Thread, 1, TableParams::default()).to_vec();
    f.extend(chunk(0, &[2 << 5, 2 << 5]));
    std::fs::write(d.join("thread-1.tfc"), &f).unwrap();
    let trace = Trace::open(d.path()).unwrap();
    let mut r = trace.read_thread(1).unwrap();
    r.set_validate(false);
    r.set_check_ahead(false);
    let mut n = 0;
    while let Some(ev) = r.next_event() {
        ev.unwrap();
        n += 1;
    }
    assert_eq!((n, r.returned_damaged_events()), (2, false));
}
