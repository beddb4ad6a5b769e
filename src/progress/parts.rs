//! The estimate of the rest of a stage whose work comes in parts, each done
//! by one thread, several threads at once (the replay's warps): it plays
//! the threads taking the parts left, at the cost per step measured so far.
//!
//! A rate over all the work done so far misjudges such a stage twice: the
//! parts cost unlike amounts per step (a warp of 2 that counts its lanes
//! alone costs about three times what a converged warp of 64 does), and
//! when a few large parts are left, the threads that have none idle while
//! the others finish (pigz's sweep of nine widths is five parts on two
//! cores).

use std::collections::HashMap;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// The parts of a stage, and how far each thread has come with its own.
pub(super) struct Parts {
    sizes: Vec<u64>,
    threads: usize,
    started: Vec<bool>,
    running: HashMap<ThreadId, Running>,
    /// Seconds and steps of the parts that threads have left for another.
    finished: (f64, u64),
}

/// A thread's part: which, the steps done, and the time from `at` to the
/// last report, in which `timed` of them were done.
///
/// A thread's first part is timed from its first report on, as a stage
/// with no parts is: what comes before it (opening the first lanes, the
/// trace's first pages) is not done again for every step.
struct Running {
    part: usize,
    done: u64,
    at: Instant,
    last: Instant,
    timed: u64,
    /// The thread's first part, not reported yet.
    warming: bool,
}

impl Running {
    fn seconds(&self) -> f64 {
        (self.last - self.at).as_secs_f64()
    }
}

impl Parts {
    /// Parts of `sizes` steps, done on `threads` threads, taken in about
    /// this order.
    pub(super) fn new(sizes: Vec<u64>, threads: usize) -> Parts {
        Parts {
            started: vec![false; sizes.len()],
            sizes,
            threads: threads.max(1),
            running: HashMap::new(),
            finished: (0.0, 0),
        }
    }

    /// `thread` starts `part` at `now`, done with the one it had.
    pub(super) fn start(&mut self, thread: ThreadId, part: usize, now: Instant) {
        if let Some(p) = self.started.get_mut(part) {
            *p = true;
        }
        let new = Running {
            part,
            done: 0,
            at: now,
            last: now,
            timed: 0,
            warming: !self.running.contains_key(&thread),
        };
        if let Some(old) = self.running.insert(thread, new) {
            self.finished.0 += old.seconds();
            self.finished.1 += old.timed;
        }
    }

    /// `thread` did `n` more steps of its part, at `now`.
    pub(super) fn advance(&mut self, thread: ThreadId, n: u64, now: Instant) {
        if let Some(r) = self.running.get_mut(&thread) {
            r.done += n;
            if std::mem::take(&mut r.warming) {
                r.at = now;
            } else {
                r.timed += n;
            }
            r.last = now;
        }
    }

