//! Lowering of one decoded x86 instruction to RISC operations (see
//! [`crate::translate`] for the rules).

use crate::opcodes::{classify, is_move, Class};
use crate::regs::{r_of, FLAGS, RSP, TEMP};
use crate::translate::{InsnCode, MemKind, MemOp, RiscOp, TraceOperand};
use iced_x86::{OpAccess, OpKind, Register};

/// The mnemonic in lower case, without the `v` of VEX/EVEX encodings.
pub(crate) fn mnemonic_name(instr: &iced_x86::Instruction) -> String {
    let name = format!("{:?}", instr.mnemonic()).to_ascii_lowercase();
    let vector = (0..instr.op_count()).any(|k| {
        instr.op_kind(k) == OpKind::Register && {
            let r = instr.op_register(k);
            r.is_xmm() || r.is_ymm() || r.is_zmm()
        }
    });
    match name.strip_prefix('v') {
        Some(rest) if vector || rest.starts_with("mov") => rest.to_string(),
        _ => name,
    }
}

/// A decoded instruction, its facts and its mnemonic.
pub(crate) struct X86<'a> {
    pub(crate) name: String,
    pub(crate) instr: &'a iced_x86::Instruction,
    pub(crate) info: &'a iced_x86::InstructionInfo,
}

fn reads(a: OpAccess) -> bool {
    matches!(
        a,
        OpAccess::Read | OpAccess::CondRead | OpAccess::ReadWrite | OpAccess::ReadCondWrite
    )
}

fn writes(a: OpAccess) -> bool {
    matches!(
        a,
        OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
    )
}

fn add(v: &mut Vec<u8>, r: u8) {
    if !v.contains(&r) && v.len() < 4 {
        v.push(r);
    }
}

/// Splits an operand of `size` bytes into accesses of 16, 8, 4, 2 or 1 bytes.
pub fn pieces(size: u16) -> impl Iterator<Item = (u16, u8)> {
    let mut offset = 0u16;
    std::iter::from_fn(move || {
        let left = size.checked_sub(offset).filter(|&l| l > 0)?;
        let w = [16u16, 8, 4, 2, 1].into_iter().find(|&w| w <= left)?;
        let at = offset;
        offset += w;
        Some((at, w as u8))
    })
}

pub(crate) fn push_mem(
    ops: &mut Vec<RiscOp>,
    j: u16,
    o: TraceOperand,
    kind: MemKind,
    dst: Option<u8>,
    srcs: Vec<u8>,
) {
    for (offset, width) in pieces(o.size) {
        ops.push(RiscOp {
            opcode: match kind {
                MemKind::Load => "LD",
                MemKind::Store | MemKind::AtomicWrite => "ST",
                MemKind::Atomic(op) => op,
            },
            dst,
            srcs: srcs.clone(),
            mem: Some(MemOp {
                operand: j,
                offset,
                width,
                kind,
            }),
        });
    }
}

