//! Stage 5b: units that need the whole trace first. Loop iterations are cut
//! in a second pass over the threads, once every thread's graph (for
//! `iter:FN`) or every worksharing stretch (for OpenMP loops) is known.

use crate::analysis::{Error, Progress};
use crate::cfg::Cfgs;
use crate::loops::outermost_loop;
use crate::scan::{ScanJob, ThreadScan};
use crate::tasks::{RuntimeCalls, TaskPlan};
use crate::unit_rule::{is_outlined, UnitsRule};
use crate::units::{CallSet, Cutter};
use crate::worksharing::{
    check_numbering, Iteration, IterationLoop, IterationPlan, LoopCensus, LoopSite,
};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What a unit is, in words, and warnings about loops left whole.
pub(crate) struct Recut {
    pub(crate) units_are: String,
    pub(crate) warnings: Vec<String>,
}

/// A tracer that cannot record what the OpenMP runtime handed each thread
/// (manifest key `worksharing`: the Pin tool run without its preload
/// library) leaves no worksharing loop to cut, whatever the program ran:
/// `auto` is told so in a warning, and
/// `iter:FN` of an outlined function is refused (its outermost loop would be
/// the runtime's chunk loop, or the iterations in thread order).
pub(crate) fn unrecorded_loops(
    rule: &UnitsRule,
    job: &ScanJob,
    name: &dyn Fn(u64) -> String,
) -> Result<Option<String>, Error> {
    let Some(tracer) = job
        .trace
        .manifest()
        .filter(|m| !m.worksharing)
        .map(|m| &m.tracer)
    else {
        return Ok(None);
    };
    let why = format!(
        "the tracer ({tracer}) did not record which iterations the OpenMP runtime handed each \
         thread"
    );
    match rule {
        UnitsRule::OpenMp(_) => Ok(Some(format!(
            "{why}: each call of an OpenMP outlined function is one unit, not each iteration \
             (tf trace --backend valgrind records them)"
        ))),
        UnitsRule::Iterations(spec, entries) if entries.iter().any(|&e| is_outlined(&name(e))) => {
            Err(Error::Iterations(format!(
                "{spec} is an OpenMP outlined function and {why}, so its iterations cannot be \
                 numbered (tf trace --backend valgrind records them)"
            )))
        }
        _ => Ok(None),
    }
}

