//! The whole analysis: scan, graphs, units, warps, replay, report.

use crate::blocks::CanonicalBlocks;
use crate::cfg::{CfgBuilder, Cfgs};
use crate::functions::FunctionTable;
use crate::ipdom::Ipdom;
use crate::lanes::UnitCache;
use crate::loops::outermost_loop;
use crate::predicate::{predicable, Predicable};
use crate::replay::{IpdomMap, Lane, LockModel, Reconvergence, Replay, WarpStats};
use crate::results::{
    sort_functions, sort_locks, FunctionResult, LockResult, MemoryReport, Report, Shard,
    ThreadReport, WidthResult,
};
use crate::scan::{ScanJob, Skipped, ThreadScan};
use crate::segments::Segments;
use crate::sink::{Context, IssueSink, LaneInfo, Nobody, Observer, WarpInfo};
use crate::stats::FunctionStats;
use crate::symbols::{SourceLines, Symbols};
use crate::units::{CallSet, Cutter, LoopSpec, Unit, UnitSpec};
use crate::warps::Batch;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
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
    /// Replay only this shard of the warps (`--shard i/N`).
    pub shard: Option<Shard>,
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
            shard: None,
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
}

/// Reports progress to the caller (a progress bar, or nothing).
pub trait Progress: Sync {
    /// A stage starts, with `total` steps.
    fn stage(&self, name: &str, total: u64);
    /// `n` more steps are done.
    fn advance(&self, n: u64);
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
    let canon = CanonicalBlocks::build(trace.blocks());
    let symbols = Symbols::new(trace.blocks());
    let entry_of = |f: FunctionId| symbols.entry(f);
    let job = ScanJob {
        trace,
        canon: &canon,
        entry_of: &entry_of,
        addresses: false,
    };
    let tids: Vec<u64> = trace.threads().iter().map(|t| t.tid).collect();
    let bytes: u64 = trace.threads().iter().map(|t| t.size).sum();
    let sizes: HashMap<u64, u64> = trace.threads().iter().map(|t| (t.tid, t.size)).collect();

    // Pass 1: frames, graphs and units.
    let units_rule = UnitsRule::new(&opts.unit, &symbols)?;
    progress.stage("scanning threads", bytes);
    // Each worker thread adds the edges of the threads it scans to its own
    // builder; builders are merged as workers finish, so memory follows the
    // number of cores, not of traced threads.
    let (mut scans, merged): (Vec<ThreadScan>, CfgBuilder) = tids
        .par_iter()
        .fold(
            || (Vec::new(), CfgBuilder::new(canon.len())),
            |(mut scans, mut cfg), &tid| {
                scans.push(job.scan(tid, |start| units_rule.cutter(start), Some(&mut cfg)));
                progress.advance(sizes[&tid]);
                (scans, cfg)
            },
        )
        .reduce(
            || (Vec::new(), CfgBuilder::new(0)),
            |(mut a, mut ca), (b, cb)| {
                a.extend(b);
                ca.merge(cb);
                (a, ca)
            },
        );
    scans.sort_by_key(|s| s.tid);
    let cfgs: Cfgs = merged.finish();
    progress.stage("post-dominators", cfgs.len() as u64);
    let per_function: Vec<(u64, Ipdom)> = cfgs
        .par_iter()
        .map(|(&f, cfg)| {
            progress.advance(1);
            (f, Ipdom::compute(cfg))
        })
        .collect();
    let mut warnings: Vec<String> = scans
        .iter()
        .filter_map(|s| s.damage.clone())
        .map(|d| format!("damaged trace, read up to the damage: {d}"))
        .collect();
    let synthetic: usize = per_function.iter().map(|(_, i)| i.synthetic_edges).sum();
    if synthetic > 0 {
        warnings.push(format!(
            "{synthetic} loop latch(es) never exited (a thread was cut off inside a loop); they were joined to their function's exit"
        ));
    }
    let ipdom: IpdomMap = per_function
        .iter()
        .flat_map(|(f, ip)| {
            cfgs[f]
                .nodes()
                .into_iter()
                .filter_map(move |n| ip.of(n).map(|r| ((*f, n), r)))
        })
        .collect();
    let predicable_branches: Predicable = if opts.predicate == 0 {
        Predicable::default()
    } else {
        cfgs.iter()
            .flat_map(|(&f, cfg)| {
                predicable(f, cfg, &ipdom, &canon, trace.blocks(), opts.predicate)
            })
            .collect()
    };

