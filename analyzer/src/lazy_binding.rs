//! Lazy binding: the dynamic linker binding a library function the first
//! time a program calls it, inside the unit that makes that call.
//!
//! Unless a program is linked with `-z now` or run with `LD_BIND_NOW=1`,
//! glibc's dynamic linker leaves each library function unbound until its
//! first call: that call goes through a trampoline (`_dl_runtime_resolve*`)
//! to `_dl_fixup`, which looks the symbol up (`_dl_lookup_symbol_x`,
//! `do_lookup_x`, `check_match`). A GPU port binds nothing at run time, and
//! only the first lane to call a function pays, so in a small program this
//! work can hold a sixth of the units' instructions and split their lanes.
//! The tracers skip it (FORMAT.md §7); in a trace that holds it (recorded
//! before they did, or by a tracer that does not), the analysis counts it
//! as the program's (it is what ran) and warns.

use crate::results::{FunctionResult, WidthResult};

/// The functions of glibc's dynamic linker that only a lazy binding runs
/// (a `dlsym` looks symbols up too, but through none of these): whole
/// names, or with `*` at the end, names that start so.
const LAZY_ONLY: [&str; 4] = [
    "_dl_runtime_resolve*",
    "_dl_runtime_profile*",
    "_dl_fixup",
    "_dl_profile_fixup",
];

/// The symbol lookup they make, with the rest of [`BINDING`].
const LOOKUP: [&str; 3] = ["_dl_lookup_symbol_x", "do_lookup_x", "check_match"];

/// The functions that bind a symbol on a call: [`LAZY_ONLY`] and [`LOOKUP`].
const BINDING: [&[&str]; 2] = [&LAZY_ONLY, &LOOKUP];

/// Whether `module` (a file name) is the dynamic linker: glibc's
/// `ld-linux-x86-64.so.2` (`ld-linux.so.2`, `ld-2.31.so`, …).
///
/// ```
/// use tf_analyzer::lazy_binding::is_dynamic_linker;
/// assert!(is_dynamic_linker("ld-linux-x86-64.so.2"));
/// assert!(is_dynamic_linker("ld-2.31.so"));
/// assert!(!is_dynamic_linker("libc.so.6"));
/// assert!(!is_dynamic_linker("ld-helper"));
/// ```
pub fn is_dynamic_linker(module: &str) -> bool {
    module.starts_with("ld-linux") || (module.starts_with("ld-") && module.contains(".so"))
}

/// Whether function `name` is one of `names` (see [`BINDING`]).
fn named(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *n,
    })
}

/// Whether `f` is a function of the dynamic linker named in one of `lists`.
fn binds(f: &FunctionResult, lists: &[&[&str]]) -> bool {
    lists.iter().any(|names| named(&f.name, names)) && is_dynamic_linker(&f.module)
}

/// The binding functions' rows of `r` ([`BINDING`]), when the units bound
/// lazily (a trampoline or `_dl_fixup` ran); none otherwise.
fn binding_rows(r: &WidthResult) -> impl Iterator<Item = &FunctionResult> {
    let ran = |f: &&FunctionResult| f.thread_instructions > 0;
    let lazily = r
        .functions
        .iter()
        .filter(ran)
        .any(|f| binds(f, &[&LAZY_ONLY]));
    (r.functions.iter()).filter(move |f| lazily && binds(f, &BINDING))
}

/// The thread instructions of `r`'s units that ran in the dynamic linker's
/// binding functions ([`BINDING`]), when they bound lazily; 0 otherwise. A
/// lower bound of the binding's cost: what those functions call (the
/// dynamic linker's `strcmp`, say) is not counted.
pub(crate) fn lazy_binding_instructions(r: &WidthResult) -> u64 {
    binding_rows(r).map(|f| f.thread_instructions).sum()
}

/// The share of the units' warp instructions, at or above which the
/// binding is worth a warning. Below it, at every width, leaving its
/// instructions out could not move SIMT efficiency by more than about a
/// tenth of a point: with `s` the share of warp instructions left out
/// (each of them holding from 1 to W of the thread instructions left out),
/// the efficiency moves by at most `s / (1 − s)`.
const WARP_SHARE: f64 = 0.001;

