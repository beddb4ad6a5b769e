//! Per-block figures, gathered from the replay through the analyzer's
//! observer seam ([`tf_analyzer::sink`]): for each canonical block, its thread
//! and warp instructions (per instruction, for source lines), its memory
//! requests and sectors (per operand and per segment), the divergences at its
//! end and where they reconverge; for each function, the edges its lanes took
//! between its blocks and the calls they made.
//!
//! The figures come from the very issues that make `tf analyze`'s report,
//! counted the way the replay counts them, so a function's blocks add up to
//! its figures in the report exactly (the tests check it).
//!
//! ```no_run
//! use tf_reports::observe::Collector;
//! let trace = tf_trace::Trace::open("trace-pigz-1").unwrap();
//! let collector = Collector::new(&[32]);
//! let opts = tf_analyzer::Options::default();
//! let report = tf_analyzer::analyze_observed(&trace, &opts, &tf_analyzer::Silent, &collector).unwrap();
//! let details = collector.finish();
//! println!("{} blocks at W = 32", details.widths[&32].blocks.len());
//! ```

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use tf_analyzer::blocks::{CBlock, CBlockId};
use tf_analyzer::coalesce::Coalescer;
use tf_analyzer::segments::Segments;
use tf_analyzer::sink::{Context, Issue, IssueSink, Observer, WarpInfo};
use tf_analyzer::stats::{Insns, Memory, Requests};
use tf_trace::FunctionId;

#[path = "observe_slots.rs"]
mod block_slots;
#[path = "observe_walk.rs"]
mod lane_walk;
use block_slots::{BlockSlots, Slot};
use lane_walk::{walk, LaneWalk, Step};

/// A block of a function: the function its instructions are charged to and
/// the canonical block.
pub type BlockKey = (FunctionId, CBlockId);

/// What one block did at one warp width.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockStats {
    /// Warp issues of the block.
    pub issues: u64,
    /// Thread and warp instructions.
    pub insns: Insns,
    /// `lanes_by_length[n]`: lanes that ran exactly `n` of its instructions.
    pub lanes_by_length: Vec<u64>,
    /// `issues_by_length[n]`: issues whose longest lane ran `n` instructions.
    pub issues_by_length: Vec<u64>,
    /// Requests by segment, as the replay counts them.
    pub memory: Memory,
    /// Requests and sectors per memory operand of the block.
    pub operands: Vec<Requests>,
    /// Times the warp's lanes split at its end.
    pub divergences: u64,
    /// Paths taken, summed over those divergences.
    pub paths: u64,
    /// Where they reconverge (`None`: at the function's exit, or never split).
    pub reconverge: Option<CBlockId>,
    /// Warp instructions issued by serialized lock rounds.
    pub serialized: u64,
}

impl BlockStats {
    fn new(block: &CBlock) -> BlockStats {
        BlockStats {
            lanes_by_length: vec![0; block.n_insns as usize + 1],
            issues_by_length: vec![0; block.n_insns as usize + 1],
            operands: vec![Requests::default(); block.n_ops as usize],
            ..BlockStats::default()
        }
    }

    fn add(&mut self, o: &BlockStats) {
        self.issues += o.issues;
        self.insns.add(&o.insns);
        add_vec(&mut self.lanes_by_length, &o.lanes_by_length);
        add_vec(&mut self.issues_by_length, &o.issues_by_length);
        self.memory.add(&o.memory);
        for (a, b) in self.operands.iter_mut().zip(&o.operands) {
            a.add(b);
        }
        self.divergences += o.divergences;
        self.paths += o.paths;
        self.reconverge = self.reconverge.or(o.reconverge);
        self.serialized += o.serialized;
    }

    /// Thread and warp instructions of its instruction `k` (0-based).
    pub fn instruction(&self, k: usize) -> Insns {
        let after = |v: &[u64]| v.iter().skip(k + 1).sum::<u64>();
        Insns {
            thread_instructions: after(&self.lanes_by_length),
            warp_instructions: after(&self.issues_by_length),
        }
    }
}

