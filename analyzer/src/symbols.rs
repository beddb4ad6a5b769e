//! Stage 2: names and source lines.
//!
//! Function names come from the trace (the tracer's symbol table, normally
//! mangled) and are demangled here (C++ and Rust). Source locations come
//! from the DWARF of the module files, read lazily with `addr2line` when a
//! module is first asked about; modules without debug information simply have
//! no locations.
//!
//! ```
//! use tf_analyzer::symbols::demangle;
//! assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
//! assert_eq!(demangle("compress_thread"), "compress_thread");
//! assert_eq!(demangle("f"), "f");
//! ```

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use tf_trace::{BlockTable, FunctionId};

/// A demangled name ("foo::bar(int)"); the input itself when it is not mangled.
///
/// Only names with a mangling prefix (`_Z` for C++ and legacy Rust, `_R` for
/// Rust v0) are demangled: C names such as `f` or `g` are valid manglings of
/// types (`float`, `__float128`) and must stay as they are.
pub fn demangle(raw: &str) -> String {
    if raw.starts_with("_Z") || raw.starts_with("_R") {
        addr2line::demangle_auto(raw.into(), None).into_owned()
    } else {
        raw.to_string()
    }
}

/// A symbol without its ELF version (`pthread_mutex_lock@@GLIBC_2.2.5` →
/// `pthread_mutex_lock`).
pub fn unversioned(raw: &str) -> &str {
    match raw.find('@') {
        Some(at) if at > 0 => &raw[..at],
        _ => raw,
    }
}

/// A source location.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLine {
    /// The source file.
    pub file: String,
    /// The line (1-based).
    pub line: u32,
}

/// Debug information of one module, loaded on first use.
struct ModuleDebug {
    base: u64,
    size: u64,
    path: Vec<u8>,
    /// The file name, for [`in_module`] names.
    name: String,
    /// The loader and the load bias (run-time address − file address);
    /// behind a lock so that report sinks on several threads can ask.
    loaded: OnceLock<Option<Mutex<(addr2line::Loader, u64)>>>,
}

/// Names of the trace's functions.
pub struct Symbols {
    /// Demangled names by function id (index 0: unknown).
    names: Vec<String>,
    /// Raw names by function id.
    raw: Vec<String>,
    /// Entry addresses by function id.
    entries: Vec<u64>,
    by_entry: HashMap<u64, FunctionId>,
}

/// Source lines of a trace's addresses, from its modules' DWARF.
pub struct SourceLines {
    modules: Vec<ModuleDebug>,
}

impl Symbols {
    /// Demangles every function of `table` and notes its modules.
    pub fn new(table: &BlockTable) -> Symbols {
        let mut names = vec!["[unknown]".to_string()];
        let mut raw = vec![String::new()];
        let mut entries = vec![0];
        for f in table.functions() {
            let r = f.name_lossy().into_owned();
            names.push(if r.is_empty() {
                format!("{:#x}", f.entry)
            } else {
                demangle(unversioned(&r))
            });
            raw.push(r);
            entries.push(f.entry);
        }
        let by_entry = table.functions().iter().map(|f| (f.entry, f.id)).collect();
        Symbols {
            names,
            raw,
            entries,
            by_entry,
        }
    }

    /// The demangled name of function `f` (`"[unknown]"` for 0).
    pub fn name(&self, f: FunctionId) -> &str {
        self.names
            .get(f as usize)
            .map_or("[unknown]", String::as_str)
    }

    /// The entry address of function `f`.
    pub fn entry(&self, f: FunctionId) -> Option<u64> {
        (f != 0)
            .then(|| self.entries.get(f as usize).copied())
            .flatten()
    }

    /// The function whose entry is `addr`.
    pub fn at_entry(&self, addr: u64) -> Option<FunctionId> {
        self.by_entry.get(&addr).copied()
    }

    /// Number of functions (ids run from 1 to this).
    pub fn len(&self) -> usize {
        self.names.len() - 1
    }

