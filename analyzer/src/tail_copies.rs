//! `--merge-tails`: copies of code that the compiler duplicated, run as one
//! block.
//!
//! From -O2 on, GCC duplicates small tails: each arm of an `if` at the end of
//! a loop body gets its own copy of the loop's increment, test and back edge
//! (tail duplication), and the arms never rejoin inside the loop. A GPU
//! compiler keeps one latch, where the arms' lanes reconverge. With
//! `--merge-tails`, the blocks of one function that are copies of each other
//! are one block to the SIMT stack: one post-dominator, one issue for the
//! lanes of every copy, at the address of the lowest copy. Each lane's
//! frames still follow the copy it ran (a return lands in the copy after
//! its call).
//!
//! Two blocks are copies when they run the same instructions (branch
//! targets and RIP-relative addresses resolved; iced's comparison, which
//! leaves out the address and length) but for a last conditional branch,
//! which may test the opposite condition with its two targets swapped, and
//! when where they go next are copies too (the coarsest such partition,
//! found by refining the blocks' signatures by their successors' classes
//! until it is stable). Blocks that end in a call, an indirect jump or
//! anything else that leaves the function's graph by its own rules, entries
//! of functions, and spin-wait code stay themselves.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::cfg::{Cfgs, FunctionCfg, VEXIT};
use crate::code_flow::instructions;
use crate::spin_wait::SpinWait;
use iced_x86::{ConditionCode, FlowControl, Instruction};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use tf_trace::{BlockTable, FunctionId};

/// The block each canonical block issues as: itself, or the lowest copy of
/// the copies it belongs to under `--merge-tails`.
///
/// ```
/// use tf_analyzer::tail_copies::BlockClasses;
/// let none = BlockClasses::default();
/// assert_eq!(none.of(7), 7);
/// assert_eq!(none.merged(), 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct BlockClasses {
    /// Per canonical block, its class's block; `None` when no block merges.
    of: Option<Vec<CBlockId>>,
}

/// How a block ends, as far as copies go.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tail {
    /// A conditional branch on this condition (the lower-numbered of the
    /// condition and its opposite): successors (taken, next), or swapped.
    Branch(ConditionCode),
    /// A direct jump: successor its target.
    Jump,
    /// Any other instruction that goes on to the next: successor the next.
    Next(Instruction),
    /// A return: no successor in the function.
    Return(Instruction),
    /// Anything else: no copy.
    Own(CBlockId),
}

/// A block's function (and whether it is a cold part), its instructions but
/// the last, and how it ends.
pub(crate) type Signature = (FunctionId, bool, Vec<Instruction>, Tail);

/// Where a block goes on to, in its tail's order: a block of the trace, or
/// an address that starts none.
pub(crate) type Successor = Result<CBlockId, u64>;

/// What copies of each block of `canon` must share: its signature, and where
/// it goes on to. A block in `own` (entries and, when known, spin-wait code)
/// has no copy.
pub(crate) fn describe(
    canon: &CanonicalBlocks,
    table: &BlockTable,
    own: impl Fn(CBlockId) -> bool,
) -> Vec<(Signature, Vec<Successor>)> {
    // The block at each address; `None` where code written at run time put
    // several there, which a jump's target does not tell apart.
    let mut at: FxHashMap<u64, Option<CBlockId>> = FxHashMap::default();
    for (c, b) in canon.blocks().iter().enumerate() {
        at.entry(b.address)
            .and_modify(|k| *k = None)
            .or_insert(Some(c as CBlockId));
    }
    let target = |a: u64| match at.get(&a) {
        None => Some(Err(a)),
        Some(k) => k.map(Ok),
    };
    (0..canon.len() as CBlockId)
        .map(|c| {
            let cb = canon.block(c);
            let mut insns: Vec<Instruction> = instructions(canon, table, c).collect();
            let last = insns.pop();
            let alone = cb.is_entry || own(c) || last.is_none();
            let copyable = last
                .filter(|_| !alone)
                .and_then(|i| tail(&i, cb.end_address))
                .and_then(|(tail, next)| {
                    let next: Option<Vec<Successor>> = next.into_iter().map(target).collect();
                    Some((tail, next?))
                });
            let (tail, next) = copyable.unwrap_or((Tail::Own(c), vec![]));
            ((cb.function, cb.is_cold, insns, tail), next)
        })
        .collect()
}

