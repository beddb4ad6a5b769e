//! A kernel file read in blocks of lines, each block's lines read and
//! checked ahead in parallel, while the lines of the block before go
//! through the checks that depend on the lines before them, in file order.
//!
//! Checking the instruction lines is nearly all of the validator's work,
//! and a line's checks depend only on the header (known before the blocks
//! after the first ones are read) and on the lanes its warp launched: all
//! of them, but in the last warp of a thread block whose size is not a
//! multiple of 32, whose lines are checked in order instead. So each line
//! that may be an instruction line is checked ahead as a line of a warp
//! that launched every lane. What depends on the lines before (the warp
//! being read, the opcode first seen at a PC, the order of the problems
//! and the limit on them) stays with the reader of the blocks.

use super::insn::{check_line, LineContext, Parsed};
use super::opcode::PcOpcodes;
use super::{Problem, Report};
use rayon::prelude::*;
use std::io::Read;
use std::ops::Range;
use std::path::PathBuf;

/// Bytes read at a time (more when a line is longer).
const BLOCK: usize = 4 << 20;

/// A line as the checks read it.
pub(super) struct Line<'b> {
    /// Its text, without its line end, trimmed (read lossily when it is not
    /// ASCII).
    pub(super) text: &'b str,
    /// It ends in `\n` (every line does, but a file's last may not).
    pub(super) newline: bool,
    /// It has a carriage return.
    pub(super) cr: bool,
    /// It is not ASCII.
    pub(super) non_ascii: bool,
}

/// What checking a line ahead found: its problems, and what was parsed of
/// it, with its opcode as a range of the line's text.
struct Ahead {
    problems: Range<usize>,
    parsed: Option<(Parsed<'static>, Range<usize>)>,
}

/// The lines of a stretch of a block.
#[derive(Default)]
struct Piece {
    /// Each line's text (a range of the block's text) and its flags:
    /// whether it ends in `\n`, has a carriage return, is not ASCII.
    lines: Vec<(Range<usize>, bool, bool, bool)>,
    /// One per line, when the piece was checked ahead.
    ahead: Vec<Option<Ahead>>,
    /// The problems of the lines checked ahead.
    problems: Vec<Problem>,
}

/// Lines read from a file, in pieces checked ahead.
pub(super) struct Block {
    /// The lines, read lossily where they are not UTF-8 (which a line's
    /// `\n` always ends, so that each line reads as it would alone).
    text: String,
    pieces: Vec<Piece>,
    /// The bytes of the file it holds (its text can be longer, where a
    /// byte that is not UTF-8 reads as a replacement character).
    bytes: u64,
}

impl Block {
    /// The bytes of the file it holds.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Calls `each` with every line in order, and with what was checked of
    /// it ahead as an instruction line, if it was; stops when `each` gives
    /// false, and gives false then.
    pub(super) fn lines(
        &mut self,
        mut each: impl FnMut(Line<'_>, Option<Checked<'_>>) -> bool,
    ) -> bool {
        for piece in &mut self.pieces {
            for (i, &(ref text, newline, cr, non_ascii)) in piece.lines.iter().enumerate() {
                let text = &self.text[text.clone()];
                let ahead = piece.ahead.get_mut(i).and_then(Option::as_mut);
                let checked = ahead.map(|a| Checked {
                    problems: &mut piece.problems[a.problems.clone()],
                    parsed: &mut a.parsed,
                });
                let line = Line {
                    text,
                    newline,
                    cr,
                    non_ascii,
                };
                if !each(line, checked) {
                    return false;
                }
            }
        }
        true
    }
}

/// What was checked of a line ahead, to be taken once.
pub(super) struct Checked<'b> {
    problems: &'b mut [Problem],
    parsed: &'b mut Option<(Parsed<'static>, Range<usize>)>,
}

impl Checked<'_> {
    /// The problems (to `r`, at line `n`, `r` keeping its limit) and what
    /// was parsed of the line whose text is `t`.
    pub(super) fn take<'t>(self, t: &'t str, r: &mut Report, n: usize) -> Option<Parsed<'t>> {
        for p in self.problems.iter_mut() {
            let message = std::mem::take(&mut p.message);
            r.add(n, p.check, p.error, message);
        }
        self.parsed.take().map(|(p, at)| Parsed {
            opcode: &t[at],
            ..p
        })
    }
}

/// Whether a line with text `t`, once the header is read, is an instruction
/// line when its thread block and warp stand as they should.
fn may_be_instruction(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with('#')
        && !t.starts_with("thread block")
        && !t.starts_with("warp")
        && !t.starts_with("insts")
}

