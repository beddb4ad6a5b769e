//! Which units a trace is cut into: what the user asks for (`--unit`),
//! resolved against the trace's functions, and the cutter each thread's
//! first pass uses.

use crate::analysis::Error;
use crate::symbols::Symbols;
use crate::tasks::TaskPlan;
use crate::units::{CallSet, Cutter};
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use tf_trace::BlockTable;

/// What a unit is (`--unit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitSpec {
    /// OpenMP outlined functions, else start routines, else threads.
    Auto,
    /// Whole threads.
    Thread,
    /// Each call of a function.
    Call(String),
    /// Each iteration of a function's outermost loop.
    Iter(String),
}

impl FromStr for UnitSpec {
    type Err = String;

    /// ```
    /// use tf_analyzer::unit_rule::UnitSpec;
    /// assert_eq!("call:worker".parse(), Ok(UnitSpec::Call("worker".into())));
    /// assert!("call:".parse::<UnitSpec>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<UnitSpec, String> {
        let named = |f: &str| {
            if f.is_empty() {
                Err(format!("--unit {s}: a function name is missing after ':'"))
            } else {
                Ok(f.to_string())
            }
        };
        match s.split_once(':') {
            None if s == "auto" => Ok(UnitSpec::Auto),
            None if s == "thread" => Ok(UnitSpec::Thread),
            Some(("call", f)) => Ok(UnitSpec::Call(named(f)?)),
            Some(("iter", f)) => Ok(UnitSpec::Iter(named(f)?)),
            _ => Err(format!(
                "--unit {s}: expected auto, thread, call:FN or iter:FN"
            )),
        }
    }
}

impl fmt::Display for UnitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitSpec::Auto => f.write_str("auto"),
            UnitSpec::Thread => f.write_str("thread"),
            UnitSpec::Call(n) => write!(f, "call:{n}"),
            UnitSpec::Iter(n) => write!(f, "iter:{n}"),
        }
    }
}

/// How units are cut, resolved against the trace's functions.
pub(crate) enum UnitsRule {
    Whole,
    /// Calls of these entries in every thread.
    Calls(HashSet<u64>),
    /// Calls of each thread's start routine (`main` for a thread without one).
    StartRoutines(Option<u64>),
    /// Iterations of the loop of one of these functions (`FN`, entries).
    Iterations(String, Vec<u64>),
    /// `auto` on an OpenMP program: calls of these outlined functions, then
    /// (second pass) iterations of the worksharing loops they ran.
    OpenMp(HashSet<u64>),
    /// `auto` on a program that loads an OpenMP runtime but whose symbols
    /// name no outlined function (a stripped library): the first pass finds
    /// them, as the functions the runtime calls through a pointer, and
    /// [`UnitsRule::resolve`] makes this `OpenMp`, or `StartRoutines` (with
    /// `main`) when the runtime called none.
    OpenMpUnnamed(Option<u64>),
}

impl UnitsRule {
    /// The rule for `spec` in a trace of the blocks of `table`;
    /// `openmp_runtime`: the trace loads an OpenMP runtime.
    pub(crate) fn new(
        spec: &UnitSpec,
        symbols: &Symbols,
        table: &BlockTable,
        openmp_runtime: bool,
    ) -> Result<UnitsRule, Error> {
        let entries = |name: &str| -> Result<Vec<u64>, Error> {
            let mut found: Vec<u64> = symbols
                .find(name)
                .into_iter()
                .filter_map(|f| symbols.entry(f))
                .collect();
            if found.is_empty() {
                // a name tf gives code without a symbol
                found = crate::functions::entries_named(table, name);
            }
            if found.is_empty() {
                Err(Error::NoFunction(spec.to_string(), name.to_string()))
            } else {
                Ok(found)
            }
        };
        Ok(match spec {
            UnitSpec::Thread => UnitsRule::Whole,
            UnitSpec::Call(f) => UnitsRule::Calls(entries(f)?.into_iter().collect()),
            UnitSpec::Iter(f) => UnitsRule::Iterations(f.clone(), entries(f)?),
            UnitSpec::Auto => {
                let omp: HashSet<u64> = symbols
                    .matching(is_outlined)
                    .into_iter()
                    .filter_map(|f| symbols.entry(f))
                    .collect();
                // A stripped program's main: from its entry code.
                let main = (symbols.find("main").first())
                    .and_then(|&f| symbols.entry(f))
                    .or_else(|| crate::program_main::main_from_entry(table));
                if !omp.is_empty() {
                    UnitsRule::OpenMp(omp)
                } else if openmp_runtime {
                    UnitsRule::OpenMpUnnamed(main)
                } else {
                    UnitsRule::StartRoutines(main)
                }
            }
        })
    }

    /// After the first pass, which found `outlined` (the functions the
    /// OpenMP runtime called through a pointer): the rule to cut with, and
    /// whether the first pass's units must be cut again by it.
    pub(crate) fn resolve(self, outlined: HashSet<u64>) -> (UnitsRule, bool) {
        match self {
            UnitsRule::OpenMpUnnamed(_) if !outlined.is_empty() => {
                (UnitsRule::OpenMp(outlined), true)
            }
            UnitsRule::OpenMpUnnamed(main) => (UnitsRule::StartRoutines(main), true),
            rule => (rule, false),
        }
    }

    /// The functions whose calls make units (none for other rules).
    pub(crate) fn calls(&self) -> CallSet {
        match self {
            UnitsRule::Calls(set) | UnitsRule::OpenMp(set) => CallSet {
                entries: set.clone(),
                tasks: TaskPlan::default(),
            },
            _ => CallSet::default(),
        }
    }

    /// The cutter of a thread whose start routine is `start` (0 = unknown).
    pub(crate) fn cutter(&self, start: u64) -> Cutter {
        match self {
            UnitsRule::Whole | UnitsRule::Iterations(..) | UnitsRule::OpenMpUnnamed(_) => {
                Cutter::Whole
            }
            UnitsRule::Calls(_) | UnitsRule::OpenMp(_) => Cutter::Calls(self.calls(), false),
            UnitsRule::StartRoutines(main) => match if start != 0 { Some(start) } else { *main } {
                Some(e) => Cutter::Calls(
                    CallSet {
                        entries: HashSet::from([e]),
                        tasks: TaskPlan::default(),
                    },
                    true,
                ),
                None => Cutter::Whole,
            },
        }
    }
}

/// Whether a raw symbol names an OpenMP outlined function (GCC's
/// `FN._omp_fn.N`, clang's `.omp_outlined.`, and clang's `.omp_task_entry.`,
/// through which libomp runs a task's outlined body, as libgomp runs GCC's
/// directly).
pub(crate) fn is_outlined(name: &str) -> bool {
    name.contains("._omp_fn.")
        || name.contains(".omp_outlined.")
        || name.contains(".omp_task_entry.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_show() {
        for s in ["auto", "thread", "call:f", "iter:main._omp_fn.0"] {
            assert_eq!(s.parse::<UnitSpec>().unwrap().to_string(), s);
        }
        assert!("loop:f".parse::<UnitSpec>().is_err());
        assert!("iter:".parse::<UnitSpec>().unwrap_err().contains("missing"));
    }

    #[test]
    fn outlined_names() {
        for name in ["main._omp_fn.0", ".omp_outlined..5", ".omp_task_entry..4"] {
            assert!(is_outlined(name), "{name}");
        }
        for name in ["main", ".omp.reduction.reduction_func", "GOMP_parallel"] {
            assert!(!is_outlined(name), "{name}");
        }
    }
}
