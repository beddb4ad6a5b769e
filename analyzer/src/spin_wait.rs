//! Spin-wait code: where units wait by spinning on memory instead of
//! calling the synchronization functions the tracers recognize (a lock or
//! a flag a program builds from atomic instructions: Rust's and Go's
//! mutexes, TBB's and OpenBLAS's waits, hand-written spin locks).
//!
//! Such a wait runs instructions that tf cannot tell from work, so the
//! analysis counts the units' instructions in it and warns. Its marks are
//! the `pause` instruction, the spin-wait hint that such loops execute on
//! every round, and a call of `sched_yield` (or `pthread_yield`,
//! `thrd_yield`), which loops that wait longer make instead (OpenBLAS's
//! threads, C++'s `std::this_thread::yield`, Rust's `yield_now`). The
//! spin-wait code is the innermost loop of its function's dynamic CFG
//! around each block that holds a `pause` or called a yield (the block
//! alone when it is in no loop): the whole loop, whatever the blocks a
//! tracer split it into (Valgrind ends a block at every `pause`, Pin does
//! not); and the yield functions themselves. A `pause` in a function of its
//! own (a back-off called by the spin loop) marks that function's loop only,
//! so the count is a lower bound.

use crate::blocks::{CBlockId, CanonicalBlocks};
use crate::cfg::Cfgs;
use crate::loops::natural_loops;
use crate::results::{FunctionResult, WidthResult};
use std::collections::HashSet;
use std::sync::Arc;
use tf_trace::BlockTable;

/// The functions that give the CPU up to another thread and come back: a
/// loop that calls one waits.
const YIELDS: [&[u8]; 4] = [
    b"sched_yield",
    b"__sched_yield",
    b"pthread_yield",
    b"thrd_yield",
];

/// By function id of `table` (index 0: no function): whether it is a yield,
/// whose calls the first pass records ([`crate::cfg::CfgBuilder::yielding`]).
pub(crate) fn yielding_functions(table: &BlockTable) -> Arc<[bool]> {
    let mut yielding = vec![false; table.functions().len() + 1];
    for f in table.functions() {
        if let Some(y) = yielding.get_mut(f.id as usize) {
            *y = YIELDS.contains(&f.name.as_slice());
        }
    }
    yielding.into()
}

/// What marks spin-wait code, in the words tf's outputs describe it with.
pub const MARKS: &str = "loops with a pause instruction or a call of sched_yield";

/// What the figures make of spin-wait code (`--spin-wait`).
///
/// ```
/// use tf_analyzer::spin_wait::SpinWaitRule;
/// assert_eq!(SpinWaitRule::default(), SpinWaitRule::Count);
/// assert_eq!(SpinWaitRule::Exclude.to_string(), "exclude");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpinWaitRule {
    /// Its instructions are issued and counted as any others (and counted
    /// apart too).
    #[default]
    Count,
    /// It is replayed, so that lanes diverge and reconverge as they did,
    /// but never issued: its instructions are left out of every figure and
    /// every observer's stream, as VTune's effective time leaves out spin
    /// time, and counted apart only.
    Exclude,
}

impl std::fmt::Display for SpinWaitRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SpinWaitRule::Count => "count",
            SpinWaitRule::Exclude => "exclude",
        })
    }
}

/// The canonical blocks of spin-wait code.
#[derive(Clone, Debug, Default)]
pub struct SpinWait {
    blocks: Vec<bool>,
}

impl SpinWait {
    /// Marks `blocks` among `n_blocks` canonical blocks.
    ///
    /// ```
    /// use tf_analyzer::spin_wait::SpinWait;
    /// let s = SpinWait::new(4, [1, 2]);
    /// assert!(s.holds(2) && !s.holds(3) && !s.holds(9));
    /// assert!(!s.is_empty() && SpinWait::new(4, []).is_empty());
    /// ```
    pub fn new(n_blocks: usize, blocks: impl IntoIterator<Item = CBlockId>) -> SpinWait {
        let mut marked = vec![false; n_blocks];
        for b in blocks {
            marked[b as usize] = true;
        }
        SpinWait { blocks: marked }
    }

