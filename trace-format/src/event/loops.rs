//! The worksharing-loop events (§6.6, §6.7).

/// A `loop_chunk` event (type 10, FORMAT.md §6.6): iterations of a
/// worksharing loop instance that the OpenMP runtime handed one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoopChunk {
    /// The loop instance, numbered from 1 in the order instances began.
    pub loop_id: u64,
    /// Logical number of the chunk's first iteration (0 = the loop's first).
    pub first: u64,
    /// Iterations per chunk; 0: the thread has no more of this loop.
    pub count: u64,
    /// 0: one chunk; otherwise the thread also runs the chunks starting at
    /// `first + j × stride` (j = 1, 2, …) below `trip`, in order.
    pub stride: u64,
    /// Iterations of the whole loop instance.
    pub trip: u64,
}

impl LoopChunk {
    /// How many iterations the thread runs from this event on.
    ///
    /// ```
    /// use tf_trace::LoopChunk;
    /// let c = LoopChunk { loop_id: 1, first: 2, count: 2, stride: 8, trip: 13 };
    /// // chunks [2, 4), [10, 12) and nothing from 18 on
    /// assert_eq!(c.iterations(), 4);
    /// ```
    pub fn iterations(&self) -> u64 {
        if self.stride == 0 || self.count == 0 {
            return self.count;
        }
        let mut n = 0;
        let mut at = self.first;
        while at < self.trip {
            n += self.count.min(self.trip - at);
            at = at.saturating_add(self.stride);
        }
        n
    }

    /// The logical number of the `k`-th of those iterations (from 0).
    ///
    /// ```
    /// use tf_trace::LoopChunk;
    /// let c = LoopChunk { loop_id: 1, first: 2, count: 2, stride: 8, trip: 13 };
    /// assert_eq!((0..4).map(|k| c.number(k)).collect::<Vec<_>>(), [2, 3, 10, 11]);
    /// ```
    pub fn number(&self, k: u64) -> u64 {
        if self.stride == 0 || self.count == 0 {
            self.first + k
        } else {
            self.first + k / self.count * self.stride + k % self.count
        }
    }
}

/// A `static_loop` event (type 11, FORMAT.md §6.7): the thread begins its
/// part of a worksharing loop instance whose static schedule the compiler
/// expanded inline (GCC's `schedule(static)`): no runtime call hands out its
/// iterations, the thread computes them from its place in the team.
///
/// ```
/// use tf_trace::{Event, StaticLoop};
/// let s = StaticLoop { loop_id: 3, thread: 1, threads: 4 };
/// assert_eq!(Event::StaticLoop(s).type_code(), Some(11));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StaticLoop {
    /// The loop instance, numbered as `loop_chunk` instances are (one
    /// sequence for both).
    pub loop_id: u64,
    /// The thread's number in its team (`omp_get_thread_num()`).
    pub thread: u64,
    /// The number of threads of the team (`omp_get_num_threads()`).
    pub threads: u64,
}
