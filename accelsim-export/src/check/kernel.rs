//! Checks of one `kernel-N.traceg` file: header (6–9), sections (10–14),
//! instruction lines (15–25, in `insn`), warp exits and barriers (26, 27).

use super::header::{finish_header, header_line, Header};
use super::insn::{check_line, LineContext};
use super::opcode::{AtPc, PcOpcodes};
use super::{Problem, Report};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The warp being read.
struct WarpState {
    index: usize,
    expected: u64,
    seen: u64,
    exits: u32,
    bars: u64,
    last_exit: bool,
    launched: u32,
    start_line: usize,
}

/// Checks `path`; `units[u]` is set when an opcode needs specialized unit `u`.
pub(super) fn check_kernel(path: &Path, units: &mut [bool; 4]) -> Vec<Problem> {
    let mut r = Report::new(path.to_path_buf());
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            r.error(0, 3, format!("cannot read it: {e}"));
            return r.finish();
        }
    };
    let mut reader = BufReader::new(file);
    let mut h = Header::default();
    let mut buf = Vec::new();
    let mut n = 0usize;
    let mut in_header = true;
    let mut cta: Option<(u64, Vec<usize>, Vec<u64>)> = None; // index, warp indexes, BAR counts
    let mut ctas = 0u64;
    let mut warp: Option<WarpState> = None;
    let mut ctx: Option<LineContext> = None;
    let mut pcs = PcOpcodes::default();
    let mut max_reg: Option<u32> = None;
    let mut last_newline = true;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                r.error(n, 1, format!("cannot read: {e}"));
                break;
            }
        }
        n += 1;
        last_newline = buf.last() == Some(&b'\n');
        if buf.contains(&b'\r') {
            r.error(n, 1, "carriage return (lines must end in LF alone)".into());
        }
        let line = match std::str::from_utf8(&buf) {
            Ok(text) if text.is_ascii() => std::borrow::Cow::Borrowed(text),
            _ => {
                r.error(n, 1, "non-ASCII text".into());
                String::from_utf8_lossy(&buf)
            }
        };
        let line = line.trim_end_matches(['\n', '\r']);
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if in_header {
            if let Some(rest) = t.strip_prefix('-') {
                header_line(rest, &mut h, &mut r, n);
            } else if t.starts_with('#') {
                in_header = false;
                if t.starts_with("#BEGIN_TB") {
                    r.error(
                        n,
                        10,
                        "no # line between the header and the first #BEGIN_TB".into(),
                    );
                }
                ctx = Some(finish_header(&h, &mut r));
            } else {
                r.error(n, 6, format!("header line {t:?} does not start with '-'"));
            }
            continue;
        }
        let Some(c) = ctx.as_mut() else { break };
        let threads: u64 = h.block.map_or(32, |b| b.iter().product());
        let warps_per_cta = threads.div_ceil(32) as usize;
        if t == "#BEGIN_TB" {
            if cta.is_some() {
                r.error(n, 11, "#BEGIN_TB inside a thread block".into());
            }
            cta = Some((ctas, Vec::new(), Vec::new()));
        } else if t == "#END_TB" {
            end_warp(warp.take(), &mut cta, &mut r);
            match cta.take() {
                None => r.error(n, 11, "#END_TB outside a thread block".into()),
                Some((_, ws, bars)) => {
                    ctas += 1;
                    if ws.len() != warps_per_cta || ws.iter().enumerate().any(|(i, &w)| i != w) {
                        r.error(
                            n,
                            14,
                            format!(
                                "the block has warps {ws:?}, expected 0..{warps_per_cta} in order"
                            ),
                        );
                    }
                    if bars.windows(2).any(|b| b[0] != b[1]) {
                        r.error(
                            n,
                            27,
                            format!(
                                "warps of the block reach different numbers of barriers: {bars:?}"
                            ),
                        );
                    }
                }
            }
        } else if t.starts_with('#') {
            r.error(n, 10, format!("unexpected comment line {t:?}"));
        } else if cta.is_none() {
            r.error(n, 11, format!("{t:?} outside a thread block"));
        } else if let Some(v) = t.strip_prefix("thread block") {
            let want = [
                ctas % grid_x(&h),
                ctas / grid_x(&h) % grid_y(&h),
                ctas / (grid_x(&h) * grid_y(&h)),
            ];
            let got: Option<Vec<u64>> = v
                .trim()
                .strip_prefix('=')
                .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
            if got.as_deref() != Some(&want[..]) {
                r.warn(
                    n,
                    13,
                    format!(
                        "thread block {v:?}, expected = {},{},{}",
                        want[0], want[1], want[2]
                    ),
                );
            }
        } else if let Some(v) = t.strip_prefix("warp") {
            end_warp(warp.take(), &mut cta, &mut r);
            let Some(w) = v
                .trim()
                .strip_prefix('=')
                .and_then(|s| s.trim().parse::<usize>().ok())
            else {
                r.error(n, 14, format!("{t:?} is not warp = <number>"));
                continue;
            };
            if w >= warps_per_cta {
                r.error(
                    n,
                    14,
                    format!("warp {w} of a block of {warps_per_cta} warps"),
                );
            }
            let partial = threads % 32;
            c.launched = if w + 1 == warps_per_cta && partial != 0 {
                (1u32 << partial) - 1
            } else {
                u32::MAX
            };
            warp = Some(WarpState {
                index: w,
                expected: 0,
                seen: 0,
                exits: 0,
                bars: 0,
                last_exit: false,
                launched: c.launched,
                start_line: n,
            });
        } else if let Some(v) = t.strip_prefix("insts") {
            match (
                warp.as_mut(),
                v.trim()
                    .strip_prefix('=')
                    .and_then(|s| s.trim().parse::<u64>().ok()),
            ) {
                (Some(w), Some(k)) if w.seen == 0 && w.expected == 0 => {
                    w.expected = k;
                    if k == 0 {
                        r.error(
                            n,
                            14,
                            "insts = 0: every warp needs at least one instruction".into(),
                        );
                    }
                }
                _ => r.error(n, 14, format!("{t:?} does not follow its warp line")),
            }
        } else {
            let Some(w) = warp.as_mut() else {
                r.error(n, 14, "an instruction line before any warp line".into());
                continue;
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
                continue;
            }
            let Some(p) = check_line(t, c, &pcs, &mut r, n) else {
                continue;
            };
            if let Some(m) = p.max_reg {
                max_reg = Some(max_reg.map_or(m, |x| x.max(m)));
            }
            let first = p.facts.first(p.opcode);
            if let Some(u) = p.facts.unit {
                units[u as usize] = true;
            }
            match p.at_pc {
                AtPc::Other => r.warn(
                    n,
                    16,
                    format!(
                        "PC {:04x} is {} here and {} elsewhere",
                        p.pc,
                        p.opcode,
                        pcs.first_seen(p.pc)
                    ),
                ),
                AtPc::Same => {}
                AtPc::New => pcs.remember(p.pc, p.opcode, p.facts),
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
    }
    if in_header {
        r.error(n, 10, "the file has no # line ending its header".into());
        finish_header(&h, &mut r);
    }
    end_warp(warp.take(), &mut cta, &mut r);
    if cta.is_some() {
        r.error(n, 11, "the last thread block has no #END_TB".into());
    }
    if !last_newline {
        r.error(n, 1, "the last line does not end in a newline".into());
    }
    if let Some(g) = h.grid {
        let want: u64 = g.iter().product();
        if ctas != want {
            r.error(0, 12, format!("{ctas} thread blocks, the grid has {want}"));
        }
    }
    if let (Some(k), Some(m)) = (h.nregs, max_reg) {
        if k != u64::from(m) + 1 {
            r.warn(
                0,
                9,
                format!("nregs = {k}, the lines use registers up to R{m}"),
            );
        }
    }
    r.finish()
}

fn grid_x(h: &Header) -> u64 {
    h.grid.map_or(1, |g| g[0].max(1))
}

fn grid_y(h: &Header) -> u64 {
    h.grid.map_or(1, |g| g[1].max(1))
}

/// Checks of a warp at its end: its line count and its exits (14, 26).
fn end_warp(w: Option<WarpState>, cta: &mut Option<(u64, Vec<usize>, Vec<u64>)>, r: &mut Report) {
    let Some(w) = w else { return };
    let n = w.start_line;
    if w.seen < w.expected {
        r.error(
            n,
            14,
            format!(
                "warp {} has {} lines, its insts = {}",
                w.index, w.seen, w.expected
            ),
        );
    }
    if w.seen > 0 && !w.last_exit {
        r.error(
            n,
            26,
            format!("warp {}: its last line is not an EXIT", w.index),
        );
    }
    if w.exits != w.launched {
        r.error(
            n,
            26,
            format!(
                "warp {}: lanes {:08x} never exit",
                w.index,
                w.launched & !w.exits
            ),
        );
    }
    if let Some((_, ws, bars)) = cta.as_mut() {
        ws.push(w.index);
        bars.push(w.bars);
    }
}
