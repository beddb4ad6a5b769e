//! Stage 5b: units that need the whole trace first. Loop iterations are cut
//! in a second pass over the threads, once every thread's graph (for
//! `iter:FN`) or every worksharing stretch (for OpenMP loops) is known.

use crate::analysis::{Error, Progress};
use crate::cfg::Cfgs;
use crate::loops::outermost_loop;
use crate::scan::{ScanJob, ThreadScan};
use crate::unit_rule::UnitsRule;
use crate::units::{Cutter, LoopSpec};
use crate::worksharing::{check_numbering, Iteration, IterationPlan, LoopCensus};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Re-cuts the units of `scans` where `rule` needs a second pass, and says
/// what the units are.
pub(crate) fn recut(
    rule: &UnitsRule,
    unit: &str,
    scans: &mut [ThreadScan],
    cfgs: &Cfgs,
    job: &ScanJob,
    progress: &dyn Progress,
) -> Result<String, Error> {
    let mut census = LoopCensus::default();
    for s in scans.iter_mut() {
        census.merge(std::mem::take(&mut s.loops));
    }
    let worksharing = |entries: &[u64]| -> Result<Option<IterationPlan>, Error> {
        if census.is_empty() {
            return Ok(None);
        }
        let mut plan = census
            .plan(job.canon, job.trace.blocks())
            .map_err(|entry| {
                Error::Iterations(format!(
                "no block of the function at {entry:#x} runs once per iteration in every chunk \
                 the OpenMP runtime handed out"
            ))
            })?;
        if !entries.is_empty() {
            plan.loops.retain(|e, _| entries.contains(e));
        }
        Ok((!plan.loops.is_empty()).then_some(plan))
    };
    let (cutter, about): (Box<dyn Fn() -> Cutter + Sync>, String) = match rule {
        UnitsRule::OpenMp(_) => match worksharing(&[])? {
            Some(plan) => {
                let plan = Arc::new(plan);
                (
                    Box::new(move || Cutter::Worksharing(plan.clone(), Some(rule.calls()))),
                    format!(
                        "each iteration of {} OpenMP worksharing loop instance(s), in logical \
                         order; each call of an outlined function that ran none",
                        census.trips.len()
                    ),
                )
            }
            None => return Ok("each call of an OpenMP outlined function".into()),
        },
        UnitsRule::Iterations(spec, entries) => match worksharing(entries)? {
            Some(plan) => {
                let plan = Arc::new(plan);
                (
                    Box::new(move || Cutter::Worksharing(plan.clone(), None)),
                    format!("each iteration of the worksharing loop of {spec}, in logical order"),
                )
            }
            None => {
                let (function, lp) = entries
                    .iter()
                    .filter_map(|&e| Some((e, outermost_loop(cfgs.get(&e)?)?)))
                    .next()
                    .ok_or_else(|| Error::NoLoop(unit.to_string(), spec.clone()))?;
                let spec = LoopSpec {
                    function,
                    header: lp.header,
                    body: lp.body,
                };
                (
                    Box::new(move || Cutter::Iterations(spec.clone())),
                    "each iteration of the function's outermost loop".into(),
                )
            }
        },
        UnitsRule::Whole => return Ok("each thread".into()),
        UnitsRule::Calls(_) => return Ok("each outermost call of the function".into()),
        UnitsRule::StartRoutines(_) => return Ok("each call of a thread's start routine".into()),
    };
    let job = ScanJob {
        addresses: true,
        ..*job
    };
    let bytes: u64 = job.trace.threads().iter().map(|t| t.size).sum();
    let sizes: HashMap<u64, u64> = job
        .trace
        .threads()
        .iter()
        .map(|t| (t.tid, t.size))
        .collect();
    progress.stage("cutting iterations", bytes);
    let cut: Vec<ThreadScan> = scans
        .par_iter()
        .map(|s| {
            let c = job.scan(s.tid, |_| cutter(), None);
            progress.advance(sizes[&s.tid]);
            c
        })
        .collect();
    let mut problems = Vec::new();
    for (s, c) in scans.iter_mut().zip(cut) {
        s.units = c.units;
        problems.extend(c.unit_problems);
    }
    if let Some(first) = problems.first() {
        return Err(Error::Iterations(format!(
            "{first} ({} stretch(es) in all)",
            problems.len()
        )));
    }
    let iterations: Vec<Iteration> = scans
        .iter()
        .flat_map(|s| s.units.iter().filter_map(|u| u.iteration))
        .collect();
    // Every loop of the program must be whole; for iter:FN, every loop FN ran.
    let mut trips = census.trips.clone();
    if matches!(rule, UnitsRule::Iterations(..)) {
        trips.retain(|l, _| iterations.iter().any(|i| i.loop_id == *l));
    }
    if !iterations.is_empty() {
        check_numbering(&iterations, &trips).map_err(Error::Iterations)?;
    }
    Ok(about)
}
