//! OpenMP tasks (and nested parallel regions) as units.
//!
//! A task is an outlined function that the OpenMP runtime calls while the
//! thread is inside another unit: in a barrier or task wait of its parallel
//! region's function, where the runtime runs the team's tasks, or right
//! where the task is made (an undeferred task). So is the function of a
//! nested parallel region, which the runtime calls inside the outer
//! region's function. The first pass counts those calls
//! ([`RuntimeCalls`]); where there are any, the units are cut again
//! ([`TaskPlan`]): each call of a task function is a unit, and the calls of
//! the functions they ran in (the parallel regions) are none, as a call
//! whose work is cut into loop iterations is none. A task that runs inside
//! a task (one that waits for the tasks it made) stays part of it, and a
//! task inside a worksharing loop's iteration part of that iteration: a
//! warning counts those. A `taskloop`'s task is one unit however many of
//! the loop's iterations it holds (only the task's data says which): a
//! warning says so when the program ran one.

use std::collections::HashSet;

/// The OpenMP runtime's calls of unit functions that began no unit of
/// their own, in one thread or several.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RuntimeCalls {
    /// How many.
    pub count: u64,
    /// The functions called (entry addresses).
    pub functions: HashSet<u64>,
    /// The functions of the units they ran in (entry addresses).
    pub hosts: HashSet<u64>,
}

impl RuntimeCalls {
    /// A call of the function at `function` inside a unit of the function
    /// at `host` (`None`: inside a call whose work is cut into iterations).
    pub fn note(&mut self, function: u64, host: Option<u64>) {
        self.count += 1;
        self.functions.insert(function);
        self.hosts.extend(host);
    }

    /// All of `calls` (of several threads) together.
    pub fn total<'a>(calls: impl IntoIterator<Item = &'a RuntimeCalls>) -> RuntimeCalls {
        let mut all = RuntimeCalls::default();
        for c in calls {
            all.count += c.count;
            all.functions.extend(&c.functions);
            all.hosts.extend(&c.hosts);
        }
        all
    }
}

/// Which unit functions are tasks and which are the regions they ran in.
///
/// ```
/// use tf_analyzer::tasks::{RuntimeCalls, TaskPlan};
/// let mut calls = RuntimeCalls::default();
/// calls.note(0x20, Some(0x10)); // a task in its region
/// calls.note(0x20, Some(0x20)); // a task in a task
/// let plan = TaskPlan::new(&calls);
/// assert!(plan.tasks.contains(&0x20) && plan.regions.contains(&0x10));
/// assert!(!plan.regions.contains(&0x20)); // a task stays a task
/// ```
#[derive(Clone, Debug, Default)]
pub struct TaskPlan {
    /// Functions the runtime called inside other units: each call is a
    /// unit, but inside another call of a task function.
    pub tasks: HashSet<u64>,
    /// Functions that such calls ran in, and that are no task themselves:
    /// their calls are no units.
    pub regions: HashSet<u64>,
}

impl TaskPlan {
    /// The plan that `calls` (of every thread) make.
    pub fn new(calls: &RuntimeCalls) -> TaskPlan {
        let tasks = calls.functions.clone();
        let regions = calls.hosts.difference(&tasks).copied().collect();
        TaskPlan { tasks, regions }
    }

    /// Whether there are tasks to cut.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// What the plan adds to the description of the units.
    pub(crate) fn units_are(&self) -> String {
        match (self.tasks.len(), self.regions.len()) {
            (0, _) => String::new(),
            (t, 0) => format!(
                "; each call of {t} outlined function(s) that the OpenMP runtime ran inside other \
                 calls (tasks, nested parallel regions)"
            ),
            (t, r) => format!(
                "; each call of {t} outlined function(s) that the OpenMP runtime ran inside the \
                 calls of {r} other(s) (tasks, nested parallel regions), instead of those"
            ),
        }
    }
}

/// Whether a raw symbol names an OpenMP runtime function that runs a
/// `taskloop` (libgomp's `GOMP_taskloop`, `GOMP_taskloop_ull`; libomp's
/// `__kmpc_taskloop`, `__kmpc_taskloop_5`).
pub(crate) fn is_taskloop(name: &str) -> bool {
    let name = name.split('@').next().unwrap_or(name);
    matches!(name, "GOMP_taskloop" | "GOMP_taskloop_ull") || name.starts_with("__kmpc_taskloop")
}

/// The warning for a program that ran taskloops: their tasks are units
/// whole, whatever the number of iterations each holds.
pub(crate) fn taskloop_warning() -> String {
    "the program ran OpenMP taskloops: each of their tasks is one unit, however many of the \
     loop's iterations the runtime gave it (tf does not cut a taskloop's tasks into iterations; \
     grainsize(1) makes each task one)"
        .to_string()
}

/// The warning about the runtime's calls of unit functions that are part of
/// another unit (or of none), or `None` when there are none.
pub(crate) fn inside_warning(calls: &RuntimeCalls) -> Option<String> {
    let n = calls.count;
    (n > 0).then(|| {
        format!(
            "{n} call(s) that the OpenMP runtime made of unit functions (tasks, nested parallel \
             regions) ran inside another unit or around a worksharing loop's iterations: each \
             is part of the unit it ran in, or of none, not a unit of its own"
        )
    })
}
