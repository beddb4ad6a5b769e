//! Assembles finished warps into `kernelslist.g` and `kernel-N.traceg`.
//!
//! Warps come in formation order. Consecutive warps whose units are of one
//! kind (the function their first issue ran: a worker, an OpenMP outlined
//! function, the `--unit call:FN` function) form one kernel: one kind run by
//! one parallel region. A kernel's CTAs hold `--block-size / 32` warps each
//! (fewer when the kernel has fewer warps); a last CTA that the warps do not
//! fill gets warps that only `EXIT`, since Accel-Sim needs every warp of
//! every CTA.

use crate::export::{Error, Lines, Warp, HEAD_ROOM};
use crate::warp::Counts;
use serde::Serialize;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One kernel of an export.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    /// Its file, relative to the export directory.
    pub file: String,
    /// Its name: the function its units run.
    pub name: String,
    /// Warps of the replay it holds.
    pub warps: usize,
    /// Warps added to fill its last CTA (one `EXIT` each).
    pub padding_warps: usize,
    /// Grid dimensions (CTAs).
    pub grid: [usize; 3],
    /// CTA dimensions (threads).
    pub block: [usize; 3],
    /// Registers per thread.
    pub nregs: usize,
    /// What its lines add up to (padding included).
    pub counts: Counts,
    /// Bytes of its file.
    pub bytes: u64,
}

/// What an export wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The warp width of the replay.
    pub warp_width: usize,
    /// The kernels, in `kernelslist.g` order.
    pub kernels: Vec<KernelSummary>,
    /// All kernels together.
    pub total: Counts,
    /// Bytes written (all files).
    pub bytes: u64,
    /// Warps left out because they ran none of the `--functions`.
    pub warps_left_out: usize,
    /// x86 instructions the decoder did not know (exported as `NOP`).
    pub undecoded_instructions: usize,
}

/// The file name of the summary in an export directory.
pub const SUMMARY: &str = "tf-export.json";

/// How warps become kernels.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// Function names by id (kernels are named after their units' function).
    pub names: &'a [String],
    /// Threads per CTA (a multiple of 32).
    pub block_size: usize,
    /// The warp width of the replay.
    pub warp_width: usize,
    /// The translated code (absent when nothing replayed).
    pub code: Option<&'a crate::code::Code>,
    /// `--functions` was given: warps that ran none of them are left out.
    pub filtered: bool,
}

/// Writes the kernels of `warps` (in formation order) into `dir` as
/// `layout` says; `advance` is told of each warp written.
pub fn assemble(
    dir: &Path,
    warps: Vec<Warp>,
    layout: &Layout<'_>,
    advance: &dyn Fn(u64),
) -> Result<Summary, Error> {
    let Layout {
        names,
        block_size,
        warp_width,
        code,
        filtered,
    } = *layout;
    let undecoded = code.map_or(0, |c| c.undecoded);
    let exit_pc = code.map_or(0, |c| c.exit_pc);
    let total_warps = warps.len();
    let warps: Vec<Warp> = if filtered {
        warps.into_iter().filter(|w| w.selected).collect()
    } else {
        warps
    };
    let mut summary = Summary {
        warp_width,
        kernels: Vec::new(),
        total: Counts::default(),
        bytes: 0,
        warps_left_out: total_warps - warps.len(),
        undecoded_instructions: undecoded,
    };
    let mut list = String::new();
    let mut rest = warps.as_slice();
    while let Some(first) = rest.first() {
        let n = rest.iter().take_while(|w| w.kind == first.kind).count();
        let (kernel, after) = rest.split_at(n);
        rest = after;
        let id = summary.kernels.len() + 1;
        let name = names
            .get(first.kind as usize)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join("_"))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "kernel".into());
        let k = write_kernel(dir, id, &name, kernel, (block_size, exit_pc), advance)?;
        list += &format!("{}\n", k.file);
        summary.total.add(&k.counts);
        summary.bytes += k.bytes;
        summary.kernels.push(k);
    }
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| Error::Io(p, e)
    };
    let list_path = dir.join("kernelslist.g");
    std::fs::write(&list_path, &list).map_err(io(&list_path))?;
    summary.bytes += list.len() as u64;
    let json = serde_json::to_string_pretty(&summary).expect("a summary serializes") + "\n";
    let json_path = dir.join(SUMMARY);
    std::fs::write(&json_path, json).map_err(io(&json_path))?;
    Ok(summary)
}

/// A kernel's header, up to its `#` line without the line's end.
fn header(name: &str, id: usize, ctas: usize, per_cta: usize, nregs: usize) -> String {
    format!(
        "-kernel name = {name}\n-kernel id = {id}\n-grid dim = ({ctas},1,1)\n\
         -block dim = ({},1,1)\n-shmem = 0\n-nregs = {nregs}\n-binary version = 70\n\
         -cuda stream id = 0\n-shmem base_addr = 0x00007f0000000000\n\
         -local mem base_addr = 0x00007f0001000000\n-accelsim tracer version = 4\n\
         -enable lineinfo = 0\n\n#traces format = [line_num] PC mask dest_num [reg_dests] \
         opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]",
        per_cta * 32
    )
}

/// What comes before the warps of thread block `cta`.
fn cta_start(cta: usize) -> String {
    format!("\n#BEGIN_TB\n\nthread block = {cta},0,0\n")
}

