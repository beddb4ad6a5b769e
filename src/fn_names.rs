//! `--only FN` / `--exclude FN`: the functions a name means, found before
//! the program runs in the symbol tables of the program and the libraries
//! it loads ([`loaded`]).
//!
//! A name matches a function symbol when it is the raw (mangled) symbol, the
//! symbol without its `@VERSION`, the demangled name as `tf analyze` prints
//! it (`void bs<float>(float*, int) [clone ._omp_fn.1]`), or that name
//! without its parameter list (`ns::f` for `ns::f(int)`). The tracers match
//! raw symbols only (and simple qualified C++ names), so each name is passed
//! to them with the raw symbols it matched; the name itself is passed too,
//! so that simple names still match functions of libraries opened later
//! with `dlopen`. A name that matches nothing is an error, before the
//! program runs: a trace that silently records nothing helps no one.
//!
//! Code without a symbol (a stripped program, as Debian ships them) is
//! named as `tf analyze` prints it, `FILE+0xOFFSET` ([`offset_name`]): the
//! Valgrind tool matches it where a block starts at that offset from where
//! FILE is mapped.

use crate::loaded::{self, LoadedFile};
use anyhow::{bail, Result};
use object::{Object, ObjectSegment, ObjectSymbol, SegmentFlags, SymbolKind};
use rayon::prelude::*;
use std::ffi::OsStr;
use std::path::Path;
use tf_analyzer::symbols::{demangle, image_base, split_in_module, unversioned};

/// How many names containing an unmatched pattern the error suggests.
const SUGGESTIONS: usize = 3;

/// A `--only` / `--exclude` name and the raw symbols it matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The name as the user gave it.
    pub pattern: String,
    /// The raw symbols (without `@VERSION`) it names, other than itself.
    pub symbols: Vec<String>,
}

impl Resolved {
    /// The pattern unresolved (when the program's symbols cannot be read).
    fn as_given(pattern: &str) -> Resolved {
        Resolved {
            pattern: pattern.to_string(),
            symbols: Vec::new(),
        }
    }

    /// What the tracer is given for this name: the name, then its symbols.
    pub fn tracer_patterns(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.pattern).chain(&self.symbols)
    }
}

/// The tracer's patterns of several names, in order.
pub fn tracer_patterns(names: &[Resolved]) -> Vec<String> {
    names
        .iter()
        .flat_map(Resolved::tracer_patterns)
        .cloned()
        .collect()
}

/// The `--only` and `--exclude` names of a `tf trace`, resolved.
#[derive(Debug, Default)]
pub struct Selection {
    /// `--only`.
    pub only: Vec<Resolved>,
    /// `--exclude`.
    pub exclude: Vec<Resolved>,
}

/// A function symbol of the program and the names it answers to.
struct Symbol {
    /// The raw symbol without `@VERSION`.
    raw: String,
    /// Its demangled name, as `tf analyze` prints it.
    demangled: String,
}

impl Symbol {
    fn new(name: &str) -> Symbol {
        let raw = unversioned(name).to_string();
        let demangled = demangle(&raw);
        Symbol { raw, demangled }
    }

    /// Whether `pattern` names this function (raw names are compared
    /// without `@VERSION` on both sides).
    fn answers_to(&self, pattern: &str) -> bool {
        self.raw == unversioned(pattern)
            || self.demangled == pattern
            || self.demangled.split('(').next() == Some(pattern)
    }
}

