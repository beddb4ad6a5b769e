//! The first pass's results kept in the trace directory, so that later
//! analyses of the same trace with the same `--unit` skip that pass (the
//! other options only change the replay).
//!
//! An index file, `TRACE/index/scan-XXXXXXXX.tfi`, holds what the first pass
//! learnt (every thread's [`ThreadScan`] and the functions' graphs) under a
//! key: the build that wrote it (a fingerprint of the sources that decide
//! the first pass), the `--unit` it was cut for, and the size, modification
//! time and inode of every file of the trace. A key that differs in anything
//! is a miss, and the pass runs again. The key is taken before the pass;
//! as git does for its index, nothing is written when a file had changed
//! less than [`SETTLE_SECS`] before (a later change within the file
//! system's timestamp granularity, a second or two on some, could leave the
//! stamps as they were), nor when the files, stamped again after the pass,
//! changed during it. The body carries a
//! CRC-32C; an index that does not check or decode is an error the caller
//! reports before running the pass again.
//!
//! ```no_run
//! use tf_analyzer::scan_index::ScanIndex;
//! let trace = tf_trace::Trace::open("trace").unwrap();
//! let index = ScanIndex::for_trace(&trace, "auto").unwrap();
//! match index.load() {
//!     Ok(Some(pass)) => println!("{} threads indexed", pass.scans.len()),
//!     Ok(None) => println!("no index for this trace and unit"),
//!     Err(e) => println!("{e}"),
//! }
//! ```

use crate::cfg::Cfgs;
use crate::scan::ThreadScan;
use crate::unit_starts::UnitStarts;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tf_trace::stream::crc32c;
use tf_trace::Trace;

/// The directory of index files inside a trace directory.
pub const DIR: &str = "index";

/// A trace with a file changed less than this many seconds before the key is
/// taken is not indexed (see the module's documentation).
pub const SETTLE_SECS: u64 = 2;

const MAGIC: &[u8; 8] = b"tf-index";
/// 2: the body is the key, then the pass (two MessagePack values).
const VERSION: u32 = 3;
/// Magic, version, CRC-32C of the body, body length.
const HEADER_LEN: usize = 8 + 4 + 4 + 8;

/// The sources this build's first pass comes from (see `build.rs`).
const FINGERPRINT: &str = include_str!(concat!(env!("OUT_DIR"), "/source_fingerprint"));

/// What the first pass learnt about a trace.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FirstPass {
    /// Every thread's scan, by thread id.
    pub scans: Vec<ThreadScan>,
    /// The functions' graphs.
    pub cfgs: Cfgs,
    /// The pass decoded each chunk whole before using it, as it must once a
    /// chunk did not decode ([`ScanJob::check_ahead`](crate::scan::ScanJob::check_ahead)):
    /// later passes over the trace must too.
    pub check_ahead: bool,
    /// Per thread id, the end of its file's first chunks that decoded
    /// ([`Trace::decoded_prefix`]): the replay's readers need not decode
    /// them ahead again.
    pub decoded: Vec<(u64, u64)>,
    /// Per thread id, where its long units start (threads without any left
    /// out).
    pub starts: Vec<(u64, UnitStarts)>,
}

/// Why an index could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A file system error.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// An index file that does not check or decode.
    #[error("{path}: {reason}; the first pass runs again")]
    Damaged {
        /// The index file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// One file of the trace as the key records it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    name: String,
    size: u64,
    mtime_ns: i128,
    inode: u64,
}

/// What an index must match to be used.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Key {
    build: String,
    unit: String,
    files: Vec<Stamp>,
}

/// The index of one trace for one `--unit`.
pub struct ScanIndex {
    dir: PathBuf,
    path: PathBuf,
    key: Key,
    /// A file that had changed less than [`SETTLE_SECS`] before the key
    /// was taken, if any.
    recent: Option<String>,
}

/// The error of a file system operation on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError {
    let path = path.to_path_buf();
    move |source| IndexError::Io { path, source }
}

