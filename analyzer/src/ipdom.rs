//! Stage 4b: immediate post-dominators, the reconvergence points of the SIMT
//! stack.
//!
//! Post-dominators are dominators of the reversed graph rooted at the virtual
//! exit (petgraph's Cooper–Harvey–Kennedy `simple_fast`). Blocks that cannot
//! reach the exit (a loop whose thread was cut off by the end of the trace)
//! would have none; instead of pretending the cut is an exit, which would put
//! every reconvergence point inside the loop at the function's end, the
//! loop's latches are joined to the exit (`docs/reconvergence.md` §5.2), so
//! that lanes still reconverge inside the loop.
//!
//! ```
//! use tf_analyzer::cfg::{FunctionCfg, VEXIT};
//! use tf_analyzer::ipdom::Ipdom;
//! // 0 -> {1, 2} -> 3 -> exit: the diamond reconverges at 3.
//! let cfg = FunctionCfg { entries: vec![0], edges: vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, VEXIT)], ..Default::default() };
//! let ip = Ipdom::compute(&cfg);
//! assert_eq!(ip.of(0), Some(3));
//! assert_eq!(ip.of(3), Some(VEXIT));
//! assert_eq!(ip.synthetic_edges, 0);
//! ```

use crate::blocks::CBlockId;
use crate::cfg::{FunctionCfg, VEXIT};
use petgraph::algo::dominators::simple_fast;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, Reversed};
use petgraph::Direction;
use std::collections::HashMap;

/// The immediate post-dominators of one function's blocks.
#[derive(Clone, Debug, Default)]
pub struct Ipdom {
    ipdom: HashMap<CBlockId, CBlockId>,
    /// Latch-to-exit edges added for loops that never exited.
    pub synthetic_edges: usize,
}

impl Ipdom {
    /// Computes the post-dominators of `cfg`.
    pub fn compute(cfg: &FunctionCfg) -> Ipdom {
        let nodes = cfg.nodes();
        let mut g: DiGraph<CBlockId, ()> = DiGraph::with_capacity(nodes.len() + 1, cfg.edges.len());
        let index: HashMap<CBlockId, NodeIndex> =
            nodes.iter().map(|&n| (n, g.add_node(n))).collect();
        let vexit = g.add_node(VEXIT);
        let at = |n: CBlockId| if n == VEXIT { vexit } else { index[&n] };
        for &(a, b) in &cfg.edges {
            g.add_edge(at(a), at(b), ());
        }
        let entries: Vec<NodeIndex> = cfg.entries.iter().map(|&e| at(e)).collect();
        let synthetic_edges = join_stuck_loops(&mut g, vexit, &entries);

        let pdom = simple_fast(Reversed(&g), vexit);
        let ipdom = index
            .iter()
            .map(|(&n, &i)| (n, pdom.immediate_dominator(i).map_or(VEXIT, |d| g[d])))
            .collect();
        Ipdom {
            ipdom,
            synthetic_edges,
        }
    }

    /// The immediate post-dominator of `block` ([`VEXIT`] when the paths
    /// from it meet only at the function's exit); `None` for a block not in
    /// the graph.
    pub fn of(&self, block: CBlockId) -> Option<CBlockId> {
        self.ipdom.get(&block).copied()
    }
}

/// Adds latch → exit edges until every node reaches the exit; returns how
/// many were added.
fn join_stuck_loops(
    g: &mut DiGraph<CBlockId, ()>,
    vexit: NodeIndex,
    entries: &[NodeIndex],
) -> usize {
    let mut added = 0;
    loop {
        let mut reaches = vec![false; g.node_count()];
        let mut dfs = Dfs::new(Reversed(&*g), vexit);
        while let Some(n) = dfs.next(Reversed(&*g)) {
            reaches[n.index()] = true;
        }
        let stuck: Vec<NodeIndex> = g.node_indices().filter(|n| !reaches[n.index()]).collect();
        if stuck.is_empty() {
            return added;
        }
        // Edges from stuck nodes only lead to stuck nodes, so a sink
        // component of the stuck subgraph is a loop (or a dead end) that
        // never leaves.
        let mut sub: DiGraph<NodeIndex, ()> = DiGraph::new();
        let local: HashMap<NodeIndex, NodeIndex> =
            stuck.iter().map(|&n| (n, sub.add_node(n))).collect();
        for &n in &stuck {
            for m in g.neighbors_directed(n, Direction::Outgoing) {
                sub.add_edge(local[&n], local[&m], ());
            }
        }
        let sccs = tarjan_scc(&sub); // reverse topological order: sinks first
        let sink: Vec<NodeIndex> = sccs[0].iter().map(|&l| sub[l]).collect();
        let header = first_reached(g, entries, &sink);
        let latches: Vec<NodeIndex> = sink
            .iter()
            .copied()
            .filter(|&l| g.contains_edge(l, header))
            .collect();
        if latches.is_empty() {
            g.add_edge(header, vexit, ());
            added += 1;
        } else {
            for l in latches {
                g.add_edge(l, vexit, ());
                added += 1;
            }
        }
    }
}

