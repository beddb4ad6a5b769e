//! The `.expect` files of `workloads/conformance/`: what a tracer must record
//! for each program, written down by hand.
//!
//! One statement per line (`#` starts a comment). Statements before the first
//! `thread N` apply to thread 1.
//!
//! | statement | meaning |
//! |---|---|
//! | `program NAME` | trace `NAME.c` (default: the `.expect` file's own name) |
//! | `build CC FLAGS…` | compiler and flags (default `gcc -O1 -g -no-pie -fno-omit-frame-pointer -pthread`, `g++` for `.cpp`) |
//! | `lib NAME` | build `NAME.c` as `libNAME.so` and link the program with it (`-z now`: no lazy binding) |
//! | `requires FLAG` | skip the program (saying so) on a CPU without FLAG (`/proc/cpuinfo`) |
//! | `options OPT…` | `tf trace` options (`--only f`) |
//! | `status N` | `tf trace` exits with N |
//! | `exit_signal N` | the manifest names signal N as the killer |
//! | `threads N` | the trace has N thread streams |
//! | `thread T` | the statements below are about thread T |
//! | `parent P`, `start FN`, `ends ended\|process` | thread_start's parent and start routine, thread_exit's `how` |
//! | `count FN N` | the thread executed N instructions inside FN |
//! | `path FN +a +b (+c +d)xK …` | the exact sequence of FN's executed instructions, as offsets from FN |
//! | `access FN+OFF [OP, OP] […]…` | per execution of that instruction, its present memory operands |
//! | `entries F G … = F G G …` | the order in which the listed functions' first instructions ran |
//! | `via_plt FN` | every entry into FN comes from an indirect jump in the program's PLT |
//! | `events EV, EV, …` | the thread's events of the types listed, in order |
//! | `skips REASON N N …` / `skips REASON >0` | the counts of its skip events with REASON / that some exist |
//! | `after TRIGGER: NEXT` | after each TRIGGER (an instruction `FN+OFF` or an event) the next instruction (or record) is NEXT |
//!
//! An operand is `r8 buf+16` (read, 8 bytes, at symbol `buf` + 16), with the
//! address `stack` (inside the thread's stack range), `SYM+OFF@label` /
//! `stack@label` (binds a label) or `@label` (the same address as the label);
//! labels are shared by all threads of a program. An event is
//! `lock_acquire KIND ADDR`, `lock_release KIND ADDR`, `signal N`,
//! `signal_return N`, `syscall N` or `skip REASON N`, with an address as for
//! operands or `*` (any).

use tf_trace::{ExitHow, LockKind, SkipReason};

/// Where an address must be.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    /// Symbol plus offset.
    Sym(String, u64),
    /// Inside the thread's stack range.
    Stack,
    /// Anywhere (only a label constrains it).
    Any,
}

/// An address pattern: a place and an optional label.
#[derive(Clone, Debug, PartialEq)]
pub struct AddrPat {
    pub place: Place,
    pub label: Option<String>,
}

/// One expected memory operand.
#[derive(Clone, Debug, PartialEq)]
pub struct OpPat {
    pub write: bool,
    pub size: u16,
    pub addr: AddrPat,
}

/// One expected event.
#[derive(Clone, Debug, PartialEq)]
pub enum EvPat {
    Lock {
        acquire: bool,
        kind: LockKind,
        addr: AddrPat,
    },
    Signal(u64),
    SignalReturn(u64),
    Syscall(u64),
    Skip(SkipReason, u64),
}

impl EvPat {
    /// The event type's name, as written in `.expect` files.
    pub fn type_name(&self) -> &'static str {
        match self {
            EvPat::Lock { acquire: true, .. } => "lock_acquire",
            EvPat::Lock { acquire: false, .. } => "lock_release",
            EvPat::Signal(_) => "signal",
            EvPat::SignalReturn(_) => "signal_return",
            EvPat::Syscall(_) => "syscall",
            EvPat::Skip(..) => "skip",
        }
    }
}

/// What follows a trigger.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    Insn(String, u64),
    Event(EvPat),
}

/// One check about one thread (or the whole trace).
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    Status(i32),
    ExitSignal(i32),
    Threads(usize),
    Parent(u64),
    Start(String),
    Ends(ExitHow),
    Count(String, u64),
    Path(String, Vec<u64>),
    Access(String, u64, Vec<Vec<OpPat>>),
    Entries(Vec<String>, Vec<String>),
    ViaPlt(String),
    Events(Vec<EvPat>),
    Skips(SkipReason, Option<Vec<u64>>),
    After(Next, Next),
}

