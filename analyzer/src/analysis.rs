//! The whole analysis: scan, graphs, units, warps, replay, report.

use crate::blocks::CanonicalBlocks;
use crate::first_pass::first_pass;
use crate::functions::FunctionTable;
use crate::ipdom::Ipdom;

use crate::naming::{incomplete, thread_reports, Naming};
use crate::predicate::{predicable, Predicable};
use crate::recut::{recut, unrecorded_loops};
use crate::replay::{IpdomMap, LockModel, Reconvergence, Replay};
use crate::results::{Report, Shard, WidthResult};
use crate::scan::{ScanJob, Skipped};
use crate::scan_index::FirstPass;
use crate::segments::Segments;
use crate::sink::{Context, Nobody, Observer};
use crate::spin_wait::{SpinWait, SpinWaitRule};
use crate::symbols::{SourceLines, Symbols};
use crate::tail_copies::BlockClasses;
use crate::tasks::{inside_warning, is_taskloop, taskloop_warning, RuntimeCalls};
use crate::unit_rule::UnitSpec;
use crate::unit_rule::UnitsRule;
use crate::unit_starts::{Places, UnitStarts};
use crate::units::Unit;
use crate::warp_jobs::{Job, WarpJobs};
use crate::warps::Batch;
use rayon::prelude::*;
use std::collections::HashMap;
use tf_trace::{FunctionId, Trace};

/// What to analyse, and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Warp widths, each 1..=64.
    pub widths: Vec<usize>,
    /// What a SIMT thread is.
    pub unit: UnitSpec,
    /// How units are batched into warps.
    pub batch: Batch,
    /// Serialize lanes of a warp that hold the same lock (`--locks on`);
    /// `false` replays as if every lock were uncontended.
    pub locks: bool,
    /// Where diverged lanes reconverge (`--reconverge`).
    pub reconvergence: Reconvergence,
    /// If-convert forward branches whose arms rejoin within this many
    /// instructions (`--predicate N`; 0: never).
    pub predicate: u32,
    /// How lanes waiting for a lock count (`--lock-model`).
    pub lock_model: LockModel,
    /// Whether spin-wait code counts in the figures (`--spin-wait`).
    pub spin_wait: SpinWaitRule,
    /// Replay only this shard of the warps (`--shard i/N`).
    pub shard: Option<Shard>,
    /// Blocks that are copies of each other (tail duplication) issue as one
    /// (`--merge-tails`; see [`crate::tail_copies`]).
    pub merge_tails: bool,
    /// Read the first pass from the trace's index when it holds it for
    /// this `--unit`, and keep it there otherwise (`--index on`; see
    /// [`crate::scan_index`]).
    pub index: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            widths: vec![32],
            unit: UnitSpec::Auto,
            batch: Batch::Consecutive,
            locks: true,
            reconvergence: Reconvergence::Ipdom,
            predicate: 0,
            lock_model: LockModel::Serialize,
            spin_wait: SpinWaitRule::Count,
            shard: None,
            merge_tails: false,
            index: false,
        }
    }
}

/// Why an analysis could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] tf_trace::Error),
    /// `--warp` out of range.
    #[error("--warp {0}: warp widths must be 1..=64")]
    Width(usize),
    /// A `--unit` function that is not in the trace.
    #[error("--unit {0}: the trace has no function named {1}")]
    NoFunction(String, String),
    /// `--unit iter:FN` on a function without a loop.
    #[error("--unit {0}: {1} has no loop in the trace")]
    NoLoop(String, String),
    /// Loop iterations that cannot be cut as the trace says they ran.
    #[error("cannot cut loop iterations: {0}")]
    Iterations(String),
}

/// Reports progress to the caller (a progress bar, or nothing).
pub trait Progress: Sync {
    /// A stage starts, with `total` steps.
    fn stage(&self, name: &str, total: u64);
    /// `n` more steps are done (by the calling thread, of its part when the
    /// stage comes in [`Progress::parts`]).
    fn advance(&self, n: u64);
    /// The stage's steps come in parts of `sizes` steps, each done by one
    /// thread, on `threads` threads at once, taken in about this order.
    /// The replay's warps are such parts: they cost unlike amounts per
    /// step, and a few large ones may leave threads idle at the end.
    fn parts(&self, sizes: &[u64], threads: usize) {
        let _ = (sizes, threads);
    }
    /// The calling thread starts part `i` of the stage's
    /// [`Progress::parts`], done with the part it had.
    fn part(&self, i: usize) {
        let _ = i;
    }
}

/// A [`Progress`] that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn stage(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
}

/// Analyses `trace`.
///
/// ```no_run
/// use tf_analyzer::{analyze, Options, Silent};
/// let trace = tf_trace::Trace::open("trace-pigz-1").unwrap();
/// let report = analyze(&trace, &Options { widths: vec![8, 32], ..Options::default() }, &Silent).unwrap();
/// println!("{:.1}%", 100.0 * report.results[1].simt_efficiency);
/// ```
pub fn analyze(trace: &Trace, opts: &Options, progress: &dyn Progress) -> Result<Report, Error> {
    analyze_observed(trace, opts, progress, &Nobody)
}