    /// The spin-wait code of the functions of `cfgs`: the innermost loop
    /// around each block that holds a `pause` or called a yield, and the
    /// yields' own code.
    ///
    /// ```
    /// use tf_analyzer::cfg::{Cfgs, FunctionCfg, VEXIT};
    /// use tf_analyzer::spin_wait::SpinWait;
    /// # use tf_analyzer::blocks::CanonicalBlocks;
    /// # use tf_trace::{BlockDef, EndKind};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = std::env::temp_dir().join(format!("tf-doc-spin-{}", std::process::id()));
    /// # let mut w = tf_trace::TraceWriter::create(&dir)?;
    /// // 0x100: pause; dec ecx; jne 0x100 (block 0), then 0x106: ret (block 1)
    /// # let spin = [0xf3, 0x90, 0xff, 0xc9, 0x75, 0xfa];
    /// # w.block(&BlockDef::new(0x100).code(&spin).insns(&[2, 2, 2]).end(EndKind::Branch))?;
    /// # w.block(&BlockDef::new(0x106).code(&[0xc3]).insns(&[1]).end(EndKind::Return))?;
    /// # w.finish()?;
    /// # let trace = tf_trace::Trace::open(&dir)?;
    /// # let canon = CanonicalBlocks::build(trace.blocks());
    /// let edges = vec![(0, 0), (0, 1), (1, VEXIT)];
    /// let cfgs: Cfgs = [(0x100, FunctionCfg { entries: vec![0], edges, ..Default::default() })].into();
    /// let spin = SpinWait::find(&canon, trace.blocks(), &cfgs);
    /// assert!(spin.holds(0) && !spin.holds(1));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    pub fn find(canon: &CanonicalBlocks, table: &BlockTable, cfgs: &Cfgs) -> SpinWait {
        let yielding = yielding_functions(table);
        let yields: HashSet<u64> = (table.functions().iter())
            .filter(|f| yielding[f.id as usize])
            .map(|f| f.entry)
            .collect();
        let mut spin = Vec::new();
        for (&entry, cfg) in cfgs {
            let nodes = cfg.nodes();
            if yields.contains(&entry) {
                spin.extend(nodes);
                continue;
            }
            let waits: Vec<CBlockId> = (nodes.iter().copied())
                .filter(|&c| crate::code_flow::pauses(canon, table, c))
                .chain(cfg.yield_calls.iter().copied())
                .collect();
            if waits.is_empty() {
                continue;
            }
            // outermost first: the last loop that holds a block is its innermost
            let loops = natural_loops(&cfg.edges, &cfg.entries);
            for p in waits {
                match loops.iter().rev().find(|l| l.body.contains(&p)) {
                    Some(l) => spin.extend(l.body.iter().copied()),
                    None => spin.push(p),
                }
            }
        }
        SpinWait::new(canon.len(), spin)
    }

    /// Whether block `c` is spin-wait code.
    #[inline]
    pub fn holds(&self, c: CBlockId) -> bool {
        self.blocks.get(c as usize).copied().unwrap_or(false)
    }

    /// Whether no block is.
    pub fn is_empty(&self) -> bool {
        !self.blocks.contains(&true)
    }
}

/// The warning that the units of `r` ran spin-wait code, with how much and
/// where most of it ran (`None` when they did not).
pub(crate) fn warning(r: &WidthResult) -> Option<String> {
    let spun = r.spin_wait_thread_instructions;
    if spun == 0 {
        return None;
    }
    let mut by_function: Vec<&FunctionResult> = (r.functions.iter())
        .filter(|f| f.spin_wait_thread_instructions > 0)
        .collect();
    by_function.sort_by_key(|f| std::cmp::Reverse(f.spin_wait_thread_instructions));
    let most: Vec<String> = (by_function.iter().take(3))
        .map(|f| {
            let share = f.spin_wait_thread_instructions as f64 / spun as f64;
            format!("{} ({:.1}%)", f.name, 100.0 * share)
        })
        .collect();
    // under --spin-wait exclude, the spinning is not in thread_instructions
    let all = r.thread_instructions + r.excluded_thread_instructions;
    let share = crate::naming::percent(spun, all);
    let counted = if r.excluded_thread_instructions == 0 {
        ", so the waiting counts as work in every figure (--spin-wait exclude leaves it out) and"
    } else {
        ": the waiting is left out of every figure (--spin-wait exclude), but"
    };
    Some(format!(
        "{spun} of the units' {all} thread instructions ({share}) ran in spin-wait loops \
         ({MARKS}), most in {}: the program waits by spinning on a lock or flag it builds from \
         atomic instructions, which tf does not recognize{counted} what it guards is not \
         serialized",
        most.join(", ")
    ))
}
