//! Where a warp's issues go: its tally, the caller's sink if any, and the
//! progress bar; and, for the lanes whose warps of width 1 this replay
//! counts too, each lane's part of every issue, as that lane alone would
//! have issued it; and the narrower warps this replay counts, each its
//! part of every issue.

use super::alone::LanesAlone;
use super::counts::WarpStats;
use super::narrower::Narrower;
use super::stack::Entry;
use super::tally::Tally;
use super::{Replay, PROGRESS_STEP};
use crate::blocks::CBlockId;
use crate::sink::{idle_instructions, Fanout, Issue, IssueSink, LaneIssue};
use tf_trace::{FunctionId, LockKind};

/// What an [`Issuer`] counted: at its widths, its lanes alone, its
/// narrower warps.
pub(super) type Finished<'a> = (Vec<WarpStats>, Option<LanesAlone<'a>>, Option<Narrower<'a>>);

pub(super) struct Issuer<'a, 's> {
    /// The figures: the observer every replay has.
    tally: Tally<'a>,
    /// The caller's sinks: none, one, or several through one fan-out.
    sink: Option<Outlet<'s>>,
    /// The last frame entry whose function was looked up, and that function.
    frame_function: (u64, FunctionId),
    /// Thread instructions replayed since the last progress report.
    unreported: u64,
    /// Thread instructions the progress bar was told or will be.
    told: u64,
    /// The lanes counted alone too, if any.
    alone: Option<LanesAlone<'a>>,
    /// The narrower warps counted too, if any.
    narrower: Option<Narrower<'a>>,
}

impl<'a, 's> Issuer<'a, 's> {
    /// An issuer to `tally` and `sinks` that also counts the lanes of
    /// `alone` as warps of width 1, and the `narrower` warps.
    pub(super) fn new(
        tally: Tally<'a>,
        mut sinks: Vec<&'s mut dyn IssueSink>,
        alone: Option<LanesAlone<'a>>,
        narrower: Option<Narrower<'a>>,
    ) -> Self {
        let sink = match sinks.len() {
            0 => None,
            1 => sinks.pop().map(Outlet::One),
            _ => Some(Outlet::Many(Fanout(sinks))),
        };
        Issuer {
            tally,
            sink,
            frame_function: (u64::MAX, 0),
            unreported: 0,
            told: 0,
            alone,
            narrower,
        }
    }

    /// Thread instructions issued so far, as the progress bar counts them
    /// (the narrower warps' too while they are counted).
    pub(super) fn told(&self) -> u64 {
        self.told
    }

    /// The thread instructions of each narrower warp the progress bar was
    /// told, once their counts are void.
    pub(super) fn narrower_void(&self) -> Option<super::Void> {
        self.narrower.as_ref().and_then(Narrower::void_told)
    }

    /// The tally's counts at each of its widths, once the warp is replayed,
    /// the lanes counted alone and the narrower warps, to finish; reports
    /// the last instructions to the progress bar.
    pub(super) fn finish(&mut self, cfg: &Replay<'_>) -> Finished<'a> {
        cfg.progress.advance(std::mem::take(&mut self.unreported));
        (self.tally.finish(), self.alone.take(), self.narrower.take())
    }

    /// The wide warp did something its narrower warps may not have done
    /// alike: their counts are void.
    pub(super) fn void_narrower(&mut self) {
        if let Some(n) = &mut self.narrower {
            n.void();
        }
    }

    /// The lanes split at the end of `cb` into `targets` (masks of lanes),
    /// to reconverge at `reconverge`: the narrower warps whose lanes went
    /// two or more ways diverged there.
    pub(super) fn narrower_diverged(
        &mut self,
        cb: CBlockId,
        targets: impl Iterator<Item = u64> + Clone,
        reconverge: Option<CBlockId>,
    ) {
        if let Some(n) = &mut self.narrower {
            n.diverged(cb, targets, reconverge);
        }
    }

    /// Lane `i` acquired `lock`: told like any event, and counted for the
    /// lane alone too (lanes alone never contend).
    pub(super) fn lock_acquired(&mut self, i: usize, lock: u64, kind: LockKind) {
        self.tell(|s| s.lock_acquired(i, lock, kind));
        if let Some(alone) = &mut self.alone {
            alone.lock_acquired(i, lock, kind);
        }
        if let Some(narrower) = &mut self.narrower {
            narrower.lock_acquired(i, lock, kind);
        }
    }

    /// Tells the tally, and the sink if any, something other than an issue.
    pub(super) fn tell(&mut self, event: impl Fn(&mut dyn IssueSink)) {
        event(&mut self.tally);
        if let Some(sink) = &mut self.sink {
            event(sink.get());
        }
    }

    /// Issues block `b` of entry `e` for the lanes of `live`, which ran
    /// `lanes` (in lane order), `thread` instructions in all and `warp` at
    /// most.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn issue(
        &mut self,
        cfg: &Replay<'_>,
        b: CBlockId,
        e: &Entry,
        live: u64,
        lanes: &[LaneIssue<'_>],
        mut thread: u64,
        warp: u64,
    ) {
        let cb = cfg.canon.block(b);
        let f = if cb.function != 0 {
            cb.function
        } else {
            if self.frame_function.0 != e.func {
                self.frame_function = (e.func, cfg.functions.frame(e.func));
            }
            self.frame_function.1
        };
        let f = f.min(cfg.functions.max_id() as FunctionId);
        let left_out = cfg.leaves_out(b);
        if let Some(alone) = &mut self.alone {
            alone.issue((b, cb, f), lanes, left_out);
        }
        if let Some(narrower) = &mut self.narrower {
            // serialized, predicated or spinning lanes (each voided the
            // counts already where it began: a second guard)
            if e.serialized.is_some() || e.predicated | e.spinning != 0 {
                narrower.void();
            }
            let theirs = narrower.issue((b, cb, f), live, lanes, left_out);
            self.report_progress(cfg, theirs);
        }
        if left_out {
            // replayed, never issued: the lanes' own instructions, apart
            self.tally.exclude(f as usize, thread);
            self.report_progress(cfg, thread);
            return;
        }
        let counted = live | e.predicated | e.spinning;
        if counted != live {
            thread += idle_instructions(e.predicated, live, warp)
                + idle_instructions(e.spinning, live, warp);
        }
        self.report_progress(cfg, thread);
        let issue = Issue {
            cblock: b,
            block: cb,
            function: f,
            active: live,
            counted,
            predicated: e.predicated,
            spinning: e.spinning,
            warp_instructions: warp,
            thread_instructions: thread,
            lanes,
            serialized: e.serialized.map(std::num::NonZeroU64::get),
        };
        self.tally.issue(&issue);
        if let Some(sink) = &mut self.sink {
            sink.get().issue(&issue);
        }
    }

    /// Tells the progress bar about `thread` more replayed instructions,
    /// every [`PROGRESS_STEP`] or so.
    #[inline(always)]
    fn report_progress(&mut self, cfg: &Replay<'_>, thread: u64) {
        self.told += thread;
        self.unreported += thread;
        if self.unreported >= PROGRESS_STEP {
            cfg.progress.advance(std::mem::take(&mut self.unreported));
        }
    }
}

/// The sinks an issuer tells: one by itself (no fan-out on the way), or
/// several.
enum Outlet<'s> {
    One(&'s mut dyn IssueSink),
    Many(Fanout<'s>),
}

impl Outlet<'_> {
    #[inline(always)]
    fn get(&mut self) -> &mut dyn IssueSink {
        match self {
            Outlet::One(s) => *s,
            Outlet::Many(f) => f,
        }
    }
}
