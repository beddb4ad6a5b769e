//! The tf trace format: reader and writer (see `FORMAT.md` beside this crate).
//!
//! A trace is a directory: a MessagePack `manifest`, a block table
//! `blocks.tfc`, and one event stream `thread-<tid>.tfc` per thread.
//! [`Trace`] opens one for reading; [`TraceWriter`] writes one.
//!
//! ```
//! # fn main() -> tf_trace::Result<()> {
//! use tf_trace::{BlockDef, EndKind, Event, Trace, TraceWriter};
//! let dir = std::env::temp_dir().join(format!("tf-doc-lib-{}", std::process::id()));
//!
//! // Write: define blocks, then what each thread executed.
//! let mut w = TraceWriter::create(&dir)?;
//! let a = w.block(&BlockDef::new(0x1000).insn(4).read(8).insn(2).end(EndKind::Branch))?;
//! let b = w.block(&BlockDef::new(0x1006).insn(3).end(EndKind::Jump))?;
//! let mut t = w.thread(1)?;
//! for i in 0..4 {
//!     t.exec(a, &[0x5000 + 8 * i])?;
//!     t.exec(b, &[])?;
//! }
//! w.finish()?;
//!
//! // Read it back.
//! let trace = Trace::open(&dir)?;
//! let mut r = trace.read_thread(1)?;
//! let mut seen = Vec::new();
//! while let Some(ev) = r.next_event() {
//!     if let Event::Block(x) = ev? {
//!         let addr = x.accesses().first().map(|acc| acc.addr);
//!         seen.push((x.block, addr));
//!     }
//! }
//! assert_eq!(seen[..3], [(a, Some(0x5000)), (b, None), (a, Some(0x5008))]);
//! assert_eq!(seen.len(), 8);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```
//!
//! # Reading
//!
//! - [`Trace::open`] reads the manifest (if any), the whole [`BlockTable`]
//!   and lists the thread files; damage it can live with goes to
//!   [`Trace::problems`].
//! - [`Trace::read_thread`] gives a [`ThreadReader`], whose lending
//!   [`next_event`](ThreadReader::next_event) returns [`Event`]s that borrow
//!   its buffers: runs are expanded into one [`Event::Block`] per
//!   execution, with [`BlockExec::accesses`] holding the decoded addresses.
//!   Memory stays at one chunk, and nothing is allocated per record.
//!   Runs that go round a loop are decoded from each operand's course
//!   rather than the prediction tables, and
//!   [`skip_rounds`](ThreadReader::skip_rounds) moves over whole rounds of
//!   them without decoding; [`state`](ThreadReader::state) and
//!   [`resume`](ThreadReader::resume) start another reader where one stands.
//! - For parallel decoding, [`Trace::chunks`] yields raw verified chunks
//!   ([`ChunkRef::to_owned`] to send them elsewhere) and a
//!   [`ChunkDecoder`] decodes any one of them on its own.
//! - [`Trace::thread_stats`] counts records, executions, instructions and
//!   bytes per chunk without computing addresses (for `tf info`).
//! - Every error is one line naming the file and, for a damaged chunk, its
//!   byte offset; a reader stops at the first damaged chunk and never
//!   returns anything from it.
//!
//! # Writing
//!
//! [`TraceWriter`] defines modules, functions and blocks ([`BlockDef`], or
//! the compact [`TraceWriter::block_spec`]) and gives a [`ThreadWriter`]
//! per thread, which writes the canonical encoding of FORMAT.md §6.5 (byte
//! for byte what `include/tf_trace.h` writes). [`WriterOptions`] sets the
//! chunk target and the table parameters.
#![warn(missing_docs)]

mod block_def;
pub mod block_table;
mod decode;
mod encode;
pub mod error;
pub mod event;
pub mod limits;
pub mod manifest;
mod predict;
pub mod stream;
pub mod thread;
pub mod trace;
pub mod varint;
pub mod writer;

pub use block_def::BlockDef;
pub use block_table::{
    Block, BlockId, BlockTable, EndKind, Function, FunctionId, Module, ModuleId, Operand,
};
pub use error::{Damage, DecodeError, Error, Result};
pub use event::{
    Access, BlockExec, Event, ExitHow, LockKind, LoopChunk, SkipReason, StaticLoop, Via,
};
pub use manifest::{ByteString, Manifest, ModuleSummary, ThreadSummary};
pub use stream::{Chunk, ChunkReader, ChunkRef, StreamHeader, StreamKind, TableParams};
pub use thread::{
    ChunkDecoder, ChunkEvents, ChunkStats, ReaderState, ReaderStateDelta, ThreadReader,
};
pub use trace::{ThreadFile, Trace};
pub use writer::{ThreadWriter, TraceWriter, WriterOptions};