/// Resolves the names of `only` and `exclude` against `program` (as given
/// on the command line) and its libraries. When the program is not an
/// x86-64 ELF file (a script) or cannot be found, the names go to the tracer
/// as given, with a warning.
pub fn resolve(program: &OsStr, only: &[String], exclude: &[String]) -> Result<Selection> {
    if only.is_empty() && exclude.is_empty() {
        return Ok(Selection::default());
    }
    for (option, p) in named("--only", only).chain(named("--exclude", exclude)) {
        if p.trim().is_empty() {
            bail!("{option}: give a function name (as tf analyze prints it, or a mangled name)");
        }
    }
    let shown = Path::new(program).display();
    let files = loaded::locate(program)
        .map(|p| loaded::program_and_libraries(&p))
        .unwrap_or_default();
    if files.is_empty() {
        eprintln!(
            "tf: warning: cannot read the functions of {shown} (not found, or not an x86-64 \
             ELF program): --only and --exclude names go to the tracer unchecked"
        );
        return Ok(Selection {
            only: only.iter().map(|p| Resolved::as_given(p)).collect(),
            exclude: exclude.iter().map(|p| Resolved::as_given(p)).collect(),
        });
    }
    let symbols = function_symbols(&files);
    let lookup = |option: &str, pattern: &String| -> Result<Resolved> {
        if let Some(code) = offset_name(&files, pattern) {
            let canonical = code.map_err(|why| anyhow::anyhow!("{option} {pattern}: {why}"))?;
            return Ok(Resolved::as_given(&canonical));
        }
        let mut matched: Vec<String> = symbols
            .iter()
            .filter(|s| s.answers_to(pattern))
            .map(|s| s.raw.clone())
            .filter(|raw| raw != pattern)
            .collect();
        matched.sort();
        matched.dedup();
        if matched.is_empty() && !symbols.iter().any(|s| s.raw == unversioned(pattern)) {
            bail!(
                "{option} {pattern}: no function of {shown} or its libraries is named {pattern} \
                 (give a name as tf analyze prints it, or a mangled name){}",
                suggestions(&symbols, pattern)
            );
        }
        Ok(Resolved {
            pattern: pattern.clone(),
            symbols: matched,
        })
    };
    Ok(Selection {
        only: only
            .iter()
            .map(|p| lookup("--only", p))
            .collect::<Result<_>>()?,
        exclude: exclude
            .iter()
            .map(|p| lookup("--exclude", p))
            .collect::<Result<_>>()?,
    })
}

/// A name of code without a symbol (`FILE+0xOFFSET`, FILE the file name of
/// the program or of a library it loads, as the link or as the file it
/// points to): the name as the tracers write it, or why it names no code;
/// `None` when `pattern` is no such name. The offset is from where the
/// tracers see FILE mapped: the page of its first loaded segment.
fn offset_name(files: &[LoadedFile], pattern: &str) -> Option<Result<String, String>> {
    let (file, off) = split_in_module(pattern)?;
    let named = |p: &Path| p.file_name() == Some(OsStr::new(file));
    let loaded = files
        .iter()
        .find(|f| named(&f.path) || std::fs::canonicalize(&f.path).is_ok_and(|p| named(&p)))?;
    let parsed = object::File::parse(&*loaded.data).ok()?;
    let base = image_base(&parsed)?;
    let at = base.wrapping_add(off);
    let code = parsed.segments().any(|s| {
        let executable = matches!(s.flags(), SegmentFlags::Elf { p_flags, .. }
            if p_flags.contains(object::elf::PF_X));
        executable && at.wrapping_sub(s.address()) < s.size()
    });
    Some(if code {
        Ok(format!("{file}+{off:#x}"))
    } else {
        Err(format!("{file}+{off:#x} is not in {file}'s code"))
    })
}

fn named<'a>(option: &'a str, names: &'a [String]) -> impl Iterator<Item = (&'a str, &'a str)> {
    names.iter().map(move |n| (option, n.as_str()))
}

/// The defined function symbols of `files` (static and dynamic tables).
fn function_symbols(files: &[LoadedFile]) -> Vec<Symbol> {
    let mut names: Vec<&str> = Vec::new();
    for file in files {
        let Ok(parsed) = object::File::parse(&*file.data) else {
            continue;
        };
        names.extend(
            parsed
                .symbols()
                .chain(parsed.dynamic_symbols())
                .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
                .filter_map(|s| s.name().ok())
                .filter(|n| !n.is_empty()),
        );
    }
    names.sort_unstable();
    names.dedup();
    // Demangling is most of the work for large C++ or Rust programs.
    names.into_par_iter().map(Symbol::new).collect()
}

