//! The export as an observer of the replay: one [`WarpLines`] per warp,
//! kept in memory while small and spilled to a file of its own when large
//! (warps replay in parallel, in any order), then assembled in formation
//! order by [`crate::kernels`].

use crate::code::{Code, Program};
use crate::warp::{Counts, WarpLines};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tf_analyzer::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
use tf_trace::FunctionId;

/// Warp lines larger than this go to a temporary file.
const SPILL: usize = 256 << 10;

/// Bytes left free at the start of a warp's temporary file: when the warp
/// is a kernel by itself (a program of at most 32 threads), the kernel's
/// header is written there and the file becomes the kernel's, instead of
/// being copied into it (see [`crate::kernels`]).
pub const HEAD_ROOM: u64 = 4096;

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Threads per CTA (a multiple of 32).
    pub block_size: usize,
    /// Export only issues charged to these functions (all when empty).
    pub functions: Vec<String>,
    /// Where warps too large to keep in memory wait to be assembled.
    pub spill_dir: PathBuf,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be written or read.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A warp wider than Accel-Sim's 32 lanes.
    #[error("--warp {0}: Accel-Sim's warps have 32 lanes")]
    Width(usize),
    /// A `--functions` name that the trace does not have.
    #[error("--functions {0}: the trace has no function named {0}")]
    NoFunction(String),
}

/// Where a finished warp's lines are.
#[derive(Debug)]
pub enum Lines {
    /// In memory.
    Memory(Vec<u8>),
    /// In this temporary file, after [`HEAD_ROOM`] bytes left free.
    File(PathBuf),
}

/// One finished warp.
#[derive(Debug)]
pub struct Warp {
    /// Its number in formation order.
    pub index: usize,
    /// The function of its first issue (the kind of its units).
    pub kind: FunctionId,
    /// Its lines (the last one its `EXIT`).
    pub lines: Lines,
    /// What its lines add up to.
    pub counts: Counts,
    /// The highest register number it uses.
    pub max_reg: u8,
    /// Whether it issued anything of the selected functions.
    pub selected: bool,
}

/// The program and function names, made when the first warp begins.
struct Prepared {
    program: Arc<Program>,
    names: Vec<String>,
    missing: Vec<String>,
}

/// The observer: collects every warp's lines.
pub struct Exporter {
    opts: ExportOptions,
    prepared: OnceLock<Prepared>,
    warps: Mutex<Vec<Warp>>,
    failure: Arc<Mutex<Option<Error>>>,
}

impl Exporter {
    /// An exporter with `opts`.
    pub fn new(opts: ExportOptions) -> Exporter {
        Exporter {
            opts,
            prepared: OnceLock::new(),
            warps: Mutex::new(Vec::new()),
            failure: Arc::new(Mutex::new(None)),
        }
    }

    fn prepare(&self, ctx: &Context<'_>) -> &Prepared {
        self.prepared.get_or_init(|| {
            let code = Code::build(ctx.trace.blocks(), ctx.canon);
            let names: Vec<String> = (0..=ctx.functions.max_id())
                .map(|id| ctx.functions.info(id as FunctionId).name.clone())
                .collect();
            let selected = (!self.opts.functions.is_empty()).then(|| {
                (0..names.len())
                    .filter(|&id| self.opts.functions.contains(&names[id]))
                    .map(|id| id as FunctionId)
                    .collect::<HashSet<FunctionId>>()
            });
            let missing = self
                .opts
                .functions
                .iter()
                .filter(|f| !names.contains(f))
                .cloned()
                .collect();
            Prepared {
                program: Arc::new(Program { code, selected }),
                names,
                missing,
            }
        })
    }

    /// The translated code, once the replay has started.
    pub fn translated(&self) -> Option<&Code> {
        self.prepared.get().map(|p| &p.program.code)
    }

    /// Function names by id (known once the replay has started).
    pub fn function_names(&self) -> &[String] {
        self.prepared.get().map_or(&[], |p| p.names.as_slice())
    }

    /// Options of this export.
    pub fn options(&self) -> &ExportOptions {
        &self.opts
    }

