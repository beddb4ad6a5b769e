//! `tf analyze`'s figures, as an observer of the replay: every warp's replay
//! tells its [`Tally`] what it tells any other [`IssueSink`], and the tally
//! counts instructions, memory requests and sectors, divergences and locks
//! from that alone (memory requests by [`crate::coalesce`]). The export and
//! the report observe the same stream, so their figures agree with these
//! exactly.
//!
//! A replay counted at several widths (warps of those widths hold the same
//! lanes) has one tally: every figure is the same at each width but the
//! sectors of stack requests in the interleaved layout of GPU local memory,
//! which the tally counts apart for each further width.

use super::counts::WarpStats;
use crate::blocks::{CBlock, CBlockId};
use crate::coalesce::{lone_counts_alike, Coalescer};
use crate::segments::Segments;
use crate::sink::{idle_instructions, Issue, IssueSink, LaneIssue};
use crate::spin_wait::SpinWait;
use crate::stats::{FunctionStats, Insns, Requests, Segment};
use tf_trace::{FunctionId, LockKind};

/// A block issued: its id, its canonical block, and the function its
/// instructions are charged to (what the counters of lanes alone and of
/// narrower warps take from each issue of the wide warp).
pub(super) type Charged<'b> = (CBlockId, &'b CBlock, FunctionId);

/// The counts of one warp's replay.
pub(super) struct Tally<'a> {
    /// What was counted, but for the totals of instructions and memory,
    /// which are the sums of the functions' (made by [`Tally::finish`]).
    stats: WarpStats,
    segments: &'a Segments,
    /// Spin-wait code, whose instructions are also counted apart.
    spin_wait: &'a SpinWait,
    coalescer: Coalescer,
    /// The further widths of the same warp, in the order of the tally's
    /// widths.
    others: Vec<OtherWidth>,
    /// Where the width `coalescer` counts at stands among the tally's.
    primary: usize,
    /// Per function: the stack requests (loads, stores) of lone lanes with
    /// their interleaved sectors, counted once for every further width
    /// that counts them alike (`lone_counts_alike`) and added to theirs by
    /// [`Tally::finish`].
    lone_stack: Vec<[Requests; 2]>,
}

/// What one further width counts apart: per function, its stack requests
/// (loads, stores) with their sectors interleaved at that width.
struct OtherWidth {
    coalescer: Coalescer,
    stack_interleaved: Vec<[Requests; 2]>,
}

impl<'a> Tally<'a> {
    /// A tally for a warp of each width of `widths` (at least one), holding
    /// lanes with these stacks (per lane: its range and its stack pointer at
    /// its unit's start), charging instructions to `functions` function ids.
    pub(super) fn new(
        segments: &'a Segments,
        spin_wait: &'a SpinWait,
        widths: &[usize],
        stacks: Vec<((u64, u64), u64)>,
        functions: usize,
    ) -> Tally<'a> {
        // The widest counts everything: a lone lane's stack requests then
        // count the same at every further width of 8 or more
        // (`lone_counts_alike`), and are counted once for all of them.
        let primary = (0..widths.len())
            .max_by_key(|&k| (widths[k], std::cmp::Reverse(k)))
            .expect("a width");
        let others = (widths.iter().enumerate())
            .filter(|&(k, _)| k != primary)
            .map(|(_, &w)| OtherWidth {
                coalescer: Coalescer::new(w, stacks.clone()),
                stack_interleaved: vec![[Requests::default(); 2]; functions],
            })
            .collect();
        Tally {
            stats: WarpStats {
                functions: vec![FunctionStats::default(); functions],
                ..WarpStats::default()
            },
            segments,
            spin_wait,
            coalescer: Coalescer::new(widths[primary], stacks),
            others,
            primary,
            lone_stack: vec![[Requests::default(); 2]; functions],
        }
    }

    /// What was counted at each width, in the order of `widths`, the totals
    /// included. Every issue is charged to exactly one function, so the
    /// totals are summed once here rather than counted beside the
    /// function's on every issue.
    pub(super) fn finish(&mut self) -> Vec<WarpStats> {
        let primary = std::mem::take(&mut self.stats);
        let width = self.coalescer.width();
        let lone = std::mem::take(&mut self.lone_stack);
        let mut all: Vec<WarpStats> = std::mem::take(&mut self.others)
            .into_iter()
            .map(|o| {
                let mut stats = primary.clone();
                let alike = lone_counts_alike(width, o.coalescer.width());
                let stacks = stats.functions.iter_mut().zip(o.stack_interleaved);
                for ((f, mut stack), lone) in stacks.zip(&lone) {
                    if alike {
                        for (s, l) in stack.iter_mut().zip(lone) {
                            s.add(l);
                        }
                    }
                    f.memory.stack_interleaved = stack;
                }
                stats
            })
            .collect();
        all.insert(self.primary, primary);
        for stats in &mut all {
            for f in &stats.functions {
                stats.insns.add(&f.insns);
                stats.memory.add(&f.memory);
            }
        }
        all
    }
}