impl X86<'_> {
    /// Address registers of the `k`-th memory operand of the decoder that
    /// reads (or writes), or of all of them when the trace and the decoder
    /// disagree on how many there are.
    fn address_regs(&self, write: bool, k: usize, n_trace: usize) -> Vec<u8> {
        let mems: Vec<_> = self
            .info
            .used_memory()
            .iter()
            .filter(|m| {
                if write {
                    writes(m.access())
                } else {
                    reads(m.access())
                }
            })
            .collect();
        let chosen: Vec<_> = if mems.len() == n_trace {
            mems.get(k).into_iter().copied().collect()
        } else {
            mems
        };
        let mut v = Vec::new();
        for m in chosen {
            for r in [m.base(), m.index()] {
                if let Some(x) = r_of(r) {
                    add(&mut v, x);
                }
            }
        }
        v
    }

    /// Registers the instruction reads as data (memory address registers
    /// excluded unless they are also explicit register operands).
    fn data_reads(&self) -> Vec<u8> {
        let mut addr = Vec::new();
        for m in self.info.used_memory() {
            addr.extend([m.base(), m.index()].into_iter().filter_map(r_of));
        }
        let explicit: Vec<u8> = (0..self.instr.op_count())
            .filter(|&k| self.instr.op_kind(k) == OpKind::Register)
            .filter_map(|k| r_of(self.instr.op_register(k)))
            .collect();
        let stack_op = matches!(self.name.as_str(), "push" | "pop" | "call" | "ret");
        let mut v = Vec::new();
        for u in self.info.used_registers() {
            let Some(r) = r_of(u.register()) else {
                continue;
            };
            if !reads(u.access()) || (stack_op && r == RSP) {
                continue;
            }
            if addr.contains(&r) && !explicit.contains(&r) {
                continue;
            }
            add(&mut v, r);
        }
        v
    }

    /// The register the operation writes: the first operand when it is a
    /// register, else the first register written (not the stack pointer of
    /// an implicit stack operation).
    fn dest(&self) -> Option<u8> {
        if self.instr.op_count() > 0 && self.instr.op0_kind() == OpKind::Register {
            let r = self.instr.op0_register();
            let written = self
                .info
                .used_registers()
                .iter()
                .any(|u| u.register() == r && writes(u.access()));
            if written {
                return r_of(r);
            }
        }
        self.info
            .used_registers()
            .iter()
            .filter(|u| writes(u.access()) && u.register() != Register::RSP)
            .find_map(|u| r_of(u.register()))
            .filter(|_| !self.instr.is_string_instruction() || self.name.starts_with("lods"))
    }

    /// The operations of this instruction, whose trace operands are `mine`;
    /// `flags_src` is the register that holds the flags, updated.
    pub(crate) fn lower(&self, mine: &[(u16, TraceOperand)], flags_src: &mut u8) -> InsnCode {
        let class = classify(self.instr, &self.name, !mine.is_empty());
        let class = match class {
            Class::Ops(_) if is_move(&self.name) => Class::Move,
            c => c,
        };
        let reads_flags = self.instr.rflags_read() != 0;
        let writes_flags = self.instr.rflags_modified() != 0;
        let n_reads = mine.iter().filter(|(_, o)| !o.write).count();
        let n_writes = mine.len() - n_reads;
        let dest = self.dest();
        let mut ops = Vec::new();
        let mut data = self.data_reads();
        if reads_flags {
            data.retain(|&r| r != FLAGS);
            add(&mut data, *flags_src);
        }
        // Loads.
        let direct = matches!(class, Class::Move) && n_writes == 0 && dest.is_some();
        let mut loaded = Vec::new();
        let (mut kr, mut kw) = (0usize, 0usize);
        for &(j, o) in mine.iter().filter(|(_, o)| !o.write) {
            let kind = match class {
                Class::Atomic(op) => MemKind::Atomic(op),
                _ => MemKind::Load,
            };
            let dst = if direct {
                dest
            } else {
                Some(TEMP + (kr as u8).min(1))
            };
            let mut srcs = self.address_regs(false, kr, n_reads);
            if matches!(kind, MemKind::Atomic(_)) {
                for &r in &data {
                    add(&mut srcs, r);
                }
            }
            push_mem(&mut ops, j, o, kind, dst, srcs);
            if let Some(d) = dst {
                loaded.push(d);
            }
            kr += 1;
        }
        // The operation.
        let mut value: Option<u8> = loaded.first().copied();
        let store_after_op = !matches!(
            class,
            Class::Control("CALL.REL.NOINC") | Class::Control("CALL.ABS.NOINC")
        );
        let op_dst = |ops_dst: Option<u8>| {
            if n_writes > 0 {
                Some(loaded.first().copied().unwrap_or(TEMP))
            } else {
                ops_dst
            }
        };
        let mut main: Vec<RiscOp> = Vec::new();
        match class {
            Class::Move => {
                if mine.is_empty() {
                    main.push(RiscOp {
                        opcode: "MOV",
                        dst: dest,
                        srcs: data.clone(),
                        mem: None,
                    });
                }
            }
            Class::Atomic(_) => {}
            Class::Control(op) => {
                let mut srcs = Vec::new();
                for &r in data.iter().chain(&loaded) {
                    if r != RSP {
                        add(&mut srcs, r);
                    }
                }
                main.push(RiscOp {
                    opcode: op,
                    dst: None,
                    srcs,
                    mem: None,
                });
            }
            Class::Ops(list) => {
                let mut dst = op_dst(dest);
                if dst.is_none() && writes_flags {
                    dst = Some(FLAGS);
                }
                let mut srcs = data.clone();
                for &r in &loaded {
                    add(&mut srcs, r);
                }
                for (k, &opcode) in list.iter().enumerate() {
                    let s = if k == 0 {
                        srcs.clone()
                    } else {
                        let mut s = vec![];
                        if let Some(d) = dst {
                            s.push(d);
                        }
                        s
                    };
                    main.push(RiscOp {
                        opcode,
                        dst,
                        srcs: s,
                        mem: None,
                    });
                }
                value = dst.or(value);
            }
        }
        if writes_flags {
            *flags_src = main.last().and_then(|o| o.dst).unwrap_or(FLAGS);
        }
        if store_after_op {
            ops.append(&mut main);
        }
        // Stores.
        for &(j, o) in mine.iter().filter(|(_, o)| o.write) {
            let kind = match class {
                Class::Atomic(_) => MemKind::AtomicWrite,
                _ => MemKind::Store,
            };
            let mut srcs = self.address_regs(true, kw, n_writes);
            match value {
                Some(v) if !matches!(class, Class::Control(_)) => add(&mut srcs, v),
                _ if matches!(class, Class::Move) => {
                    for &r in &data {
                        add(&mut srcs, r);
                    }
                }
                _ => {}
            }
            push_mem(&mut ops, j, o, kind, None, srcs);
            kw += 1;
        }
        if !store_after_op {
            ops.append(&mut main);
        }
        if ops.is_empty() {
            ops.push(RiscOp {
                opcode: "NOP",
                dst: None,
                srcs: vec![],
                mem: None,
            });
        }
        InsnCode { ops }
    }
}