/// The node of `set` that a depth-first search from the entries meets first
/// (the loop header); the lowest block id if none is reachable.
fn first_reached(g: &DiGraph<CBlockId, ()>, entries: &[NodeIndex], set: &[NodeIndex]) -> NodeIndex {
    let mut dfs = Dfs::empty(g);
    for &e in entries {
        dfs.move_to(e);
        while let Some(n) = dfs.next(g) {
            if set.contains(&n) {
                return n;
            }
        }
    }
    *set.iter().min_by_key(|n| g[**n]).expect("non-empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(entries: &[CBlockId], edges: &[(CBlockId, CBlockId)]) -> FunctionCfg {
        FunctionCfg {
            entries: entries.to_vec(),
            edges: edges.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn reference_examples() {
        // docs/reconvergence.md §5.3: 0→{1,2}, 1→3, 2→3, 2→4, 4→4, 3→X.
        let g = cfg(
            &[0],
            &[(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (4, 4), (3, VEXIT)],
        );
        let ip = Ipdom::compute(&g);
        // The self-loop 4 never exits: its latch (4 itself) is joined to the exit.
        assert_eq!(ip.synthetic_edges, 1);
        assert_eq!(ip.of(1), Some(3));
        assert_eq!(ip.of(4), Some(VEXIT));
        assert_eq!(ip.of(0), Some(VEXIT));
        assert_eq!(ip.of(2), Some(VEXIT));
        // After adding 4→X explicitly: the same.
        let g = cfg(
            &[0],
            &[
                (0, 1),
                (0, 2),
                (1, 3),
                (2, 3),
                (2, 4),
                (4, 4),
                (3, VEXIT),
                (4, VEXIT),
            ],
        );
        let ip = Ipdom::compute(&g);
        assert_eq!(ip.synthetic_edges, 0);
        assert_eq!(
            (ip.of(0), ip.of(1), ip.of(2), ip.of(4)),
            (Some(VEXIT), Some(3), Some(VEXIT), Some(VEXIT))
        );
    }

    #[test]
    fn truncated_loop_reconverges_inside_the_loop() {
        // docs/reconvergence.md §5.2: E0→H→{A,B}→L→H, threads cut off inside the loop.
        let (e0, h, a, b, l) = (0, 1, 2, 3, 4);
        let g = cfg(&[e0], &[(e0, h), (h, a), (h, b), (a, l), (b, l), (l, h)]);
        let ip = Ipdom::compute(&g);
        assert_eq!(ip.synthetic_edges, 1);
        assert_eq!(ip.of(h), Some(l));
        assert_eq!(ip.of(a), Some(l));
        assert_eq!(ip.of(b), Some(l));
    }

    #[test]
    fn loop_and_if_inside() {
        // 0 → 1 (header) → {2, 3} → 4 (latch) → {1, 5}; 5 → exit.
        let g = cfg(
            &[0],
            &[
                (0, 1),
                (1, 2),
                (1, 3),
                (2, 4),
                (3, 4),
                (4, 1),
                (4, 5),
                (5, VEXIT),
            ],
        );
        let ip = Ipdom::compute(&g);
        assert_eq!(ip.of(1), Some(4));
        assert_eq!(ip.of(4), Some(5));
        assert_eq!(ip.of(0), Some(1));
    }
}
