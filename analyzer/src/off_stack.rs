//! Units that run on a stack other than their thread's own: a program that
//! switches stacks itself (coroutines with `swapcontext`, Go's goroutines,
//! signal handlers on `sigaltstack`) runs code whose frames lie outside the
//! stack range its thread started with. The figures place memory in
//! segments by that range (README, Definitions), so memory on such a stack
//! counts as heap, and the interleaved stack model does not apply to it.
//! The replay notes where each unit started and where each of its calls
//! pushed its return address, so that the analysis says so instead of
//! splitting stack and heap silently wrong.

use serde::{Deserialize, Serialize};

/// How many units ran on a stack outside their thread's, and the calls
/// that show it.
///
/// ```
/// use tf_analyzer::off_stack::OffStack;
/// let own = (0x7000, 0x8000); // the thread's stack [lo, hi)
/// let mut all = OffStack::default();
/// // a unit that starts on its thread's stack and calls into a coroutine's
/// let mut unit = OffStack::starting(own, 0x7f00);
/// unit.call(own, Some(0x7ef8));
/// unit.call(own, Some(0x5ff8));
/// all.add(&unit);
/// // a unit that starts on the coroutine's stack
/// all.add(&OffStack::starting(own, 0x5f00));
/// assert_eq!((all.units, all.calls, all.off_stack_calls), (2, 2, 1));
/// assert!(all.warning(3).unwrap().starts_with("2 of the 3 units ran on a stack outside"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffStack {
    /// Units that started on a stack outside their thread's, or made a
    /// call there.
    pub units: u64,
    /// Calls the units made (complete executions of a block that ends in
    /// a call).
    pub calls: u64,
    /// Of those, calls that pushed their return address outside the stack
    /// of the unit's thread.
    pub off_stack_calls: u64,
}

impl OffStack {
    /// The count of one unit of a thread whose stack is `[lo, hi)` (empty
    /// when the trace does not say), which starts with stack pointer `sp`.
    pub fn starting(stack: (u64, u64), sp: u64) -> OffStack {
        OffStack {
            units: u64::from(outside(stack, sp)),
            ..OffStack::default()
        }
    }

    /// Counts a call of the one unit this counts, which pushed its return address at
    /// `push` (`None` when the call's block records no such write).
    #[inline]
    pub fn call(&mut self, stack: (u64, u64), push: Option<u64>) {
        self.calls += 1;
        if push.is_some_and(|a| outside(stack, a)) {
            self.off_stack_calls += 1;
            self.units = 1;
        }
    }

    /// Adds the counts of other units.
    pub fn add(&mut self, o: &OffStack) {
        self.units += o.units;
        self.calls += o.calls;
        self.off_stack_calls += o.off_stack_calls;
    }

    /// What the user must know when some of the `units` units ran on
    /// another stack.
    pub fn warning(&self, units: usize) -> Option<String> {
        (self.units > 0).then(|| {
            let calls = match self.off_stack_calls {
                0 => String::new(),
                n => format!(" ({n} of their {} calls were made there)", self.calls),
            };
            format!(
                "{} of the {units} units ran on a stack outside their thread's{calls}: the \
                 program switches stacks itself (coroutines, Go, sigaltstack), and memory on \
                 such a stack counts as heap, not stack, in every figure",
                self.units
            )
        })
    }
}

/// Whether `a` lies outside the stack `[lo, hi]` (its top included: a
/// stack pointer may stand there); never for an unknown (empty) stack.
fn outside((lo, hi): (u64, u64), a: u64) -> bool {
    lo < hi && !(lo..=hi).contains(&a)
}
