//! Checks of one `kernel-N.traceg` file: header (6–9), sections (10–14),
//! instruction lines (15–25, in `insn`), warp exits and barriers (26, 27).

use super::ahead::{Blocks, Checked, Line};
use super::header::{finish_header, header_line, Header};
use super::insn::{check_line, LineContext};
use super::opcode::{AtPc, PcOpcodes};
use super::{Problem, Report};
use sections::{end_warp, Cta, WarpState};
use std::path::Path;
use tf_analyzer::Progress;

mod sections;

/// Checks `path`; `units[u]` is set when an opcode needs specialized unit
/// `u`. Tells `progress` the bytes checked, block by block.
pub(super) fn check_kernel(
    path: &Path,
    units: &mut [bool; 4],
    progress: &dyn Progress,
) -> Vec<Problem> {
    let mut r = Report::new(path.to_path_buf());
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            r.error(0, 3, format!("cannot read it: {e}"));
            return r.finish();
        }
    };
    let mut check = KernelCheck::new(r, units);
    let mut blocks = Blocks::new(file);
    let mut block = blocks.next(None);
    let mut to_the_end = true;
    while let Some(mut b) = block.take() {
        // Lines after the header are checked ahead once it is read, on
        // threads of their own (on one, in order: the lines' findings kept
        // for later missed the caches and cost a fifth more time).
        let all_lanes = (check.ctx)
            .filter(|_| rayon::current_num_threads() > 1)
            .map(|c| LineContext {
                launched: u32::MAX,
                ..c
            });
        let (next, read_on) = rayon::join(
            || blocks.next(all_lanes.as_ref()),
            || b.lines(|line, checked| check.line(line, checked)),
        );
        if !read_on {
            to_the_end = false;
            break;
        }
        progress.advance(b.bytes());
        blocks.recycle(b);
        block = next;
    }
    if let Some(e) = blocks.error().filter(|_| to_the_end) {
        let n = check.n;
        check.r.error(n, 1, format!("cannot read: {e}"));
    }
    check.finish()
}

/// What a kernel file's check knows after the lines read so far.
struct KernelCheck<'u> {
    r: Report,
    h: Header,
    /// Lines read.
    n: usize,
    in_header: bool,
    cta: Option<Cta>,
    /// Thread blocks read.
    ctas: u64,
    warp: Option<WarpState>,
    /// What the checks of a line need, once the header is read.
    ctx: Option<LineContext>,
    /// The opcode first seen at each PC.
    pcs: PcOpcodes,
    /// What is known of opcodes by PC, for the lines checked in order.
    facts: PcOpcodes,
    max_reg: Option<u32>,
    last_newline: bool,
    units: &'u mut [bool; 4],
}

