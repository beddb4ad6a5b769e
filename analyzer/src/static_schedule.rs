//! Inline static schedules: the worksharing loops whose iterations no
//! runtime call hands out (FORMAT.md §6.7).
//!
//! GCC expands `schedule(static)` without a chunk size (the default
//! schedule) inline: each thread asks the runtime for its number `t` and the
//! team's size `T`, divides the trip count `n` by `T`, and runs one
//! contiguous block: `q + 1` iterations from `t × (q + 1)` when `t < r`,
//! else `q` iterations from `t × q + r` (`q = n / T`, `r = n % T`). The
//! tracer records where a thread learnt its place (`static_loop` events);
//! the trip count, the blocks and the iteration block are inferred here,
//! and only when everything agrees:
//!
//! - a *part* is what a thread runs at the frame of the function that
//!   asked, from the event until that function returns or asks again
//!   (each `omp for` of a parallel region asks before its loop);
//! - the part runs one loop (with the loops nested in it): a second one's
//!   work would belong to no unit, so such a function stays whole;
//! - the code between the event and the part's loop divides (`div`,
//!   `idiv`): the split among the threads (a program that asks for its
//!   place to stride through a loop by `T`, or to run a loop whole on every
//!   thread, does not divide);
//! - every instance has one part per thread of its team;
//! - the **iteration block** is the block of the outermost natural loop of
//!   the parts' graph (crate::worksharing), outside the loops nested in it,
//!   that runs most (those blocks run at most once per iteration, or once
//!   more for a test at the top); its runs in each instance's parts must be
//!   exactly the block split above of their sum.
//!
//! Each part then stands for the chunk the formula gives its thread, and is
//! cut and checked as a runtime's chunk is. A function whose parts divide
//! and loop, but where no block fits, is reported (its calls stay whole); a
//! chunked static schedule (`schedule(static, C)`) runs several blocks per
//! thread and is one of those.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::code_flow::{chunk_bounds, divides};
use crate::frames::FrameTracker;
use crate::loops::Loop;
use crate::worksharing::{FunctionCensus, IterationLoop, LoopSite, Stretch};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use tf_trace::{BlockTable, LoopChunk, StaticLoop};

/// The static parts one thread (or, merged, the program) ran.
#[derive(Default)]
pub struct StaticCensus {
    open: Option<(StaticLoop, Stretch)>,
    parts: Vec<Part>,
    functions: HashMap<LoopSite, FunctionCensus>,
    sites: HashMap<u64, CBlockId>,
}

struct Part {
    place: StaticLoop,
    site: LoopSite,
    counts: HashMap<CBlockId, u64>,
    order: Vec<CBlockId>,
}

/// What the static parts showed: the loops cut into iterations and the
/// chunk each part stands for.
#[derive(Clone, Debug, Default)]
pub struct StaticPlan {
    /// The iteration loop of each function cut.
    pub loops: HashMap<LoopSite, IterationLoop>,
    /// By (instance, thread number in the team): the part's chunk.
    pub chunks: HashMap<(u64, u64), LoopChunk>,
    /// The loop each instance cut is.
    pub runs_in: HashMap<u64, LoopSite>,
    /// Functions whose parts divide and loop but fit no block split.
    pub failed: Vec<LoopSite>,
}

impl StaticCensus {
    /// A `static_loop` event; `in_chunk` when a runtime's chunk is being
    /// run (the place was asked for inside it: no part begins).
    pub fn place(&mut self, place: StaticLoop, tracker: Option<&FrameTracker>, in_chunk: bool) {
        if in_chunk {
            return;
        }
        if let (Some((_, Stretch { frame: Some(f), .. })), Some(tr)) = (&self.open, tracker) {
            // The event comes while the call that asked is on the stack (a
            // traced stub may have entered it): the part's function asked
            // when that call is its own, a callee of it asked otherwise.
            let own = tr.depth() <= f.depth + 1
                && tr.frames().get(f.depth).map(|x| x.entry) == Some(f.site.entry);
            if tr.depth() > f.depth && !own {
                return;
            }
        }
        self.close();
        self.open = Some((place, Stretch::default()));
    }

