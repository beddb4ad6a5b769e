//! Compares a flattened trace with a program's `.expect` checks.

use super::expect::{AddrPat, Check, EvPat, Next, OpPat, Place};
use super::flat::{Ev, Insn, Item, Thread};
use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::HashMap;
use std::path::Path;
use tf_trace::{Access, Trace};

/// Symbols of the traced program (linked without PIE, so the addresses are
/// the run-time ones) and sizes of its libraries' symbols, whose entries
/// come from the trace's function table.
pub struct Symbols {
    exe: HashMap<String, (u64, u64)>,
    lib_sizes: HashMap<String, u64>,
    plt: Vec<(u64, u64)>,
    trace_entries: HashMap<String, u64>,
}

impl Symbols {
    /// Reads `exe` and `libs`, and the function table of `trace`.
    pub fn load(exe: &Path, libs: &[std::path::PathBuf], trace: &Trace) -> Symbols {
        let mut s = Symbols {
            exe: HashMap::new(),
            lib_sizes: HashMap::new(),
            plt: Vec::new(),
            trace_entries: HashMap::new(),
        };
        let data = std::fs::read(exe).expect("read the program");
        let file = object::File::parse(&*data).expect("the program is an ELF file");
        for sym in file.symbols() {
            if let (Ok(name), true) = (sym.name(), sym.is_definition()) {
                s.exe.insert(name.to_string(), (sym.address(), sym.size()));
            }
        }
        for sec in file.sections() {
            if matches!(sec.name(), Ok(".plt" | ".plt.sec")) {
                s.plt.push((sec.address(), sec.address() + sec.size()));
            }
        }
        for lib in libs {
            let data = std::fs::read(lib).expect("read the library");
            let file = object::File::parse(&*data).expect("the library is an ELF file");
            for sym in file.symbols() {
                if let (Ok(name), true) = (sym.name(), sym.is_definition()) {
                    s.lib_sizes.insert(name.to_string(), sym.size());
                }
            }
        }
        for f in trace.blocks().functions() {
            s.trace_entries
                .entry(f.name_lossy().into_owned())
                .or_insert(f.entry);
        }
        s
    }

    /// [start, end) of function or object `name`.
    pub fn range(&self, name: &str) -> Result<(u64, u64), String> {
        if let Some(&(a, size)) = self.exe.get(name) {
            return Ok((a, a + size.max(1)));
        }
        match (self.lib_sizes.get(name), self.trace_entries.get(name)) {
            (Some(&size), Some(&entry)) => Ok((entry, entry + size.max(1))),
            _ => Err(format!("no symbol {name}")),
        }
    }

    fn in_plt(&self, addr: u64) -> bool {
        self.plt.iter().any(|&(lo, hi)| lo <= addr && addr < hi)
    }
}

/// Everything a check may look at.
pub struct Run<'a> {
    pub trace: &'a Trace,
    pub syms: &'a Symbols,
    pub threads: &'a HashMap<u64, Thread>,
    pub status: i32,
    pub labels: HashMap<String, u64>,
}

