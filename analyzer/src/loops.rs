//! Natural loops of a graph of canonical blocks: `--unit iter:FN` takes the
//! outermost loop of a function's dynamic CFG; worksharing loops take theirs
//! from the code of the blocks their chunks ran (crate::worksharing).

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

/// The natural loops of the graph of `edges` entered at `roots`, outermost
/// first in the order a depth-first walk from the roots meets their headers.
/// A back edge `n → h` has `h` dominating `n`; the loop of `h` gathers every
/// node that reaches one of its back edges' sources without passing `h`.
///
/// ```
/// use tf_analyzer::loops::natural_loops;
/// // 0 → 1 → 2 → {1, 3}: one loop {1, 2}
/// let loops = natural_loops(&[(0, 1), (1, 2), (2, 1), (2, 3)], &[0]);
/// assert_eq!(loops.len(), 1);
/// assert_eq!(loops[0].header, 1);
/// assert_eq!(loops[0].body.len(), 2);
/// ```
pub fn natural_loops(edges: &[(CBlockId, CBlockId)], roots: &[CBlockId]) -> Vec<Loop> {
    let mut g: DiGraph<CBlockId, ()> = DiGraph::new();
    let mut index: HashMap<CBlockId, NodeIndex> = HashMap::new();
    let mut node = |g: &mut DiGraph<CBlockId, ()>, n: CBlockId| {
        *index.entry(n).or_insert_with(|| g.add_node(n))
    };
    let root = g.add_node(VEXIT);
    for &(a, b) in edges {
        let (a, b) = (node(&mut g, a), node(&mut g, b));
        g.add_edge(a, b, ());
    }
    for &r in roots {
        let r = node(&mut g, r);
        g.add_edge(root, r, ());
    }
    let dom = simple_fast(&g, root);
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
    let depth = |h: NodeIndex| loops.values().filter(|body| body.contains(&h)).count();
    let mut order = Vec::new();
    let mut dfs = Dfs::new(&g, root);
    while let Some(n) = dfs.next(&g) {
        if loops.contains_key(&n) {
            order.push(n);
        }
    }
    order.sort_by_key(|&h| depth(h)); // stable: outer loops first, then by the walk
    order
        .into_iter()
        .map(|h| Loop {
            header: g[h],
            body: loops[&h].iter().map(|&x| g[x]).collect(),
        })
        .collect()
}

/// The outermost loop of `cfg`: among the loops not nested in another, the
/// one whose header a depth-first walk from the entry meets first.
///
/// ```
/// use tf_analyzer::cfg::{FunctionCfg, VEXIT};
/// use tf_analyzer::loops::outermost_loop;
/// // 0 → 1 (outer header) → 2 (inner header) → {2, 3}; 3 → {1, 4}; 4 → exit
/// let cfg = FunctionCfg { entries: vec![0], edges: vec![(0, 1), (1, 2), (2, 2), (2, 3), (3, 1), (3, 4), (4, VEXIT)], ..Default::default() };
/// let l = outermost_loop(&cfg).unwrap();
/// assert_eq!(l.header, 1);
/// assert_eq!(l.body.len(), 3);
/// ```
pub fn outermost_loop(cfg: &FunctionCfg) -> Option<Loop> {
    let edges: Vec<(CBlockId, CBlockId)> = cfg
        .edges
        .iter()
        .copied()
        .filter(|&(_, b)| b != VEXIT)
        .collect();
    natural_loops(&edges, &cfg.entries).into_iter().next()
}
