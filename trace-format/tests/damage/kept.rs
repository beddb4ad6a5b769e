//! What a damaged trace keeps: everything before the damage, nothing of a
//! chunk that does not decode, and a reader that says when it returned
//! events of one.

use super::*;

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
