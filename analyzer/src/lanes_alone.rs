//! Width 1 without a replay of its own: a warp of one lane issues that
//! lane's blocks one by one, exactly its part of every issue of any wider
//! warp that holds it (a lane alone never diverges, is never predicated and
//! never waits for a lock held by another lane of its warp). So a job of
//! several lanes counts its lanes alone too
//! ([`crate::replay::Replay::run_with_lanes_alone`]), and the jobs of
//! width 1 go: their lanes are not decoded and stepped through a second
//! time. A `tf report` of pigz's six units replays widths 1 to 64; the six
//! warps of one lane were a fifth of its work.
//!
//! ```text
//! widths 1, 4 over units 0..4:  jobs [0] [1] [2] [3] [0 1 2 3]
//!                        become     [0 1 2 3], counting 0, 1, 2, 3 alone
//! ```

use crate::warp_jobs::Job;
use std::collections::HashMap;

/// `jobs` without those that only width `width_one` (1) forms, each unit
/// of which is counted alone by a job of several lanes that holds it, when
/// one does (with `--shard`, it may be another shard's).
pub(crate) fn fold(jobs: Vec<Job<'_>>, width_one: usize) -> Vec<Job<'_>> {
    // The first job of several lanes holding each unit, and the unit's place there.
    let mut holder: HashMap<usize, (usize, usize)> = HashMap::new();
    for (j, job) in jobs.iter().enumerate().filter(|(_, j)| j.members.len() > 1) {
        for (place, &u) in job.members.iter().enumerate() {
            holder.entry(u).or_insert((j, place));
        }
    }
    let only_width_one = |job: &Job<'_>| matches!(job.warps[..], [(k, _)] if k == width_one);
    let mut folded = vec![false; jobs.len()];
    let mut alone = vec![0u64; jobs.len()];
    for (j, job) in jobs.iter().enumerate() {
        if let ([u], true) = (job.members, only_width_one(job)) {
            if let Some(&(h, place)) = holder.get(u) {
                alone[h] |= 1 << place;
                folded[j] = true;
            }
        }
    }
    jobs.into_iter()
        .zip(alone)
        .zip(folded)
        .filter(|&(_, folded)| !folded)
        .map(|((job, alone), _)| Job { alone, ..job })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warps::Batch;

    /// The jobs of consecutive warps of `widths` over `n` units with
    /// width 1 folded, as (members, widths' indices, places counted alone).
    fn folded(
        n: usize,
        widths: &[usize],
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(Vec<usize>, Vec<usize>, u64)> {
        let warps: Vec<Vec<Vec<usize>>> = widths
            .iter()
            .map(|&w| Batch::Consecutive.warps(n, w, |_| 0, |_| 0))
            .collect();
        let one = widths.iter().position(|&w| w == 1).expect("width 1");
        fold(Job::of(&warps, keep), one)
            .iter()
            .map(|j| {
                (
                    j.members.to_vec(),
                    j.warps.iter().map(|w| w.0).collect(),
                    j.alone,
                )
            })
            .collect()
    }

    #[test]
    fn lanes_alone_go_to_the_first_job_of_several_lanes_that_holds_them() {
        // Widths 1, 2, 4 over 5 units: the warp of width 2 holding unit 4
        // alone is one lane too, and counts at widths 2 and 4 as well.
        assert_eq!(
            folded(5, &[1, 2, 4], |_| true),
            vec![
                (vec![4], vec![0, 1, 2], 0),
                (vec![0, 1], vec![1], 0b11),
                (vec![2, 3], vec![1], 0b11),
                (vec![0, 1, 2, 3], vec![2], 0),
            ]
        );
    }

    #[test]
    fn a_unit_no_wider_job_holds_keeps_its_job() {
        // Width 1 alone, and a shard that keeps the warps of width 1 whose
        // wider warp it does not replay.
        assert_eq!(folded(2, &[1], |_| true).len(), 2);
        assert_eq!(
            folded(4, &[1, 2], |i| i != 1),
            vec![
                (vec![2], vec![0], 0),
                (vec![3], vec![0], 0),
                (vec![0, 1], vec![1], 0b01),
            ]
        );
    }
}