    /// A runtime handed out a chunk: the open part's function schedules
    /// through the runtime, so the part is none.
    pub fn chunk(&mut self) {
        self.open = None;
    }

    /// A step, `tracker` already past it.
    pub fn step(&mut self, cblock: CBlockId, tracker: &FrameTracker) {
        let Some((place, stretch)) = &mut self.open else {
            return;
        };
        let f = stretch.step(
            place.loop_id,
            cblock,
            tracker,
            &mut self.sites,
            &mut self.functions,
        );
        if tracker.depth() < f.depth {
            self.close(); // the function returned
        }
    }

    /// The thread ended.
    pub fn finish(&mut self) {
        self.close();
    }

    fn close(&mut self) {
        if let Some((
            place,
            Stretch {
                frame: Some(f),
                counts,
                order,
                ..
            },
        )) = self.open.take()
        {
            self.parts.push(Part {
                place,
                site: f.site,
                counts,
                order,
            });
        }
    }

    /// Adds another thread's census.
    pub fn merge(&mut self, other: StaticCensus) {
        self.parts.extend(other.parts);
        for (site, o) in other.functions {
            self.functions.entry(site).or_default().merge(o);
        }
    }

    /// Whether no thread ran a static part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The plan for every function whose parts are a static schedule.
    pub fn plan(&self, canon: &CanonicalBlocks, table: &BlockTable) -> StaticPlan {
        let mut by_site: BTreeMap<LoopSite, Vec<&Part>> = BTreeMap::new();
        for p in &self.parts {
            by_site.entry(p.site).or_default().push(p);
        }
        let mut plan = StaticPlan::default();
        for (site, parts) in by_site {
            let Some(instances) = teams(&parts) else {
                continue;
            };
            // The part with the most blocks: the blocks it reached, in order.
            let Some(first) = parts.iter().max_by_key(|p| p.order.len()) else {
                continue;
            };
            let loops = self.functions[&site].loops(canon, table);
            let Some(outer) = loops.first() else {
                continue; // no loop: not a worksharing loop
            };
            if loops.iter().any(|l| !outer.body.contains(&l.header)) {
                continue; // another loop besides: its work would belong to no unit
            }
            let before = first.order.iter().take_while(|b| !outer.body.contains(b));
            let found = if before.clone().any(|&b| divides(canon, table, b)) {
                // schedule(static): the outer loop is the iteration loop
                Found::in_loop(&loops, 0, &first.order, &parts, &[Split::Block], &instances)
            } else {
                // schedule(static, C): a loop over the thread's chunks
                // around the iteration loop, each chunk bounded at
                // min(start + C, n)
                let sizes: BTreeSet<u64> = first
                    .order
                    .iter()
                    .flat_map(|&b| chunk_bounds(canon, table, b))
                    .collect();
                let splits: Vec<Split> = sizes.into_iter().map(Split::Chunks).collect();
                if splits.is_empty() || loops.len() < 2 {
                    continue; // nothing split the loop among the threads
                }
                (1..loops.len())
                    .filter(|&i| loops[i].header != outer.header)
                    .find_map(|i| {
                        Found::in_loop(&loops, i, &first.order, &parts, &splits, &instances)
                    })
            };
            let Some(found) = found else {
                plan.failed.push(site);
                continue;
            };
            for i in &instances {
                let trip = found.split.trip(i, found.block).expect("fits");
                for p in i {
                    let chunk = found.split.chunk(p.place, trip);
                    plan.chunks.insert((p.place.loop_id, p.place.thread), chunk);
                }
                plan.runs_in.insert(i[0].place.loop_id, site);
            }
            plan.loops.insert(site, found.iteration_loop);
        }
        plan
    }
}

/// How a static schedule splits `trip` iterations among a team.
#[derive(Clone, Copy)]
enum Split {
    /// One contiguous block per thread (`schedule(static)`).
    Block,
    /// Chunks of this many, round robin (`schedule(static, C)`).
    Chunks(u64),
}