/// Re-cuts the units of `scans` where `rule` needs a second pass (always
/// when `cut_again`: the first pass did not know the rule), and says what
/// the units are; `name` names a function by its entry.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recut(
    rule: &UnitsRule,
    cut_again: bool,
    unit: &str,
    scans: &mut [ThreadScan],
    cfgs: &Cfgs,
    job: &ScanJob,
    name: &dyn Fn(u64) -> String,
    progress: &dyn Progress,
) -> Result<Recut, Error> {
    let mut census = LoopCensus::default();
    for s in scans.iter_mut() {
        census.merge(std::mem::take(&mut s.loops));
    }
    // OpenMP tasks, and the regions they ran in (crate::tasks).
    let tasks = match rule {
        UnitsRule::OpenMp(_) => TaskPlan::new(&RuntimeCalls::total(
            scans.iter().map(|s| &s.runtime_calls_inside),
        )),
        _ => TaskPlan::default(),
    };
    let calls = CallSet {
        tasks: tasks.clone(),
        ..rule.calls()
    };
    let tasks_are = tasks.units_are();
    // The worksharing loops to cut: all of them, or those of FN.
    let entries: Option<&[u64]> = match rule {
        UnitsRule::OpenMp(_) => Some(&[]),
        UnitsRule::Iterations(_, entries) => Some(entries),
        _ => None,
    };
    let plan = entries.and_then(|entries| worksharing_plan(&census, job, entries));
    // Loops whose chunks ran no block once per iteration, and loops cut.
    let unsplit: Vec<LoopSite> = plan.as_ref().map_or_else(Vec::new, |p| p.failed.clone());
    let cut_fns: HashSet<LoopSite> = plan
        .as_ref()
        .map_or_else(HashSet::new, |p| p.loops.keys().copied().collect());
    let static_unsplit: Vec<LoopSite> = plan
        .as_ref()
        .map_or_else(Vec::new, |p| p.statics.failed.clone());
    // The trip count of every inline static instance cut, and of each loop
    // after the first that its split runs.
    let static_trips: HashMap<(u64, u32), u64> = plan.as_ref().map_or_else(HashMap::new, |p| {
        p.statics
            .chunks
            .values()
            .filter_map(|c| {
                let site = p.statics.runs_in.get(&c.loop_id)?;
                let siblings = cut_fns
                    .contains(site)
                    .then(|| p.loops[site].siblings.len())?;
                Some((0..=siblings as u32).map(|k| ((c.loop_id, k), c.trip)))
            })
            .flatten()
            .collect()
    });
    // Outlined functions found by the runtime's calls, not by their names.
    let unnamed = if cut_again {
        " (the functions the OpenMP runtime called through a pointer: no symbol names them)"
    } else {
        ""
    };
    let (cutter, about): (Box<dyn Fn(u64) -> Cutter + Sync>, String) = match (rule, plan) {
        (UnitsRule::OpenMp(_), Some(plan)) => {
            // A static split that runs several loops runs an instance of each.
            let instances_in = |runs_in: &HashMap<u64, LoopSite>| -> usize {
                runs_in
                    .values()
                    .filter(|f| cut_fns.contains(f))
                    .map(|f| 1 + plan.loops[f].siblings.len())
                    .sum()
            };
            let instances = instances_in(&plan.runs_in);
            let statics = instances_in(&plan.statics.runs_in);
            let strided = plan
                .statics
                .runs_in
                .values()
                .filter(|f| plan.statics.strided.contains(f))
                .count();
            let statics = match (statics, strided) {
                (0, _) => String::new(),
                (n, 0) => format!(" ({n} of them GCC's inline static schedule)"),
                (n, k) => format!(
                    " ({n} of them GCC's inline static schedule, {k} of which stride by the \
                     team's size, as GCC's schedule(static, 1) or a program's own stride does: \
                     cut round robin; --unit call:FN keeps such a function whole)"
                ),
            };
            let plan = Arc::new(plan);
            (
                Box::new(move |_| Cutter::Worksharing(plan.clone(), Some(calls.clone()))),
                format!(
                    "each iteration of {instances} OpenMP worksharing loop instance(s){statics}, \
                     in logical order; each call of an outlined function{unnamed} otherwise\
                     {tasks_are}"
                ),
            )
        }
        (UnitsRule::OpenMp(_), None) if cut_again || !tasks.is_empty() => (
            Box::new(move |_| Cutter::Calls(calls.clone(), false)),
            format!("each call of an OpenMP outlined function{unnamed}{tasks_are}"),
        ),
        (UnitsRule::OpenMp(_), None) => {
            return Ok(whole("each call of an OpenMP outlined function"))
        }
        (UnitsRule::Iterations(spec, _), Some(plan)) => {
            let plan = Arc::new(plan);
            (
                Box::new(move |_| Cutter::Worksharing(plan.clone(), None)),
                format!("each iteration of the worksharing loop of {spec}, in logical order"),
            )
        }
        (UnitsRule::Iterations(spec, entries), None) => {
            let (function, lp) = entries
                .iter()
                .filter_map(|&e| Some((e, outermost_loop(cfgs.get(&e)?)?)))
                .next()
                .ok_or_else(|| Error::NoLoop(unit.to_string(), spec.clone()))?;
            let lp = IterationLoop {
                block: lp.header,
                reach: lp.body,
                siblings: Vec::new(),
            };
            (
                Box::new(move |_| Cutter::Iterations(function, lp.clone())),
                "each iteration of the function's outermost loop".into(),
            )
        }
        (UnitsRule::Whole, _) => return Ok(whole("each thread")),
        (UnitsRule::Calls(_), _) => return Ok(whole("each outermost call of the function")),
        (UnitsRule::StartRoutines(_), _) if cut_again => (
            Box::new(|start| rule.cutter(start)),
            "each call of a thread's start routine".into(),
        ),
        (UnitsRule::StartRoutines(_), _) => {
            return Ok(whole("each call of a thread's start routine"))
        }
        (UnitsRule::OpenMpUnnamed(_), _) => unreachable!("resolved after the first pass"),
    };
    let mut warnings = Vec::new();
    for f in &unsplit {
        let why = if static_unsplit.contains(f) {
            format!(
                "the threads of {} split a loop by their number in the team, but no block of it \
                 runs as schedule(static) would give them iterations (a loop unrolled or \
                 vectorized)",
                name(f.entry)
            )
        } else {
            format!(
                "an OpenMP loop of {} runs several iterations per pass (unrolled or \
                 vectorized): no block of it runs once per iteration in every chunk",
                name(f.entry)
            )
        };
        match rule {
            UnitsRule::Iterations(..) => return Err(Error::Iterations(why)),
            _ if cut_fns.iter().any(|s| s.entry == f.entry) => warnings.push(format!(
                "{why}; its work belongs to no unit (the function's other loops are cut into \
                 iterations)"
            )),
            _ => warnings.push(format!("{why}; each call of it is one unit")),
        }
    }
    let job = ScanJob {
        addresses: true,
        progress: Some(progress),
        ..*job
    };
    let bytes: u64 = job.trace.threads().iter().map(|t| t.size).sum();
    progress.stage("cutting units", bytes);
    let cut: Vec<ThreadScan> = scans
        .par_iter()
        .map(|s| job.scan(s.tid, &cutter, None))
        .collect();
    let mut problems = Vec::new();
    for (s, c) in scans.iter_mut().zip(cut) {
        s.units = c.units;
        s.runtime_calls_inside = c.runtime_calls_inside;
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
    // Every loop cut into iterations must be whole.
    let mut trips: HashMap<(u64, u32), u64> = census
        .trips
        .iter()
        .filter(|(l, _)| census.runs_in.get(l).is_some_and(|f| cut_fns.contains(f)))
        .map(|(&l, &trip)| ((l, 0), trip))
        .collect();
    trips.extend(static_trips);
    if !iterations.is_empty() {
        check_numbering(&iterations, &trips).map_err(Error::Iterations)?;
    }
    Ok(Recut {
        units_are: about,
        warnings,
    })
}

/// The plan for the worksharing loops of the functions at `entries` (all
/// when empty), or `None` when the trace ran none of them.
fn worksharing_plan(census: &LoopCensus, job: &ScanJob, entries: &[u64]) -> Option<IterationPlan> {
    if census.is_empty() {
        return None;
    }
    let mut plan = census.plan(job.canon, job.trace.blocks(), entries);
    if !entries.is_empty() {
        plan.loops.retain(|s, _| entries.contains(&s.entry));
        plan.failed.retain(|s| entries.contains(&s.entry));
    }
    let found = !plan.loops.is_empty() || !plan.failed.is_empty();
    found.then_some(plan)
}

fn whole(units_are: &str) -> Recut {
    Recut {
        units_are: units_are.into(),
        warnings: Vec::new(),
    }
}