    // Pass 2, for iterations: cut the loop of FN now that its graph is known.
    if let UnitsRule::Iterations(spec, entries) = &units_rule {
        let (function, lp) = entries
            .iter()
            .filter_map(|&e| Some((e, outermost_loop(cfgs.get(&e)?)?)))
            .next()
            .ok_or_else(|| Error::NoLoop(opts.unit.to_string(), spec.clone()))?;
        let spec = LoopSpec {
            function,
            header: lp.header,
            body: lp.body,
        };
        let job = ScanJob {
            addresses: true,
            ..job
        };
        progress.stage("cutting iterations", bytes);
        let cut: Vec<ThreadScan> = tids
            .par_iter()
            .map(|&tid| {
                let s = job.scan(tid, |_| Cutter::Iterations(spec.clone()), None);
                progress.advance(sizes[&tid]);
                s
            })
            .collect();
        for (s, c) in scans.iter_mut().zip(cut) {
            s.units = c.units;
        }
    }

    let units: Vec<&Unit> = scans.iter().flat_map(|s| s.units.iter()).collect();
    let stacks: HashMap<u64, (u64, u64)> = scans.iter().map(|s| (s.tid, s.stack)).collect();
    let chunks: HashMap<u64, &[crate::scan::ChunkStart]> =
        scans.iter().map(|s| (s.tid, s.chunks.as_slice())).collect();
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
    let naming = Naming::new(&functions, &lines, &scans);
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
    let jobs: Vec<(usize, usize, &[usize])> = warps
        .iter()
        .enumerate()
        .flat_map(|(k, ws)| {
            ws.iter()
                .enumerate()
                .map(move |(index, m)| (k, index, m.as_slice()))
        })
        .filter(|&(_, index, _)| opts.shard.is_none_or(|s| s.holds(index)))
        .collect();
    let widths: Vec<String> = opts.widths.iter().map(|w| w.to_string()).collect();
    // The bar moves with replayed thread instructions: every width replays
    // every unit's recorded instructions once.
    let recorded: u64 = jobs.iter().flat_map(|j| j.2).map(|&i| units[i].insns).sum();
    progress.stage(
        &format!("replaying warps of {}", widths.join(", ")),
        recorded,
    );
    let replays: Vec<Replay> = opts
        .widths
        .iter()
        .map(|&width| Replay {
            canon: &canon,
            ipdom: &ipdom,
            segments: &segments,
            width,
            functions: &functions,
            serialize_locks: opts.locks,
            progress,
            reconvergence: opts.reconvergence,
            predicable: &predicable_branches,
            lock_model: opts.lock_model,
        })
        .collect();
    let totals: Vec<WarpStats> = jobs
        .par_iter()
        .try_fold(
            || {
                (
                    vec![WarpStats::default(); replays.len()],
                    UnitCache::default(),
                )
            },
            |(mut acc, mut cache), &(k, index, members)| {
                // Fewer warps than cores: decode each long lane on a thread of its own.
                let ahead = jobs.len() < rayon::current_num_threads();
                let stats = std::thread::scope(|scope| {
                    let lanes = members
                        .iter()
                        .map(|&i| {
                            let u = units[i];
                            let stack = stacks.get(&u.tid).copied().unwrap_or((0, 0));
                            let chunks = chunks.get(&u.tid).copied().unwrap_or(&[]);
                            let source =
                                cache.source(trace, &canon, u, chunks, ahead.then_some(scope))?;
                            Lane::new(source, (u.root, u.root_sym), stack, u.stack_pointer)
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let recorded: u64 = members.iter().map(|&i| units[i].insns).sum();
                    if !O::ACTIVE {
                        return replays[k].run(lanes, None).map(|s| s.recorded(recorded));
                    }
                    let infos: Vec<LaneInfo> = members
                        .iter()
                        .zip(&lanes)
                        .map(|(&i, lane)| LaneInfo {
                            tid: units[i].tid,
                            unit: i,
                            stack: lane.stack(),
                            sp: lane.sp(),
                        })
                        .collect();
                    let info = WarpInfo {
                        width: replays[k].width,
                        index,
                        lanes: &infos,
                    };
                    let mut sink = observer.begin(&ctx, &info);
                    let stats = replays[k].run(lanes, Some(&mut sink as &mut dyn IssueSink));
                    observer.end(&ctx, &info, sink);
                    stats.map(|s| s.recorded(recorded))
                })?;
                acc[k] = std::mem::take(&mut acc[k]).merge(stats);
                Ok::<_, tf_trace::Error>((acc, cache))
            },
        )
        .map(|r| r.map(|(acc, _)| acc))
        .try_reduce(
            || vec![WarpStats::default(); replays.len()],
            |a, b| Ok(a.into_iter().zip(b).map(|(x, y)| x.merge(y)).collect()),
        )?;
    let results: Vec<WidthResult> = opts
        .widths
        .iter()
        .enumerate()
        .map(|(k, &width)| naming.width_result(&totals[k], width, units.len(), warps[k].len()))
        .collect();

    let mut skipped = Skipped::default();
    for s in &scans {
        skipped.merge(&s.skipped);
    }
    let threads = scans
        .iter()
        .map(|s| ThreadReport {
            tid: s.tid,
            parent: s.parent,
            start_routine: symbols
                .at_entry(s.start_routine)
                .map(|f| symbols.name(f).to_string())
                .unwrap_or_default(),
            traced_instructions: s.traced,
            skipped_instructions: s.skipped.instructions(),
            skipped: s.skipped.clone(),
            units: s.units.len(),
        })
        .collect();
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
        batch: opts.batch.to_string(),
        reconverge: opts.reconvergence.to_string(),
        predicate: opts.predicate,
        lock_model: opts.lock_model.to_string(),
        locks: opts.locks,
        threads,
        skipped,
        incomplete: incomplete(&results),
        shard: opts.shard,
        results,
        warnings,
    })
}

