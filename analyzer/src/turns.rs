//! Replays that take turns on one core: each turn goes to the replay least
//! far through its work, so that the work done at any time holds each
//! replay in about its share of the whole.
//!
//! Why: the progress bar's estimate of the rest is the cost per step so
//! far. When replays that cost unlike amounts per step run one after the
//! other, the steps done early are those of the first alone, and the
//! estimate is as wrong as the costs are unlike: on one core, pigz's wide
//! warp in `tf report` (six widths and the report's observer) costs about
//! 23 ns per thread instruction, and the narrower warps that replay after
//! it by themselves 12 ns, and the estimate a tenth of the way in was 50%
//! too long.

/// Steps in a turn: a progress report's worth (the test suite's programs
/// are far shorter: there, turns of a few instructions put every replay
/// that takes turns through many of them).
pub(crate) const TURN: u64 = if cfg!(test) {
    64
} else {
    crate::replay::PROGRESS_STEP
};

/// Runs replays by turns of about `slice` steps until every one is done.
/// Replay `i` is `sizes[i]` steps long and has told `told[i]` already;
/// each turn goes to the one not done whose told steps are the smallest
/// share of its size (the first of equals). `run(i, steps)` runs replay
/// `i` about `steps` more and gives whether it is done, and the steps it
/// has told in all.
///
/// ```text
/// sizes [100, 300], told [0, 0], slice 50
///     -> turns 0, 1 (1/2 and 1/6 done), 1, 1 (1/2), 0 (done), 1, 1, 1
/// ```
pub(crate) fn take_turns<E>(
    sizes: &[u64],
    mut told: Vec<u64>,
    slice: u64,
    mut run: impl FnMut(usize, u64) -> Result<(bool, u64), E>,
) -> Result<(), E> {
    let mut done = vec![false; sizes.len()];
    // a/b < c/d as a*d < c*b; a size of 0 counts as 1
    let share = |i: usize, told: &[u64]| (u128::from(told[i]), u128::from(sizes[i].max(1)));
    loop {
        let next = (0..sizes.len()).filter(|&i| !done[i]).min_by(|&i, &j| {
            let ((a, b), (c, d)) = (share(i, &told), share(j, &told));
            (a * d).cmp(&(c * b))
        });
        let Some(i) = next else {
            return Ok(());
        };
        (done[i], told[i]) = run(i, slice)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turns taken by replays of `sizes` that run exactly the steps
    /// they are given, in slices of `slice`.
    fn turns(sizes: &[u64], told: Vec<u64>, slice: u64) -> Vec<usize> {
        let mut at = told.clone();
        let mut order = Vec::new();
        take_turns(sizes, told, slice, |i, steps| {
            order.push(i);
            at[i] = (at[i] + steps).min(sizes[i]);
            Ok::<_, ()>((at[i] == sizes[i], at[i]))
        })
        .expect("no error");
        order
    }

    #[test]
    fn the_replay_least_far_through_goes_next() {
        assert_eq!(turns(&[100, 300], vec![0, 0], 50), [0, 1, 1, 1, 0, 1, 1, 1]);
        // One with a head start waits for the others to catch up.
        assert_eq!(
            turns(&[100, 100, 100], vec![60, 0, 0], 40),
            [1, 2, 1, 2, 0, 1, 2]
        );
        // Replays that overrun their size, or are done at once, end too.
        assert_eq!(turns(&[10, 0], vec![0, 0], 50), [0, 1]);
        assert!(turns(&[], Vec::new(), 50).is_empty());
    }

    #[test]
    fn a_failed_turn_stops_the_turns() {
        let mut calls = 0;
        let r = take_turns(&[100, 100], vec![0, 0], 10, |i, _| {
            calls += 1;
            if i == 1 {
                Err("lane 3 is damaged")
            } else {
                Ok((false, 10))
            }
        });
        assert_eq!(r, Err("lane 3 is damaged"));
        assert_eq!(calls, 2);
    }
}