fn add_vec(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Everything gathered at one warp width.
#[derive(Clone, Debug, Default)]
pub struct WidthDetails {
    /// Per block.
    pub blocks: HashMap<BlockKey, BlockStats>,
    /// Lanes that went from one block of a function to another
    /// (`(function, from, to)`), a call in between not counted.
    pub edges: HashMap<(FunctionId, CBlockId, CBlockId), u64>,
    /// Lanes' calls from one function into another (`(caller, callee)`).
    pub calls: HashMap<(FunctionId, FunctionId), u64>,
}

impl WidthDetails {
    fn add(&mut self, o: WidthDetails) {
        for (k, b) in o.blocks {
            match self.blocks.get_mut(&k) {
                Some(mine) => mine.add(&b),
                None => {
                    self.blocks.insert(k, b);
                }
            }
        }
        for (k, n) in o.edges {
            *self.edges.entry(k).or_default() += n;
        }
        for (k, n) in o.calls {
            *self.calls.entry(k).or_default() += n;
        }
    }
}

/// A function as the analysis named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionName {
    /// Name (as in the report).
    pub name: String,
    /// Module file name.
    pub module: String,
}

/// What [`Collector`] gathered.
#[derive(Clone, Debug, Default)]
pub struct Details {
    /// Per recorded warp width.
    pub widths: BTreeMap<usize, WidthDetails>,
    /// Every block seen.
    pub blocks: HashMap<CBlockId, CBlock>,
    /// Every function seen.
    pub functions: HashMap<FunctionId, FunctionName>,
}

/// The observer: one [`WarpSink`] per warp of the recorded widths.
pub struct Collector {
    widths: Vec<usize>,
    segments: OnceLock<Arc<Segments>>,
    gathered: Mutex<Details>,
}

impl Collector {
    /// A collector of the warps of `widths` (warps of other widths are not observed).
    pub fn new(widths: &[usize]) -> Collector {
        Collector {
            widths: widths.to_vec(),
            segments: OnceLock::new(),
            gathered: Mutex::new(Details::default()),
        }
    }

