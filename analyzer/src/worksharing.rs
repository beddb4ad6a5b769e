//! OpenMP worksharing loops: one unit per loop iteration, numbered as the
//! GPU numbers its threads.
//!
//! The tracer records, in each thread's stream, every chunk of iterations
//! the OpenMP runtime hands the thread (`loop_chunk` events, FORMAT.md §6.6):
//! the loop instance and the logical numbers of the chunk's iterations. The
//! thread then runs them, in order, in the function that asked for them. A
//! *stretch* is what a thread runs from one `loop_chunk` event to its next.
//!
//! A *loop* is a function `F` and the block where its instances begin in a
//! thread ([`LoopSite`]): one parallel region's function may hold several
//! `omp for` loops.
//!
//! **The iteration loop** of a loop of `F` whose stretches run chunks is
//! found on the graph of the blocks its stretches ran at `F`'s own frame,
//! with both the edges that ran and the edges their code has (a jump's or a
//! branch's target, the next instruction; so that a loop whose back edge
//! never ran, because every chunk held one iteration, is still a loop),
//! entered where stretches begin. It is the outermost natural loop that
//! holds no block that asked the runtime for a chunk (that one is the
//! chunk-fetching loop around it) and whose header runs at least once per
//! iteration (not the loop over a static schedule's chunks, whose header
//! runs once per chunk); failing that, the outermost that holds no such
//! block.
//!
//! **The iteration block** is the block of that loop that runs exactly as
//! many times in a stretch as the stretch has iterations, in every stretch of
//! `F`, and that a stretch reaches first. Whatever shape the compiler gave
//! the loop (a rotated loop whose test is at the bottom, a test at the top
//! that runs once more than the body, a loop entered in the middle, latches
//! duplicated so that some jump back past the header, several back edges),
//! some block of it runs once per iteration; the runtime's count is the
//! witness that picks it, and a check that fails loudly when none does.
//!
//! **An iteration** runs from one arrival at the iteration block to the next
//! one, to the first step at `F`'s frame outside the iteration loop, or to
//! the stretch's end, whichever comes first; its callees belong to it. Its number is the
//! chunk's first logical iteration plus the arrivals before it (for a
//! static schedule with a stride, chunk by chunk). A stretch whose arrivals
//! differ from its iteration count is an error, as is a loop instance whose
//! numbers are not exactly `0..trip`.
//!
//! **Sections.** A `sections` construct is a loop whose iterations are its
//! sections; libgomp hands them out one per chunk, and the code that runs
//! them dispatches on the section's number, with no loop. Where every
//! stretch of `F` held one iteration and no iteration loop exists, the
//! stretch is the iteration, provided the stretches run different code from
//! its iteration block on (the first block that runs once in every
//! stretch); it reaches the blocks they ran from there, up to where they
//! asked for the next chunk.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::frames::FrameTracker;
use crate::static_schedule::StaticCensus;
use std::collections::HashMap;
use tf_trace::{BlockTable, LoopChunk, StaticLoop};

mod function_census;
mod plan;
pub(crate) use function_census::FunctionCensus;
pub use plan::{check_numbering, Iteration, IterationLoop, IterationPlan};

/// One worksharing loop of the program: the function that runs it and
/// where its chunks begin (the block after the runtime call that handed
/// out the thread's first chunk of an instance), so that several loops of
/// one parallel region are told apart.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct LoopSite {
    /// The entry address of the function.
    pub entry: u64,
    /// The first block of the instance's first stretch in a thread.
    pub start: CBlockId,
}

impl LoopSite {
    /// The site of a stretch of instance `loop_id` whose first step is
    /// `cblock` in the function at `entry`; `sites` remembers, per thread,
    /// where each instance began.
    pub fn of(
        sites: &mut HashMap<u64, CBlockId>,
        loop_id: u64,
        entry: u64,
        cblock: CBlockId,
    ) -> LoopSite {
        LoopSite {
            entry,
            start: *sites.entry(loop_id).or_insert(cblock),
        }
    }
}

/// Where a stretch runs: its function's frame, learnt at its first step.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Frame {
    pub(crate) depth: usize,
    pub(crate) site: LoopSite,
}

/// What a thread runs at one function's frame from an event on (a chunk's
/// stretch; a static part, crate::static_schedule): the frame, learnt at the
/// first step, and each block's runs there in the order first reached; the
/// edges between them go to the function's census.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stretch {
    pub(crate) frame: Option<Frame>,
    pub(crate) counts: HashMap<CBlockId, u64>,
    pub(crate) order: Vec<CBlockId>,
    pub(crate) prev: Option<CBlockId>,
}

impl Stretch {
    /// Records a step of a stretch of instance `loop_id` (`tracker` already
    /// past it; `sites` as for [`LoopSite::of`]); returns the frame.
    pub(crate) fn step(
        &mut self,
        loop_id: u64,
        cblock: CBlockId,
        tracker: &FrameTracker,
        sites: &mut HashMap<u64, CBlockId>,
        functions: &mut HashMap<LoopSite, FunctionCensus>,
    ) -> Frame {
        let (depth, entry) = (tracker.depth(), tracker.top().entry);
        let f = *self.frame.get_or_insert_with(|| Frame {
            depth,
            site: LoopSite::of(sites, loop_id, entry, cblock),
        });
        if depth == f.depth && entry == f.site.entry {
            let n = self.counts.entry(cblock).or_insert(0);
            if *n == 0 {
                self.order.push(cblock);
            }
            *n += 1;
            let fc = functions.entry(f.site).or_default();
            match self.prev.replace(cblock) {
                Some(p) => fc.edges.insert((p, cblock)),
                None => fc.starts.insert(cblock),
            };
        }
        f
    }
}