/// The warning that the units of `results` (one per width) bound library
/// functions lazily, with how much of their work that was; `None` when
/// they did not, or when it is too little to move any figure
/// ([`WARP_SHARE`]).
pub(crate) fn warning(results: &[WidthResult]) -> Option<String> {
    let r = results.first()?;
    let bound = lazy_binding_instructions(r);
    let matters = results.iter().any(|r| {
        let warp: u64 = binding_rows(r).map(|f| f.warp_instructions).sum();
        warp as f64 >= WARP_SHARE * r.warp_instructions as f64
    });
    if bound == 0 || !matters {
        return None;
    }
    let all = r.thread_instructions + r.excluded_thread_instructions;
    Some(format!(
        "at least {bound} of the units' {all} thread instructions ({}) ran in the dynamic \
         linker, binding library functions on their first call (lazy binding: _dl_fixup and \
         the symbol lookup it makes), which a GPU port would not do: tf trace skips it, so \
         tracing the program again leaves it out (as LD_BIND_NOW=1 does, binding every symbol \
         at start-up)",
        crate::naming::percent(bound, all)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function row whose lanes ran apart: a warp instruction for each
    /// thread instruction.
    fn function(name: &str, module: &str, thread_instructions: u64) -> FunctionResult {
        FunctionResult {
            name: name.into(),
            module: module.into(),
            thread_instructions,
            warp_instructions: thread_instructions,
            ..crate::testutil::function_result()
        }
    }

    fn width(functions: Vec<FunctionResult>) -> WidthResult {
        let sum = |count: fn(&FunctionResult) -> u64| functions.iter().map(count).sum();
        WidthResult {
            thread_instructions: sum(|f| f.thread_instructions),
            warp_instructions: sum(|f| f.warp_instructions),
            functions,
            ..crate::testutil::width_result()
        }
    }

    const LD: &str = "ld-linux-x86-64.so.2";

    #[test]
    fn counts_the_binding_functions_of_the_dynamic_linker_when_it_bound_lazily() {
        let r = width(vec![
            function("work", "prog", 16020),
            function("do_lookup_x", LD, 2250),
            function("_dl_lookup_symbol_x", LD, 1114),
            function("_dl_fixup", LD, 693),
            function("strcmp", LD, 649),
            function("check_match", LD, 478),
            function("_dl_runtime_resolve_xsave", LD, 280),
            function("_dl_allocate_tls_init", LD, 596),
        ]);
        // 2250 + 1114 + 693 + 478 + 280: not strcmp, not the TLS set-up
        assert_eq!(lazy_binding_instructions(&r), 4815);
        assert_eq!(
            warning(&[r]).unwrap(),
            "at least 4815 of the units' 22080 thread instructions (21.81%) ran in the dynamic \
             linker, binding library functions on their first call (lazy binding: _dl_fixup and \
             the symbol lookup it makes), which a GPU port would not do: tf trace skips it, so \
             tracing the program again leaves it out (as LD_BIND_NOW=1 does, binding every \
             symbol at start-up)"
        );
    }

    #[test]
    fn a_lookup_without_lazy_binding_or_outside_the_dynamic_linker_is_not_counted() {
        // dlsym's lookup: no trampoline, no _dl_fixup
        let dlsym = width(vec![
            function("do_lookup_x", LD, 900),
            function("_dl_lookup_symbol_x", LD, 300),
        ]);
        assert_eq!(lazy_binding_instructions(&dlsym), 0);
        assert_eq!(warning(&[dlsym]), None);
        // a program's own function of the same name
        let own = width(vec![function("_dl_fixup", "prog", 50)]);
        assert_eq!(lazy_binding_instructions(&own), 0);
        // a row that only spun (under --spin-wait exclude) ran nothing
        let idle = width(vec![
            function("_dl_fixup", LD, 0),
            function("do_lookup_x", LD, 9),
        ]);
        assert_eq!(lazy_binding_instructions(&idle), 0);
    }

    #[test]
    fn a_binding_too_small_to_move_any_efficiency_is_not_worth_a_warning() {
        // converged work of 799,200 thread instructions in 99,900 or 99,901
        // warp instructions (W = 8), and a lone lane's 100 in _dl_fixup:
        // 100 of 100,000 warp instructions is 0.1%, of 100,001 less
        let at = |work_warp: u64| {
            let work = FunctionResult {
                warp_instructions: work_warp,
                ..function("work", "prog", 799_200)
            };
            width(vec![work, function("_dl_fixup", LD, 100)])
        };
        assert!(warning(&[at(99_900)]).unwrap().starts_with(
            "at least 100 of the units' 799300 thread instructions (0.01%) ran in the dynamic \
             linker"
        ));
        assert_eq!(warning(&[at(99_901)]), None);
        // worth it at one width is enough, and the first width's counts say
        assert!(warning(&[at(99_901), at(99_900)]).is_some());
    }
}