/// The stamps of every file of the trace in `dir`, sorted by name, and
/// the name of one that changed less than [`SETTLE_SECS`] ago, if any.
fn stamps(dir: &Path) -> Result<(Vec<Stamp>, Option<String>), IndexError> {
    let now = SystemTime::now();
    let mut files = Vec::new();
    let mut recent = None;
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let meta = entry.metadata().map_err(io(&entry.path()))?;
        if !meta.is_file() {
            continue;
        }
        let modified = meta.modified().map_err(io(&entry.path()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // A time in the future counts as just now.
        if now.duration_since(modified).unwrap_or_default() < Duration::from_secs(SETTLE_SECS) {
            recent = Some(name.clone());
        }
        files.push(Stamp {
            name,
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            inode: meta.ino(),
        });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((files, recent))
}

impl ScanIndex {
    /// The index of `trace` for the unit spec `unit` (as `--unit` spells it),
    /// keyed by the trace's files as they are now: take it before the pass.
    pub fn for_trace(trace: &Trace, unit: &str) -> Result<ScanIndex, IndexError> {
        let dir = trace.dir();
        let (files, recent) = stamps(dir)?;
        let file = format!("scan-{:08x}.tfi", crc32c(unit.as_bytes()));
        Ok(ScanIndex {
            dir: dir.to_path_buf(),
            path: dir.join(DIR).join(file),
            key: Key {
                build: FINGERPRINT.to_string(),
                unit: unit.to_string(),
                files,
            },
            recent,
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first pass kept for this key; `None` when there is no index or
    /// it was written for another build, unit or state of the trace.
    pub fn load(&self) -> Result<Option<FirstPass>, IndexError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&self.path)(e)),
        };
        let damaged = |reason: String| IndexError::Damaged {
            path: self.path.clone(),
            reason,
        };
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(damaged("not an index file".into()));
        }
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        if word(8) != VERSION {
            // Written by a tf with another index layout: not ours to read.
            return Ok(None);
        }
        let len = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
        let body = &bytes[HEADER_LEN..];
        if body.len() as u64 != len {
            return Err(damaged(format!(
                "{} bytes of body, the header says {len}",
                body.len()
            )));
        }
        if crc32c(body) != word(12) {
            return Err(damaged("checksum mismatch".into()));
        }
        // The key first: another build's pass need not even decode here.
        let mut values = rmp_serde::Deserializer::new(body);
        let key: Key = serde::Deserialize::deserialize(&mut values)
            .map_err(|e: rmp_serde::decode::Error| damaged(e.to_string()))?;
        if key != self.key {
            return Ok(None);
        }
        let pass: FirstPass = serde::Deserialize::deserialize(&mut values)
            .map_err(|e: rmp_serde::decode::Error| damaged(e.to_string()))?;
        Ok(Some(pass))
    }

    /// Keeps `pass` for this key, replacing any index for this unit: written
    /// to a temporary file and renamed, so that readers (other shards of
    /// the same trace) see a whole file or none. Nothing is written, and
    /// the reason is returned, when a file of the trace had changed less
    /// than [`SETTLE_SECS`] before the key was taken, or changed since (the
    /// files are stamped again first).
    pub fn store(&self, pass: &FirstPass) -> Result<Option<String>, IndexError> {
        if let Some(name) = &self.recent {
            return Ok(Some(format!(
                "{name} had changed less than {SETTLE_SECS} s before"
            )));
        }
        if stamps(&self.dir)?.0 != self.key.files {
            return Ok(Some("the trace changed during the first pass".into()));
        }
        let dir = self.path.parent().expect("in the index directory");
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut body =
            rmp_serde::to_vec(&self.key).map_err(|e| io(&self.path)(std::io::Error::other(e)))?;
        rmp_serde::encode::write(&mut body, pass)
            .map_err(|e| io(&self.path)(std::io::Error::other(e)))?;
        // Unique to this writer, also among machines sharing the file system.
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let tmp = dir.join(format!(
            ".{}.{}-{nanos}.tmp",
            self.path.file_name().expect("named").to_string_lossy(),
            std::process::id()
        ));
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        let written = f
            .write_all(MAGIC)
            .and_then(|_| f.write_all(&VERSION.to_le_bytes()))
            .and_then(|_| f.write_all(&crc32c(&body).to_le_bytes()))
            .and_then(|_| f.write_all(&(body.len() as u64).to_le_bytes()))
            .and_then(|_| f.write_all(&body))
            .and_then(|_| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(&self.path)(e));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::FunctionCfg;
    use crate::testutil::TempTrace;
    use tf_trace::BlockDef;

    /// A one-thread trace whose files were last changed a minute ago.
    fn settled_trace() -> crate::testutil::OpenTrace {
        let mut t = TempTrace::new();
        let b = t.writer().block(&BlockDef::new(0x1000).insn(4)).unwrap();
        t.writer().thread(1).unwrap().exec(b, &[]).unwrap();
        let trace = t.finish();
        age(trace.dir(), 60);
        trace
    }

    /// Sets the modification time of every file in `dir` `secs` seconds back.
    fn age(dir: &Path, secs: u64) {
        let then = SystemTime::now() - Duration::from_secs(secs);
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                let f = std::fs::File::options().write(true).open(&p).unwrap();
                f.set_modified(then).unwrap();
            }
        }
    }

    fn pass() -> FirstPass {
        let cfg = FunctionCfg {
            entries: vec![0],
            edges: vec![(0, crate::cfg::VEXIT)],
            ..Default::default()
        };
        FirstPass {
            scans: Vec::new(),
            cfgs: [(0x1000, cfg)].into_iter().collect(),
            check_ahead: true,
            decoded: vec![(1, 4096)],
            starts: Vec::new(),
        }
    }

    #[test]
    fn a_stored_pass_is_read_back_for_the_same_key_only() {
        let trace = settled_trace();
        let index = ScanIndex::for_trace(&trace, "thread").unwrap();
        assert!(index.load().unwrap().is_none(), "nothing stored yet");
        assert_eq!(index.store(&pass()).unwrap(), None, "written");
        let back = index.load().unwrap().expect("same key");
        assert_eq!(back.cfgs, pass().cfgs);
        assert_eq!((back.check_ahead, back.decoded), (true, vec![(1, 4096)]));

        // Another build, another unit spec at the same path: misses.
        let mut other = ScanIndex::for_trace(&trace, "thread").unwrap();
        other.key.build = "0000000000000000".into();
        assert!(other.load().unwrap().is_none());
        let mut other = ScanIndex::for_trace(&trace, "thread").unwrap();
        other.key.unit = "auto".into();
        assert!(other.load().unwrap().is_none());
        // Another unit spec has a file of its own.
        let auto = ScanIndex::for_trace(&trace, "auto").unwrap();
        assert_ne!(auto.path(), index.path());
        assert!(auto.load().unwrap().is_none());

        // A trace file modified since: misses, and is not indexed again
        // until it settles.
        let thread_file = trace.dir().join("thread-1.tfc");
        let f = std::fs::File::options()
            .write(true)
            .open(&thread_file)
            .unwrap();
        f.set_modified(SystemTime::now()).unwrap();
        let changed = ScanIndex::for_trace(&trace, "thread").unwrap();
        assert!(changed.load().unwrap().is_none());
        let why = changed.store(&pass()).unwrap().expect("not written");
        assert!(
            why.contains("thread-1.tfc had changed less than 2 s before"),
            "{why}"
        );
        assert!(changed.load().unwrap().is_none());

        // Changed while the pass ran (between the key and the writing).
        age(trace.dir(), 60);
        let during = ScanIndex::for_trace(&trace, "thread").unwrap();
        age(trace.dir(), 120);
        let why = during.store(&pass()).unwrap().expect("not written");
        assert_eq!(why, "the trace changed during the first pass");
        assert!(during.load().unwrap().is_none());
    }

    #[test]
    fn a_damaged_index_is_an_error_and_an_unsettled_trace_is_not_indexed() {
        let trace = settled_trace();
        let index = ScanIndex::for_trace(&trace, "thread").unwrap();
        assert_eq!(index.store(&pass()).unwrap(), None, "written");
        let mut bytes = std::fs::read(index.path()).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(index.path(), &bytes).unwrap();
        let e = index.load().err().expect("damaged").to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        std::fs::write(index.path(), b"tf-ind").unwrap();
        let e = index.load().err().expect("damaged").to_string();
        assert!(e.contains("not an index file"), "{e}");

        std::fs::remove_dir_all(trace.dir().join(DIR)).unwrap();
        age(trace.dir(), 0);
        let fresh = ScanIndex::for_trace(&trace, "thread").unwrap();
        assert!(fresh.store(&pass()).unwrap().is_some());
        assert!(!trace.dir().join(DIR).exists(), "nothing written");
    }
}
