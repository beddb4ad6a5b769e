//! Which branches a GPU compiler would if-convert (`--predicate N`).
//!
//! GPU compilers turn short branches into predicated code that every lane
//! of the warp issues, the lanes on the other arm with their predicate off;
//! profilers count those lanes as executing. The rule here: a conditional
//! branch is *predicable* when, in its function's dynamic CFG,
//! - it reconverges at a block (its immediate post-dominator `r`, not the
//!   function's exit);
//! - every block between the branch and `r` lies at a higher address than
//!   the branch (forward code: no loop inside);
//! - none of them calls, returns, makes a system call or stores to memory;
//! - every path from the branch to `r` runs at most `N` instructions.
//!
//! The replay then issues the arms as usual (one after the other), but counts
//! every lane that reached the branch as active in them.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::cfg::{FunctionCfg, VEXIT};
use crate::replay::IpdomMap;
use rustc_hash::{FxHashMap, FxHashSet};
use tf_trace::{BlockTable, EndKind};

/// Branches that are if-converted: (function entry, branch block).
pub type Predicable = FxHashSet<(u64, CBlockId)>;

/// The predicable branches of `cfg` (function `func`) for arms of at most
/// `limit` instructions.
///
/// ```
/// use tf_analyzer::cfg::{FunctionCfg, VEXIT};
/// # use tf_analyzer::blocks::CanonicalBlocks;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("tf-doc-predicate-{}", std::process::id()));
/// # let mut w = tf_trace::TraceWriter::create(&dir)?;
/// # let f = w.function(0x100, 0, "f")?;
/// # use tf_trace::{BlockDef, EndKind};
/// // 0x100: branch; 0x101 (2 insns) and 0x103 (3 insns) are the arms; 0x106 joins.
/// # w.block(&BlockDef::new(0x100).insns(&[1]).end(EndKind::Branch).function(f))?;
/// # w.block(&BlockDef::new(0x101).insns(&[1, 1]).end(EndKind::Jump).function(f))?;
/// # w.block(&BlockDef::new(0x103).insns(&[1, 1, 1]).end(EndKind::Fallthrough).function(f))?;
/// # w.block(&BlockDef::new(0x106).insns(&[1]).end(EndKind::Return).function(f))?;
/// # w.finish()?;
/// # let trace = tf_trace::Trace::open(&dir)?;
/// # let canon = CanonicalBlocks::build(trace.blocks());
/// let cfg = FunctionCfg { entries: vec![0], edges: vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, VEXIT)], ..Default::default() };
/// let ipdom = [((0x100, 0), 3), ((0x100, 1), 3), ((0x100, 2), 3), ((0x100, 3), VEXIT)]
///     .into_iter().collect();
/// let short = tf_analyzer::predicate::predicable(0x100, &cfg, &ipdom, &canon, trace.blocks(), 3);
/// assert!(short.contains(&(0x100, 0)));
/// let none = tf_analyzer::predicate::predicable(0x100, &cfg, &ipdom, &canon, trace.blocks(), 2);
/// assert!(none.is_empty());
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
pub fn predicable(
    func: u64,
    cfg: &FunctionCfg,
    ipdom: &IpdomMap,
    canon: &CanonicalBlocks,
    table: &BlockTable,
    limit: u32,
) -> Predicable {
    let mut succ: FxHashMap<CBlockId, Vec<CBlockId>> = FxHashMap::default();
    for &(a, b) in &cfg.edges {
        succ.entry(a).or_default().push(b);
    }
    let mut out = Predicable::default();
    for (&n, next) in &succ {
        if next.len() < 2 || canon.block(n).end != EndKind::Branch {
            continue;
        }
        let Some(&r) = ipdom.get(&(func, n)) else {
            continue;
        };
        if r != VEXIT && arms_fit(n, r, &succ, canon, table, limit) {
            out.insert((func, n));
        }
    }
    out
}