/// What one thread's stretches showed about each function's loop.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct LoopCensus {
    functions: HashMap<LoopSite, FunctionCensus>,
    /// Each loop instance's trip count.
    pub trips: HashMap<u64, u64>,
    /// The loop each instance is.
    pub runs_in: HashMap<u64, LoopSite>,
    /// The parts of inline static schedules.
    pub statics: StaticCensus,
    open: Option<(LoopChunk, Stretch)>,
    sites: HashMap<u64, CBlockId>,
}

impl LoopCensus {
    /// A `loop_chunk` event: the stretch before it ends, another begins.
    pub fn chunk(&mut self, c: LoopChunk) {
        self.close();
        self.statics.chunk();
        self.trips.insert(c.loop_id, c.trip);
        // The end of the thread's part (count 0) runs no iteration: nothing
        // after it is the loop's (the cutter ignores it alike).
        self.open = (c.count > 0).then(|| (c, Stretch::default()));
    }

    /// A `static_loop` event (crate::static_schedule).
    pub fn static_loop(&mut self, s: StaticLoop, tracker: Option<&FrameTracker>) {
        let in_chunk = self.open.is_some();
        self.statics.place(s, tracker, in_chunk);
    }

    /// A step, `tracker` already past it.
    pub fn step(&mut self, cblock: CBlockId, tracker: &FrameTracker) {
        self.statics.step(cblock, tracker);
        if let Some((c, stretch)) = &mut self.open {
            stretch.step(
                c.loop_id,
                cblock,
                tracker,
                &mut self.sites,
                &mut self.functions,
            );
        }
    }

    /// The thread ended, or left the `--only` region (its frames ended):
    /// the stretch or static part open ends.
    pub fn finish(&mut self) {
        self.close();
        self.statics.finish();
    }

    fn close(&mut self) {
        let Some((
            c,
            Stretch {
                frame: Some(f),
                counts,
                order,
                prev: last,
            },
        )) = self.open.take()
        else {
            return;
        };
        self.runs_in.insert(c.loop_id, f.site);
        let fc = self.functions.entry(f.site).or_default();
        fc.fetches.extend(last);
        let want = c.iterations();
        if want == 0 {
            return;
        }
        fc.most = fc.most.max(want);
        let keep = |b: &CBlockId| counts.get(b) == Some(&want);
        let often = |b: &CBlockId| counts.get(b).is_some_and(|&n| n >= want);
        fc.at_least = Some(match fc.at_least.take() {
            None => counts.keys().copied().filter(often).collect(),
            Some(v) => v.into_iter().filter(often).collect(),
        });
        fc.candidates = Some(match fc.candidates.take() {
            None => order.into_iter().filter(keep).collect(),
            Some(v) => v.into_iter().filter(keep).collect(),
        });
    }

    /// Adds another thread's census (`self` is the earlier thread).
    pub fn merge(&mut self, other: LoopCensus) {
        self.trips.extend(other.trips);
        self.runs_in.extend(other.runs_in);
        self.statics.merge(other.statics);
        for (site, o) in other.functions {
            self.functions.entry(site).or_default().merge(o);
        }
    }

    /// Whether the thread ran no worksharing loop (nor a static part).
    pub fn is_empty(&self) -> bool {
        self.trips.is_empty() && self.statics.is_empty()
    }

    /// The iteration block and loop of every function that ran chunks; in
    /// `failed`, the entries of the functions where no block runs once per
    /// iteration (a loop unrolled or vectorized runs several per pass).
    /// `named`: see [`StaticCensus::plan`].
    pub fn plan(
        &self,
        canon: &CanonicalBlocks,
        table: &BlockTable,
        named: &[u64],
    ) -> IterationPlan {
        let mut loops = HashMap::new();
        let mut failed = Vec::new();
        for (&site, fc) in &self.functions {
            let Some(candidates) = fc.candidates.as_ref() else {
                continue; // only empty stretches
            };
            let found = fc
                .iteration_loop(canon, table, candidates)
                .and_then(|lp| {
                    let block = *candidates.iter().find(|c| lp.contains(c))?;
                    Some((block, lp))
                })
                .or_else(|| fc.one_per_stretch(candidates));
            let Some((block, lp)) = found else {
                failed.push(site);
                continue;
            };
            let reach = lp;
            loops.insert(
                site,
                IterationLoop {
                    block,
                    reach,
                    siblings: Vec::new(),
                },
            );
        }
        let statics = self.statics.plan(canon, table, named);
        loops.extend(statics.loops.iter().map(|(s, l)| (*s, l.clone())));
        failed.extend(statics.failed.iter().copied());
        failed.sort_unstable();
        let mut runs_in = self.runs_in.clone();
        runs_in.extend(statics.runs_in.iter().map(|(&l, &s)| (l, s)));
        IterationPlan {
            loops,
            failed,
            statics,
            runs_in,
        }
    }
}
