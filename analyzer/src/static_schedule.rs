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
//!
//! A part whose code does not divide, but whose loop runs in every part
//! exactly the iterations `schedule(static, 1)` would give its thread (round
//! robin, one at a time), is cut that way: from -O1 on GCC's code for
//! `schedule(static, 1)` is `for (i = t; i < n; i += T)`, which is also what
//! a program that strides through its items by the team's size writes, and
//! either shares the loop out one iteration per thread in turn. A loop run
//! whole on every thread gives every part all the iterations, and does not
//! fit.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::code_flow::{chunk_bounds, divides};
use crate::frames::FrameTracker;
use crate::loops::Loop;
pub use crate::static_split::block_start;
use crate::static_split::{Found, Miss, Split, Team};
use crate::worksharing::{FunctionCensus, IterationLoop, LoopSite, Stretch};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tf_trace::{BlockTable, LoopChunk, StaticLoop};

/// The static parts one thread (or, merged, the program) ran.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct StaticCensus {
    open: Option<(StaticLoop, Stretch)>,
    parts: Vec<Part>,
    functions: HashMap<LoopSite, FunctionCensus>,
    sites: HashMap<u64, CBlockId>,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Part {
    pub(crate) place: StaticLoop,
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
    /// The functions cut (in `loops`) whose threads ask for their place and
    /// run a loop that nothing in their code shows split among them, but
    /// whose runs are what `schedule(static, 1)` gives: GCC's
    /// `schedule(static, 1)` leaves no mark, and a program's own stride by
    /// the team's size looks the same; either shares the loop out round
    /// robin, one iteration at a time.
    pub strided: Vec<LoopSite>,
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
    /// `named`: the entries of the functions the user asked to cut into
    /// iterations (`iter:FN`), where a stride that cannot be cut (unrolled)
    /// is an error rather than left whole.
    pub fn plan(&self, canon: &CanonicalBlocks, table: &BlockTable, named: &[u64]) -> StaticPlan {
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
            let tops = top_loops(&loops, &first.order);
            let Some(&head) = tops.first() else {
                continue; // no loop: not a worksharing loop
            };
            // schedule(static): the code before the loop divides, and the
            // top loops are the iteration loops. schedule(static, C): a
            // loop over the thread's chunks around the iteration loop, each
            // chunk bounded at min(start + C, n); tried first, since its
            // chunk loop also runs a block split of the chunks.
            let divided = first
                .order
                .iter()
                .take_while(|b| !loops[head].body.contains(b))
                .any(|&b| divides(canon, table, b));
            let sizes: BTreeSet<u64> = first
                .order
                .iter()
                .flat_map(|&b| chunk_bounds(canon, table, b))
                .collect();
            let chunks: Vec<Split> = sizes.into_iter().map(Split::Chunks).collect();
            let team = Team {
                canon,
                table,
                loops: &loops,
                order: &first.order,
                parts: &parts,
                instances: &instances,
            };
            let found = match (!chunks.is_empty()).then(|| team.cut(&tops, true, &chunks)) {
                Some(Ok(found)) => Ok(found),
                _ if divided => team.cut(&tops, false, &[Split::Block]),
                Some(Err(miss)) => Err(miss),
                // nothing in the code split the loop among the threads, but
                // each ran what schedule(static, 1) gives it: a stride by
                // the team's size (GCC's code for schedule(static, 1), or
                // the program's own), cut in logical order. Unrolled, it is
                // refused where the user named the function, else left.
                None => match team.cut_strided(&tops) {
                    Ok(found) => {
                        plan.strided.push(site);
                        Ok(found)
                    }
                    Err(miss) if named.contains(&site.entry) => Err(miss),
                    Err(_) => continue,
                },
            };
            let found = match found {
                Ok(found) => found,
                Err(Miss::First) => {
                    plan.failed.push(site);
                    continue;
                }
                // another loop besides: its work would belong to no unit
                Err(Miss::Other) => continue,
            };
            let (split, block) = (found[0].split, found[0].block);
            for i in &instances {
                let trip = split.trip(i, block).expect("fits");
                for p in i {
                    let chunk = split.chunk(p.place, trip);
                    plan.chunks.insert((p.place.loop_id, p.place.thread), chunk);
                }
                plan.runs_in.insert(i[0].place.loop_id, site);
            }
            plan.loops.insert(site, Found::joined(found));
        }
        plan
    }
}

/// How many times part `p` ran block `b`.
pub(crate) fn runs(p: &Part, b: CBlockId) -> u64 {
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

/// The loops of `loops` that no other loop holds, in the order `order`
/// (the blocks a part reached) reaches their headers.
fn top_loops(loops: &[Loop], order: &[CBlockId]) -> Vec<usize> {
    let mut tops: Vec<usize> = (0..loops.len())
        .filter(|&i| {
            !loops
                .iter()
                .any(|m| m.header != loops[i].header && m.body.contains(&loops[i].header))
        })
        .collect();
    tops.sort_by_key(|&i| order.iter().position(|&b| b == loops[i].header));
    tops
}
