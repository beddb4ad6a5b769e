//! The trace directory (§2).

use std::path::{Path, PathBuf};

use crate::block_table::BlockTable;
use crate::error::{Error, Result};
use crate::limits;
use crate::manifest::Manifest;
use crate::stream::{open_regular, ChunkReader, StreamKind, FILE_HEADER_LEN};
use crate::thread::{self, ChunkStats, ThreadReader};
use std::io::Read;
use std::sync::atomic::AtomicU64;

/// One `thread-<tid>.tfc` file of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadFile {
    /// The thread id from the file name.
    pub tid: u64,
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// `thread-<tid>.tfc` → tid: decimal, no padding, not 0.
pub(crate) fn parse_thread_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("thread-")?.strip_suffix(".tfc")?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An open trace directory: manifest, block table and the list of threads.
///
/// ```
/// # fn main() -> tf_trace::Result<()> {
/// use tf_trace::{BlockDef, Trace, TraceWriter};
/// let dir = std::env::temp_dir().join(format!("tf-doc-trace-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// let b = w.block(&BlockDef::new(0x1000).insn(1))?;
/// w.thread(2)?.exec(b, &[])?;
/// w.thread(1)?.exec(b, &[])?;
/// w.finish()?;
///
/// let trace = Trace::open(&dir)?;
/// assert!(trace.manifest().unwrap().complete);
/// assert_eq!(trace.blocks().len(), 1);
/// let tids: Vec<u64> = trace.threads().iter().map(|t| t.tid).collect();
/// assert_eq!(tids, [1, 2]);
/// assert!(trace.problems().is_empty());
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Trace {
    dir: PathBuf,
    manifest: Option<Manifest>,
    blocks: BlockTable,
    threads: Vec<ThreadFile>,
    /// Per thread file: the end of its first chunks known to decode.
    validated: Vec<AtomicU64>,
    problems: Vec<Error>,
}

impl Trace {
    /// Opens a trace: reads the manifest (if there is a readable one), the
    /// whole block table, and lists the thread files sorted by tid.
    ///
    /// A damaged block table keeps the blocks before the damage and the
    /// error goes to [`problems`](Self::problems), as does an unreadable
    /// manifest: a crashed run still leaves a usable trace. A missing or
    /// unreadable directory or `blocks.tfc` is an error.
    pub fn open(dir: impl AsRef<Path>) -> Result<Trace> {
        let dir = dir.as_ref().to_path_buf();
        let mut problems = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(dir.display(), e))?;
        let mut threads = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
            let Some(tid) = entry.file_name().to_str().and_then(parse_thread_file_name) else {
                continue;
            };
            let path = entry.path();
            // The file's own size, through a symbolic link too (a trace
            // assembled from files kept elsewhere): DirEntry::metadata
            // would give the link's.
            let size = std::fs::metadata(&path)
                .map_err(|e| Error::io(path.display(), e))?
                .len();
            threads.push(ThreadFile { tid, path, size });
        }
        threads.sort_by_key(|t| t.tid);

        let mpath = dir.join("manifest");
        let manifest = match read_manifest(&mpath) {
            Ok(m) => m,
            Err(e) => {
                problems.push(e);
                None
            }
        };
        if threads.is_empty() {
            problems.push(Error::Missing {
                file: dir.display().to_string(),
                what: "no thread files (thread-<tid>.tfc): nothing was recorded".into(),
            });
        }
        if let Some(m) = &manifest {
            for t in &m.threads {
                if !threads.iter().any(|f| f.tid == t.tid) {
                    problems.push(Error::Missing {
                        file: dir
                            .join(format!("thread-{}.tfc", t.tid))
                            .display()
                            .to_string(),
                        what: format!(
                            "missing: the manifest lists thread {} with {} instructions",
                            t.tid, t.traced_instructions
                        ),
                    });
                }
            }
        }

        let mut blocks = BlockTable::new();
        let mut chunks = ChunkReader::open(dir.join("blocks.tfc"))?;
        if chunks.header().kind != StreamKind::BlockTable {
            return Err(Error::header(
                chunks.file(),
                "kind 2 (thread), expected 1 (block table)",
            ));
        }
        loop {
            match chunks.advance() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    problems.push(e);
                    break;
                }
            }
            if let Err(e) = blocks.decode_chunk(chunks.current().payload) {
                problems.push(chunks.decode_damage(e));
                break;
            }
        }
        let validated = threads
            .iter()
            .map(|_| AtomicU64::new(FILE_HEADER_LEN as u64))
            .collect();
        Ok(Trace {
            dir,
            manifest,
            blocks,
            threads,
            validated,
            problems,
        })
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest, if the trace has a readable one.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// The block table.
    pub fn blocks(&self) -> &BlockTable {
        &self.blocks
    }

    /// The thread files, sorted by tid.
    pub fn threads(&self) -> &[ThreadFile] {
        &self.threads
    }

    /// Damage found while opening (an unreadable or damaged manifest, a
    /// damaged block table, no thread files, a thread file that the
    /// manifest lists but the directory lacks); what came before the damage
    /// is still available.
    pub fn problems(&self) -> &[Error] {
        &self.problems
    }

    fn thread_file(&self, tid: u64) -> Result<&ThreadFile> {
        Ok(&self.threads[self.thread_index(tid)?])
    }

    /// Where thread `tid` is in `threads` (and `validated`).
    fn thread_index(&self, tid: u64) -> Result<usize> {
        self.threads
            .iter()
            .position(|t| t.tid == tid)
            .ok_or_else(|| Error::NoThread {
                dir: self.dir.display().to_string(),
                tid,
            })
    }

    /// A streaming reader of one thread's events. Readers of one trace
    /// share which chunks they found to decode (see
    /// [`ThreadReader::set_validate`]).
    pub fn read_thread(&self, tid: u64) -> Result<ThreadReader<'_>> {
        let i = self.thread_index(tid)?;
        let mut r = ThreadReader::open(&self.threads[i].path, &self.blocks)?;
        r.share_validation(&self.validated[i]);
        Ok(r)
    }

    /// The end of thread `tid`'s first chunks that readers of this trace
    /// have found to decode completely (readers made by
    /// [`read_thread`](Self::read_thread) skip checking them ahead; see
    /// [`ThreadReader::set_validate`]); `None` for a thread not in the trace.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-decoded-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(4))?;
    /// w.thread(1)?.exec(b, &[])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let before = trace.decoded_prefix(1).unwrap();
    /// let mut r = trace.read_thread(1)?;
    /// while r.next_event().is_some() {}
    /// assert!(trace.decoded_prefix(1).unwrap() > before);
    /// // Another opening of the same, unchanged files may be told so.
    /// let again = Trace::open(&dir)?;
    /// again.assume_decoded_prefix(1, trace.decoded_prefix(1).unwrap());
    /// assert_eq!(again.decoded_prefix(1), trace.decoded_prefix(1));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn decoded_prefix(&self, tid: u64) -> Option<u64> {
        let i = self.thread_index(tid).ok()?;
        Some(self.validated[i].load(std::sync::atomic::Ordering::Acquire))
    }

    /// Takes thread `tid`'s chunks up to byte `end` as decoding completely,
    /// as a reader of the same, unchanged file found earlier
    /// ([`decoded_prefix`](Self::decoded_prefix)); the checksums of the
    /// chunks are still verified as they are read. Nothing for a thread not
    /// in the trace.
    pub fn assume_decoded_prefix(&self, tid: u64, end: u64) {
        if let Ok(i) = self.thread_index(tid) {
            self.validated[i].fetch_max(end, std::sync::atomic::Ordering::AcqRel);
        }
    }

    /// The raw chunks of one thread's file (to decode them with a
    /// [`ChunkDecoder`](crate::ChunkDecoder), e.g. in parallel).
    pub fn chunks(&self, tid: u64) -> Result<ChunkReader> {
        let c = ChunkReader::open(&self.thread_file(tid)?.path)?;
        if c.header().kind != StreamKind::Thread || c.header().tid != tid {
            return Err(Error::header(
                c.file(),
                format!("not the stream of thread {tid}"),
            ));
        }
        Ok(c)
    }

    /// Per-chunk counts of one thread's file, and the damage that stopped
    /// the reading, if any.
    pub fn thread_stats(&self, tid: u64) -> Result<(Vec<ChunkStats>, Option<Error>)> {
        thread::thread_stats(&self.thread_file(tid)?.path, &self.blocks)
    }
}