    /// What was gathered.
    pub fn finish(self) -> Details {
        self.gathered
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// Gathers one warp's issues.
pub struct WarpSink {
    /// Whether the collector looks at its width (else `end` drops it).
    on: bool,
    segments: Arc<Segments>,
    coalescer: Coalescer,
    walks: Vec<LaneWalk>,
    /// The block last issued.
    last: Option<Slot>,
    slots: BlockSlots,
    calls: HashMap<(FunctionId, FunctionId), u64>,
    steps: Vec<(Step, u64)>,
}

impl Observer for Collector {
    type Sink = WarpSink;

    fn observes(&self, width: usize) -> bool {
        self.widths.contains(&width)
    }

    fn begin(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>) -> WarpSink {
        let segments = self
            .segments
            .get_or_init(|| Arc::new(ctx.segments.clone()))
            .clone();
        WarpSink {
            on: self.widths.contains(&warp.width),
            segments,
            coalescer: Coalescer::new(
                warp.width,
                warp.lanes.iter().map(|l| (l.stack, l.sp)).collect(),
            ),
            walks: vec![Vec::new(); warp.lanes.len()],
            last: None,
            slots: BlockSlots::default(),
            calls: HashMap::default(),
            steps: Vec::new(),
        }
    }

    fn end(&self, ctx: &Context<'_>, warp: &WarpInfo<'_>, sink: WarpSink) {
        if !sink.on {
            return;
        }
        let mut d = WidthDetails {
            calls: sink.calls,
            ..WidthDetails::default()
        };
        sink.slots.into_details(&mut d);
        let mut g = self.gathered.lock().unwrap_or_else(|e| e.into_inner());
        for &(f, b) in d.blocks.keys() {
            g.blocks
                .entry(b)
                .or_insert_with(|| ctx.canon.block(b).clone());
            g.functions.entry(f).or_insert_with(|| {
                let info = ctx.functions.info(f);
                FunctionName {
                    name: info.name.clone(),
                    module: info.module.clone(),
                }
            });
        }
        g.widths.entry(warp.width).or_default().add(d);
    }
}

impl WarpSink {
    /// Counts `issue` for the report.
    #[inline(never)]
    fn count(&mut self, issue: &Issue<'_>) {
        let key = (issue.function, issue.cblock);
        let slot = self.slots.slot(key, issue.block);
        self.last = Some(slot);
        let stats = self.slots.stats(slot);
        stats.issues += 1;
        stats.insns.add(&Insns {
            thread_instructions: issue.thread_instructions,
            warp_instructions: issue.warp_instructions,
        });
        let longest = stats.issues_by_length.len() - 1;
        stats.issues_by_length[(issue.warp_instructions as usize).min(longest)] += 1;
        for l in issue.lanes {
            stats.lanes_by_length[(l.insns as usize).min(longest)] += 1;
        }
        if issue.serialized.is_some() {
            stats.serialized += issue.warp_instructions;
        }
        // Requests as the replay counts them: one per operand that at least
        // one active lane performed, in the segment of the first such
        // lane's address.
        if issue.block.n_ops > 0 {
            self.coalescer.requests(issue, &self.segments, |r| {
                stats
                    .memory
                    .add_request(r.segment, r.write, r.sectors, r.interleaved);
                if let Some(o) = stats.operands.get_mut(r.operand as usize) {
                    o.add_one(r.sectors);
                }
            });
        }
        // The lanes' walks go by slot: an edge is counted in its block's
        // slot, without a lookup.
        let at = (issue.function, slot);
        if let [l] = issue.lanes {
            let step = walk(&mut self.walks[l.lane], at, issue.block.is_entry);
            self.take(step, 1);
            return;
        }
        // Lanes mostly arrive together from one block: count each edge and
        // call once per issue, not once per lane.
        let mut steps = std::mem::take(&mut self.steps);
        steps.clear();
        for l in issue.lanes {
            let step = walk(&mut self.walks[l.lane], at, issue.block.is_entry);
            match steps.iter_mut().find(|(s, _)| *s == step) {
                Some((_, n)) => *n += 1,
                None => steps.push((step, 1)),
            }
        }
        for &(step, n) in &steps {
            self.take(step, n);
        }
        self.steps = steps;
    }

    /// Counts `n` lanes that took `step`.
    #[inline]
    fn take(&mut self, step: Step, n: u64) {
        match step {
            Step::Edge((_, from, to)) => self.slots.edge(from, to, n),
            Step::Call(c) => *self.calls.entry(c).or_default() += n,
            Step::Start => {}
        }
    }
}

// A sink of a width the collector does not look at is told nothing (the
// `Observer` contract): it is never off here.
impl IssueSink for WarpSink {
    #[inline]
    fn issue(&mut self, issue: &Issue<'_>) {
        self.count(issue);
    }

    fn diverged(
        &mut self,
        cblock: CBlockId,
        _active: u64,
        paths: usize,
        reconverge: Option<CBlockId>,
    ) {
        // The replay reports a split right after issuing the block it ends.
        let slot = match self.last {
            Some(s) if self.slots.key(s).1 == cblock => Some(s),
            _ => self.slots.find((0, cblock)),
        };
        if let Some(s) = slot.map(|s| self.slots.stats(s)) {
            s.divergences += 1;
            s.paths += paths as u64;
            s.reconverge = s.reconverge.or(reconverge);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_walk_finds_edges_calls_and_returns() {
        let mut lane = LaneWalk::new();
        // main: block 1 → 2 → call f (entry 10) → f: 11 → return to main: 3.
        let steps: Vec<Step> = [
            ((1, 1), true),
            ((1, 2), false),
            ((2, 10), true),
            ((2, 11), false),
            ((1, 3), false),
        ]
        .into_iter()
        .map(|(key, entry)| walk(&mut lane, key, entry))
        .collect();
        assert_eq!(
            steps,
            [
                Step::Start,
                Step::Edge((1, 1, 2)),
                Step::Call((1, 2)),
                Step::Edge((2, 10, 11)),
                Step::Edge((1, 2, 3)), // call site to return site
            ]
        );
        assert_eq!(lane, vec![(1, 3)]);
    }

    #[test]
    fn per_instruction_counts_come_from_lengths() {
        let s = BlockStats {
            // 3 lanes ran all 2 instructions, 1 lane only the first.
            lanes_by_length: vec![0, 1, 3],
            issues_by_length: vec![0, 0, 1],
            ..BlockStats::default()
        };
        assert_eq!(s.instruction(0).thread_instructions, 4);
        assert_eq!(s.instruction(1).thread_instructions, 3);
        assert_eq!(s.instruction(1).warp_instructions, 1);
    }
}
