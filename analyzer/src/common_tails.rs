//! `--merge-tails`, before blocks are cut: blocks that end alike and share
//! their last instructions but not their first (a copy of a loop's latch
//! after code that differs: one arm reloads a value the other kept) get a
//! block start where the shared tail begins, so that the tails are blocks
//! of their own, which [`crate::tail_copies`] then merges. LLVM's branch
//! folding splits common tails the same way before it merges them.
//!
//! Blocks *end alike* when they are in the same function, end in the same
//! way (a conditional branch possibly inverted, a jump, a return, or going
//! on to the next instruction) and go on to the same blocks or to copies of
//! them. A block's shared tail is the longest run of its last instructions
//! before its end that another block ending alike also ends with (compared
//! by hash: a collision only cuts a block in two, which changes no figure;
//! the merge compares instructions exactly).

use crate::blocks::CanonicalBlocks;
use crate::spin_wait::SpinWait;
use crate::tail_copies::{describe, BlockClasses, Successor, Tail};
use iced_x86::Instruction;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use tf_trace::{BlockTable, FunctionId};

/// The canonical blocks of `table`, also cut where shared tails begin.
///
/// ```
/// use tf_analyzer::common_tails::canonical_blocks;
/// # use tf_trace::{BlockDef, EndKind, TraceWriter, Trace};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("tf-doc-tails-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// // 0x10: ret — alone, nothing to share
/// w.block(&BlockDef::new(0x10).code(&[0xc3]).insns(&[1]).end(EndKind::Return))?;
/// w.finish()?;
/// let canon = canonical_blocks(Trace::open(&dir)?.blocks());
/// assert_eq!(canon.len(), 1);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
pub fn canonical_blocks(table: &BlockTable) -> CanonicalBlocks {
    let canon = CanonicalBlocks::build(table);
    let starts = tail_starts(&canon, table);
    if starts.is_empty() {
        canon
    } else {
        CanonicalBlocks::build_with(table, &starts)
    }
}

/// How blocks that end alike are keyed: function, cold part, tail, and
/// successors by class.
type EndKey = (FunctionId, bool, Tail, Vec<Successor>);

/// Where the shared tails of `canon`'s blocks begin, inside their blocks.
fn tail_starts(canon: &CanonicalBlocks, table: &BlockTable) -> Vec<u64> {
    // Spin-wait code is not known yet; the merge leaves it apart.
    let classes = BlockClasses::find(canon, table, &SpinWait::new(canon.len(), []));
    let mut alike: FxHashMap<EndKey, Vec<Vec<Instruction>>> = FxHashMap::default();
    for ((function, cold, body, tail), next) in describe(canon, table, |_| false) {
        if matches!(tail, Tail::Own(_)) || body.is_empty() {
            continue;
        }
        let next = next
            .iter()
            .map(|s: &Successor| s.map(|b| classes.of(b)))
            .collect();
        alike
            .entry((function, cold, tail, next))
            .or_default()
            .push(body);
    }
    let mut starts = Vec::new();
    for bodies in alike.values().filter(|b| b.len() > 1) {
        // How many blocks end with each (length, hash) run of instructions.
        let runs: Vec<Vec<u64>> = bodies.iter().map(|b| suffix_hashes(b)).collect();
        let mut count: FxHashMap<(usize, u64), u32> = FxHashMap::default();
        for r in &runs {
            for (len, &h) in r.iter().enumerate() {
                *count.entry((len + 1, h)).or_default() += 1;
            }
        }
        for (body, r) in bodies.iter().zip(&runs) {
            let shared = (1..=r.len())
                .rev()
                .find(|&len| count[&(len, r[len - 1])] > 1);
            if let Some(len) = shared.filter(|&len| len < body.len()) {
                starts.push(body[body.len() - len].ip());
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// The hash of each run of `body`'s last instructions: element k of the
/// last k + 1.
fn suffix_hashes(body: &[Instruction]) -> Vec<u64> {
    let mut h = 0u64;
    (body.iter().rev())
        .map(|i| {
            let mut s = FxHasher::default();
            (h, i).hash(&mut s);
            h = s.finish();
            h
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::CBlockId;
    use crate::testutil::TempTrace;
    use tf_trace::{BlockDef, EndKind};

    /// GCC 12's -O3 edge loop of workloads/omp_bfs.c: the arm for a new
    /// neighbour (0x168b) stores, reloads the loop bound and tests it; the
    /// arm for a visited one (0x16b8) only tests it. Both end with the same
    /// `lea; cmp; jg 0x1680` and fall into copies of the return (0x16aa,
    /// 0x16c3).
    #[test]
    fn a_shared_tail_is_cut_off_and_merged() {
        let mut t = TempTrace::new();
        let tail = [0x8d, 0x14, 0x0e, 0x39, 0xc2, 0x7f];
        let block = |at: u64, head: &[u8], head_insns: &[u8], jg: u8| {
            let mut code = head.to_vec();
            code.extend(tail);
            code.push(jg);
            let mut insns = head_insns.to_vec();
            insns.extend([3, 2, 2]);
            BlockDef::new(at)
                .code(&code)
                .insns(&insns)
                .end(EndKind::Branch)
        };
        let new_neighbour = block(
            0x168b,
            &[
                0x8b, 0x37, 0x48, 0x83, 0xc0, 0x01, 0x8d, 0x4e, 0x01, 0x41, 0x89, 0x0c, 0x93, 0xc6,
                0x04, 0x13, 0x01, 0x41, 0x8b, 0x30, 0x41, 0x8b, 0x48, 0x04,
            ],
            &[2, 4, 3, 4, 4, 3, 4],
            0xd6,
        );
        let visited = block(0x16b8, &[0x48, 0x83, 0xc0, 0x01], &[4], 0xbd);
        let ret = |at: u64| {
            BlockDef::new(at)
                .code(&[0x48, 0x8b, 0x5d, 0xf8, 0xc9, 0xc3])
                .insns(&[4, 1, 1])
                .end(EndKind::Return)
        };
        for d in [&new_neighbour, &ret(0x16aa), &visited, &ret(0x16c3)] {
            t.writer().block(d).unwrap();
        }
        let trace = t.finish();
        let canon = canonical_blocks(trace.blocks());
        let at = |a: u64| {
            (0..canon.len() as CBlockId)
                .find(|&c| canon.block(c).address == a)
                .unwrap_or_else(|| panic!("no block at {a:#x}"))
        };
        // each arm is cut where the shared tail begins
        assert_eq!(canon.block(at(0x168b)).end_address, 0x16a3);
        assert_eq!(canon.block(at(0x16b8)).end_address, 0x16bc);
        assert_eq!(canon.block(at(0x16bc)).n_insns, 3);
        // the tails and the returns are copies; the arms are not
        let classes = BlockClasses::find(&canon, trace.blocks(), &SpinWait::new(canon.len(), []));
        assert_eq!(classes.of(at(0x16bc)), at(0x16a3));
        assert_eq!(classes.of(at(0x16c3)), at(0x16aa));
        assert_eq!(classes.of(at(0x16b8)), at(0x16b8));
        assert_eq!(classes.merged(), 2);
        // without shared tails, nothing is cut
        let plain = CanonicalBlocks::build(trace.blocks());
        assert_eq!(plain.len(), 4);
    }
}