impl Manifest {
    /// The manifest of the trace in `dir` alone, read as [`Trace::open`]
    /// reads it (never waiting on a FIFO, within the limits of §9): `None`
    /// if there is none. For a look at a trace without its block table.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Manifest, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-manifest-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// let b = w.block(&BlockDef::new(0x1000).insn(1))?;
    /// w.thread(1)?.exec(b, &[])?;
    /// w.finish()?;
    /// assert!(Manifest::read(&dir)?.unwrap().complete);
    /// assert!(Manifest::read(&dir.join("nothing"))?.is_none());
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        read_manifest(&dir.join("manifest"))
    }
}

/// The manifest, `None` if there is none; an error if it is not a regular
/// file, is too large (§9) or does not decode.
fn read_manifest(path: &Path) -> Result<Option<Manifest>> {
    let (f, len) = match open_regular(path) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let damaged = |what: String| Error::Manifest {
        file: path.display().to_string(),
        what: if what.starts_with("manifest version") {
            what
        } else {
            format!("damaged: {what}")
        },
    };
    if len > limits::MAX_MANIFEST_BYTES {
        return Err(damaged(format!(
            "{len} bytes, above the limit of {} bytes",
            limits::MAX_MANIFEST_BYTES
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(limits::MAX_MANIFEST_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path.display(), e))?;
    Manifest::from_bytes(&bytes).map(Some).map_err(damaged)
}

#[cfg(test)]
mod tests {
    use super::parse_thread_file_name as p;

    #[test]
    fn thread_file_names() {
        assert_eq!(p("thread-1.tfc"), Some(1));
        assert_eq!(p("thread-12.tfc"), Some(12));
        for bad in [
            "thread-01.tfc",
            "thread-0.tfc",
            "thread-.tfc",
            "thread-1.tfc.tmp",
            "thread-x.tfc",
            "blocks.tfc",
            "thread-+1.tfc",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }
}
