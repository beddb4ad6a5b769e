//! Ways of reading a thread: seeking to a chunk, and reading events in
//! place, give what reading through gives.

use super::*;

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

/// A trace whose thread file is a symbolic link to a file kept elsewhere
/// reads as the original does, and its size is the file's, not the link's.
#[test]
fn a_thread_file_behind_a_symbolic_link_has_the_size_of_the_file() {
    let (d, original) = chunked("linked-original");
    let linked = TempDir::new("linked");
    for name in ["blocks.tfc", "manifest", "thread-1.tfc"] {
        std::os::unix::fs::symlink(d.path().join(name), linked.path().join(name)).unwrap();
    }
    let trace = Trace::open(linked.path()).unwrap();
    let size = std::fs::metadata(d.path().join("thread-1.tfc"))
        .unwrap()
        .len();
    assert!(size > 1000, "{size} bytes");
    assert_eq!(trace.threads()[0].size, size);
    assert_eq!(original.threads()[0].size, size);
    let events = |t: &Trace| {
        let mut r = t.read_thread(1).unwrap();
        std::iter::from_fn(|| r.next_event().map(|e| Rec::of(&e.unwrap()))).count()
    };
    assert_eq!(events(&trace), events(&original));
}