/// A parsed `.expect` file.
#[derive(Debug, Default)]
pub struct Spec {
    pub program: String,
    pub build: Option<Vec<String>>,
    pub libs: Vec<String>,
    pub options: Vec<String>,
    /// CPU flags the program needs.
    pub requires: Vec<String>,
    /// (line number, thread, check)
    pub checks: Vec<(usize, u64, Check)>,
}

/// Parses a `.expect` file; errors name the line.
pub fn parse(name: &str, text: &str) -> Result<Spec, String> {
    let mut spec = Spec {
        program: name.to_string(),
        ..Spec::default()
    };
    let mut thread = 1;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        let err = |m: String| format!("{name}.expect:{}: {m}", i + 1);
        let check = match word {
            "program" => {
                spec.program = rest.to_string();
                continue;
            }
            "build" => {
                spec.build = Some(words);
                continue;
            }
            "lib" => {
                spec.libs.push(rest.to_string());
                continue;
            }
            "requires" => {
                spec.requires.extend(words);
                continue;
            }
            "options" => {
                spec.options = words;
                continue;
            }
            "thread" => {
                thread = number(rest).map_err(err)?;
                continue;
            }
            "status" => Check::Status(number(rest).map_err(err)? as i32),
            "exit_signal" => Check::ExitSignal(number(rest).map_err(err)? as i32),
            "threads" => Check::Threads(number(rest).map_err(err)? as usize),
            "parent" => Check::Parent(number(rest).map_err(err)?),
            "start" => Check::Start(rest.to_string()),
            "ends" => Check::Ends(match rest {
                "ended" => ExitHow::Ended,
                "process" => ExitHow::ProcessEnded,
                _ => return Err(err(format!("ends {rest}: want ended or process"))),
            }),
            "count" => match words.as_slice() {
                [f, n] => Check::Count(f.clone(), number(n).map_err(err)?),
                _ => return Err(err("count FN N".into())),
            },
            "path" => {
                let (f, seq) = rest
                    .split_once(' ')
                    .ok_or_else(|| err("path FN …".into()))?;
                Check::Path(f.to_string(), offsets(seq).map_err(err)?)
            }
            "access" => {
                let (at, list) = rest.split_once(' ').unwrap_or((rest, ""));
                let (f, off) = fn_offset(at).map_err(err)?;
                Check::Access(f, off, executions(list).map_err(err)?)
            }
            "entries" => {
                let (set, seq) = rest
                    .split_once('=')
                    .ok_or_else(|| err("entries … = …".into()))?;
                let names = |s: &str| s.split_whitespace().map(str::to_string).collect();
                Check::Entries(names(set), names(seq))
            }
            "via_plt" => Check::ViaPlt(rest.to_string()),
            "events" => Check::Events(
                rest.split(',')
                    .map(|e| event(e.trim()))
                    .collect::<Result<_, _>>()
                    .map_err(err)?,
            ),
            "skips" => match words.as_slice() {
                [r, v] if v == ">0" => Check::Skips(reason(r).map_err(err)?, None),
                [r, counts @ ..] if !counts.is_empty() => Check::Skips(
                    reason(r).map_err(err)?,
                    Some(
                        counts
                            .iter()
                            .map(|c| number(c))
                            .collect::<Result<_, _>>()
                            .map_err(err)?,
                    ),
                ),
                _ => return Err(err("skips REASON N… or skips REASON >0".into())),
            },
            "after" => {
                let (t, n) = rest
                    .split_once(':')
                    .ok_or_else(|| err("after X: Y".into()))?;
                Check::After(next(t.trim()).map_err(err)?, next(n.trim()).map_err(err)?)
            }
            _ => return Err(err(format!("unknown statement {word}"))),
        };
        spec.checks.push((i + 1, thread, check));
    }
    Ok(spec)
}

fn number(s: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))
}

/// `FN+OFF` (or `FN`, offset 0).
fn fn_offset(s: &str) -> Result<(String, u64), String> {
    match s.rsplit_once('+') {
        Some((f, off)) => Ok((f.to_string(), number(off)?)),
        None => Ok((s.to_string(), 0)),
    }
}