    /// The rest at `now`: what is left of each running part, then the parts
    /// not started, in order, each taken by the thread free first, all at
    /// the cost per step of the work so far (a running part's own cost
    /// misjudged nbody's groups of warps, whose first jobs are a few widths
    /// only, by up to 28%). None before any step is timed.
    pub(super) fn eta(&self, now: Instant) -> Option<Duration> {
        let (mut seconds, mut steps) = self.finished;
        for r in self.running.values() {
            seconds += r.seconds();
            steps += r.timed;
        }
        if steps == 0 {
            return None;
        }
        let mean = seconds / steps as f64;
        // When each thread is free, in seconds from now.
        let mut free: Vec<f64> = self
            .running
            .values()
            .map(|r| {
                let size = self.sizes.get(r.part).copied().unwrap_or(0);
                let left = size.saturating_sub(r.done) as f64 * mean;
                (left - (now - r.last).as_secs_f64()).max(0.0)
            })
            .collect();
        free.resize(free.len().max(self.threads), 0.0);
        let waiting = self.sizes.iter().zip(&self.started).filter(|(_, &s)| !s);
        for (&size, _) in waiting {
            let first = free
                .iter_mut()
                .min_by(|a, b| a.total_cmp(b))
                .expect("at least one thread");
            *first += size as f64 * mean;
        }
        let last = free.into_iter().fold(0.0, f64::max);
        Some(Duration::from_secs_f64(last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    /// Two threads with ids of their own.
    fn two_threads() -> (ThreadId, ThreadId) {
        let other = std::thread::spawn(|| std::thread::current().id());
        (std::thread::current().id(), other.join().expect("joins"))
    }

    #[test]
    fn the_first_report_of_a_threads_first_part_starts_its_clock() {
        let (a, _) = two_threads();
        let at = Instant::now();
        let mut parts = Parts::new(vec![100, 100], 2);
        assert_eq!(parts.eta(at), None);
        parts.start(a, 0, at);
        parts.advance(a, 10, at + s(1.0));
        assert_eq!(parts.eta(at + s(1.0)), None);
        // 40 steps in the 4 s since: 0.1 s a step; 50 left of part 0, and
        // part 1 on the other thread meanwhile.
        parts.advance(a, 40, at + s(5.0));
        assert_eq!(parts.eta(at + s(5.0)), Some(s(10.0)));
        // Time since the last report counts as work done.
        assert_eq!(parts.eta(at + s(7.0)), Some(s(10.0)));
        parts.start(a, 1, at + s(7.0));
        assert_eq!(parts.eta(at + s(8.0)), Some(s(9.0)));
    }

    #[test]
    fn a_large_part_left_runs_on_one_thread() {
        let (a, b) = two_threads();
        let at = Instant::now();
        let mut parts = Parts::new(vec![100, 100, 400], 2);
        parts.start(a, 0, at);
        parts.start(b, 1, at);
        parts.advance(a, 10, at);
        parts.advance(b, 10, at);
        parts.advance(a, 10, at + s(1.0));
        parts.advance(b, 10, at + s(1.0));
        // 0.1 s a step: parts 0 and 1 have 8 s left each, then one thread
        // takes part 2, 40 s; the rate over all the work so far would say
        // 560 steps at 20 a second, 28 s.
        let eta = parts.eta(at + s(1.0)).expect("an estimate");
        assert!((eta.as_secs_f64() - 48.0).abs() < 1e-6, "{eta:?}");
    }

    #[test]
    fn parts_left_go_to_the_thread_free_first() {
        let (a, b) = two_threads();
        let at = Instant::now();
        let mut parts = Parts::new(vec![400, 100, 100, 100], 2);
        parts.start(a, 0, at);
        parts.start(b, 1, at);
        parts.advance(a, 10, at);
        parts.advance(b, 10, at);
        // a: 30 steps in 3 s, b: 15: 6 s for 45 steps, 2/15 s a step.
        parts.advance(a, 30, at + s(3.0));
        parts.advance(b, 15, at + s(3.0));
        // a: 360 left, 48 s; b: 75 left, 10 s, then parts 2 and 3, 13.33 s
        // each: b is free at 36.67 s, before a.
        let eta = parts.eta(at + s(3.0)).expect("an estimate");
        assert!((eta.as_secs_f64() - 48.0).abs() < 1e-6, "{eta:?}");
        // b done at 9 s takes part 2 (its clock runs from the start now);
        // a has done 100: 0.1 s a step (18 s for 180 steps). a: 300 left,
        // 30 s; b: part 2, 10 s, then part 3, 10 s: 20 s.
        parts.advance(b, 75, at + s(9.0));
        parts.advance(a, 60, at + s(9.0));
        parts.start(b, 2, at + s(9.0));
        let eta = parts.eta(at + s(9.0)).expect("an estimate");
        assert!((eta.as_secs_f64() - 30.0).abs() < 1e-6, "{eta:?}");
        // b done with part 2 at 19 s takes the last; a has 200 left.
        parts.advance(a, 100, at + s(19.0));
        parts.advance(b, 100, at + s(19.0));
        parts.start(b, 3, at + s(19.0));
        let eta = parts.eta(at + s(19.0)).expect("an estimate");
        assert!((eta.as_secs_f64() - 20.0).abs() < 1e-6, "{eta:?}");
    }
}
