//! A reader's place in its stream, kept to start another reader there
//! later: in the middle of a chunk, without decoding the chunk's start.

use super::{Checking, ThreadReader};
use crate::decode::CoreState;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Where a [`ThreadReader`] stands between two events: its chunk, its place
/// in the chunk and the prediction state that decoding has built up to
/// there (only what the chunk has used: a few kilobytes for a loop's code).
/// [`ThreadReader::resume`] continues from it in another reader of the same
/// file, at the cost of checking the chunk once (nothing, when a reader of
/// the same [`Trace`](crate::Trace) has) instead of decoding everything
/// before the place again. It serializes with serde, so that an analysis
/// can keep the places it starts readers at.
///
/// ```
/// # fn main() -> tf_trace::Result<()> {
/// use tf_trace::{BlockDef, Event, Trace, TraceWriter};
/// let dir = std::env::temp_dir().join(format!("tf-doc-resume-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// let b = w.block(&BlockDef::new(0x1000).insn(4).read(8))?;
/// let mut t = w.thread(1)?;
/// for i in 0..10u64 {
///     t.exec(b, &[0x5000 + 8 * i])?;
/// }
/// w.finish()?;
/// let trace = Trace::open(&dir)?;
/// let addr = |r: &mut tf_trace::ThreadReader| match r.next_event().unwrap().unwrap() {
///     Event::Block(x) => x.accesses()[0].addr,
///     e => panic!("{e:?}"),
/// };
/// let mut r = trace.read_thread(1)?;
/// for _ in 0..4 {
///     addr(&mut r);
/// }
/// let place = r.state().expect("inside a chunk");
/// let mut later = trace.read_thread(1)?;
/// later.resume(&place)?;
/// assert_eq!(addr(&mut later), 0x5020);
/// assert_eq!(addr(&mut r), 0x5020);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReaderState {
    /// The chunk's byte offset in its file and its sequence number.
    offset: u64,
    seq: u32,
    /// Whether the reader decoded addresses (the prediction state holds
    /// the address entries only then).
    addresses: bool,
    core: CoreState,
}

/// A place ([`ReaderState`]) written as what changed since an earlier
/// place in the same chunk: the entries a loop's code rewrites between two
/// places, where the whole state would repeat what the chunk's earlier code
/// left (an analysis that keeps a place per unit of a thread keeps the
/// first whole and the others as changes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReaderStateDelta(ReaderState);

impl ReaderState {
    /// This place as what changed since `earlier`, a place before it in the
    /// same chunk of the same file; `None` when `earlier` is in another
    /// chunk, was decoded with addresses when this one was not (or the
    /// other way round), or is not before this one.
    pub fn since(&self, earlier: &ReaderState) -> Option<ReaderStateDelta> {
        let same = (self.offset, self.seq, self.addresses)
            == (earlier.offset, earlier.seq, earlier.addresses);
        if !same {
            return None;
        }
        Some(ReaderStateDelta(ReaderState {
            core: self.core.since(&earlier.core)?,
            ..*self
        }))
    }
}

impl ReaderStateDelta {
    /// The place this delta was made of by [`ReaderState::since`] from
    /// `earlier` (the same `earlier`).
    pub fn after(&self, earlier: &ReaderState) -> ReaderState {
        ReaderState {
            core: CoreState::after(&earlier.core, &self.0.core),
            ..self.0
        }
    }
}