impl Split {
    /// The chunk the part of thread `place.thread` stands for.
    fn chunk(self, place: StaticLoop, trip: u64) -> LoopChunk {
        let (t, threads) = (place.thread, place.threads.max(1));
        let (first, count, stride) = match self {
            Split::Block => {
                let (q, r) = (trip / threads, trip % threads);
                (block_start(trip, threads, t), q + u64::from(t < r), 0)
            }
            Split::Chunks(c) => (t * c, c, threads * c),
        };
        LoopChunk {
            loop_id: place.loop_id,
            first,
            count,
            stride,
            trip,
        }
    }

    /// The trip count when the runs of `b` in an instance's parts (by
    /// thread number) are this split of their sum; `None` otherwise.
    fn trip(self, team: &[&Part], b: CBlockId) -> Option<u64> {
        let n: u64 = team.iter().map(|p| runs(p, b)).sum();
        let fits = team
            .iter()
            .all(|p| self.chunk(p.place, n).iterations() == runs(p, b));
        fits.then_some(n)
    }
}

/// The iteration loop of a function's static parts, and their split.
struct Found {
    block: CBlockId,
    split: Split,
    iteration_loop: IterationLoop,
}

impl Found {
    /// The iteration block of `loops[i]` under one of `splits`, if one fits.
    /// Blocks of the loop that no loop inside it holds run at most once per
    /// iteration (a test at the top once more): the one that runs most runs
    /// once per iteration.
    fn in_loop(
        loops: &[Loop],
        i: usize,
        order: &[CBlockId],
        parts: &[&Part],
        splits: &[Split],
        instances: &[Vec<&Part>],
    ) -> Option<Found> {
        let lp = &loops[i];
        let inner: HashSet<CBlockId> = loops[i + 1..]
            .iter()
            .filter(|l| l.header != lp.header && lp.body.contains(&l.header))
            .flat_map(|l| l.body.iter().copied())
            .collect();
        let total = |b: CBlockId| -> u64 { parts.iter().map(|p| runs(p, b)).sum() };
        let block = order
            .iter()
            .copied()
            .filter(|b| lp.body.contains(b) && !inner.contains(b))
            .max_by_key(|&b| (total(b), std::cmp::Reverse(b)))?;
        let split = splits.iter().copied().find(|s| {
            let trips: Option<Vec<u64>> = instances.iter().map(|i| s.trip(i, block)).collect();
            trips.is_some_and(|t| t.iter().any(|&n| n > 0))
        })?;
        Some(Found {
            block,
            split,
            iteration_loop: IterationLoop {
                block,
                reach: lp.body.clone(),
            },
        })
    }
}

fn runs(p: &Part, b: CBlockId) -> u64 {
    p.counts.get(&b).copied().unwrap_or(0)
}

/// The parts grouped by instance, each instance's parts ordered by thread
/// number and one per thread of its team; `None` when an instance is not.
fn teams<'a>(parts: &[&'a Part]) -> Option<Vec<Vec<&'a Part>>> {
    let mut by_id: BTreeMap<u64, Vec<&Part>> = BTreeMap::new();
    for p in parts {
        by_id.entry(p.place.loop_id).or_default().push(p);
    }
    let mut out = Vec::new();
    for (_, mut team) in by_id {
        team.sort_by_key(|p| p.place.thread);
        let size = team[0].place.threads;
        let whole = team.len() as u64 == size
            && team
                .iter()
                .enumerate()
                .all(|(t, p)| p.place.thread == t as u64 && p.place.threads == size);
        if !whole {
            return None;
        }
        out.push(team);
    }
    Some(out)
}

/// The first iteration of thread `t` of `threads` under the block split of
/// `trip` iterations.
///
/// ```
/// use tf_analyzer::static_schedule::block_start;
/// // 10 iterations on 4 threads: 3, 3, 2, 2 from 0, 3, 6, 8
/// let starts: Vec<u64> = (0..4).map(|t| block_start(10, 4, t)).collect();
/// assert_eq!(starts, [0, 3, 6, 8]);
/// ```
pub fn block_start(trip: u64, threads: u64, t: u64) -> u64 {
    let (q, r) = (trip / threads.max(1), trip % threads.max(1));
    if t < r {
        t * (q + 1)
    } else {
        t * q + r
    }
}