impl BlockClasses {
    /// The classes of `canon`'s blocks: copies merged (see the module), but
    /// for spin-wait code.
    pub fn find(canon: &CanonicalBlocks, table: &BlockTable, spin_wait: &SpinWait) -> BlockClasses {
        let (signatures, successors): (Vec<Signature>, Vec<Vec<Successor>>) =
            describe(canon, table, |c| spin_wait.holds(c))
                .into_iter()
                .unzip();
        let mut class = number(signatures.iter());
        loop {
            let keys: Vec<(u32, Vec<Result<u32, u64>>)> = (0..canon.len())
                .map(|c| {
                    let next = successors[c].iter().map(|s| s.map(|b| class[b as usize]));
                    (class[c], next.collect())
                })
                .collect();
            let refined = number(keys.iter());
            let stable = count(&refined) == count(&class);
            class = refined;
            if stable {
                break;
            }
        }
        // Each class issues as its lowest block.
        let mut lowest: FxHashMap<u32, CBlockId> = FxHashMap::default();
        for (c, &k) in class.iter().enumerate() {
            let c = c as CBlockId;
            let low = lowest.entry(k).or_insert(c);
            if canon.block(c).address < canon.block(*low).address {
                *low = c;
            }
        }
        let of: Vec<CBlockId> = class.iter().map(|k| lowest[k]).collect();
        let merged = of.iter().enumerate().any(|(c, &r)| r != c as CBlockId);
        BlockClasses {
            of: merged.then_some(of),
        }
    }

    /// The block `c` issues as.
    #[inline(always)]
    pub fn of(&self, c: CBlockId) -> CBlockId {
        match &self.of {
            Some(of) => of[c as usize],
            None => c,
        }
    }

    /// The function graphs `cfgs` with each block replaced by the block it
    /// issues as: the graphs the SIMT stack reconverges on (`cfgs` itself
    /// when no block merges).
    pub fn graphs<'c>(&self, cfgs: &'c Cfgs) -> Cow<'c, Cfgs> {
        if self.of.is_none() {
            return Cow::Borrowed(cfgs);
        }
        Cow::Owned(cfgs.iter().map(|(&f, cfg)| (f, self.graph(cfg))).collect())
    }

    /// Function graph `cfg` with each block replaced by the block it issues
    /// as.
    fn graph(&self, cfg: &FunctionCfg) -> FunctionCfg {
        let node = |b: CBlockId| if b == VEXIT { b } else { self.of(b) };
        FunctionCfg {
            entries: sorted(cfg.entries.iter().map(|&b| node(b)).collect()),
            edges: sorted(cfg.edges.iter().map(|&(a, b)| (node(a), node(b))).collect()),
            yield_calls: sorted(cfg.yield_calls.iter().map(|&b| node(b)).collect()),
        }
    }

    /// How many blocks issue as another.
    pub fn merged(&self) -> usize {
        self.of.as_ref().map_or(0, |of| {
            of.iter()
                .enumerate()
                .filter(|&(c, &r)| r != c as CBlockId)
                .count()
        })
    }
}

/// How a block whose last instruction is `i` ends, and the addresses it goes
/// on to in its function, in the order the tail gives them; `None` when it
/// has no copy (a call, an indirect jump ...).
fn tail(i: &Instruction, next: u64) -> Option<(Tail, Vec<u64>)> {
    Some(match i.flow_control() {
        FlowControl::ConditionalBranch if i.condition_code() != ConditionCode::None => {
            let mut opposite = *i;
            opposite.negate_condition_code();
            let (cc, not) = (i.condition_code(), opposite.condition_code());
            let taken = i.near_branch_target();
            if (cc as u8) <= (not as u8) {
                (Tail::Branch(cc), vec![taken, next])
            } else {
                (Tail::Branch(not), vec![next, taken])
            }
        }
        FlowControl::UnconditionalBranch if i.is_jmp_short_or_near() => {
            (Tail::Jump, vec![i.near_branch_target()])
        }
        FlowControl::Next => (Tail::Next(*i), vec![next]),
        FlowControl::Return => (Tail::Return(*i), vec![]),
        _ => return None,
    })
}

/// `v` sorted, without repeats.
fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Numbers the distinct keys in the order they first come.
fn number<'k, K: Eq + std::hash::Hash + 'k>(keys: impl Iterator<Item = &'k K>) -> Vec<u32> {
    let mut ids: FxHashMap<&K, u32> = FxHashMap::default();
    keys.map(|k| {
        let n = ids.len() as u32;
        *ids.entry(k).or_insert(n)
    })
    .collect()
}

