//! The section lines of a kernel file: thread blocks and warps, and the
//! checks of a warp at its end (checklist items 11–14, 26, 27).

use super::KernelCheck;
use crate::check::header::Header;
use crate::check::Report;

/// The warp being read.
pub(super) struct WarpState {
    pub(super) index: usize,
    pub(super) expected: u64,
    pub(super) seen: u64,
    pub(super) exits: u32,
    pub(super) bars: u64,
    pub(super) last_exit: bool,
    pub(super) launched: u32,
    pub(super) start_line: usize,
}

/// A thread block being read: its index, its warps' indexes, their BAR
/// counts.
pub(super) type Cta = (u64, Vec<usize>, Vec<u64>);

impl KernelCheck<'_> {
    /// The threads of a block, and its warps.
    fn block_shape(&self) -> (u64, usize) {
        let threads: u64 = self.h.block.map_or(32, |b| b.iter().product());
        (threads, threads.div_ceil(32) as usize)
    }

    /// `#END_TB`.
    pub(super) fn end_tb(&mut self) {
        let (n, warps_per_cta) = (self.n, self.block_shape().1);
        let r = &mut self.r;
        end_warp(self.warp.take(), &mut self.cta, r);
        match self.cta.take() {
            None => r.error(n, 11, "#END_TB outside a thread block".into()),
            Some((_, ws, bars)) => {
                self.ctas += 1;
                if ws.len() != warps_per_cta || ws.iter().enumerate().any(|(i, &w)| i != w) {
                    r.error(
                        n,
                        14,
                        format!("the block has warps {ws:?}, expected 0..{warps_per_cta} in order"),
                    );
                }
                if bars.windows(2).any(|b| b[0] != b[1]) {
                    r.error(
                        n,
                        27,
                        format!("warps of the block reach different numbers of barriers: {bars:?}"),
                    );
                }
            }
        }
    }

    /// `thread block` followed by `v`.
    pub(super) fn thread_block(&mut self, v: &str) {
        let (h, ctas) = (&self.h, self.ctas);
        let want = [
            ctas % grid_x(h),
            ctas / grid_x(h) % grid_y(h),
            ctas / (grid_x(h) * grid_y(h)),
        ];
        let got: Option<Vec<u64>> = v
            .trim()
            .strip_prefix('=')
            .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
        if got.as_deref() != Some(&want[..]) {
            self.r.warn(
                self.n,
                13,
                format!(
                    "thread block {v:?}, expected = {},{},{}",
                    want[0], want[1], want[2]
                ),
            );
        }
    }

    /// The line `t`, `warp` followed by `v`.
    pub(super) fn warp_line(&mut self, t: &str, v: &str) {
        let n = self.n;
        let (threads, warps_per_cta) = self.block_shape();
        end_warp(self.warp.take(), &mut self.cta, &mut self.r);
        let Some(w) = value::<usize>(v) else {
            self.r.error(n, 14, format!("{t:?} is not warp = <number>"));
            return;
        };
        if w >= warps_per_cta {
            self.r.error(
                n,
                14,
                format!("warp {w} of a block of {warps_per_cta} warps"),
            );
        }
        let partial = threads % 32;
        let launched = if w + 1 == warps_per_cta && partial != 0 {
            (1u32 << partial) - 1
        } else {
            u32::MAX
        };
        if let Some(c) = self.ctx.as_mut() {
            c.launched = launched;
        }
        self.warp = Some(WarpState {
            index: w,
            expected: 0,
            seen: 0,
            exits: 0,
            bars: 0,
            last_exit: false,
            launched,
            start_line: n,
        });
    }

    /// The line `t`, `insts` followed by `v`.
    pub(super) fn insts(&mut self, t: &str, v: &str) {
        let n = self.n;
        let count = value::<u64>(v);
        match (self.warp.as_mut(), count) {
            (Some(w), Some(k)) if w.seen == 0 && w.expected == 0 => {
                w.expected = k;
                if k == 0 {
                    self.r.error(
                        n,
                        14,
                        "insts = 0: every warp needs at least one instruction".into(),
                    );
                }
            }
            _ => self
                .r
                .error(n, 14, format!("{t:?} does not follow its warp line")),
        }
    }
}

/// The number of `= <number>` after a section line's key (blanks around
/// either allowed).
fn value<T: std::str::FromStr>(v: &str) -> Option<T> {
    v.trim().strip_prefix('=')?.trim().parse().ok()
}

fn grid_x(h: &Header) -> u64 {
    h.grid.map_or(1, |g| g[0].max(1))
}

fn grid_y(h: &Header) -> u64 {
    h.grid.map_or(1, |g| g[1].max(1))
}

/// Checks of a warp at its end: its line count and its exits (14, 26).
pub(super) fn end_warp(w: Option<WarpState>, cta: &mut Option<Cta>, r: &mut Report) {
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
