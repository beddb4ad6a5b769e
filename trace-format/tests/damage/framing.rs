//! Streams whose framing is wrong: headers, chunk framing, and payloads
//! that pass their checksum but do not decode; each error names the file
//! and the byte.

use super::*;

fn fix_crc(h: &mut [u8; 32]) {
    let crc = tf_trace::stream::crc32c(&h[..28]);
    h[28..].copy_from_slice(&crc.to_le_bytes());
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