    /// Whether the trace names no function.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The functions a user means by `query`: its raw (mangled) name, its
    /// demangled name, or its demangled name without the parameter list
    /// (`foo::bar` for `foo::bar(int)`).
    pub fn find(&self, query: &str) -> Vec<FunctionId> {
        (1..self.names.len())
            .filter(|&i| {
                let d = &self.names[i];
                self.raw[i] == query
                    || d == query
                    || d.split('(').next() == Some(query)
                    || unversioned(&self.raw[i]) == query
            })
            .map(|i| i as FunctionId)
            .collect()
    }

    /// All functions whose raw or demangled name satisfies `pred`.
    pub fn matching(&self, pred: impl Fn(&str) -> bool) -> Vec<FunctionId> {
        (1..self.names.len())
            .filter(|&i| pred(&self.raw[i]) || pred(&self.names[i]))
            .map(|i| i as FunctionId)
            .collect()
    }
}

impl SourceLines {
    /// Notes the modules of `table`; their files are read on first use.
    pub fn new(table: &BlockTable) -> SourceLines {
        let modules = table
            .modules()
            .iter()
            .map(|m| ModuleDebug {
                base: m.base,
                size: m.size,
                path: m.path.clone(),
                name: m.file_name(),
                loaded: OnceLock::new(),
            })
            .collect();
        SourceLines { modules }
    }

    /// Runs `f` with the loader of the module holding `addr` and the
    /// address in its file.
    fn with_module<T>(
        &self,
        addr: u64,
        f: impl FnOnce(&addr2line::Loader, u64) -> Option<T>,
    ) -> Option<T> {
        let m = self.module_at(addr)?;
        let loaded = m
            .loaded
            .get_or_init(|| load(&m.path, m.base).map(Mutex::new))
            .as_ref()?;
        let guard = loaded.lock().unwrap_or_else(|e| e.into_inner());
        let (loader, bias) = &*guard;
        f(loader, addr.wrapping_sub(*bias))
    }

    /// The symbol (function or data, from the module's symbol table) that
    /// holds `addr`, as `name` or `name+0xoffset`.
    pub fn symbol(&self, addr: u64) -> Option<String> {
        self.with_module(addr, |loader, probe| {
            let sym = loader.find_symbol_info(probe)?;
            let name = demangle(unversioned(sym.name()));
            Some(match probe - sym.address() {
                0 => name,
                off => format!("{name}+{off:#x}"),
            })
        })
    }

    /// [`symbol`](Self::symbol), else, in a module's image, its
    /// [`in_module`] name: how data without a symbol is named.
    pub fn symbol_or_offset(&self, addr: u64) -> Option<String> {
        self.symbol(addr).or_else(|| {
            let m = self.module_at(addr)?;
            Some(in_module(&m.name, m.base, addr))
        })
    }

    /// The module whose image holds `addr`.
    fn module_at(&self, addr: u64) -> Option<&ModuleDebug> {
        (self.modules.iter()).find(|m| addr.wrapping_sub(m.base) < m.size)
    }

    /// The source line of the instruction at `addr`, if its module has
    /// line information and its file can still be read.
    pub fn line(&self, addr: u64) -> Option<SourceLine> {
        self.with_module(addr, |loader, probe| {
            let loc = loader.find_location(probe).ok()??;
            Some(SourceLine {
                file: loc.file?.to_string(),
                line: loc.line?,
            })
        })
    }
}

/// The name of `addr` in module `module` mapped at `base`, where no symbol
/// names it: `module+0xoffset`, as perf names code without symbols.
///
/// ```
/// assert_eq!(tf_analyzer::symbols::in_module("pigz", 0x10_8000, 0x14_a3e0), "pigz+0x423e0");
/// ```
pub fn in_module(module: &str, base: u64, addr: u64) -> String {
    format!("{module}+{:#x}", addr.wrapping_sub(base))
}

