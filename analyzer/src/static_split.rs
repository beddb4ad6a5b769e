//! How an inline static schedule splits a loop among a team, and where the
//! iteration loop of a function's static parts is (crate::static_schedule).

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::code_flow::{same_code, vector_arithmetic};
use crate::loops::Loop;
use crate::static_schedule::{runs, Part};
use crate::worksharing::IterationLoop;
use std::collections::HashSet;
use tf_trace::{BlockTable, LoopChunk, StaticLoop};

/// How a static schedule splits `trip` iterations among a team.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// One contiguous block per thread (`schedule(static)`).
    Block,
    /// Chunks of this many, round robin (`schedule(static, C)`).
    Chunks(u64),
}

impl Split {
    /// The chunk the part of thread `place.thread` stands for.
    pub(crate) fn chunk(self, place: StaticLoop, trip: u64) -> LoopChunk {
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
    pub(crate) fn trip(self, team: &[&Part], b: CBlockId) -> Option<u64> {
        let n: u64 = team.iter().map(|p| runs(p, b)).sum();
        let fits = team
            .iter()
            .all(|p| self.chunk(p.place, n).iterations() == runs(p, b));
        fits.then_some(n)
    }
}

/// An iteration loop of a function's static parts, and their split.
pub(crate) struct Found {
    pub(crate) block: CBlockId,
    pub(crate) split: Split,
    reach: HashSet<CBlockId>,
}

/// What a function's static parts ran: the loops of their graph (outermost
/// first), the blocks the longest part reached (in order), the parts, and
/// the parts by instance (each ordered by thread number).
pub(crate) struct Team<'a> {
    pub(crate) canon: &'a CanonicalBlocks,
    pub(crate) table: &'a BlockTable,
    pub(crate) loops: &'a [Loop],
    pub(crate) order: &'a [CBlockId],
    pub(crate) parts: &'a [&'a Part],
    pub(crate) instances: &'a [Vec<&'a Part>],
}

/// Why a function's static parts are not cut.
pub(crate) enum Miss {
    /// Their first loop fits no split.
    First,
    /// A later loop is not cut as the first one is.
    Other,
}

impl Team<'_> {
    /// The iteration loops of the top loops `tops` (in the order a part
    /// runs them), each of `tops` cut alike: the same split, the same runs
    /// per thread (GCC splits the static loops of a region that share an
    /// iteration space once for all).
    pub(crate) fn cut(
        &self,
        tops: &[usize],
        chunked: bool,
        splits: &[Split],
    ) -> Result<Vec<Found>, Miss> {
        let mut found: Vec<Found> = Vec::new();
        for &t in tops {
            let f = self.iteration_loop(t, chunked, splits);
            let Some(head) = found.first() else {
                found.push(f.ok_or(Miss::First)?);
                continue;
            };
            let f = f.ok_or(Miss::Other)?;
            let alike = f.split == head.split
                && self
                    .parts
                    .iter()
                    .all(|p| runs(p, f.block) == runs(p, head.block));
            if !alike {
                return Err(Miss::Other);
            }
            found.push(f);
        }
        Ok(found)
    }

    /// [`Team::cut`] for a stride by the team's size (`schedule(static, 1)`):
    /// the loop is often the program's own, tested at the top, whose test
    /// runs once more per part than the iterations. A block that runs
    /// exactly once less than the most-run one in every part, and fits the
    /// split too, is the iteration block then.
    pub(crate) fn cut_strided(&self, tops: &[usize]) -> Result<Vec<Found>, Miss> {
        let split = Split::Chunks(1);
        let mut found = self.cut(tops, false, &[split])?;
        for f in &mut found {
            let fits = |b: CBlockId| self.instances.iter().all(|i| split.trip(i, b).is_some());
            let below = self.order.iter().copied().find(|&b| {
                f.reach.contains(&b)
                    && self
                        .parts
                        .iter()
                        .all(|p| runs(p, b) + 1 == runs(p, f.block))
                    && fits(b)
            });
            if let Some(b) = below {
                f.block = b;
            }
        }
        Ok(found)
    }

    /// The iteration loop of top loop `t` under one of `splits`: the loop
    /// itself, or (`chunked`) the outermost loop inside it (the top loop
    /// steps from chunk to chunk) where one fits.
    pub(crate) fn iteration_loop(
        &self,
        t: usize,
        chunked: bool,
        splits: &[Split],
    ) -> Option<Found> {
        if !chunked {
            return self.in_loop(t, splits);
        }
        let top = &self.loops[t];
        (t + 1..self.loops.len())
            .filter(|&i| {
                self.loops[i].header != top.header && top.body.contains(&self.loops[i].header)
            })
            .find_map(|i| self.in_loop(i, splits))
    }

    /// The iteration block of `loops[i]` under one of `splits`, if one fits.
    /// Blocks of the loop that no loop inside it holds run at most once per
    /// iteration (a test at the top once more): the one that runs most runs
    /// once per iteration. Not when those blocks compute on vectors, or when
    /// two of them run the same code as often as each other (give or take
    /// one, in every part: an unrolled body): a pass then runs several
    /// iterations, and the counts (which alone say how many iterations
    /// there are) would count passes.
    fn in_loop(&self, i: usize, splits: &[Split]) -> Option<Found> {
        let lp = &self.loops[i];
        let inner: HashSet<CBlockId> = self.loops[i + 1..]
            .iter()
            .filter(|l| l.header != lp.header && lp.body.contains(&l.header))
            .flat_map(|l| l.body.iter().copied())
            .collect();
        let total = |b: CBlockId| -> u64 { self.parts.iter().map(|p| runs(p, b)).sum() };
        let own = || {
            self.order
                .iter()
                .copied()
                .filter(|b| lp.body.contains(b) && !inner.contains(b))
        };
        if own().any(|b| vector_arithmetic(self.canon, self.table, b)) {
            return None;
        }
        let blocks: Vec<CBlockId> = own().collect();
        let unrolled = blocks.iter().enumerate().any(|(i, &a)| {
            blocks[i + 1..].iter().any(|&b| {
                self.parts
                    .iter()
                    .all(|p| runs(p, a).abs_diff(runs(p, b)) <= 1)
                    && same_code(self.canon, self.table, a, b)
            })
        });
        if unrolled {
            return None;
        }
        let block = own().max_by_key(|&b| (total(b), std::cmp::Reverse(b)))?;
        let split = splits.iter().copied().find(|s| {
            let trips: Option<Vec<u64>> = self.instances.iter().map(|i| s.trip(i, block)).collect();
            trips.is_some_and(|t| t.iter().any(|&n| n > 0))
        })?;
        Some(Found {
            block,
            split,
            reach: lp.body.clone(),
        })
    }
}

impl Found {
    /// The loops a part runs one after the other, as one iteration loop:
    /// the first one's iteration block, the others' as its siblings.
    pub(crate) fn joined(found: Vec<Found>) -> IterationLoop {
        let mut it = found.into_iter();
        let first = it.next().expect("one loop at least");
        let mut lp = IterationLoop {
            block: first.block,
            reach: first.reach,
            siblings: Vec::new(),
        };
        for f in it {
            lp.siblings.push(f.block);
            lp.reach.extend(f.reach);
        }
        lp
    }
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