/// Analyses `trace` as [`analyze`] does, and shows every warp's replay to
/// `observer` (see [`crate::sink`]).
pub fn analyze_observed<O: Observer>(
    trace: &Trace,
    opts: &Options,
    progress: &dyn Progress,
    observer: &O,
) -> Result<Report, Error> {
    if let Some(&w) = opts.widths.iter().find(|&&w| !(1..=64).contains(&w)) {
        return Err(Error::Width(w));
    }
    let canon = if opts.merge_tails {
        progress.stage("cutting shared tails (--merge-tails)", 0);
        crate::common_tails::canonical_blocks(trace.blocks())
    } else {
        CanonicalBlocks::build(trace.blocks())
    };
    // The first pass's graphs hold the blocks as cut: the index keeps them
    // apart for --merge-tails.
    let index_key = match opts.merge_tails {
        true => format!("{} merge-tails", opts.unit),
        false => opts.unit.to_string(),
    };
    let symbols = Symbols::new(trace.blocks());
    let entry_of = |f: FunctionId| symbols.entry(f);
    let runtime = openmp_runtime(trace);
    let mut job = ScanJob {
        trace,
        canon: &canon,
        entry_of: &entry_of,
        addresses: false,
        per_function: false,
        progress: Some(progress),
        runtime: &runtime,
        check_ahead: false,
    };
    let tids: Vec<u64> = trace.threads().iter().map(|t| t.tid).collect();

    // Pass 1: frames, graphs and units.
    let units_rule = UnitsRule::new(&opts.unit, &symbols, trace.blocks(), !runtime.is_empty())?;
    let FirstPass {
        mut scans,
        cfgs,
        starts,
        ..
    } = first_pass(
        &mut job,
        &tids,
        &units_rule,
        &index_key,
        canon.len(),
        opts.index,
    );
    let outlined = scans
        .iter()
        .flat_map(|s| s.outlined.iter().copied())
        .collect();
    let (units_rule, cut_again) = units_rule.resolve(outlined);
    let spin_wait = SpinWait::find(&canon, trace.blocks(), &cfgs);
    let classes = if opts.merge_tails {
        progress.stage("merging tail copies", 0);
        BlockClasses::find(&canon, trace.blocks(), &spin_wait)
    } else {
        BlockClasses::default()
    };
    let issued_cfgs = classes.graphs(&cfgs);
    progress.stage("post-dominators", cfgs.len() as u64);
    let per_function: Vec<(u64, Ipdom)> = issued_cfgs
        .par_iter()
        .map(|(&f, cfg)| {
            progress.advance(1);
            (f, Ipdom::compute(cfg))
        })
        .collect();
    // What the trace says of itself on opening (a missing thread file, a
    // damaged manifest), then what its readers met.
    let damage: Vec<String> = (trace.problems().iter().map(|p| p.to_string()))
        .chain(scans.iter().filter_map(|s| s.damage.clone()))
        .collect();
    let mut warnings: Vec<String> = Vec::new();
    warnings.extend(crate::processes::warnings(trace));
    warnings.extend(crate::functions::remapped_warning(trace.blocks()));
    let synthetic: usize = per_function.iter().map(|(_, i)| i.synthetic_edges).sum();
    if synthetic > 0 {
        warnings.push(format!(
            "{synthetic} loop latch(es) never exited (a thread was cut off inside a loop); they were joined to their function's exit"
        ));
    }
    let ipdom: IpdomMap = per_function
        .iter()
        .flat_map(|(f, ip)| {
            issued_cfgs[f]
                .nodes()
                .into_iter()
                .filter_map(move |n| ip.of(n).map(|r| ((*f, n), r)))
        })
        .collect();
    let predicable_branches: Predicable = if opts.predicate == 0 {
        Predicable::default()
    } else {
        issued_cfgs
            .iter()
            .flat_map(|(&f, cfg)| {
                predicable(f, cfg, &ipdom, &canon, trace.blocks(), opts.predicate)
            })
            .collect()
    };

    // Pass 2, for iterations, now that every graph and stretch is known.
    let name = |entry: u64| {
        symbols.at_entry(entry).map_or_else(
            || format!("the function at {entry:#x}"),
            |f| symbols.name(f).to_string(),
        )
    };
    warnings.extend(unrecorded_loops(&units_rule, &job, &name)?);
    let recut = recut(
        &units_rule,
        cut_again,
        &opts.unit.to_string(),
        &mut scans,
        &cfgs,
        &job,
        &name,
        progress,
    )?;
    warnings.extend(recut.warnings);
    let inside = RuntimeCalls::total(scans.iter().map(|s| &s.runtime_calls_inside));
    warnings.extend(inside_warning(&inside));
    if matches!(units_rule, UnitsRule::OpenMp(_)) && !symbols.matching(is_taskloop).is_empty() {
        warnings.push(taskloop_warning());
    }

    // Iterations of worksharing loops in logical order, loop by loop; other
    // units after them, by thread and time.
    let mut units: Vec<&Unit> = scans.iter().flat_map(|s| s.units.iter()).collect();
    units.sort_by_key(|u| {
        u.iteration
            .map_or((1, 0, 0, 0), |i| (0, i.loop_id, i.sibling, i.number))
    });
    let stacks: HashMap<u64, (u64, u64)> = scans.iter().map(|s| (s.tid, s.stack)).collect();
    let starts: HashMap<u64, &UnitStarts> = starts.iter().map(|(t, s)| (*t, s)).collect();
    let places: HashMap<u64, Places<'_>> = scans
        .iter()
        .map(|s| {
            let starts = starts.get(&s.tid).copied();
            let chunks = s.chunks.as_slice();
            (s.tid, Places { chunks, starts })
        })
        .collect();
    let segments = Segments::new(
        trace
            .blocks()
            .modules()
            .iter()
            .map(|m| (m.base, m.base.wrapping_add(m.size))),
        scans.iter().map(|s| s.stack),
    );
    let functions = FunctionTable::new(&symbols, trace.blocks(), cfgs.keys().copied());

    let lines = SourceLines::new(trace.blocks());
    let naming = Naming::new(&functions, &lines, &segments, &scans);
    let ctx = Context {
        trace,
        canon: &canon,
        functions: &functions,
        lines: &lines,
        segments: &segments,
        ipdom: &ipdom,
    };
    // Every warp of every width is one job: widths replay in parallel too,
    // which keeps all cores busy when a trace makes few warps.
    let warps: Vec<Vec<Vec<usize>>> = opts
        .widths
        .iter()
        .map(|&w| {
            opts.batch
                .warps(units.len(), w, |i| units[i].root, |i| units[i].insns)
        })
        .collect();
    let mut jobs = Job::of(&warps, |index| opts.shard.is_none_or(|s| s.holds(index)));
    if let Some(one) = opts.widths.iter().position(|&w| w == 1) {
        if !observer.observes(1) {
            jobs = crate::lanes_alone::fold(jobs, one);
        }
    }
    let widths: Vec<String> = opts.widths.iter().map(|w| w.to_string()).collect();
    // The bar moves with replayed thread instructions: every job replays
    // its units' recorded instructions once, for all the widths it counts at.
    let recorded: u64 = jobs
        .iter()
        .flat_map(|j| j.members)
        .map(|&i| units[i].insns)
        .sum();
    progress.stage(
        &format!("replaying warps of {}", widths.join(", ")),
        recorded,
    );
    let replay = Replay {
        canon: &canon,
        ipdom: &ipdom,
        segments: &segments,
        functions: &functions,
        serialize_locks: opts.locks,
        progress,
        reconvergence: opts.reconvergence,
        predicable: &predicable_branches,
        lock_model: opts.lock_model,
        spin_wait: &spin_wait,
        spin_wait_rule: opts.spin_wait,
        classes: &classes,
    };
    let totals = WarpJobs {
        trace,
        canon: &canon,
        units: &units,
        stacks: &stacks,
        places: &places,
        replay: &replay,
        widths: &opts.widths,
    }
    .run(&jobs, observer, &ctx)?;
    let results: Vec<WidthResult> = opts
        .widths
        .iter()
        .enumerate()
        .map(|(k, &width)| naming.width_result(&totals[k], width, units.len(), warps[k].len()))
        .collect();
    warnings.extend(crate::naming::count_warnings(&results));

    let mut skipped = Skipped::default();
    for s in &scans {
        skipped.merge(&s.skipped);
    }
    let threads = thread_reports(&scans, &symbols, &functions, trace.blocks());
    let command = trace
        .manifest()
        .map(|m| {
            m.command
                .iter()
                .map(|a| String::from_utf8_lossy(a.as_bytes()).into_owned())
                .collect()
        })
        .unwrap_or_default();
    Ok(Report {
        trace: trace.dir().display().to_string(),
        command,
        unit: opts.unit.to_string(),
        units_are: recut.units_are,
        batch: opts.batch.to_string(),
        reconverge: opts.reconvergence.to_string(),
        predicate: opts.predicate,
        lock_model: opts.lock_model.to_string(),
        spin_wait: opts.spin_wait.to_string(),
        merge_tails: opts.merge_tails,
        merged_blocks: classes.merged() as u64,
        locks: opts.locks,
        threads,
        skipped,
        incomplete: incomplete(&results),
        shard: opts.shard,
        results,
        warnings,
        damage,
        unrecorded: crate::recorded::unrecorded(trace),
    })
}

/// The address ranges of the trace's OpenMP runtime modules (GCC's
/// libgomp, LLVM's libomp or Intel's libiomp5: the names the tracers'
/// `tf_is_omp_runtime` knows them by, in `trace-format/include/tf_roles.h`).
fn openmp_runtime(trace: &Trace) -> Vec<(u64, u64)> {
    trace
        .blocks()
        .modules()
        .iter()
        .filter(|m| {
            let file = m.path.rsplit(|&b| b == b'/').next().unwrap_or(&m.path);
            [&b"libgomp."[..], b"libomp.", b"libiomp5."]
                .iter()
                .any(|p| file.starts_with(p))
        })
        .map(|m| (m.base, m.base.saturating_add(m.size)))
        .collect()
}