/// The module and the offset of an [`in_module`] name, if `name` has that
/// form (`module+0x` and hex digits).
///
/// ```
/// use tf_analyzer::symbols::split_in_module;
/// assert_eq!(split_in_module("pigz+0x423e0"), Some(("pigz", 0x423e0)));
/// assert_eq!(split_in_module("operator+"), None);
/// ```
pub fn split_in_module(name: &str) -> Option<(&str, u64)> {
    let (module, off) = name.rsplit_once('+')?;
    let off = parse_address(off)?;
    (!module.is_empty()).then_some((module, off))
}

/// `0x` and hex digits, as tf writes addresses (and names code outside
/// every module), as a number.
///
/// ```
/// assert_eq!(tf_analyzer::symbols::parse_address("0x7f3c1000"), Some(0x7f3c1000));
/// assert_eq!(tf_analyzer::symbols::parse_address("7f3c1000"), None);
/// ```
pub fn parse_address(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// Where a module's image starts in its ELF file: the page of its lowest
/// loaded segment, which the tracers see mapped at the module's base.
pub fn image_base(file: &object::File<'_>) -> Option<u64> {
    use object::{Object, ObjectSegment};
    Some(file.segments().map(|s| s.address()).min()? & !0xfff)
}

/// The largest module file whose symbols and lines are read (1 GiB).
const MAX_MODULE_BYTES: u64 = 1 << 30;

/// Opens a module's debug information; the bias maps run-time addresses to
/// the file's: the module's lowest mapped address minus its lowest segment.
fn load(path: &[u8], base: u64) -> Option<(addr2line::Loader, u64)> {
    let (data, bias) = module_file(path, base)?;
    drop(data);
    let loader = addr2line::Loader::new(Path::new(std::str::from_utf8(path).ok()?)).ok()?;
    Some((loader, bias))
}

/// The file of a module mapped at `base`, read whole, and its load bias
/// (run-time address − file address): the module's lowest mapped address
/// minus its lowest segment's.
pub(crate) fn module_file(path: &[u8], base: u64) -> Option<(Vec<u8>, u64)> {
    use std::io::Read;
    let path = Path::new(std::str::from_utf8(path).ok()?);
    // A trace names its modules; it is untrusted input: follow its paths to
    // regular files only (never a FIFO or a device), of a bounded size.
    let (f, len) = tf_trace::stream::open_regular(path).ok()?;
    if len > MAX_MODULE_BYTES {
        return None;
    }
    let mut data = Vec::with_capacity(len as usize);
    f.take(MAX_MODULE_BYTES).read_to_end(&mut data).ok()?;
    let lowest = image_base(&object::File::parse(&*data).ok()?)?;
    Some((data, base.wrapping_sub(lowest)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempTrace;

    #[test]
    fn names_and_queries() {
        let mut t = TempTrace::new();
        let w = t.writer();
        w.function(0x1000, 0, "_Z3fooi").unwrap();
        w.function(0x2000, 0, "main").unwrap();
        w.function(0x3000, 0, "").unwrap();
        w.function(0x4000, 0, "main._omp_fn.0").unwrap();
        w.function(0x5000, 0, "pthread_mutex_lock@@GLIBC_2.2.5")
            .unwrap();
        let trace = t.finish();
        let s = Symbols::new(trace.blocks());
        assert_eq!(s.name(1), "foo(int)");
        assert_eq!(s.name(3), "0x3000");
        assert_eq!(s.name(0), "[unknown]");
        assert_eq!(s.find("foo"), [1]);
        assert_eq!(s.find("_Z3fooi"), [1]);
        assert_eq!(s.find("foo(int)"), [1]);
        assert_eq!(s.find("main"), [2]);
        assert_eq!(s.matching(|n| n.contains("._omp_fn.")), [4]);
        assert_eq!(s.name(5), "pthread_mutex_lock");
        assert_eq!(s.find("pthread_mutex_lock"), [5]);
        assert_eq!(s.at_entry(0x2000), Some(2));
        assert_eq!(s.entry(4), Some(0x4000));
        assert_eq!(SourceLines::new(trace.blocks()).line(0x1000), None);
    }
}
