//! Which function an executed block is charged to, and its name.
//!
//! A block is charged to its symbol's function. Code without a symbol (a
//! stripped program such as Debian's `pigz`, PLT stubs) is charged to the
//! function running in its frame, which is named after its entry like perf
//! does for unknown code: `pigz+0x5a30` (module and offset, stable across
//! runs), or for a PLT stub, `strcmp@plt` (crate::plt).
//!
//! ```
//! use tf_analyzer::functions::FunctionTable;
//! use tf_analyzer::symbols::Symbols;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("tf-doc-functions-{}", std::process::id()));
//! let mut w = tf_trace::TraceWriter::create(&dir)?;
//! let m = w.module(0x400000, 0x10000, "/usr/bin/pigz", b"")?;
//! let main = w.function(0x401000, m, "main")?;
//! w.finish()?;
//! let trace = tf_trace::Trace::open(&dir)?;
//! let symbols = Symbols::new(trace.blocks());
//! let table = FunctionTable::new(&symbols, trace.blocks(), [0x401000, 0x405a30]);
//! assert_eq!(table.frame(0x401000), main);
//! let unnamed = table.frame(0x405a30);
//! assert_eq!(table.info(unnamed).name, "pigz+0x5a30");
//! assert_eq!(table.info(unnamed).module, "pigz");
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

use crate::go_names::GoFunctions;
use crate::symbols::{in_module, Symbols};
use rustc_hash::FxHashMap as HashMap;
use tf_trace::{BlockTable, FunctionId};

/// A function as reports show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Demangled name, or `module+0xoffset` for code without a symbol.
    pub name: String,
    /// The module's file name.
    pub module: String,
    /// Its entry address, when known.
    pub entry: Option<u64>,
}

/// The trace's functions (ids 1..=symbols) and one more per entry of a frame
/// running code without a symbol.
pub struct FunctionTable {
    infos: Vec<FunctionInfo>,
    frames: HashMap<u64, FunctionId>,
}

impl FunctionTable {
    /// The table for `table`'s functions and the frames that started at
    /// `frame_entries`.
    pub fn new(
        symbols: &Symbols,
        table: &BlockTable,
        frame_entries: impl IntoIterator<Item = u64>,
    ) -> FunctionTable {
        let module_of = |addr: u64| {
            table
                .module_containing(addr)
                .map(|m| (m.file_name(), m.base))
        };
        let mut infos = vec![FunctionInfo {
            name: "[unknown]".into(),
            module: String::new(),
            entry: None,
        }];
        for f in table.functions() {
            infos.push(FunctionInfo {
                name: symbols.name(f.id).to_string(),
                module: table
                    .module(f.module)
                    .map(|m| m.file_name())
                    .unwrap_or_default(),
                entry: Some(f.entry),
            });
        }
        let mut frames = HashMap::default();
        let mut entries: Vec<u64> = frame_entries.into_iter().collect();
        entries.sort_unstable();
        entries.dedup();
        // names of code without symbols, by module base, read when a frame
        // starts in it
        let mut unnamed: HashMap<u64, ModuleNames> = HashMap::default();
        for entry in entries {
            let id = match symbols.at_entry(entry) {
                Some(f) => f,
                None => {
                    let (module, base) = module_of(entry).unwrap_or_default();
                    let known = table.module_containing(entry).and_then(|m| {
                        (unnamed.entry(m.base))
                            .or_insert_with(|| ModuleNames::read(&m.path, m.base))
                            .name(entry)
                    });
                    let name = match known {
                        Some(name) => name,
                        None if module.is_empty() => format!("{entry:#x}"),
                        None => in_module(&module, base, entry),
                    };
                    infos.push(FunctionInfo {
                        name,
                        module,
                        entry: Some(entry),
                    });
                    (infos.len() - 1) as FunctionId
                }
            };
            frames.insert(entry, id);
        }
        FunctionTable { infos, frames }
    }

    /// The function of a frame that started at `entry` (0 = unknown).
    #[inline]
    pub fn frame(&self, entry: u64) -> FunctionId {
        self.frames.get(&entry).copied().unwrap_or(0)
    }

    /// The largest function id.
    pub fn max_id(&self) -> usize {
        self.infos.len() - 1
    }

    /// Function `id`.
    pub fn info(&self, id: FunctionId) -> &FunctionInfo {
        self.infos.get(id as usize).unwrap_or(&self.infos[0])
    }
}

/// The names a module gives code that has no symbol: its PLT stubs'
/// (`strcmp@plt`) and, in a Go program, its functions' (read once, from the
/// module's file).
#[derive(Default)]
struct ModuleNames {
    /// PLT stubs' names by run-time address.
    plt: std::collections::HashMap<u64, String>,
    go: GoFunctions,
    /// Run-time address − file address.
    bias: u64,
}

impl ModuleNames {
    fn read(path: &[u8], base: u64) -> ModuleNames {
        let Some((data, bias)) = crate::symbols::module_file(path, base) else {
            return ModuleNames::default();
        };
        let plt = (crate::plt::plt_names(&data).into_iter())
            .map(|(at, name)| (at.wrapping_add(bias), name))
            .collect();
        ModuleNames {
            plt,
            go: GoFunctions::read(&data),
            bias,
        }
    }

    /// The name of the code at run-time address `at`, if the module gives
    /// it one.
    fn name(&self, at: u64) -> Option<String> {
        (self.plt.get(&at).cloned()).or_else(|| self.go.name(at.wrapping_sub(self.bias)))
    }