/// Why the replays of `results` do not cover every recorded instruction.
pub(crate) fn incomplete(results: &[WidthResult]) -> Vec<String> {
    let mut why = Vec::new();
    for r in results {
        if r.unfinished_units > 0 {
            why.push(format!(
                "W={}: {} of {} units did not finish in the replay",
                r.warp_size, r.unfinished_units, r.units
            ));
        }
        let replayed = r.thread_instructions
            - r.predicated_off_thread_instructions
            - r.spinning_thread_instructions;
        if replayed != r.recorded_thread_instructions {
            let share = replayed as f64 / r.recorded_thread_instructions.max(1) as f64;
            why.push(format!(
                "W={}: {} of {} recorded instructions were replayed ({:.2}%)",
                r.warp_size,
                replayed,
                r.recorded_thread_instructions,
                100.0 * share
            ));
        }
    }
    why
}

/// How units are cut, resolved against the trace's functions.
enum UnitsRule {
    Whole,
    /// Calls of these entries in every thread.
    Calls(HashSet<u64>),
    /// Calls of each thread's start routine (`main` for a thread without one).
    StartRoutines(Option<u64>),
    /// Iterations of the loop of one of these functions (`FN`, entries).
    Iterations(String, Vec<u64>),
}

impl UnitsRule {
    fn new(spec: &UnitSpec, symbols: &Symbols) -> Result<UnitsRule, Error> {
        let entries = |name: &str| -> Result<Vec<u64>, Error> {
            let found: Vec<u64> = symbols
                .find(name)
                .into_iter()
                .filter_map(|f| symbols.entry(f))
                .collect();
            if found.is_empty() {
                Err(Error::NoFunction(spec.to_string(), name.to_string()))
            } else {
                Ok(found)
            }
        };
        Ok(match spec {
            UnitSpec::Thread => UnitsRule::Whole,
            UnitSpec::Call(f) => UnitsRule::Calls(entries(f)?.into_iter().collect()),
            UnitSpec::Iter(f) => UnitsRule::Iterations(f.clone(), entries(f)?),
            UnitSpec::Auto => {
                let omp: HashSet<u64> = symbols
                    .matching(|n| n.contains("._omp_fn.") || n.contains(".omp_outlined."))
                    .into_iter()
                    .filter_map(|f| symbols.entry(f))
                    .collect();
                if omp.is_empty() {
                    let main = symbols.find("main").first().and_then(|&f| symbols.entry(f));
                    UnitsRule::StartRoutines(main)
                } else {
                    UnitsRule::Calls(omp)
                }
            }
        })
    }

    /// The cutter of a thread whose start routine is `start` (0 = unknown).
    fn cutter(&self, start: u64) -> Cutter {
        match self {
            UnitsRule::Whole | UnitsRule::Iterations(..) => Cutter::Whole,
            UnitsRule::Calls(set) => Cutter::Calls(
                CallSet {
                    entries: set.clone(),
                },
                false,
            ),
            UnitsRule::StartRoutines(main) => match if start != 0 { Some(start) } else { *main } {
                Some(e) => Cutter::Calls(
                    CallSet {
                        entries: HashSet::from([e]),
                    },
                    true,
                ),
                None => Cutter::Whole,
            },
        }
    }
}

/// Names and places for the report: functions, source lines, lock symbols.
struct Naming<'a> {
    functions: &'a FunctionTable,
    lines: &'a SourceLines,
    /// Skipped instructions per function.
    skipped_in: HashMap<FunctionId, u64>,
    skipped: u64,
}