impl<'u> KernelCheck<'u> {
    fn new(r: Report, units: &'u mut [bool; 4]) -> KernelCheck<'u> {
        KernelCheck {
            r,
            h: Header::default(),
            n: 0,
            in_header: true,
            cta: None,
            ctas: 0,
            warp: None,
            ctx: None,
            pcs: PcOpcodes::default(),
            facts: PcOpcodes::default(),
            max_reg: None,
            last_newline: true,
            units,
        }
    }

    /// Checks the next line, given what was checked of it ahead, if
    /// anything; false when the check cannot go on.
    fn line(&mut self, line: Line<'_>, checked: Option<Checked<'_>>) -> bool {
        self.n += 1;
        let (n, r) = (self.n, &mut self.r);
        self.last_newline = line.newline;
        if line.cr {
            r.error(n, 1, "carriage return (lines must end in LF alone)".into());
        }
        if line.non_ascii {
            r.error(n, 1, "non-ASCII text".into());
        }
        let t = line.text;
        if t.is_empty() {
            return true;
        }
        if self.in_header {
            if let Some(rest) = t.strip_prefix('-') {
                header_line(rest, &mut self.h, r, n);
            } else if t.starts_with('#') {
                self.in_header = false;
                if t.starts_with("#BEGIN_TB") {
                    r.error(
                        n,
                        10,
                        "no # line between the header and the first #BEGIN_TB".into(),
                    );
                }
                self.ctx = Some(finish_header(&self.h, r));
            } else {
                r.error(n, 6, format!("header line {t:?} does not start with '-'"));
            }
            return true;
        }
        if self.ctx.is_none() {
            return false;
        }
        if t == "#BEGIN_TB" {
            if self.cta.is_some() {
                r.error(n, 11, "#BEGIN_TB inside a thread block".into());
            }
            self.cta = Some((self.ctas, Vec::new(), Vec::new()));
        } else if t == "#END_TB" {
            self.end_tb();
        } else if t.starts_with('#') {
            r.error(n, 10, format!("unexpected comment line {t:?}"));
        } else if self.cta.is_none() {
            r.error(n, 11, format!("{t:?} outside a thread block"));
        } else if let Some(v) = t.strip_prefix("thread block") {
            self.thread_block(v);
        } else if let Some(v) = t.strip_prefix("warp") {
            self.warp_line(t, v);
        } else if let Some(v) = t.strip_prefix("insts") {
            self.insts(t, v);
        } else {
            self.instruction(t, checked);
        }
        true
    }

    /// The instruction line `t`, given what was checked of it ahead (as a
    /// line of a warp that launched every lane), if anything.
    fn instruction(&mut self, t: &str, checked: Option<Checked<'_>>) {
        let (n, r) = (self.n, &mut self.r);
        let Some(w) = self.warp.as_mut() else {
            r.error(n, 14, "an instruction line before any warp line".into());
            return;
        };
        w.seen += 1;
        if w.seen > w.expected {
            if w.seen == w.expected + 1 {
                r.error(
                    n,
                    14,
                    format!(
                        "warp {} has more lines than its insts = {}",
                        w.index, w.expected
                    ),
                );
            }
            return;
        }
        let Some(c) = self.ctx.as_ref() else {
            return; // (instruction lines come after the header)
        };
        let parsed = match checked {
            Some(checked) if c.launched == u32::MAX => checked.take(t, r, n),
            _ => check_line(t, c, &mut self.facts, r, n),
        };
        let Some(p) = parsed else {
            return;
        };
        if let Some(m) = p.max_reg {
            self.max_reg = Some(self.max_reg.map_or(m, |x| x.max(m)));
        }
        let first = p.facts.first(p.opcode);
        if let Some(u) = p.facts.unit {
            self.units[u as usize] = true;
        }
        match self.pcs.at_pc(p.pc, p.opcode, p.facts) {
            AtPc::Other => r.warn(
                n,
                16,
                format!(
                    "PC {:04x} is {} here and {} elsewhere",
                    p.pc,
                    p.opcode,
                    self.pcs.first_seen(p.pc)
                ),
            ),
            AtPc::Same | AtPc::New => {}
        }
        w.last_exit = first == "EXIT";
        if first == "BAR" {
            w.bars += 1;
        }
        if w.last_exit {
            if w.exits & p.mask != 0 {
                r.error(
                    n,
                    26,
                    format!(
                        "EXIT retires lanes {:08x} that already exited",
                        w.exits & p.mask
                    ),
                );
            }
            if p.mask & !w.launched != 0 {
                r.error(
                    n,
                    26,
                    format!(
                        "EXIT retires lanes {:08x} that were not launched",
                        p.mask & !w.launched
                    ),
                );
            }
            w.exits |= p.mask;
        }
    }

    /// The checks of the file as a whole, once its lines are read.
    fn finish(mut self) -> Vec<Problem> {
        let (n, r, h) = (self.n, &mut self.r, &self.h);
        if self.in_header {
            r.error(n, 10, "the file has no # line ending its header".into());
            finish_header(h, r);
        }
        end_warp(self.warp.take(), &mut self.cta, r);
        if self.cta.is_some() {
            r.error(n, 11, "the last thread block has no #END_TB".into());
        }
        if !self.last_newline {
            r.error(n, 1, "the last line does not end in a newline".into());
        }
        if let Some(g) = h.grid {
            let want: u64 = g.iter().product();
            if self.ctas != want {
                r.error(
                    0,
                    12,
                    format!("{} thread blocks, the grid has {want}", self.ctas),
                );
            }
        }
        if let (Some(k), Some(m)) = (h.nregs, self.max_reg) {
            if k != u64::from(m) + 1 {
                r.warn(
                    0,
                    9,
                    format!("nregs = {k}, the lines use registers up to R{m}"),
                );
            }
        }
        self.r.finish()
    }
}