    /// The run-time entries of the code it names `name`.
    fn entries<'a>(&'a self, name: &'a str) -> impl Iterator<Item = u64> + 'a {
        let plt = (self.plt.iter()).filter_map(move |(&at, n)| (n == name).then_some(at));
        let bias = self.bias;
        plt.chain(self.go.entries(name).map(move |a| a.wrapping_add(bias)))
    }
}

/// The entries of the code without a symbol that tf names `name` (see the
/// module): `module+0xoffset` in a module of `table`, `0xaddress` outside
/// every module, a PLT stub's `strcmp@plt` or a Go function's name, where
/// a block of the trace starts (code that ran); none when no such code is so
/// named. So that a name tf printed for such code can be given back to it
/// (`--unit call:pigz+0x11250`).
///
/// ```
/// use tf_analyzer::functions::entries_named;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("tf-doc-entries-{}", std::process::id()));
/// let mut w = tf_trace::TraceWriter::create(&dir)?;
/// w.module(0x400000, 0x10000, "/usr/bin/pigz", b"")?;
/// let ret = tf_trace::EndKind::Return;
/// w.block(&tf_trace::BlockDef::new(0x405a30).insn(1).end(ret))?;
/// w.block(&tf_trace::BlockDef::new(0x7f0000001000).insn(1).end(ret))?;
/// w.finish()?;
/// let trace = tf_trace::Trace::open(&dir)?;
/// assert_eq!(entries_named(trace.blocks(), "pigz+0x5a30"), [0x405a30]);
/// assert_eq!(entries_named(trace.blocks(), "0x7f0000001000"), [0x7f0000001000]);
/// assert!(entries_named(trace.blocks(), "gzip+0x5a30").is_empty()); // no such module
/// assert!(entries_named(trace.blocks(), "pigz+0x5a31").is_empty()); // no code ran there
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
pub fn entries_named(table: &BlockTable, name: &str) -> Vec<u64> {
    let ran = |at: &u64| table.block_at(*at).is_some();
    if let Some(at) = crate::symbols::parse_address(name) {
        return Some(at).filter(ran).into_iter().collect();
    }
    // A module and an offset: no PLT stub or Go function is so named.
    if let Some((module, off)) = crate::symbols::split_in_module(name) {
        return (table.modules().iter())
            .filter(|m| m.file_name() == module)
            .map(|m| m.base.wrapping_add(off))
            .filter(ran)
            .collect();
    }
    let mut found: Vec<u64> = (table.modules().iter())
        .flat_map(|m| {
            ModuleNames::read(&m.path, m.base)
                .entries(name)
                .collect::<Vec<_>>()
        })
        .filter(ran)
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// The warning for libraries mapped one after the other at the same
/// addresses (a program that unloads one and loads another): code and data
/// there are named, and given source lines, from the file of the one mapped
/// first, and code without symbols at one address in both is one function.
/// `None` when no two modules' images overlap, or only a file's with
/// itself (loaded again where it was).
pub fn remapped_warning(table: &BlockTable) -> Option<String> {
    let modules = table.modules();
    let overlaps = |a: &tf_trace::Module, b: &tf_trace::Module| {
        a.base < b.base.wrapping_add(b.size) && b.base < a.base.wrapping_add(a.size)
    };
    let pairs: Vec<(String, String)> = (modules.iter().enumerate())
        .flat_map(|(k, later)| modules[..k].iter().map(move |earlier| (earlier, later)))
        .filter(|(earlier, later)| earlier.path != later.path && overlaps(earlier, later))
        .map(|(earlier, later)| (earlier.file_name(), later.file_name()))
        .collect();
    let (first, second) = pairs.first()?;
    let more = match pairs.len() {
        1 => String::new(),
        n => format!(" (and {} more such pair(s))", n - 1),
    };
    Some(format!(
        "{second} was mapped where {first} had been{more}: the program unloaded a library and \
         loaded another at its addresses, and tf names code and data there, and gives them \
         source lines, from {first}'s file, so some of {second}'s may show {first}'s; the \
         totals and the figures of functions with symbols are right, but code without symbols \
         at one address in both counts as one function"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempTrace;

    /// The warning for modules defined at (base, size, path), in order.
    fn warning(modules: &[(u64, u64, &str)]) -> Option<String> {
        let mut t = TempTrace::new();
        for &(base, size, path) in modules {
            t.writer().module(base, size, path, b"").unwrap();
        }
        remapped_warning(t.finish().blocks())
    }

    #[test]
    fn libraries_mapped_at_the_same_addresses_are_named_in_a_warning() {
        let (a, b, main) = ("/tmp/liba.so", "/tmp/libb.so", "/usr/bin/main");
        // liba loaded again where it was: its own names and lines
        assert_eq!(
            warning(&[
                (0x4847000, 0x4010, a),
                (0x400000, 0x1000, main),
                (0x4847000, 0x4010, a)
            ]),
            None
        );
        // libb where liba was, overlapping it by a page
        let w = warning(&[(0x4847000, 0x4010, a), (0x484a000, 0x4018, b)]).unwrap();
        assert!(
            w.starts_with("libb.so was mapped where liba.so had been: the program"),
            "{w}"
        );
        // side by side: no warning
        assert_eq!(
            warning(&[(0x4847000, 0x4000, a), (0x484b000, 0x4018, b)]),
            None
        );
    }
}
