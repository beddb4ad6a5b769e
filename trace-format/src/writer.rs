//! Writing traces (§5, §6.5): [`TraceWriter`] and [`ThreadWriter`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::block_def::BlockDef;
use crate::block_table::{encode, BlockId, BlockTable, FunctionId, ModuleId};
use crate::encode::ThreadState;
use crate::error::{Error, Result};
use crate::manifest::{ByteString, Manifest, ModuleSummary, ThreadSummary};
use crate::predict::Predictor;
use crate::stream::{ChunkWriter, StreamHeader, StreamKind, TableParams};
use crate::varint::Cursor;

mod thread_writer;
pub use thread_writer::ThreadWriter;

/// Writer settings.
///
/// ```
/// let o = tf_trace::WriterOptions { chunk_target: 256, ..Default::default() };
/// assert_eq!(o.params.addr_table_bits, 14);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// A chunk is closed as soon as its payload reaches this many bytes
    /// after a whole record (§6.5). Default 1 MiB.
    pub chunk_target: usize,
    /// Table parameters of the thread streams.
    pub params: TableParams,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            chunk_target: 1 << 20,
            params: TableParams::default(),
        }
    }
}

/// The block table being written, and its file.
pub(crate) struct BlockSink {
    pub(crate) table: BlockTable,
    pub(crate) out: ChunkWriter,
    pub(crate) target: usize,
    pub(crate) scratch: Vec<u8>,
}

impl BlockSink {
    /// Checks the record in `scratch` by decoding it into the table, then
    /// appends it to the chunk.
    fn add(&mut self) -> Result<()> {
        let mut cur = Cursor::new(&self.scratch);
        self.table
            .decode_record(&mut cur)
            .map_err(|e| Error::Invalid(e.what))?;
        self.out.buf.extend_from_slice(&self.scratch);
        if self.out.payload_len() >= self.target {
            self.out.close_chunk()?;
        }
        Ok(())
    }
}

/// Writes a trace directory: block table, thread streams, manifest.
///
/// Define modules, functions and blocks (each call returns the new id),
/// then write what each thread executes through [`thread`](Self::thread).
/// Definitions and executions may interleave freely; the writer puts block
/// definitions on disk before any thread chunk that uses them. The thread
/// streams are the canonical encoding of §6.5, byte for byte.
///
/// ```
/// # fn main() -> tf_trace::Result<()> {
/// use tf_trace::{BlockDef, EndKind, LockKind, SkipReason, TraceWriter};
/// let dir = std::env::temp_dir().join(format!("tf-doc-writer-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// let f = w.function(0x1000, 0, "worker")?;
/// // A loop: head (load 4 bytes, compare, branch) and tail (store, jump back).
/// let head = w.block(&BlockDef::new(0x1000).function(f).insn(4).read(4).insn(3).insn(2).end(EndKind::Branch))?;
/// let tail = w.block(&BlockDef::new(0x1009).function(f).insn(4).write(4).insn(2).end(EndKind::Jump))?;
/// let exit = w.block(&BlockDef::new(0x100f).function(f).insn(1).end(EndKind::Return))?;
///
/// let mut t = w.thread(1)?;
/// t.thread_start(0, 0x7ff0_0000, 0x7ff1_0000, 0x1000)?;
/// t.lock_acquire(LockKind::Mutex, 0x60_1040)?;
/// for i in 0..10u64 {
///     t.exec(head, &[0x60_0000 + 4 * i])?;
///     t.exec(tail, &[0x61_0000 + 4 * i])?;
/// }
/// t.exec(head, &[0x60_0028])?;
/// t.exec(exit, &[])?;
/// t.lock_release(LockKind::Mutex, 0x60_1040)?;
/// t.skip(SkipReason::LockRuntime, 120)?;
/// t.thread_exit(tf_trace::ExitHow::Ended)?;
/// w.finish()?;
/// # let trace = tf_trace::Trace::open(&dir)?;
/// # assert_eq!(trace.manifest().unwrap().traced_instructions, 11 * 3 + 10 * 2 + 1);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
pub struct TraceWriter {
    dir: PathBuf,
    opts: WriterOptions,
    sink: BlockSink,
    threads: BTreeMap<u64, ThreadState>,
    manifest: Manifest,
    finished: bool,
}

impl TraceWriter {
    /// Creates (or reuses) directory `dir` and starts a trace there with
    /// default options.
    pub fn create(dir: impl AsRef<Path>) -> Result<TraceWriter> {
        TraceWriter::create_with(dir, WriterOptions::default())
    }

