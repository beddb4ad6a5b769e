//! CISC → RISC: the x86 instructions of a block as SASS-like operations.
//!
//! Each x86 instruction becomes, in order: one load per memory operand it
//! reads, its operation(s), one store per memory operand it writes. A pure
//! move has no operation (`mov rax, [rbx]` is one load into `R0`); a `push`
//! is a store, a `pop` a load, a `call` a store of the return address and
//! the call, a `ret` a load and the return. Memory operands come from the
//! trace's block table (the addresses the tracer recorded), registers from
//! the decoder, so loads and stores match the trace one for one.
//!
//! ```
//! use tf_accelsim::translate::{translate, MemKind, TraceOperand};
//! // add rax, [rbx]   (48 03 03): a load into a temporary, then the add.
//! let ops = [TraceOperand { insn: 0, size: 8, write: false }];
//! let block = translate(&[0x48, 0x03, 0x03], 0x1000, &[3], &ops).unwrap();
//! let insn = &block.insns[0];
//! assert_eq!(insn.ops.len(), 2);
//! assert_eq!(insn.ops[0].mem.unwrap().kind, MemKind::Load);
//! assert_eq!(insn.ops[1].opcode, "IADD3");
//! assert_eq!(insn.ops[1].srcs, [0, 17]); // rax and the loaded value
//! ```

use crate::lower::{mnemonic_name, push_mem, X86};
use crate::regs::{FLAGS, TEMP};
use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory};

pub use crate::lower::pieces;

/// A memory operand of a block as the trace's block table describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOperand {
    /// Index of its instruction in the block.
    pub insn: u16,
    /// Bytes accessed.
    pub size: u16,
    /// A write (else a read).
    pub write: bool,
}

/// What a memory operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// A global atomic read-modify-write (its opcode); it carries the read
    /// operand, and the instruction's write operand is folded into it.
    Atomic(&'static str),
    /// The write of an atomic: no line of its own when the atomic is global.
    AtomicWrite,
}

/// The memory part of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemOp {
    /// Index of the trace operand in the block (0-based).
    pub operand: u16,
    /// Bytes from the operand's address (operands wider than 16 bytes are
    /// split into several operations).
    pub offset: u16,
    /// Bytes per lane: 1, 2, 4, 8 or 16.
    pub width: u8,
    /// Load, store or atomic.
    pub kind: MemKind,
}

/// One RISC operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RiscOp {
    /// The opcode; for a memory operation the width and space are chosen
    /// when it is written (see [`crate::line::mem_opcode`]), and this is
    /// `"LD"` or `"ST"` (or the atomic's opcode).
    pub opcode: &'static str,
    /// Destination register.
    pub dst: Option<u8>,
    /// Source registers (at most 4).
    pub srcs: Vec<u8>,
    /// The memory access, if any.
    pub mem: Option<MemOp>,
}

/// The operations of one x86 instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InsnCode {
    /// Its operations, in order (at least one).
    pub ops: Vec<RiscOp>,
}

/// The operations of a block's instructions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockCode {
    /// One entry per x86 instruction.
    pub insns: Vec<InsnCode>,
    /// Instructions the decoder could not decode (exported as `NOP`).
    pub undecoded: usize,
}

impl BlockCode {
    /// Number of RISC operations.
    pub fn n_ops(&self) -> usize {
        self.insns.iter().map(|i| i.ops.len()).sum()
    }
}

/// Why a block could not be translated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TranslateError {
    /// An operand names an instruction the block does not have.
    #[error("operand {0} belongs to instruction {1}, the block has {2}")]
    Operand(usize, u16, usize),
}

/// Translates the instructions of a block at `address` whose code is `code`,
/// instruction lengths `lens`, with the trace's memory operands `operands`
/// (in order; `insn` relative to this block).
pub fn translate(
    code: &[u8],
    address: u64,
    lens: &[u8],
    operands: &[TraceOperand],
) -> Result<BlockCode, TranslateError> {
    if let Some((j, o)) = operands
        .iter()
        .enumerate()
        .find(|(_, o)| usize::from(o.insn) >= lens.len())
    {
        return Err(TranslateError::Operand(j, o.insn, lens.len()));
    }
    let mut out = BlockCode::default();
    let mut factory = InstructionInfoFactory::new();
    let mut flags_src = FLAGS;
    let mut at = 0usize;
    for (i, &len) in lens.iter().enumerate() {
        let bytes = code.get(at..at + usize::from(len)).unwrap_or(&[]);
        let ip = address.wrapping_add(at as u64);
        at += usize::from(len);
        let first = operands.partition_point(|o| usize::from(o.insn) < i);
        let last = operands.partition_point(|o| usize::from(o.insn) <= i);
        let mine: Vec<(u16, TraceOperand)> =
            (first..last).map(|j| (j as u16, operands[j])).collect();
        let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
        let instr = decoder.decode();
        if instr.is_invalid() || instr.len() != usize::from(len) {
            out.undecoded += 1;
            out.insns.push(undecoded(&mine));
            continue;
        }
        let info = factory.info(&instr);
        let x = X86 {
            name: mnemonic_name(&instr),
            instr: &instr,
            info,
        };
        out.insns.push(x.lower(&mine, &mut flags_src));
    }
    Ok(out)
}

/// An instruction the decoder does not know: a `NOP`, and its memory
/// operands as plain loads and stores.
fn undecoded(mine: &[(u16, TraceOperand)]) -> InsnCode {
    let mut ops = Vec::new();
    for &(j, o) in mine {
        push_mem(&mut ops, j, o, mem_kind(o.write), Some(TEMP), vec![]);
    }
    ops.push(RiscOp {
        opcode: "NOP",
        dst: None,
        srcs: vec![],
        mem: None,
    });
    InsnCode { ops }
}

fn mem_kind(write: bool) -> MemKind {
    if write {
        MemKind::Store
    } else {
        MemKind::Load
    }
}