/// Whether every path from `branch` to `r` is forward, plain and at most
/// `limit` instructions long.
fn arms_fit(
    branch: CBlockId,
    r: CBlockId,
    succ: &FxHashMap<CBlockId, Vec<CBlockId>>,
    canon: &CanonicalBlocks,
    table: &BlockTable,
    limit: u32,
) -> bool {
    let from = canon.block(branch).address;
    // Longest path (in instructions) from each block to `r`; forward code
    // is acyclic, so a depth-first walk with memoization finds it. A block
    // met again on the walk's own path closes a loop: not forward code
    // (even when every block of the loop lies above the branch).
    let mut longest: FxHashMap<CBlockId, u32> = FxHashMap::default();
    let mut on_path: FxHashSet<CBlockId> = FxHashSet::default();
    fn walk(
        b: CBlockId,
        r: CBlockId,
        from: u64,
        ctx: (
            &FxHashMap<CBlockId, Vec<CBlockId>>,
            &CanonicalBlocks,
            &BlockTable,
        ),
        longest: &mut FxHashMap<CBlockId, u32>,
        on_path: &mut FxHashSet<CBlockId>,
        limit: u32,
    ) -> Option<u32> {
        if b == r {
            return Some(0);
        }
        if let Some(&n) = longest.get(&b) {
            return Some(n);
        }
        let (succ, canon, table) = ctx;
        if b == VEXIT {
            return None;
        }
        let cb = canon.block(b);
        let plain = !matches!(
            cb.end,
            EndKind::Call | EndKind::IndirectCall | EndKind::Return | EndKind::Syscall
        );
        if cb.address <= from || !plain || stores(cb, table) {
            return None;
        }
        if !on_path.insert(b) {
            return None;
        }
        let mut most = Some(0);
        for &s in succ.get(&b).map_or(&[][..], |v| v.as_slice()) {
            most = most
                .zip(walk(s, r, from, ctx, longest, on_path, limit))
                .map(|(a, n)| a.max(n));
            if most.is_none() {
                break;
            }
        }
        on_path.remove(&b);
        let n = most? + cb.n_insns;
        if n > limit {
            return None;
        }
        longest.insert(b, n);
        Some(n)
    }
    succ[&branch].iter().all(|&s| {
        let ctx = (succ, canon, table);
        walk(s, r, from, ctx, &mut longest, &mut on_path, limit).is_some()
    })
}

/// Whether a canonical block has a store operand.
fn stores(cb: &crate::blocks::CBlock, table: &BlockTable) -> bool {
    let (block, _, first_op) = cb.origin;
    let Some(b) = table.block(block) else {
        return true;
    };
    let ops = b.operands();
    let first = first_op as usize;
    ops.get(first..first + cb.n_ops as usize)
        .is_none_or(|ops| ops.iter().any(|o| o.write))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tf_trace::{BlockDef, Trace, TraceWriter};

    /// `if (c) { loop }`: the arm holds a loop whose blocks all lie above
    /// the branch (0x100 → 0x101 ⇄ 0x102 → 0x104, 0x100 → 0x104). Not
    /// forward code, so not predicable, at any limit; and the walk ends.
    #[test]
    fn a_loop_inside_an_arm_is_not_predicable() {
        let dir = std::env::temp_dir().join(format!("tf-predicate-loop-{}", std::process::id()));
        let mut w = TraceWriter::create(&dir).unwrap();
        let f = w.function(0x100, 0, "f").unwrap();
        let block = |a: u64, n: usize, end: EndKind| {
            BlockDef::new(a).insns(&vec![1; n]).end(end).function(f)
        };
        w.block(&block(0x100, 1, EndKind::Branch)).unwrap();
        w.block(&block(0x101, 1, EndKind::Fallthrough)).unwrap();
        w.block(&block(0x102, 2, EndKind::Branch)).unwrap();
        w.block(&block(0x104, 1, EndKind::Return)).unwrap();
        w.finish().unwrap();
        let trace = Trace::open(&dir).unwrap();
        let canon = CanonicalBlocks::build(trace.blocks());
        let cfg = FunctionCfg {
            entries: vec![0],
            edges: vec![(0, 1), (0, 3), (1, 2), (2, 1), (2, 3), (3, VEXIT)],
            ..Default::default()
        };
        let ipdom: IpdomMap = [
            ((0x100, 0), 3),
            ((0x100, 1), 2),
            ((0x100, 2), 3),
            ((0x100, 3), VEXIT),
        ]
        .into_iter()
        .collect();
        assert!(predicable(0x100, &cfg, &ipdom, &canon, trace.blocks(), 100).is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }
}
