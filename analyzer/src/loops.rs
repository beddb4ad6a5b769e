//! Natural loops of a function's dynamic CFG, for `--unit iter:FN`.

use crate::blocks::CBlockId;
use crate::cfg::{FunctionCfg, VEXIT};
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;
use std::collections::{HashMap, HashSet};

/// A loop: its header and its blocks (the header included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// The header: the target of the loop's back edges.
    pub header: CBlockId,
    /// The blocks of the loop.
    pub body: HashSet<CBlockId>,
}

/// The outermost loop of `cfg`: among the loops not nested in another, the
/// one whose header a depth-first walk from the entry meets first.
///
/// ```
/// use tf_analyzer::cfg::{FunctionCfg, VEXIT};
/// use tf_analyzer::loops::outermost_loop;
/// // 0 → 1 (outer header) → 2 (inner header) → {2, 3}; 3 → {1, 4}; 4 → exit
/// let cfg = FunctionCfg { entries: vec![0], edges: vec![(0, 1), (1, 2), (2, 2), (2, 3), (3, 1), (3, 4), (4, VEXIT)] };
/// let l = outermost_loop(&cfg).unwrap();
/// assert_eq!(l.header, 1);
/// assert_eq!(l.body.len(), 3);
/// ```
pub fn outermost_loop(cfg: &FunctionCfg) -> Option<Loop> {
    let nodes = cfg.nodes();
    let mut g: DiGraph<CBlockId, ()> = DiGraph::new();
    let index: HashMap<CBlockId, NodeIndex> = nodes.iter().map(|&n| (n, g.add_node(n))).collect();
    let root = g.add_node(VEXIT);
    for &(a, b) in &cfg.edges {
        if b != VEXIT {
            g.add_edge(index[&a], index[&b], ());
        }
    }
    for e in &cfg.entries {
        g.add_edge(root, index[e], ());
    }
    let dom = simple_fast(&g, root);
    // Back edges n → h, h dominating n; the natural loop of h gathers every
    // node that reaches one of its latches without passing through h.
    let mut loops: HashMap<NodeIndex, HashSet<NodeIndex>> = HashMap::new();
    for e in g.edge_indices() {
        let (n, h) = g.edge_endpoints(e).expect("edge");
        if dom.dominators(n).is_some_and(|mut d| d.any(|x| x == h)) {
            let body = loops.entry(h).or_insert_with(|| HashSet::from([h]));
            let mut work = vec![n];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(g.neighbors_directed(x, petgraph::Direction::Incoming));
                }
            }
        }
    }
    let nested = |h: NodeIndex| loops.iter().any(|(&o, body)| o != h && body.contains(&h));
    let mut dfs = Dfs::new(&g, root);
    while let Some(n) = dfs.next(&g) {
        if loops.contains_key(&n) && !nested(n) {
            return Some(Loop {
                header: g[n],
                body: loops[&n].iter().map(|&x| g[x]).collect(),
            });
        }
    }
    None
}