impl<'a> Naming<'a> {
    fn new(
        functions: &'a FunctionTable,
        lines: &'a SourceLines,
        scans: &[ThreadScan],
    ) -> Naming<'a> {
        let mut skipped_in: HashMap<FunctionId, u64> = HashMap::new();
        for s in scans {
            for &((sym, frame), n) in &s.skipped_in {
                let f = if sym != 0 {
                    sym
                } else {
                    functions.frame(frame)
                };
                *skipped_in.entry(f).or_default() += n;
            }
        }
        Naming {
            functions,
            lines,
            skipped_in,
            skipped: scans.iter().map(|s| s.skipped.instructions()).sum(),
        }
    }

    fn width_result(
        &self,
        total: &WarpStats,
        width: usize,
        units: usize,
        warps: usize,
    ) -> WidthResult {
        let all_warp = total.insns.warp_instructions.max(1) as f64;
        let mut functions: Vec<FunctionResult> = total
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.insns.warp_instructions > 0)
            .map(|(id, f)| self.function_result(id as FunctionId, f, width, all_warp))
            .collect();
        sort_functions(&mut functions);
        let mut locks: Vec<LockResult> = total
            .locks
            .iter()
            .map(|(&addr, l)| LockResult {
                address: format!("{addr:#x}"),
                symbol: self.lines.symbol(addr),
                kind: lock_kind_name(l.kind),
                acquisitions: l.acquisitions,
                contentions: l.contentions,
                serialized_lanes: l.serialized_lanes,
                serialized_warp_instructions: l.serialized_warp_instructions,
            })
            .collect();
        sort_locks(&mut locks);
        WidthResult {
            warp_size: width,
            units,
            warps,
            thread_instructions: total.insns.thread_instructions,
            recorded_thread_instructions: total.recorded_instructions,
            unfinished_units: total.unfinished_lanes,
            predicated_branches: total.predicated_branches,
            predicated_off_thread_instructions: total.predicated_off,
            spinning_thread_instructions: total.spinning,
            warp_instructions: total.insns.warp_instructions,
            simt_efficiency: total.insns.efficiency(width),
            divergent_branches: total.divergent_branches,
            memory: MemoryReport::from(&total.memory),
            skipped_instructions: self.skipped,
            serialized_warp_instructions: total
                .locks
                .values()
                .map(|l| l.serialized_warp_instructions)
                .sum(),
            locks,
            functions,
        }
    }

    fn function_result(
        &self,
        id: FunctionId,
        f: &FunctionStats,
        width: usize,
        all_warp: f64,
    ) -> FunctionResult {
        let info = self.functions.info(id);
        let line = info.entry.and_then(|e| self.lines.line(e));
        FunctionResult {
            name: info.name.clone(),
            module: info.module.clone(),
            file: line.as_ref().map(|l| l.file.clone()),
            line: line.map(|l| l.line),
            share: f.insns.warp_instructions as f64 / all_warp,
            thread_instructions: f.insns.thread_instructions,
            warp_instructions: f.insns.warp_instructions,
            simt_efficiency: f.insns.efficiency(width),
            memory: MemoryReport::from(&f.memory),
            serialized_warp_instructions: f.serialized_warp_instructions,
            skipped_instructions: self.skipped_in.get(&id).copied().unwrap_or(0),
        }
    }
}

fn lock_kind_name(kind: Option<tf_trace::LockKind>) -> String {
    use tf_trace::LockKind::*;
    match kind {
        Some(Mutex) => "mutex".into(),
        Some(Spin) => "spin".into(),
        Some(RwRead) => "rwlock-read".into(),
        Some(RwWrite) => "rwlock-write".into(),
        Some(Semaphore) => "semaphore".into(),
        Some(OmpCritical) => "omp-critical".into(),
        Some(OmpCriticalNamed) => "omp-critical-named".into(),
        Some(OmpAtomic) => "omp-atomic".into(),
        Some(Unknown(c)) => format!("kind-{c}"),
        None => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn width(thread: u64, recorded: u64, unfinished: u64) -> WidthResult {
        WidthResult {
            warp_size: 32,
            units: 4,
            warps: 1,
            thread_instructions: thread,
            recorded_thread_instructions: recorded,
            unfinished_units: unfinished,
            predicated_branches: 0,
            predicated_off_thread_instructions: 0,
            spinning_thread_instructions: 0,
            warp_instructions: thread,
            simt_efficiency: 1.0 / 32.0,
            divergent_branches: 0,
            memory: MemoryReport::default(),
            skipped_instructions: 0,
            serialized_warp_instructions: 0,
            locks: Vec::new(),
            functions: Vec::new(),
        }
    }

    #[test]
    fn lanes_that_did_not_finish_make_the_figures_incomplete() {
        assert!(incomplete(&[width(72, 72, 0)]).is_empty());
        assert_eq!(
            incomplete(&[width(11, 24, 3)]),
            [
                "W=32: 3 of 4 units did not finish in the replay",
                "W=32: 11 of 24 recorded instructions were replayed (45.83%)"
            ]
        );
    }
}
