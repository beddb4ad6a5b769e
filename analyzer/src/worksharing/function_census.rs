//! The census of one worksharing loop's stretches ([`FunctionCensus`]):
//! what they ran at its function's frame, merged over threads, and the
//! search of that graph for the iteration loop and block (or, for a
//! `sections` construct, the stretch as the iteration).

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::code_flow::successors;
use crate::loops::{natural_loops, Loop};
use petgraph::graphmap::DiGraphMap;
use petgraph::visit::Dfs;
use std::collections::HashSet;
use tf_trace::BlockTable;

/// What the stretches of one loop ran at its function's frame.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct FunctionCensus {
    /// Blocks that ran once per iteration in every stretch so far, in the
    /// order the first stretch reached them.
    pub(super) candidates: Option<Vec<CBlockId>>,
    /// Blocks that ran at least once per iteration in every stretch so far.
    pub(super) at_least: Option<HashSet<CBlockId>>,
    /// Edges between consecutive steps at the function's frame.
    pub(super) edges: HashSet<(CBlockId, CBlockId)>,
    /// The first block of each stretch.
    pub(super) starts: HashSet<CBlockId>,
    /// The last block of each stretch: where the next chunk was asked for.
    pub(super) fetches: HashSet<CBlockId>,
    /// The most iterations a stretch held.
    #[serde(default)]
    pub(super) most: u64,
}

impl FunctionCensus {
    /// Adds what another thread's stretches of the same loop showed.
    pub(crate) fn merge(&mut self, o: FunctionCensus) {
        self.edges.extend(o.edges);
        self.starts.extend(o.starts);
        self.fetches.extend(o.fetches);
        self.most = self.most.max(o.most);
        self.at_least = match (self.at_least.take(), o.at_least) {
            (Some(a), Some(b)) => Some(a.intersection(&b).copied().collect()),
            (a, b) => a.or(b),
        };
        self.candidates = match (self.candidates.take(), o.candidates) {
            (Some(a), Some(b)) => Some(a.into_iter().filter(|x| b.contains(x)).collect()),
            (a, b) => a.or(b),
        };
    }

    /// The blocks of the iteration loop: the outermost natural loop of the
    /// stretches' graph that asks the runtime for nothing and holds a block
    /// that runs once per iteration.
    pub(crate) fn iteration_loop(
        &self,
        canon: &CanonicalBlocks,
        table: &BlockTable,
        candidates: &[CBlockId],
    ) -> Option<HashSet<CBlockId>> {
        let loops: Vec<Loop> = self
            .loops(canon, table)
            .into_iter()
            .filter(|l| candidates.iter().any(|c| l.body.contains(c)))
            .collect();
        let often = |l: &&Loop| {
            self.at_least
                .as_ref()
                .is_some_and(|a| a.contains(&l.header))
        };
        loops
            .iter()
            .find(often)
            .or(loops.first())
            .map(|l| l.body.clone())
    }

    /// Where each stretch is one iteration, and the stretches run different
    /// code from where it begins (the sections of a `sections` construct,
    /// which the runtime hands out one at a time, each its own code): the
    /// iteration block is the first block that runs once in every stretch,
    /// and the iteration reaches every block the stretches ran from there
    /// but where they asked for the next one. Stretches that all run the
    /// same code from there are a loop's chunks of one iteration whose loop
    /// was not found (unrolled, vectorized): not cut.
    pub(super) fn one_per_stretch(
        &self,
        candidates: &[CBlockId],
    ) -> Option<(CBlockId, HashSet<CBlockId>)> {
        let every = self.at_least.as_ref()?;
        if self.most != 1 {
            return None;
        }
        let block = *candidates.iter().find(|c| !self.fetches.contains(c))?;
        let not_into_fetch = |&&(_, to): &&(CBlockId, CBlockId)| !self.fetches.contains(&to);
        let graph: DiGraphMap<CBlockId, ()> =
            DiGraphMap::from_edges(self.edges.iter().filter(not_into_fetch));
        let mut reach = HashSet::from([block]);
        let mut dfs = Dfs::new(&graph, block);
        while let Some(b) = dfs.next(&graph) {
            reach.insert(b);
        }
        let differ = reach.iter().any(|c| !every.contains(c));
        differ.then_some((block, reach))
    }

    /// The natural loops of the stretches' graph that ask the runtime for
    /// nothing, outermost first.
    pub(crate) fn loops(&self, canon: &CanonicalBlocks, table: &BlockTable) -> Vec<Loop> {
        let nodes: HashSet<CBlockId> = self
            .edges
            .iter()
            .flat_map(|&(a, b)| [a, b])
            .chain(self.starts.iter().copied())
            .collect();
        // A target inside a block (a back edge that never ran does not split
        // blocks) goes to that block.
        let mut ranges: Vec<(u64, u64, CBlockId)> = nodes
            .iter()
            .map(|&c| (canon.block(c).address, canon.block(c).end_address, c))
            .collect();
        ranges.sort_unstable();
        let at = |a: u64| {
            let i = ranges.partition_point(|r| r.0 <= a).checked_sub(1)?;
            (a < ranges[i].1).then_some(ranges[i].2)
        };
        let mut edges: Vec<(CBlockId, CBlockId)> = self.edges.iter().copied().collect();
        for &c in &nodes {
            edges.extend(
                successors(canon, table, c)
                    .into_iter()
                    .filter_map(|a| Some((c, at(a)?))),
            );
        }
        edges.sort_unstable();
        edges.dedup();
        let mut roots: Vec<CBlockId> = self.starts.iter().copied().collect();
        roots.sort_unstable();
        natural_loops(&edges, &roots)
            .into_iter()
            .filter(|l| l.body.is_disjoint(&self.fetches))
            .collect()
    }
}