/// The number of distinct classes.
fn count(class: &[u32]) -> usize {
    class.iter().max().map_or(0, |&m| m as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempTrace;
    use tf_trace::{BlockDef, EndKind};

    /// GCC 12's -O2 loop of workloads/omp_latch.c: the test at 0x138d
    /// branches to the heavy arm (0x1378) or falls into the light arm
    /// (0x139b); each arm calls, then runs its own copy of the latch (0x1388:
    /// `cmp; jle exit`, 0x13ab: `cmp; jg test`), both going on to the test
    /// or the exit (0x13b0). `light_latch` replaces the light arm's latch.
    fn latch_loop(light_latch: BlockDef) -> (BlockClasses, CanonicalBlocks) {
        let mut t = TempTrace::new();
        let arm = |at: u64, call: [u8; 5]| {
            let mut code = vec![
                0x48, 0x89, 0xcf, 0x48, 0x83, 0xc1, 0x01, 0x48, 0x83, 0xc6, 0x18,
            ];
            code.extend(call);
            BlockDef::new(at)
                .code(&code)
                .insns(&[3, 4, 4, 5])
                .end(EndKind::Call)
        };
        let test = BlockDef::new(0x138d)
            .code(&[
                0xf2, 0x0f, 0x10, 0x06, 0x66, 0x0f, 0xef, 0xc9, 0x66, 0x0f, 0x2f, 0xc1, 0x77, 0xdd,
            ])
            .insns(&[4, 4, 4, 2])
            .end(EndKind::Branch);
        let heavy_latch = BlockDef::new(0x1388)
            .code(&[0x49, 0x39, 0xc8, 0x7e, 0x23])
            .insns(&[3, 2])
            .end(EndKind::Branch);
        let exit = BlockDef::new(0x13b0)
            .code(&[0xc3])
            .insns(&[1])
            .end(EndKind::Return);
        for d in [
            &arm(0x1378, [0xe8, 0x48, 0xff, 0xff, 0xff]),
            &heavy_latch,
            &test,
            &arm(0x139b, [0xe8, 0x55, 0xff, 0xff, 0xff]),
            &light_latch,
            &exit,
        ] {
            t.writer().block(d).unwrap();
        }
        let trace = t.finish();
        let canon = CanonicalBlocks::build(trace.blocks());
        let spin_wait = SpinWait::new(canon.len(), []);
        (
            BlockClasses::find(&canon, trace.blocks(), &spin_wait),
            canon,
        )
    }

    /// The light arm's latch at 0x13ab: `cmp rcx, r8; jg` 0x13b0 + `disp`.
    fn light_latch(disp: u8) -> BlockDef {
        BlockDef::new(0x13ab)
            .code(&[0x49, 0x39, 0xc8, 0x7f, disp])
            .insns(&[3, 2])
            .end(EndKind::Branch)
    }

    fn at(canon: &CanonicalBlocks, address: u64) -> CBlockId {
        (0..canon.len() as CBlockId)
            .find(|&c| canon.block(c).address == address)
            .unwrap()
    }

    #[test]
    fn a_latch_and_its_inverted_copy_are_one_block() {
        // jg 0x138d: the opposite test, targets swapped
        let (classes, canon) = latch_loop(light_latch(0xdd));
        let b = |a| at(&canon, a);
        assert_eq!(
            classes.of(b(0x13ab)),
            b(0x1388),
            "the copy issues as the lowest"
        );
        assert_eq!(classes.of(b(0x1388)), b(0x1388));
        // the arms call different functions; the test and the exit are alone
        for a in [0x1378, 0x139b, 0x138d, 0x13b0] {
            assert_eq!(classes.of(b(a)), b(a), "{a:#x}");
        }
        assert_eq!(classes.merged(), 1);
        // The graph: both arms return into one latch.
        let cfg = FunctionCfg {
            entries: vec![b(0x138d)],
            edges: vec![(b(0x1378), b(0x1388)), (b(0x139b), b(0x13ab))],
            yield_calls: vec![],
        };
        let merged = classes.graph(&cfg);
        assert_eq!(merged.edges.len(), 2);
        assert!(merged.edges.iter().all(|&(_, to)| to == b(0x1388)));
    }

    #[test]
    fn a_latch_that_goes_elsewhere_is_no_copy() {
        // jg 0x139b: back to the light arm, not to the test
        let (classes, canon) = latch_loop(light_latch(0xeb));
        assert_eq!(classes.merged(), 0);
        let b = at(&canon, 0x13ab);
        assert_eq!(classes.of(b), b);
        // and nothing merged leaves the graph as it is
        let cfg = FunctionCfg {
            entries: vec![0],
            edges: vec![(0, 1), (1, VEXIT)],
            yield_calls: vec![],
        };
        assert_eq!(classes.graph(&cfg), cfg);
    }
}