impl Run<'_> {
    /// Runs one check about thread `tid`.
    pub fn check(&mut self, tid: u64, check: &Check) -> Result<(), String> {
        let manifest = self.trace.manifest();
        match check {
            Check::Status(n) => same("exit status", *n, self.status),
            Check::ExitSignal(n) => same(
                "manifest exit_signal",
                Some(i64::from(*n)),
                manifest.and_then(|m| m.exit_signal),
            ),
            Check::Threads(n) => same("thread streams", *n, self.trace.threads().len()),
            _ => {
                let t = self
                    .threads
                    .get(&tid)
                    .ok_or(format!("no thread {tid} in the trace"))?;
                if let Some(e) = &t.error {
                    return Err(format!("thread {tid} is damaged: {e}"));
                }
                self.thread_check(t, check)
            }
        }
    }

    fn thread_check(&mut self, t: &Thread, check: &Check) -> Result<(), String> {
        match check {
            Check::Parent(p) => same("parent", Some(*p), t.parent),
            Check::Start(f) => same("start routine", self.syms.range(f)?.0, t.start_routine),
            Check::Ends(how) => same("thread_exit", Some(*how), t.exit),
            Check::Count(f, n) => {
                let (lo, hi) = self.syms.range(f)?;
                self.named_right(t, f, lo, hi)?;
                same(
                    &format!("instructions in {f}"),
                    *n,
                    t.insns().filter(|i| lo <= i.addr && i.addr < hi).count() as u64,
                )
            }
            Check::Path(f, want) => {
                let (lo, hi) = self.syms.range(f)?;
                self.named_right(t, f, lo, hi)?;
                let got: Vec<u64> = t
                    .insns()
                    .filter(|i| lo <= i.addr && i.addr < hi)
                    .map(|i| i.addr - lo)
                    .collect();
                same(&format!("path of {f}"), want, &got)
            }
            Check::Access(f, off, want) => {
                let at = self.syms.range(f)?.0 + off;
                let got: Vec<&Insn> = t.insns().filter(|i| i.addr == at).collect();
                if got.len() != want.len() {
                    return Err(format!(
                        "{f}+{off} ran {} times, expected {}",
                        got.len(),
                        want.len()
                    ));
                }
                for (k, (insn, pats)) in got.iter().zip(want).enumerate() {
                    self.operands(t, &insn.ops, pats)
                        .map_err(|e| format!("{f}+{off}, execution {}: {e}", k + 1))?;
                }
                Ok(())
            }
            Check::Entries(set, want) => {
                let entries: Vec<(u64, &String)> = set
                    .iter()
                    .map(|f| self.syms.range(f).map(|r| (r.0, f)))
                    .collect::<Result<_, _>>()?;
                let got: Vec<&String> = t
                    .insns()
                    .filter_map(|i| entries.iter().find(|e| e.0 == i.addr).map(|e| e.1))
                    .collect();
                same("entries", want.iter().collect::<Vec<_>>(), got)
            }
            Check::ViaPlt(f) => self.via_plt(t, f),
            Check::Events(want) => {
                // The listed events must appear one after another among the
                // thread's events of those types (the C library may take
                // locks of its own before or after them).
                let types: Vec<&str> = want.iter().map(EvPat::type_name).collect();
                let got: Vec<&Ev> = t
                    .events()
                    .filter(|e| types.contains(&e.type_name()))
                    .collect();
                for start in 0..=got.len().saturating_sub(want.len()) {
                    let saved = self.labels.clone();
                    let window = got.iter().skip(start).zip(want);
                    if got.len() - start >= want.len()
                        && window.into_iter().all(|(g, w)| self.event(t, g, w).is_ok())
                    {
                        return Ok(());
                    }
                    self.labels = saved;
                }
                Err(format!(
                    "events {types:?}: got {got:?}, expected {want:?} among them"
                ))
            }
            Check::Skips(reason, want) => {
                let got: Vec<u64> = t
                    .events()
                    .filter_map(|e| match e {
                        Ev::Skip(r, n) if r == reason => Some(*n),
                        _ => None,
                    })
                    .collect();
                match want {
                    Some(w) => same(&format!("skip {reason:?} counts"), w, &got),
                    None if got.iter().sum::<u64>() > 0 => Ok(()),
                    None => Err(format!("no skip {reason:?} in the thread")),
                }
            }
            Check::After(trigger, next) => self.after(t, trigger, next),
            Check::Status(_) | Check::ExitSignal(_) | Check::Threads(_) => unreachable!(),
        }
    }

    /// Every block run inside [lo, hi) of executable function `f` is
    /// attributed to `f` in the block table.
    fn named_right(&self, t: &Thread, f: &str, lo: u64, hi: u64) -> Result<(), String> {
        let table = self.trace.blocks();
        for i in t.insns().filter(|i| lo <= i.addr && i.addr < hi) {
            let b = table.block(i.block).expect("decoded blocks exist");
            let name = table
                .function(b.function())
                .map(|f| f.name_lossy().into_owned())
                .unwrap_or_default();
            if name != f && b.address() >= lo {
                return Err(format!(
                    "block {} at {:#x} is in {f} but the block table names it {name:?}",
                    i.block,
                    b.address()
                ));
            }
        }
        Ok(())
    }

    fn via_plt(&self, t: &Thread, f: &str) -> Result<(), String> {
        let entry = self.syms.range(f)?.0;
        let insns: Vec<&Insn> = t.insns().collect();
        let mut entered = 0;
        for w in insns.windows(2) {
            if w[1].addr != entry {
                continue;
            }
            entered += 1;
            let b = self.trace.blocks().block(w[0].block).unwrap();
            let start = (b.insn_address(w[0].index) - b.address()) as usize;
            let code = &b.code()[start..];
            let jmp = code.starts_with(&[0xff, 0x25]) || code.starts_with(&[0xf2, 0xff, 0x25]);
            if !self.syms.in_plt(w[0].addr) || !jmp {
                return Err(format!(
                    "{f} entered from {:#x}, not from an indirect jump in the PLT",
                    w[0].addr
                ));
            }
        }
        if entered == 0 {
            return Err(format!("{f} was never entered"));
        }
        Ok(())
    }

    fn after(&mut self, t: &Thread, trigger: &Next, next: &Next) -> Result<(), String> {
        let mut seen = 0;
        for (k, item) in t.items.iter().enumerate() {
            if !self.matches(t, item, trigger)? {
                continue;
            }
            seen += 1;
            let rest = &t.items[k + 1..];
            let found = match next {
                Next::Insn(..) => rest.iter().find(|i| matches!(i, Item::Insn(_))),
                Next::Event(_) => rest.first(),
            };
            let ok = match found {
                Some(item) => self.matches(t, item, next)?,
                None => false,
            };
            if !ok {
                return Err(format!(
                    "after {trigger:?} (occurrence {seen}) comes no {next:?}"
                ));
            }
        }
        if seen == 0 {
            return Err(format!("{trigger:?} never happened"));
        }
        Ok(())
    }

    fn matches(&mut self, t: &Thread, item: &Item, pat: &Next) -> Result<bool, String> {
        Ok(match (item, pat) {
            (Item::Insn(i), Next::Insn(f, off)) => i.addr == self.syms.range(f)?.0 + off,
            (Item::Event(e), Next::Event(p)) => self.event(t, e, p).is_ok(),
            _ => false,
        })
    }

    fn event(&mut self, t: &Thread, got: &Ev, want: &EvPat) -> Result<(), String> {
        let ok = match (got, want) {
            (
                Ev::Lock {
                    acquire,
                    kind,
                    lock,
                },
                EvPat::Lock {
                    acquire: a,
                    kind: k,
                    addr,
                },
            ) => acquire == a && kind == k && self.address(t, *lock, addr).is_ok(),
            (Ev::Signal(n), EvPat::Signal(m)) => n == m,
            (Ev::SignalReturn(n), EvPat::SignalReturn(m)) => n == m,
            (Ev::Syscall(n), EvPat::Syscall(m)) => n == m,
            (Ev::Skip(r, n), EvPat::Skip(q, m)) => r == q && n == m,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{got:?} is not {want:?}"))
        }
    }

    fn operands(&mut self, t: &Thread, got: &[Access], want: &[OpPat]) -> Result<(), String> {
        let show = || {
            got.iter()
                .map(|a| {
                    format!(
                        "{}{} {:#x}",
                        if a.write { "w" } else { "r" },
                        a.size,
                        a.addr
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if got.len() != want.len() {
            return Err(format!("operands [{}], expected {want:?}", show()));
        }
        for (g, w) in got.iter().zip(want) {
            if g.write != w.write || g.size != w.size {
                return Err(format!("operands [{}], expected {want:?}", show()));
            }
            self.address(t, g.addr, &w.addr)
                .map_err(|e| format!("operands [{}]: {e}", show()))?;
        }
        Ok(())
    }

    /// Checks `addr` against a pattern, binding its label on first use.
    fn address(&mut self, t: &Thread, addr: u64, pat: &AddrPat) -> Result<(), String> {
        match &pat.place {
            Place::Sym(s, off) => {
                let want = self.syms.range(s)?.0 + off;
                if addr != want {
                    return Err(format!("address {addr:#x} is not {s}+{off} ({want:#x})"));
                }
            }
            Place::Stack => {
                if !(t.stack.0 <= addr && addr < t.stack.1) {
                    return Err(format!(
                        "address {addr:#x} is outside the thread's stack [{:#x}, {:#x})",
                        t.stack.0, t.stack.1
                    ));
                }
            }
            Place::Any => {}
        }
        if let Some(l) = &pat.label {
            match self.labels.get(l) {
                Some(&a) if a != addr => {
                    return Err(format!("address {addr:#x} is not @{l} ({a:#x})"))
                }
                Some(_) => {}
                None => {
                    self.labels.insert(l.clone(), addr);
                }
            }
        }
        Ok(())
    }
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, want: T, got: T) -> Result<(), String> {
    if want == got {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {want:?}"))
    }
}
