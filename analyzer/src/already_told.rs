//! A replay whose first steps the progress bar was told already: a narrower
//! warp counted from a wider warp's replay until its counts were void
//! ([`crate::replay::Void`]) replays by itself, and tells the bar only the
//! steps past those.

use crate::Progress;
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells `inner` every step but the first `told`.
///
/// ```text
/// let bar = AlreadyTold::new(&progress, 10);
/// bar.advance(4); // nothing
/// bar.advance(8); // progress.advance(2)
/// ```
pub(crate) struct AlreadyTold<'p> {
    inner: &'p dyn Progress,
    /// Steps still to leave out.
    left: AtomicU64,
}

impl<'p> AlreadyTold<'p> {
    /// `inner`, leaving out the first `told` steps.
    pub(crate) fn new(inner: &'p dyn Progress, told: u64) -> Self {
        AlreadyTold {
            inner,
            left: AtomicU64::new(told),
        }
    }
}

impl Progress for AlreadyTold<'_> {
    fn stage(&self, name: &str, total: u64) {
        self.inner.stage(name, total);
    }

    fn advance(&self, n: u64) {
        // One thread replays a warp: no other advances in between.
        let left = self.left.load(Ordering::Relaxed);
        let skip = left.min(n);
        self.left.store(left - skip, Ordering::Relaxed);
        if n > skip {
            self.inner.advance(n - skip);
        }
    }

    fn parts(&self, sizes: &[u64], threads: usize) {
        self.inner.parts(sizes, threads);
    }

    fn part(&self, i: usize) {
        self.inner.part(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Told(Mutex<Vec<u64>>);

    impl Progress for Told {
        fn stage(&self, _: &str, _: u64) {}
        fn advance(&self, n: u64) {
            self.0.lock().unwrap().push(n);
        }
    }

    #[test]
    fn the_steps_told_already_are_left_out() {
        let told = Told::default();
        let bar = AlreadyTold::new(&told, 10);
        for n in [4, 8, 5] {
            bar.advance(n);
        }
        assert_eq!(*told.0.lock().unwrap(), [2, 5]);
    }
}