impl ThreadReader<'_> {
    /// Where this reader stands, for [`resume`](Self::resume); `None`
    /// before its first event (a new reader, or one just moved by
    /// [`seek_chunk`](Self::seek_chunk)) and at the end of the stream.
    /// It takes `&mut self` because a reader that decoded a loop's runs
    /// without its prediction tables (from each operand's course) writes
    /// them first; what it reads afterwards does not change.
    pub fn state(&mut self) -> Option<ReaderState> {
        if !self.in_chunk {
            return None;
        }
        // Runs decoded without the tables bring them up to date first.
        self.core.settle();
        let c = self.chunks.current();
        Some(ReaderState {
            offset: c.offset,
            seq: c.seq,
            addresses: self.addresses,
            core: self.core.save(),
        })
    }

    /// Continues where the reader that gave `state` stood (a reader of the
    /// same file): the next event is the one that reader's next event was,
    /// with or without addresses as it decoded. The chunk is checked
    /// completely first unless a reader of the same trace has found it to
    /// decode, whatever [`set_check_ahead`](Self::set_check_ahead) says (its
    /// start is not read again, so it cannot be checked as it is read).
    /// A state that does not fit the chunk is an error, and so is damage.
    pub fn resume(&mut self, state: &ReaderState) -> Result<()> {
        self.seek_chunk(state.offset, state.seq)?;
        let checking = self.checking;
        if checking == Checking::AsRead {
            self.checking = Checking::UnlessKnown;
        }
        let entered = self.enter_next_chunk();
        self.checking = checking;
        let misfit = |why: String| {
            Error::Invalid(format!(
                "{}: byte {}: a reader's place does not fit the chunk: {why}",
                self.chunks.file(),
                state.offset
            ))
        };
        if !entered? {
            return Err(misfit("no chunk there".into()));
        }
        let len = self.chunks.payload().len();
        if let Err(why) = self.core.restore(&state.core, len) {
            let err = misfit(why);
            self.in_chunk = false;
            self.chunks.stop();
            return Err(err);
        }
        self.addresses = state.addresses;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{BlockDef, EndKind, LockKind, Trace, TraceWriter, WriterOptions};

    /// A thread with calls and returns, runs, strided, offset and scattered
    /// addresses, a conditional operand, a lock event and several chunks.
    fn trace(dir: &std::path::Path) -> Trace {
        let opts = WriterOptions {
            chunk_target: 200,
            ..WriterOptions::default()
        };
        let mut w = TraceWriter::create_with(dir, opts).unwrap();
        let head = w
            .block(
                &BlockDef::new(0x1000)
                    .insn(3)
                    .read(8)
                    .insn(2)
                    .write(8)
                    .end(EndKind::Call),
            )
            .unwrap();
        let callee = w
            .block(
                &BlockDef::new(0x2000)
                    .insn(4)
                    .read(4)
                    .read(4)
                    .operand(8, false, true)
                    .end(EndKind::Return),
            )
            .unwrap();
        let back = w
            .block(&BlockDef::new(0x1005).insn(2).read(8).end(EndKind::Branch))
            .unwrap();
        let mut t = w.thread(1).unwrap();
        let mut x = 0x9e37_79b9u64;
        for i in 0..150u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t.exec(head, &[0x10000 + 8 * i, 0x7ff0_0000 - 8]).unwrap();
            let scattered = 0x40000 + (x >> 40) % 4096 * 4;
            let cond = (i % 3 == 0).then_some(0x50000 + i);
            t.exec_opt(callee, &[Some(scattered), Some(scattered + 4), cond])
                .unwrap();
            for _ in 0..(i % 5) {
                t.exec(back, &[0x20000 + 16 * i]).unwrap();
            }
            if i % 40 == 7 {
                t.lock_acquire(LockKind::Mutex, 0x6000).unwrap();
                t.lock_release(LockKind::Mutex, 0x6000).unwrap();
            }
        }
        w.finish().unwrap();
        Trace::open(dir).unwrap()
    }

    struct Dir(std::path::PathBuf);
    impl Dir {
        fn new(name: &str) -> Dir {
            let pid = std::process::id();
            Dir(std::env::temp_dir().join(format!("tf-resume-{name}-{pid}")))
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    fn rest(r: &mut crate::ThreadReader<'_>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(e) = r.next_event() {
            out.push(format!("{:?}", e.unwrap()));
        }
        out
    }

    #[test]
    fn a_reader_resumed_anywhere_reads_what_the_original_reads() {
        let dir = Dir::new("anywhere");
        let trace = trace(&dir.0);
        let all = rest(&mut trace.read_thread(1).unwrap());
        assert!(trace.thread_stats(1).unwrap().0.len() > 3, "several chunks");
        for k in 0..all.len() {
            let mut r = trace.read_thread(1).unwrap();
            for _ in 0..k {
                r.next_event().unwrap().unwrap();
            }
            let Some(state) = r.state() else {
                assert_eq!(k, 0, "only a new reader has no place");
                continue;
            };
            let bytes = rmp_serde::to_vec(&state).unwrap();
            let state: super::ReaderState = rmp_serde::from_slice(&bytes).unwrap();
            let mut resumed = trace.read_thread(1).unwrap();
            resumed.set_validate(false);
            resumed.set_check_ahead(false);
            resumed.resume(&state).unwrap();
            assert_eq!(rest(&mut resumed), all[k..], "resumed after {k} events");
        }
    }

    #[test]
    fn a_place_is_made_again_from_an_earlier_one_and_its_changes() {
        let dir = Dir::new("since");
        let trace = trace(&dir.0);
        let mut r = trace.read_thread(1).unwrap();
        let mut places = Vec::new();
        while let Some(e) = r.next_event() {
            e.unwrap();
            places.push(r.state().unwrap());
        }
        let mut deltas = 0;
        for (i, a) in places.iter().enumerate() {
            for (j, b) in places.iter().enumerate() {
                let same_chunk = (a.offset, a.seq) == (b.offset, b.seq);
                match b.since(a) {
                    Some(d) => {
                        assert!(same_chunk);
                        assert_eq!(d.after(a), *b, "place {j} from {i}");
                        deltas += 1;
                    }
                    None => assert!(!same_chunk || i > j, "place {j} from {i}"),
                }
            }
        }
        assert!(deltas > places.len() * 4, "{deltas} deltas");
    }

    #[test]
    fn a_place_that_does_not_fit_is_an_error() {
        let dir = Dir::new("misfit");
        let trace = trace(&dir.0);
        let mut r = trace.read_thread(1).unwrap();
        for _ in 0..20 {
            r.next_event().unwrap().unwrap();
        }
        let good = r.state().unwrap();
        let mut bad = good.clone();
        bad.seq += 1;
        assert!(trace.read_thread(1).unwrap().resume(&bad).is_err());
        let mut bad = good.clone();
        bad.core = bad.core.with_pos(u64::MAX);
        let mut r = trace.read_thread(1).unwrap();
        let e = r.resume(&bad).unwrap_err().to_string();
        assert!(e.contains("does not fit the chunk"), "{e}");
        assert!(
            r.next_event().is_none(),
            "a reader that failed to resume stops"
        );
    }
}
