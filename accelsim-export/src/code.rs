//! The translation of every canonical block of a trace, with program counters.
//!
//! Accel-Sim uses a line's PC only to fetch through its instruction cache,
//! with 16 bytes per instruction. Every RISC operation of every canonical
//! block gets its own PC, 16 bytes apart, blocks in address order, so code
//! that is close in the x86 program stays close in the trace. The `EXIT`
//! follows the last block; a memory operation issued as a local access
//! (`LDL`/`STL`) rather than a global one is another static instruction and
//! takes its PC from a second copy of the code placed after the `EXIT`.

use crate::translate::{translate, BlockCode, TraceOperand};
use std::collections::HashSet;
use tf_analyzer::blocks::CanonicalBlocks;
use tf_trace::{BlockTable, FunctionId};

/// What every warp of an export shares: the code, and the functions to export.
#[derive(Debug)]
pub struct Program {
    /// The translated code.
    pub code: Code,
    /// Export only issues charged to these functions (all when `None`).
    pub selected: Option<HashSet<FunctionId>>,
}

/// Every canonical block's operations and the PC of its first one.
#[derive(Debug, Default)]
pub struct Code {
    /// Per canonical block.
    pub blocks: Vec<BlockCode>,
    /// PC of each block's first operation.
    pub pc: Vec<u32>,
    /// The PC of the `EXIT` that ends every warp (after all code).
    pub exit_pc: u32,
    /// x86 instructions the decoder could not decode (exported as `NOP`).
    pub undecoded: usize,
    /// Blocks whose operands did not fit their instructions (exported as `NOP`s).
    pub untranslated: usize,
}

impl Code {
    /// Translates every canonical block of `canon` from the code bytes and
    /// operands of `table`.
    pub fn build(table: &BlockTable, canon: &CanonicalBlocks) -> Code {
        let mut code = Code::default();
        for cb in canon.blocks() {
            let (bid, first_insn, first_op) = cb.origin;
            let translated = table.block(bid).and_then(|b| {
                let (fi, n) = (usize::from(first_insn), cb.n_insns as usize);
                let lens = b.insn_lengths().get(fi..fi + n)?;
                let start = *b.insn_offsets().get(fi)? as usize;
                let len: usize = lens.iter().map(|&l| usize::from(l)).sum();
                let bytes = b.code().get(start..start + len)?;
                let fo = usize::from(first_op);
                let ops: Vec<TraceOperand> = b
                    .operands()
                    .get(fo..fo + cb.n_ops as usize)?
                    .iter()
                    .map(|o| TraceOperand {
                        insn: o.insn - first_insn,
                        size: o.size,
                        write: o.write,
                    })
                    .collect();
                translate(bytes, cb.address, lens, &ops).ok()
            });
            let block = translated.unwrap_or_else(|| {
                code.untranslated += 1;
                nops(cb.n_insns as usize)
            });
            code.undecoded += block.undecoded;
            code.blocks.push(block);
        }
        let mut order: Vec<usize> = (0..canon.len()).collect();
        order.sort_by_key(|&c| canon.blocks()[c].address);
        code.pc = vec![0; canon.len()];
        let mut next = 0u32;
        for c in order {
            code.pc[c] = next;
            next = next.wrapping_add(16 * code.blocks[c].n_ops() as u32);
        }
        code.exit_pc = next;
        code
    }
}

/// A block of `n` instructions that could not be translated: one `NOP` each.
fn nops(n: usize) -> BlockCode {
    let nop = crate::translate::InsnCode {
        ops: vec![crate::translate::RiscOp {
            opcode: "NOP",
            dst: None,
            srcs: vec![],
            mem: None,
        }],
    };
    BlockCode {
        insns: vec![nop; n],
        undecoded: 0,
    }
}