impl Piece {
    /// Reads the lines of `text[stretch]` (whole lines), and checks ahead
    /// those that may be instruction lines under `ctx`, if given, with what
    /// `facts` knows of opcodes by PC.
    fn read(
        &mut self,
        text: &str,
        stretch: Range<usize>,
        ctx: Option<&LineContext>,
        facts: &mut PcOpcodes,
    ) {
        // (the problems' file and line are the reader's to give)
        let mut r = Report::new(PathBuf::new());
        let mut start = stretch.start;
        while start < stretch.end {
            let rest = &text.as_bytes()[start..stretch.end];
            let end = memchr::memchr(b'\n', rest).map_or(stretch.end, |i| start + i + 1);
            let line = &text[start..end];
            let cr = memchr::memchr(b'\r', line.as_bytes()).is_some();
            let t = line.trim_end_matches(['\n', '\r']).trim();
            let at = t.as_ptr() as usize - text.as_ptr() as usize;
            let non_ascii = !line.is_ascii();
            (self.lines).push((at..at + t.len(), line.ends_with('\n'), cr, non_ascii));
            if let Some(ctx) = ctx {
                let ahead = may_be_instruction(t).then(|| {
                    let parsed = check_line(t, ctx, facts, &mut r, 0);
                    let from = self.problems.len();
                    if !r.problems.is_empty() {
                        self.problems.append(&mut r.problems);
                    }
                    Ahead {
                        problems: from..self.problems.len(),
                        parsed: parsed.map(|p| {
                            let at = p.opcode.as_ptr() as usize - t.as_ptr() as usize;
                            (Parsed { opcode: "", ..p }, at..at + p.opcode.len())
                        }),
                    }
                });
                self.ahead.push(ahead);
            }
            start = end;
        }
    }
}

/// A file's lines in blocks.
pub(super) struct Blocks<R> {
    src: R,
    /// The bytes read for the next block.
    buf: Vec<u8>,
    /// A block's buffer given back, to read into again (a new one of 4 MiB
    /// for every block would fault its pages in every time).
    spare: Option<Vec<u8>>,
    /// The error that ended the reading.
    error: Option<std::io::Error>,
    done: bool,
    /// What is known of opcodes by PC, one per piece of a block.
    facts: Vec<PcOpcodes>,
}

impl<R: Read> Blocks<R> {
    pub(super) fn new(src: R) -> Blocks<R> {
        Blocks {
            src,
            buf: Vec::new(),
            spare: None,
            error: None,
            done: false,
            facts: Vec::new(),
        }
    }

    /// The next block of whole lines (the last line of the file as it is),
    /// its lines checked ahead under `ctx` (of a warp that launched every
    /// lane) when given; `None` at the end, or after an error, which
    /// [`Blocks::error`] gives then.
    pub(super) fn next(&mut self, ctx: Option<&LineContext>) -> Option<Block> {
        if self.done {
            return None;
        }
        let lines_end = loop {
            // (the start of a line the last block did not hold, if any, is
            // at the front)
            let at = self.buf.len();
            let error = fill(&mut self.src, &mut self.buf);
            let len = self.buf.len();
            if let Some(e) = error {
                self.error = Some(e);
                self.done = true;
                // a line read in part is not a line
                break memchr::memrchr(b'\n', &self.buf).map_or(0, |i| i + 1);
            }
            if len == at {
                self.done = true;
                break len;
            }
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[at..]) {
                break at + i + 1;
            }
        };
        if lines_end == 0 {
            self.done = true;
            return None;
        }
        // The block takes the buffer; the start of the next line goes to
        // the front of the next one.
        let mut next = self.spare.take().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&self.buf[lines_end..]);
        let mut bytes = std::mem::replace(&mut self.buf, next);
        bytes.truncate(lines_end);
        // (the library's lossy reading is slow even on text that is valid)
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        // Pieces of about equal size, each ending after a `\n`.
        let n = 4 * rayon::current_num_threads();
        let mut bounds = vec![0];
        for k in 1..n {
            let from = (text.len() * k / n).max(*bounds.last().expect("one"));
            let rest = &text.as_bytes()[from..];
            let end = memchr::memchr(b'\n', rest).map_or(text.len(), |i| from + i + 1);
            bounds.push(end);
        }
        bounds.push(text.len());
        self.facts.resize_with(n, PcOpcodes::default);
        let mut pieces: Vec<Piece> = (0..n).map(|_| Piece::default()).collect();
        pieces
            .par_iter_mut()
            .zip(self.facts.par_iter_mut())
            .enumerate()
            .for_each(|(k, (piece, facts))| {
                piece.read(&text, bounds[k]..bounds[k + 1], ctx, facts);
            });
        Some(Block {
            text,
            pieces,
            bytes: lines_end as u64,
        })
    }

    /// Takes back the buffer of `block`, done with, to read into again.
    pub(super) fn recycle(&mut self, block: Block) {
        self.spare = Some(block.text.into_bytes());
    }

    /// The error that ended the reading, if any.
    pub(super) fn error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }
}

/// Appends up to [`BLOCK`] bytes from `src` to `buf` (into its spare
/// room: nothing is written first), as many as it can; the error that
/// stopped it, if any (the bytes read before it are appended).
fn fill(src: &mut impl Read, buf: &mut Vec<u8>) -> Option<std::io::Error> {
    src.take(BLOCK as u64).read_to_end(buf).err()
}
