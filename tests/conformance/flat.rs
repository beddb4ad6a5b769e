//! A thread's trace as the tracer-independent sequence the `.expect` files
//! talk about: executed instructions (with their present memory operands)
//! and events, in order. Block boundaries, which differ between tracers,
//! disappear here.

use tf_trace::{Access, BlockId, Event, ExitHow, LockKind, SkipReason, Trace};

/// One executed instruction.
pub struct Insn {
    pub addr: u64,
    pub block: BlockId,
    pub index: usize,
    pub ops: Vec<Access>,
}

/// A non-block event.
#[derive(Debug)]
pub enum Ev {
    Lock {
        acquire: bool,
        kind: LockKind,
        lock: u64,
    },
    Skip(SkipReason, u64),
    Syscall(u64),
    Signal(u64),
    SignalReturn(u64),
    Other,
}

impl Ev {
    /// The event type's name, as written in `.expect` files.
    pub fn type_name(&self) -> &'static str {
        match self {
            Ev::Lock { acquire: true, .. } => "lock_acquire",
            Ev::Lock { acquire: false, .. } => "lock_release",
            Ev::Skip(..) => "skip",
            Ev::Syscall(_) => "syscall",
            Ev::Signal(_) => "signal",
            Ev::SignalReturn(_) => "signal_return",
            Ev::Other => "other",
        }
    }
}

/// One record of the flattened thread.
pub enum Item {
    Insn(Insn),
    Event(Ev),
}

/// A thread: its start and exit, and its items.
#[derive(Default)]
pub struct Thread {
    pub parent: Option<u64>,
    pub stack: (u64, u64),
    pub start_routine: u64,
    pub exit: Option<ExitHow>,
    pub items: Vec<Item>,
    /// A decoding error, if the stream is damaged.
    pub error: Option<String>,
}

impl Thread {
    /// Executed instructions, in order.
    pub fn insns(&self) -> impl Iterator<Item = &Insn> {
        self.items.iter().filter_map(|i| match i {
            Item::Insn(x) => Some(x),
            Item::Event(_) => None,
        })
    }

    /// Events, in order.
    pub fn events(&self) -> impl Iterator<Item = &Ev> {
        self.items.iter().filter_map(|i| match i {
            Item::Event(e) => Some(e),
            Item::Insn(_) => None,
        })
    }
}

/// Reads thread `tid` of `trace` into its flat form.
pub fn read(trace: &Trace, tid: u64) -> Thread {
    let mut t = Thread::default();
    let mut r = match trace.read_thread(tid) {
        Ok(r) => r,
        Err(e) => {
            t.error = Some(e.to_string());
            return t;
        }
    };
    let table = trace.blocks();
    while let Some(ev) = r.next_event() {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                t.error = Some(e.to_string());
                break;
            }
        };
        let item = match ev {
            Event::Block(x) => {
                let b = table.block(x.block).expect("decoded blocks exist");
                let ops = b.operands();
                for i in 0..x.insns as usize {
                    let mine = x
                        .accesses()
                        .iter()
                        .filter(|a| ops[a.operand as usize].insn as usize == i)
                        .copied()
                        .collect();
                    t.items.push(Item::Insn(Insn {
                        addr: b.insn_address(i),
                        block: x.block,
                        index: i,
                        ops: mine,
                    }));
                }
                continue;
            }
            Event::ThreadStart {
                parent,
                stack_lo,
                stack_hi,
                start_routine,
            } => {
                t.parent = Some(parent);
                t.stack = (stack_lo, stack_hi);
                t.start_routine = start_routine;
                continue;
            }
            Event::ThreadExit { how } => {
                t.exit = Some(how);
                continue;
            }
            Event::LockAcquire { kind, lock } => Ev::Lock {
                acquire: true,
                kind,
                lock,
            },
            Event::LockRelease { kind, lock } => Ev::Lock {
                acquire: false,
                kind,
                lock,
            },
            Event::Skip { reason, count } => Ev::Skip(reason, count),
            Event::Syscall { number, .. } => Ev::Syscall(number),
            Event::Signal { signo } => Ev::Signal(signo),
            Event::SignalReturn { signo } => Ev::SignalReturn(signo),
            _ => Ev::Other,
        };
        t.items.push(Item::Event(item));
    }
    t
}
