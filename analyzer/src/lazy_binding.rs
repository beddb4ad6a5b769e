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
//! The analysis counts it as the program's (it is what ran) and warns.

use crate::results::{FunctionResult, WidthResult};

/// The functions of glibc's dynamic linker that bind a symbol on a call:
/// whole names, or with `*` at the end, names that start so.
const BINDING: [&str; 7] = [
    "_dl_runtime_resolve*",
    "_dl_runtime_profile*",
    "_dl_fixup",
    "_dl_profile_fixup",
    "_dl_lookup_symbol_x",
    "do_lookup_x",
    "check_match",
];

/// Of [`BINDING`], those that only a lazy binding runs (a `dlsym` looks
/// symbols up too, but through none of these).
const LAZY_ONLY: [&str; 4] = [
    "_dl_runtime_resolve*",
    "_dl_runtime_profile*",
    "_dl_fixup",
    "_dl_profile_fixup",
];

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

/// Whether `f` is a function of the dynamic linker that binds symbols.
fn binds(f: &FunctionResult, names: &[&str]) -> bool {
    named(&f.name, names) && is_dynamic_linker(&f.module)
}

/// The thread instructions of `r`'s units that ran in the dynamic linker's
/// binding functions ([`BINDING`]), when they bound lazily (a trampoline
/// or `_dl_fixup` ran); 0 otherwise. A lower bound of the binding's cost:
/// what those functions call (the dynamic linker's `strcmp`, say) is not
/// counted.
pub(crate) fn lazy_binding_instructions(r: &WidthResult) -> u64 {
    let ran = |f: &&FunctionResult| f.thread_instructions > 0;
    if !r.functions.iter().filter(ran).any(|f| binds(f, &LAZY_ONLY)) {
        return 0;
    }
    (r.functions.iter())
        .filter(|f| binds(f, &BINDING))
        .map(|f| f.thread_instructions)
        .sum()
}

/// The warning that the units of `r` bound library functions lazily, with
/// how much of their work that was (`None` when they did not).
pub(crate) fn warning(r: &WidthResult) -> Option<String> {
    let bound = lazy_binding_instructions(r);
    if bound == 0 {
        return None;
    }
    let all = r.thread_instructions + r.excluded_thread_instructions;
    Some(format!(
        "at least {bound} of the units' {all} thread instructions ({}) ran in the dynamic \
         linker, binding library functions on their first call (lazy binding: _dl_fixup and \
         the symbol lookup it makes), which a GPU port would not do; `LD_BIND_NOW=1 tf trace \
         -- PROGRAM` binds them all at start-up, outside the units",
        crate::naming::percent(bound, all)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, module: &str, thread_instructions: u64) -> FunctionResult {
        FunctionResult {
            name: name.into(),
            module: module.into(),
            thread_instructions,
            ..crate::testutil::function_result()
        }
    }

    fn width(functions: Vec<FunctionResult>) -> WidthResult {
        let thread_instructions = functions.iter().map(|f| f.thread_instructions).sum();
        WidthResult {
            functions,
            thread_instructions,
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
            warning(&r).unwrap(),
            "at least 4815 of the units' 22080 thread instructions (21.81%) ran in the dynamic \
             linker, binding library functions on their first call (lazy binding: _dl_fixup and \
             the symbol lookup it makes), which a GPU port would not do; `LD_BIND_NOW=1 tf \
             trace -- PROGRAM` binds them all at start-up, outside the units"
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
        assert_eq!(warning(&dlsym), None);
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
}
