//! Pass 1 over every thread (frames, graphs and units), or its results
//! read from the trace's index when an earlier analysis kept them there.

use crate::cfg::CfgBuilder;
use crate::scan::{ScanJob, ThreadScan};
use crate::scan_index::{FirstPass, ScanIndex};
use crate::unit_rule::UnitsRule;
use crate::unit_starts::UnitStarts;
use rayon::prelude::*;

/// The first pass of `job` over the threads `tids`, cut by `units_rule`
/// (for the unit spec `unit`), over `blocks` canonical blocks; scans come
/// sorted by thread id. With `use_index`, read from the trace's index when
/// it holds them, else kept there for the next analysis. What happened to
/// the index is told through `progress` as a stage's name (`--timings`).
pub fn first_pass(
    job: &mut ScanJob,
    tids: &[u64],
    units_rule: &UnitsRule,
    unit: &str,
    blocks: usize,
    use_index: bool,
) -> FirstPass {
    let progress = job.progress.unwrap_or(&crate::analysis::Silent);
    let index = match use_index
        .then(|| ScanIndex::for_trace(job.trace, unit))
        .transpose()
    {
        Ok(index) => index,
        Err(e) => {
            progress.stage(&format!("index not used: {e}"), 0);
            None
        }
    };
    if let Some(index) = &index {
        match index.load() {
            Ok(Some(pass)) => {
                progress.stage(
                    &format!("first pass read from {}", index.path().display()),
                    0,
                );
                job.check_ahead = pass.check_ahead;
                for &(tid, end) in &pass.decoded {
                    job.trace.assume_decoded_prefix(tid, end);
                }
                return pass;
            }
            Ok(None) => {}
            Err(e) => progress.stage(&format!("index not used: {e}"), 0),
        }
    }
    let bytes: u64 = job.trace.threads().iter().map(|t| t.size).sum();
    progress.stage("scanning threads", bytes);
    let (mut scans, mut merged) = scan_threads(job, tids, units_rule, blocks);
    if scans.iter().any(|s| s.used_damaged_chunk) {
        // Some records of a chunk were used before the rest of it failed to
        // decode: scan again, decoding each chunk before using it, so that
        // nothing of a damaged chunk counts.
        job.check_ahead = true;
        progress.stage("scanning threads again (a chunk does not decode)", bytes);
        (scans, merged) = scan_threads(job, tids, units_rule, blocks);
    }
    scans.sort_by_key(|s| s.tid);
    let long: usize = scans.iter().map(UnitStarts::wanted).sum();
    let starts = if long == 0 {
        Vec::new()
    } else {
        progress.stage("placing long units", long as u64);
        UnitStarts::find(job.trace, job.canon, &scans, &|| progress.advance(1))
    };
    let pass = FirstPass {
        scans,
        cfgs: merged.finish(),
        check_ahead: job.check_ahead,
        decoded: tids
            .iter()
            .filter_map(|&t| Some((t, job.trace.decoded_prefix(t)?)))
            .collect(),
        starts,
    };
    if let Some(index) = &index {
        progress.stage(
            &format!("writing the first pass to {}", index.path().display()),
            0,
        );
        match index.store(&pass) {
            Ok(None) => {}
            Ok(Some(why)) => progress.stage(&format!("index not written: {why}"), 0),
            Err(e) => progress.stage(&format!("index not written: {e}"), 0),
        }
    }
    pass
}

/// Pass 1 over every thread of `tids`. Each worker thread adds the edges of
/// the threads it scans to its own builder; builders are merged as workers
/// finish, so memory follows the number of cores, not of traced threads.
fn scan_threads(
    job: &ScanJob,
    tids: &[u64],
    units_rule: &UnitsRule,
    blocks: usize,
) -> (Vec<ThreadScan>, CfgBuilder) {
    // the calls of yields mark spin-wait loops (crate::spin_wait)
    let yielding = crate::spin_wait::yielding_functions(job.trace.blocks());
    tids.par_iter()
        .fold(
            || {
                (
                    Vec::new(),
                    CfgBuilder::new(blocks).yielding(yielding.clone()),
                )
            },
            |(mut scans, mut cfg), &tid| {
                scans.push(job.scan(tid, |start| units_rule.cutter(start), Some(&mut cfg)));
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
        )
}