    /// Like [`create`](Self::create), with options.
    pub fn create_with(dir: impl AsRef<Path>, opts: WriterOptions) -> Result<TraceWriter> {
        opts.params.check().map_err(Error::Invalid)?;
        if opts.chunk_target == 0 {
            return Err(Error::Invalid("chunk_target must be at least 1".into()));
        }
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
        let out = ChunkWriter::create(&dir.join("blocks.tfc"), &StreamHeader::block_table())?;
        let w = TraceWriter {
            sink: BlockSink {
                table: BlockTable::new(),
                out,
                target: opts.chunk_target,
                scratch: Vec::new(),
            },
            dir,
            opts,
            threads: BTreeMap::new(),
            manifest: Manifest {
                tracer: "tf-trace".into(),
                tracer_version: env!("CARGO_PKG_VERSION").into(),
                ..Manifest::default()
            },
            finished: false,
        };
        w.write_manifest()?;
        Ok(w)
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The blocks defined so far.
    pub fn blocks(&self) -> &BlockTable {
        &self.sink.table
    }

    /// The manifest to be written, to set `command`, `tracer`, … The
    /// writer fills in `complete`, `threads`, `modules`, the instruction
    /// counts and `blocks` when it finishes.
    pub fn manifest_mut(&mut self) -> &mut Manifest {
        &mut self.manifest
    }

    /// Defines a module; returns its id (1, 2, …).
    pub fn module(
        &mut self,
        base: u64,
        size: u64,
        path: impl AsRef<[u8]>,
        build_id: &[u8],
    ) -> Result<ModuleId> {
        let id = self.sink.table.modules().len() as ModuleId + 1;
        self.sink.scratch.clear();
        encode::module(
            &mut self.sink.scratch,
            id,
            base,
            size,
            path.as_ref(),
            build_id,
        );
        self.sink.add()?;
        Ok(id)
    }

    /// Defines a function (module 0 = unknown); returns its id (1, 2, …).
    pub fn function(
        &mut self,
        entry: u64,
        module: ModuleId,
        name: impl AsRef<[u8]>,
    ) -> Result<FunctionId> {
        let id = self.sink.table.functions().len() as FunctionId + 1;
        self.sink.scratch.clear();
        encode::function(&mut self.sink.scratch, id, entry, module, name.as_ref());
        self.sink.add()?;
        Ok(id)
    }

    /// Defines a block; returns its id (0, 1, …). The definition is checked
    /// against §5 (lengths, operand order and sizes, …).
    pub fn block(&mut self, def: &BlockDef) -> Result<BlockId> {
        let id = self.sink.table.len() as BlockId;
        self.sink.scratch.clear();
        encode::block(
            &mut self.sink.scratch,
            id,
            def.address,
            def.function,
            def.end,
            &def.code_bytes(),
            &def.lens,
            &def.ops,
        );
        self.sink.add()?;
        Ok(id)
    }

    /// Defines a block from a compact description (see [`BlockDef::parse`]).
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// # let dir = std::env::temp_dir().join(format!("tf-doc-spec-{}", std::process::id()));
    /// let mut w = tf_trace::TraceWriter::create(&dir)?;
    /// let head = w.block_spec(0x1000, "4r8 3 2 branch")?;
    /// let body = w.block_spec(0x1009, "4w8 2 jump")?;
    /// let mut t = w.thread(1)?;
    /// t.exec(head, &[0x5000])?;
    /// t.exec(body, &[0x6000])?;
    /// # drop(w); std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn block_spec(&mut self, address: u64, spec: &str) -> Result<BlockId> {
        self.block(&BlockDef::parse(address, spec)?)
    }

    /// The writer of thread `tid` (≥ 1), creating its file on first use.
    pub fn thread(&mut self, tid: u64) -> Result<ThreadWriter<'_>> {
        if tid == 0 {
            return Err(Error::Invalid("thread ids start at 1".into()));
        }
        if !self.threads.contains_key(&tid) {
            let header = StreamHeader {
                kind: StreamKind::Thread,
                tid,
                params: self.opts.params,
            };
            let out = ChunkWriter::create(&self.dir.join(format!("thread-{tid}.tfc")), &header)?;
            self.threads.insert(
                tid,
                ThreadState {
                    out,
                    pred: Predictor::new(self.opts.params),
                    pending: 0,
                    pending_ops: 0,
                    scratch: Vec::new(),
                    target: self.opts.chunk_target,
                    summary: ThreadSummary {
                        tid,
                        ..ThreadSummary::default()
                    },
                    failed: false,
                },
            );
        }
        Ok(ThreadWriter {
            sink: &mut self.sink,
            t: self.threads.get_mut(&tid).unwrap(),
        })
    }

    /// Writes out everything gathered so far (closing every open chunk), as
    /// a tracer does before the program dies or `exec`s.
    pub fn flush(&mut self) -> Result<()> {
        for t in self.threads.values_mut() {
            t.flush(&mut self.sink)?;
        }
        self.sink.out.close_chunk()
    }

    /// Flushes everything and writes the final manifest (`complete: true`).
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        let m = &mut self.manifest;
        m.complete = true;
        m.blocks = self.sink.table.len() as u64;
        m.modules = self
            .sink
            .table
            .modules()
            .iter()
            .map(|md| ModuleSummary {
                id: md.id as u64,
                path: ByteString(md.path.clone()),
                base: md.base,
                size: md.size,
                build_id: ByteString(md.build_id.clone()),
            })
            .collect();
        m.threads = self.threads.values().map(|t| t.summary.clone()).collect();
        let sum = |f: fn(&ThreadSummary) -> u64| {
            m.threads.iter().fold(0u64, |a, t| a.saturating_add(f(t)))
        };
        m.traced_instructions = sum(|t| t.traced_instructions);
        m.skipped_instructions = sum(|t| t.skipped_instructions);
        self.write_manifest()?;
        self.finished = true;
        Ok(())
    }

    fn write_manifest(&self) -> Result<()> {
        let path = self.dir.join("manifest");
        let tmp = self.dir.join("manifest.tmp");
        std::fs::write(&tmp, self.manifest.to_bytes()).map_err(|e| Error::io(tmp.display(), e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(path.display(), e))
    }
}

impl Drop for TraceWriter {
    /// Without [`finish`](TraceWriter::finish), the chunks still in memory
    /// are written out (as a tracer does when the program dies), but the
    /// manifest stays the initial one (`complete: false`).
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.flush();
        }
    }
}
