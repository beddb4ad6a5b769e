//! A block of the table: the compact record the decoder reads, and the
//! borrowed view that tools read.

use super::{BlockId, BlockTable, EndKind, FunctionId, Operand};

/// Per-block data, compact, for the decoder's hot path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockRec {
    pub(crate) address: u64,
    /// `address + len(code)`, wrapping: the return site of a call.
    pub(crate) end_addr: u64,
    pub(crate) code_start: usize,
    pub(crate) code_len: u32,
    pub(crate) insn_start: u32,
    pub(crate) ops_start: u32,
    pub(crate) n_insns: u32,
    pub(crate) n_ops: u32,
    pub(crate) function: FunctionId,
    pub(crate) end: EndKind,
    /// Some operand is conditional (may be absent from an execution).
    pub(crate) conditional: bool,
}

/// One block of the table, borrowed from it.
#[derive(Clone, Copy)]
pub struct Block<'a> {
    pub(super) id: BlockId,
    pub(super) rec: &'a BlockRec,
    pub(super) table: &'a BlockTable,
}

impl std::fmt::Debug for Block<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("id", &self.id)
            .field("address", &format_args!("{:#x}", self.address()))
            .field("function", &self.function())
            .field("end", &self.end())
            .field("insn_lengths", &self.insn_lengths())
            .field("operands", &self.operands())
            .finish()
    }
}

impl<'a> Block<'a> {
    /// The block id.
    pub fn id(&self) -> BlockId {
        self.id
    }
    /// Address of the first instruction.
    pub fn address(&self) -> u64 {
        self.rec.address
    }
    /// Function id, 0 = unknown.
    pub fn function(&self) -> FunctionId {
        self.rec.function
    }
    /// How the block ends.
    pub fn end(&self) -> EndKind {
        self.rec.end
    }
    /// The machine code.
    pub fn code(&self) -> &'a [u8] {
        &self.table.code[self.rec.code_start..self.rec.code_start + self.rec.code_len as usize]
    }
    /// Length of the code in bytes.
    pub fn len_bytes(&self) -> u64 {
        self.rec.code_len as u64
    }
    /// The address just past the last instruction (wrapping).
    pub fn end_address(&self) -> u64 {
        self.rec.end_addr
    }
    /// For a block ending in a call, the return site `address + len(code)`.
    pub fn return_site(&self) -> Option<u64> {
        self.rec.end.is_call().then_some(self.rec.end_addr)
    }
    /// Number of instructions.
    pub fn n_insns(&self) -> usize {
        self.rec.n_insns as usize
    }
    /// Length of each instruction in bytes.
    pub fn insn_lengths(&self) -> &'a [u8] {
        let s = self.rec.insn_start as usize;
        &self.table.insn_len[s..s + self.rec.n_insns as usize]
    }
    /// Offset of each instruction from the block's address.
    pub fn insn_offsets(&self) -> &'a [u32] {
        let s = self.rec.insn_start as usize;
        &self.table.insn_off[s..s + self.rec.n_insns as usize]
    }
    /// Address of instruction `i` (panics if `i >= n_insns()`).
    pub fn insn_address(&self, i: usize) -> u64 {
        self.rec.address.wrapping_add(self.insn_offsets()[i] as u64)
    }
    /// The instruction that contains `addr`, if any.
    pub fn insn_index_at(&self, addr: u64) -> Option<usize> {
        let off = addr.wrapping_sub(self.rec.address);
        if off >= self.rec.code_len as u64 {
            return None;
        }
        let offs = self.insn_offsets();
        Some(offs.partition_point(|&o| o as u64 <= off) - 1)
    }
    /// The memory operands, in block order.
    pub fn operands(&self) -> &'a [Operand] {
        let s = self.rec.ops_start as usize;
        &self.table.ops[s..s + self.rec.n_ops as usize]
    }
    /// Index range (into [`operands`](Self::operands)) of instruction `i`'s operands.
    pub fn operand_range(&self, i: usize) -> std::ops::Range<usize> {
        let ops = self.operands();
        let lo = ops.partition_point(|o| (o.insn as usize) < i);
        let hi = ops.partition_point(|o| (o.insn as usize) <= i);
        lo..hi
    }
}