impl Tally<'_> {
    /// Counts the requests of `issue`, charged to function `f`, at the
    /// widest width and, for stack requests, at the others. Kept apart from
    /// [`Tally::issue`]: with it inline, the compiler no longer inlined the
    /// one-width case there.
    #[inline(never)]
    fn requests_at_every_width(&mut self, issue: &Issue<'_>, f: usize) {
        let fs = &mut self.stats.functions[f].memory;
        let others = &mut self.others;
        let width = self.coalescer.width();
        let lone = issue.lanes.len() == 1;
        let lone_stack = &mut self.lone_stack[f];
        self.coalescer.requests(issue, self.segments, |r| {
            fs.add_request(r.segment, r.write, r.sectors, r.interleaved);
            if r.segment == Segment::Stack {
                if lone {
                    lone_stack[usize::from(r.write)].add_one(r.interleaved);
                }
                for o in others.iter_mut() {
                    if lone && lone_counts_alike(width, o.coalescer.width()) {
                        continue; // counted in `lone_stack`
                    }
                    let sectors = o.coalescer.interleaved(issue, r.operand);
                    o.stack_interleaved[f][usize::from(r.write)].add_one(sectors);
                }
            }
        });
    }

    /// Counts the lanes `lanes` (`active`, in lane order), part of a wider
    /// warp's issue of the block `charged`, as a warp of their own would
    /// issue them (it never has idle lanes), or leaves them out
    /// (`--spin-wait exclude`); gives their thread instructions.
    #[inline]
    pub(super) fn issue_part(
        &mut self,
        (b, cb, f): Charged<'_>,
        active: u64,
        lanes: &[LaneIssue<'_>],
        left_out: bool,
    ) -> u64 {
        let insns = lanes.iter().map(|l| u64::from(l.insns));
        let thread = insns.clone().sum();
        if left_out {
            self.exclude(f as usize, thread);
            return thread;
        }
        self.issue(&Issue {
            cblock: b,
            block: cb,
            function: f,
            active,
            counted: active,
            predicated: 0,
            spinning: 0,
            warp_instructions: insns.max().unwrap_or(0),
            thread_instructions: thread,
            lanes,
            serialized: None,
        });
        thread
    }

    /// Counts `n` thread instructions of function `f`'s spin-wait code that
    /// were replayed but not issued (`--spin-wait exclude`).
    pub(super) fn exclude(&mut self, f: usize, n: u64) {
        let s = &mut self.stats;
        s.excluded += n;
        let f = f.min(s.functions.len() - 1);
        s.functions[f].spin_wait_instructions += n;
    }
}

impl IssueSink for Tally<'_> {
    fn issue(&mut self, issue: &Issue<'_>) {
        let s = &mut self.stats;
        let warp = issue.warp_instructions;
        if issue.counted != issue.active {
            // lanes predicated off or spinning (rare: only under --predicate
            // or --lock-model spin)
            s.predicated_off += idle_instructions(issue.predicated, issue.active, warp);
            s.spinning += idle_instructions(issue.spinning, issue.active, warp);
        }
        let issued = Insns {
            thread_instructions: issue.thread_instructions,
            warp_instructions: warp,
        };
        let f = (issue.function as usize).min(s.functions.len() - 1);
        s.functions[f].insns.add(&issued);
        if self.spin_wait.holds(issue.cblock) {
            // the lanes' own instructions: idle lanes do not spin
            let spun: u64 = issue.lanes.iter().map(|l| u64::from(l.insns)).sum();
            s.functions[f].spin_wait_instructions += spun;
        }
        if let Some(lock) = issue.serialized {
            s.functions[f].serialized_warp_instructions += warp;
            s.locks
                .entry(lock)
                .or_default()
                .serialized_warp_instructions += warp;
        }
        if issue.block.n_ops > 0 {
            if !self.others.is_empty() {
                return self.requests_at_every_width(issue, f);
            }
            let fs = &mut s.functions[f].memory;
            self.coalescer.requests(issue, self.segments, |r| {
                fs.add_request(r.segment, r.write, r.sectors, r.interleaved);
            });
        }
    }

    fn diverged(&mut self, _: CBlockId, _: u64, _: usize, _: Option<CBlockId>) {
        self.stats.divergent_branches += 1;
    }

    fn predicated(&mut self, _: CBlockId) {
        self.stats.predicated_branches += 1;
    }

    fn lock_acquired(&mut self, _: usize, lock: u64, kind: LockKind) {
        let s = self.stats.locks.entry(lock).or_default();
        s.acquisitions += 1;
        s.kind.get_or_insert(kind);
    }

    fn lock_contended(&mut self, lock: u64, lanes: u64, waiting: u64) {
        let _ = lanes;
        let s = self.stats.locks.entry(lock).or_default();
        s.contentions += 1;
        s.serialized_lanes += waiting;
    }
}