    /// The finished warps in formation order, or the first error.
    pub fn take_warps(&self) -> Result<Vec<Warp>, Error> {
        if let Some(e) = self.failure.lock().expect("not poisoned").take() {
            return Err(e);
        }
        if let Some(name) = self.prepared.get().and_then(|p| p.missing.first()) {
            return Err(Error::NoFunction(name.clone()));
        }
        let mut warps = std::mem::take(&mut *self.warps.lock().expect("not poisoned"));
        warps.sort_by_key(|w| w.index);
        Ok(warps)
    }
}

impl Exporter {
    /// After the replay: writes every warp's lines as kernels into `dir`
    /// (see [`crate::kernels`]) and removes the spilled warps; `advance` is
    /// told of each warp written.
    pub fn finish(
        &self,
        dir: &Path,
        warp_width: usize,
        advance: &dyn Fn(u64),
    ) -> Result<crate::kernels::Summary, Error> {
        let warps = self.take_warps();
        let written = warps.and_then(|warps| {
            let layout = crate::kernels::Layout {
                names: self.function_names(),
                block_size: self.opts.block_size,
                warp_width,
                code: self.translated(),
                filtered: !self.opts.functions.is_empty(),
            };
            crate::kernels::assemble(dir, warps, &layout, advance)
        });
        let _ = std::fs::remove_dir_all(&self.opts.spill_dir);
        written
    }
}

/// A warp's sink: its lines, spilled to a file as they grow.
pub struct Sink {
    lines: WarpLines,
    index: usize,
    spill_dir: PathBuf,
    file: Option<PathBuf>,
    failure: Arc<Mutex<Option<Error>>>,
}

impl IssueSink for Sink {
    fn issue(&mut self, issue: &Issue<'_>) {
        self.lines.issue(issue);
        if self.lines.out.len() > SPILL {
            self.flush();
        }
    }
}

impl Sink {
    fn flush(&mut self) {
        let path = self.spill_dir.join(format!("warp-{}", self.index));
        let io = |e| Error::Io(path.clone(), e);
        let written = std::fs::create_dir_all(&self.spill_dir)
            .map_err(io)
            .and_then(|()| {
                let f = (std::fs::OpenOptions::new().create(true).append(true))
                    .open(&path)
                    .map_err(io)?;
                if self.file.is_none() {
                    // a hole: nothing is written there unless a header is
                    f.set_len(HEAD_ROOM).map_err(io)?;
                }
                Ok(f)
            })
            .and_then(|mut f| f.write_all(&self.lines.out).map_err(io));
        match written {
            Ok(()) => self.file = Some(path),
            Err(e) => {
                self.failure.lock().expect("not poisoned").get_or_insert(e);
            }
        }
        self.lines.out.clear();
    }
}

impl Observer for Exporter {
    type Sink = Sink;

    fn begin(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>) -> Sink {
        let prepared = self.prepare(ctx);
        if warp.width > 32 {
            self.failure
                .lock()
                .expect("not poisoned")
                .get_or_insert(Error::Width(warp.width));
        }
        // Lanes past 32 cannot be written; the failure above reports it.
        let lanes = &warp.lanes[..warp.lanes.len().min(32)];
        let lanes = lanes.iter().map(|l| (l.stack, l.sp)).collect();
        Sink {
            lines: WarpLines::new(Arc::clone(&prepared.program), lanes),
            index: warp.index,
            spill_dir: self.opts.spill_dir.clone(),
            file: None,
            failure: Arc::clone(&self.failure),
        }
    }

    fn end(&self, _ctx: &Context<'_>, warp: &WarpInfo<'_>, mut sink: Sink) {
        let selected = sink.lines.counts.x86_warp_instructions > 0;
        sink.lines.finish();
        if sink.file.is_some() || sink.lines.out.len() > SPILL / 4 {
            sink.flush();
        }
        let lines = match sink.file.take() {
            Some(p) => Lines::File(p),
            None => Lines::Memory(std::mem::take(&mut sink.lines.out)),
        };
        self.warps.lock().expect("not poisoned").push(Warp {
            index: warp.index,
            kind: sink.lines.first_function.unwrap_or(0),
            lines,
            counts: sink.lines.counts,
            max_reg: sink.lines.max_reg,
            selected,
        });
    }
}