/// `+0 +2 (+7 +10)x4 +18`
fn offsets(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let mut group: Option<Vec<u64>> = None;
    for tok in s.split_whitespace() {
        let mut tok = tok;
        if let Some(t) = tok.strip_prefix('(') {
            group = Some(Vec::new());
            tok = t;
        }
        let (off, close) = match tok.split_once(')') {
            Some((off, times)) => (off, Some(times)),
            None => (tok, None),
        };
        let v = number(
            off.strip_prefix('+')
                .ok_or(format!("offset {off} needs a +"))?,
        )?;
        match group.as_mut() {
            Some(g) => g.push(v),
            None => out.push(v),
        }
        if let Some(times) = close {
            let k = number(times.strip_prefix('x').ok_or(format!("{tok}: want )xK"))?)?;
            let g = group.take().ok_or(format!("{tok}: no ( before )"))?;
            for _ in 0..k {
                out.extend(&g);
            }
        }
    }
    if group.is_some() {
        return Err("unclosed (".into());
    }
    Ok(out)
}

/// `[r8 buf+0, w8 stack] []x2 …`
fn executions(s: &str) -> Result<Vec<Vec<OpPat>>, String> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let inner = rest
            .strip_prefix('[')
            .ok_or(format!("{rest}: want [operands]"))?;
        let (ops, after) = inner.split_once(']').ok_or("unclosed [")?;
        let ops: Vec<OpPat> = ops
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(operand)
            .collect::<Result<_, _>>()?;
        let (times, after) = match after.strip_prefix('x') {
            Some(a) => {
                let end = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                (number(&a[..end])?, &a[end..])
            }
            None => (1, after),
        };
        for _ in 0..times {
            out.push(ops.clone());
        }
        rest = after.trim();
    }
    Ok(out)
}

fn operand(s: &str) -> Result<OpPat, String> {
    let (rw, addr) = s.split_once(' ').ok_or(format!("{s}: want r8 ADDR"))?;
    let write = match &rw[..1] {
        "r" => false,
        "w" => true,
        _ => return Err(format!("{rw}: want r or w")),
    };
    let size = number(&rw[1..])? as u16;
    Ok(OpPat {
        write,
        size,
        addr: address(addr.trim())?,
    })
}

fn address(s: &str) -> Result<AddrPat, String> {
    let (place, label) = match s.split_once('@') {
        Some((p, l)) => (p, Some(l.to_string())),
        None => (s, None),
    };
    let place = match place {
        "" | "*" => Place::Any,
        "stack" => Place::Stack,
        p => {
            let (sym, off) = fn_offset(p)?;
            Place::Sym(sym, off)
        }
    };
    Ok(AddrPat { place, label })
}

fn lock_kind(s: &str) -> Result<LockKind, String> {
    Ok(match s {
        "mutex" => LockKind::Mutex,
        "spin" => LockKind::Spin,
        "rw_read" => LockKind::RwRead,
        "rw_write" => LockKind::RwWrite,
        "semaphore" => LockKind::Semaphore,
        "omp_critical" => LockKind::OmpCritical,
        "omp_critical_named" => LockKind::OmpCriticalNamed,
        "omp_atomic" => LockKind::OmpAtomic,
        _ => return Err(format!("unknown lock kind {s}")),
    })
}

fn reason(s: &str) -> Result<SkipReason, String> {
    Ok(match s {
        "lock_runtime" => SkipReason::LockRuntime,
        "sync_wait" => SkipReason::SyncWait,
        "excluded" => SkipReason::Excluded,
        "outside_region" => SkipReason::OutsideRegion,
        "other" => SkipReason::Other,
        _ => return Err(format!("unknown skip reason {s}")),
    })
}

fn event(s: &str) -> Result<EvPat, String> {
    let w: Vec<&str> = s.split_whitespace().collect();
    Ok(match w.as_slice() {
        [t @ ("lock_acquire" | "lock_release"), kind, addr] => EvPat::Lock {
            acquire: *t == "lock_acquire",
            kind: lock_kind(kind)?,
            addr: address(addr)?,
        },
        ["signal", n] => EvPat::Signal(number(n)?),
        ["signal_return", n] => EvPat::SignalReturn(number(n)?),
        ["syscall", n] => EvPat::Syscall(number(n)?),
        ["skip", r, n] => EvPat::Skip(reason(r)?, number(n)?),
        _ => return Err(format!("cannot read event {s:?}")),
    })
}

fn next(s: &str) -> Result<Next, String> {
    match event(s) {
        Ok(e) => Ok(Next::Event(e)),
        Err(_) if !s.contains(' ') => {
            let (f, off) = fn_offset(s)?;
            Ok(Next::Insn(f, off))
        }
        Err(e) => Err(e),
    }
}

#[test]
fn offsets_expand_groups() {
    assert_eq!(offsets("+0 (+1 +2)x2 +3").unwrap(), [0, 1, 2, 1, 2, 3]);
    assert_eq!(executions("[r8 a+1, w4 stack@x] []x2").unwrap().len(), 3);
}