/// What comes before the `lines` lines of the warp in slot `slot` of its
/// thread block.
fn warp_start(slot: usize, lines: u64) -> String {
    format!("\nwarp = {slot}\ninsts = {lines}\n")
}

/// What ends a thread block.
const CTA_END: &[u8] = b"\n#END_TB\n";

/// Makes the temporary file of `w`, a kernel's one warp, the kernel's file
/// at `path`: the kernel's `header` and the start of its one thread block
/// go in the file's head room, the `#` line padded with blanks to fill it
/// (Accel-Sim ignores that line's text), and the thread block's end after
/// the lines. Writing the header there instead of copying the lines after
/// it in a new file halves what the export writes (pigz: 2 GB). Gives the
/// file's bytes; none when the header does not fit (a long kernel name),
/// for the caller to copy the lines instead.
fn take_file(spilled: &Path, header: &str, w: &Warp, path: &Path) -> Result<Option<u64>, Error> {
    let start = cta_start(0) + &warp_start(0, w.counts.lines);
    let Some(pad) = (HEAD_ROOM as usize).checked_sub(header.len() + 1 + start.len()) else {
        return Ok(None);
    };
    let head = format!("{header}{:pad$}\n{start}", "");
    debug_assert_eq!(head.len() as u64, HEAD_ROOM);
    let io = |e| Error::Io(spilled.to_path_buf(), e);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(spilled)
        .map_err(io)?;
    let end = f.metadata().map_err(io)?.len();
    f.write_all_at(head.as_bytes(), 0).map_err(io)?;
    f.write_all_at(CTA_END, end).map_err(io)?;
    drop(f);
    std::fs::rename(spilled, path).map_err(|e| Error::Io(path.to_path_buf(), e))?;
    Ok(Some(end + CTA_END.len() as u64))
}

fn write_kernel(
    dir: &Path,
    id: usize,
    name: &str,
    warps: &[Warp],
    (block_size, exit_pc): (usize, u32),
    advance: &dyn Fn(u64),
) -> Result<KernelSummary, Error> {
    let per_cta = (block_size / 32).clamp(1, warps.len().max(1));
    let ctas = warps.len().div_ceil(per_cta);
    let padding = ctas * per_cta - warps.len();
    let nregs = warps
        .iter()
        .map(|w| usize::from(w.max_reg) + 1)
        .max()
        .unwrap_or(1);
    let file = format!("kernel-{id}.traceg");
    let path = dir.join(&file);
    let header = header(name, id, ctas, per_cta, nregs);
    let taken = match warps {
        [w @ Warp {
            lines: Lines::File(spilled),
            ..
        }] => take_file(spilled, &header, w, &path)?.map(|bytes| {
            advance(1);
            (w.counts, bytes)
        }),
        _ => None,
    };
    let (counts, bytes) = match taken {
        Some(taken) => taken,
        None => write_lines(&path, &header, warps, (ctas, per_cta, exit_pc), advance)?,
    };
    Ok(KernelSummary {
        file,
        name: name.to_string(),
        warps: warps.len(),
        padding_warps: padding,
        grid: [ctas, 1, 1],
        block: [per_cta * 32, 1, 1],
        nregs,
        counts,
        bytes,
    })
}

/// Writes the kernel file at `path`: its `header`, then `ctas` thread
/// blocks of `per_cta` warps each, `warps` in order and then warps that
/// only `EXIT` at `exit_pc`, each warp's lines copied in (the temporary
/// files' after their head room, the files then removed); `advance` is told
/// of each warp. Gives what the lines add up to and the file's bytes.
fn write_lines(
    path: &Path,
    header: &str,
    warps: &[Warp],
    (ctas, per_cta, exit_pc): (usize, usize, u32),
    advance: &dyn Fn(u64),
) -> Result<(Counts, u64), Error> {
    let io = |e| Error::Io(path.to_path_buf(), e);
    let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    writeln!(out, "{header}").map_err(io)?;
    let mut counts = Counts::default();
    let exit_only = format!("{exit_pc:04x} ffffffff 0 EXIT 0 0\n");
    for cta in 0..ctas {
        write!(out, "{}", cta_start(cta)).map_err(io)?;
        for slot in 0..per_cta {
            let Some(w) = warps.get(cta * per_cta + slot) else {
                write!(out, "{}{exit_only}", warp_start(slot, 1)).map_err(io)?;
                counts.lines += 1;
                counts.lane_instructions += 32;
                continue;
            };
            write!(out, "{}", warp_start(slot, w.counts.lines)).map_err(io)?;
            match &w.lines {
                Lines::Memory(bytes) => out.write_all(bytes).map_err(io)?,
                Lines::File(p) => {
                    let mut f = std::fs::File::open(p).map_err(|e| Error::Io(p.clone(), e))?;
                    f.seek(SeekFrom::Start(HEAD_ROOM))
                        .map_err(|e| Error::Io(p.clone(), e))?;
                    std::io::copy(&mut f, &mut out).map_err(io)?;
                    let _ = std::fs::remove_file(p);
                }
            }
            counts.add(&w.counts);
            advance(1);
        }
        out.write_all(CTA_END).map_err(io)?;
    }
    out.flush().map_err(io)?;
    drop(out);
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    Ok((counts, bytes))
}