/// `"; names containing it: A, B"` for the demangled names that contain
/// `pattern`, or nothing.
fn suggestions(symbols: &[Symbol], pattern: &str) -> String {
    let mut near: Vec<&str> = symbols
        .iter()
        .map(|s| s.demangled.as_str())
        .filter(|d| d.contains(pattern))
        .collect();
    near.sort_unstable();
    near.dedup();
    match near.len() {
        0 => String::new(),
        n => {
            let shown: Vec<String> = near
                .iter()
                .take(SUGGESTIONS)
                .map(|d| format!("'{d}'"))
                .collect();
            let more = match n.saturating_sub(SUGGESTIONS) {
                0 => String::new(),
                m => format!(" and {m} more"),
            };
            format!("; names containing it: {}{more}", shown.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::ObjectSection;

    #[test]
    fn a_symbol_answers_to_its_raw_versioned_and_demangled_names() {
        let s = Symbol::new("_Z2bsIfEvPfi._omp_fn.1");
        assert_eq!(
            s.demangled,
            "void bs<float>(float*, int) [clone ._omp_fn.1]"
        );
        assert!(s.answers_to("_Z2bsIfEvPfi._omp_fn.1"));
        assert!(s.answers_to("void bs<float>(float*, int) [clone ._omp_fn.1]"));
        assert!(s.answers_to("void bs<float>"));
        assert!(!s.answers_to("bs"));
        let v = Symbol::new("pthread_mutex_lock@@GLIBC_2.2.5");
        assert_eq!(v.raw, "pthread_mutex_lock");
        assert!(v.answers_to("pthread_mutex_lock"));
        assert!(v.answers_to("pthread_mutex_lock@@GLIBC_2.2.5"));
        let n = Symbol::new("_ZN2ns1fEi");
        assert!(n.answers_to("ns::f") && n.answers_to("ns::f(int)"));
        assert!(!Symbol::new("f").answers_to("float"));
    }

    #[test]
    fn suggestions_name_a_few_close_functions() {
        let syms: Vec<Symbol> = ["_Z2bsIfEvPfi", "_Z2bsIdEvPdi", "main"]
            .into_iter()
            .map(Symbol::new)
            .collect();
        assert_eq!(
            suggestions(&syms, "bs<float>"),
            "; names containing it: 'void bs<float>(float*, int)'"
        );
        assert_eq!(suggestions(&syms, "zzz"), "");
    }

    #[test]
    fn code_without_a_symbol_is_named_by_file_and_offset() {
        assert_eq!(
            split_in_module("libz.so.1.2.13+0x4970"),
            Some(("libz.so.1.2.13", 0x4970))
        );
        for not in ["operator+", "a+b", "+0x10", "pigz+0x", "pigz+0xg1"] {
            assert_eq!(split_in_module(not), None, "{not}");
        }
        // this test's own program: an offset in its code, and one past it
        let exe = std::env::current_exe().unwrap();
        let file = exe.file_name().unwrap().to_str().unwrap().to_string();
        let files = [LoadedFile {
            data: std::fs::read(&exe).unwrap(),
            path: exe,
        }];
        let data = object::File::parse(&*files[0].data).unwrap();
        let text = data.section_by_name(".text").unwrap().address();
        let base = image_base(&data).unwrap();
        let inside = format!("{file}+{:#X}", text - base);
        let canonical = format!("{file}+{:#x}", text - base);
        assert_eq!(offset_name(&files, &inside), Some(Ok(canonical)));
        let past = format!("{file}+0xfffffff0");
        let why = offset_name(&files, &past).unwrap().unwrap_err();
        assert!(why.ends_with(&format!("is not in {file}'s code")), "{why}");
        assert_eq!(offset_name(&files, "other+0x10"), None);
    }

    #[test]
    fn the_tracer_gets_each_name_then_its_symbols() {
        let r = [
            Resolved {
                pattern: "void f<int>()".into(),
                symbols: vec!["_Z1fIiEvv".into()],
            },
            Resolved::as_given("g"),
        ];
        assert_eq!(tracer_patterns(&r), ["void f<int>()", "_Z1fIiEvv", "g"]);
    }
}
