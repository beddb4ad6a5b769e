//! The estimate of the rest of a stage whose work comes in parts, each done
//! by one thread, several threads at once (the replay's warps): it plays
//! the threads taking the parts left, each thread at its own cost per step
//! so far.
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

/// The parts of a stage, and how far each thread has come.
pub(super) struct Parts {
    sizes: Vec<u64>,
    threads: usize,
    started: Vec<bool>,
    workers: HashMap<ThreadId, Worker>,
}

/// A thread that took parts: its part now, the steps done of it, and the
/// time from `at` to its last report, in which `timed` of them were done;
/// and the seconds and steps timed of the parts it did before.
///
/// A thread's first part is timed from its first report on, as a stage
/// with no parts is: what comes before it (opening the first lanes, the
/// trace's first pages) is not done again for every step.
struct Worker {
    part: usize,
    done: u64,
    at: Instant,
    last: Instant,
    timed: u64,
    /// The thread's first part, not reported yet.
    warming: bool,
    before: (f64, u64),
}

impl Worker {
    /// Seconds and steps timed, of all its parts.
    fn timed(&self) -> (f64, u64) {
        let now = (self.last - self.at).as_secs_f64();
        (self.before.0 + now, self.before.1 + self.timed)
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
            workers: HashMap::new(),
        }
    }

    /// `thread` starts `part` at `now`, done with the one it had.
    pub(super) fn start(&mut self, thread: ThreadId, part: usize, now: Instant) {
        if let Some(p) = self.started.get_mut(part) {
            *p = true;
        }
        let before = self.workers.get(&thread).map(Worker::timed);
        self.workers.insert(
            thread,
            Worker {
                part,
                done: 0,
                at: now,
                last: now,
                timed: 0,
                warming: before.is_none(),
                before: before.unwrap_or_default(),
            },
        );
    }

    /// `thread` did `n` more steps of its part, at `now`.
    pub(super) fn advance(&mut self, thread: ThreadId, n: u64, now: Instant) {
        if let Some(w) = self.workers.get_mut(&thread) {
            w.done += n;
            if std::mem::take(&mut w.warming) {
                w.at = now;
            } else {
                w.timed += n;
            }
            w.last = now;
        }
    }

    /// The rest at `now`: what is left of each thread's part, then the
    /// parts not started, in order, each taken by the thread free first;
    /// each thread at its own cost per step so far, one that has timed
    /// none at the cost of all the work so far. None before any step is
    /// timed.
    ///
    /// A thread's own cost, not all threads': the heavy parts go first, and
    /// pigz's warp counted at six widths, with the report's observer,
    /// costs 20 ns per step where the parts after it on the other thread
    /// cost 12-15. At the cost of both threads, the rest of pigz's report
    /// was overestimated by 26%.
    pub(super) fn eta(&self, now: Instant) -> Option<Duration> {
        let (seconds, steps) = (self.workers.values().map(Worker::timed))
            .fold((0.0, 0), |(s, n), (ws, wn)| (s + ws, n + wn));
        if steps == 0 {
            return None;
        }
        let mean = seconds / steps as f64;
        // (seconds from now when the thread is free, its cost per step)
        let mut threads: Vec<(f64, f64)> = self
            .workers
            .values()
            .map(|w| {
                let cost = match w.timed() {
                    (_, 0) => mean,
                    (s, n) => s / n as f64,
                };
                let size = self.sizes.get(w.part).copied().unwrap_or(0);
                let left = size.saturating_sub(w.done) as f64 * cost;
                ((left - (now - w.last).as_secs_f64()).max(0.0), cost)
            })
            .collect();
        threads.resize(threads.len().max(self.threads), (0.0, mean));
        let waiting = self.sizes.iter().zip(&self.started).filter(|(_, &s)| !s);
        for (&size, _) in waiting {
            let (free, cost) = threads
                .iter_mut()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("at least one thread");
            *free += size as f64 * *cost;
        }
        let last = threads.into_iter().map(|t| t.0).fold(0.0, f64::max);
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

    /// `sizes` on two threads, a and b, which took parts 0 and 1 at `at`
    /// and reported 10 steps each at once (their clocks start).
    fn two_started(sizes: Vec<u64>) -> (Parts, ThreadId, ThreadId, Instant) {
        let (a, b) = two_threads();
        let at = Instant::now();
        let mut parts = Parts::new(sizes, 2);
        parts.start(a, 0, at);
        parts.start(b, 1, at);
        parts.advance(a, 10, at);
        parts.advance(b, 10, at);
        (parts, a, b, at)
    }

    #[test]
    fn a_large_part_left_runs_on_one_thread() {
        let (mut parts, a, b, at) = two_started(vec![100, 100, 400]);
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
        let (mut parts, a, b, at) = two_started(vec![400, 100, 100, 100]);
        // a: 30 steps in 3 s, b: 15.
        parts.advance(a, 30, at + s(3.0));
        parts.advance(b, 15, at + s(3.0));
        // Each at its own cost: a has 360 left, 36 s; b 75, 15 s, then
        // takes part 2 (20 s), and, free at 35 s before a, part 3: 55 s.
        let eta = parts.eta(at + s(3.0)).expect("an estimate");
        assert!((eta.as_secs_f64() - 55.0).abs() < 1e-6, "{eta:?}");
        // b done at 9 s takes part 2 (its clock runs from the start now);
        // each has now timed 90 steps in 9 s. a: 300 left, 30 s; b: part
        // 2, 10 s, then part 3, 10 s: 20 s.
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
