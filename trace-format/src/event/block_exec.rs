//! Block executions as the reader returns them, with their memory
//! accesses (§6.1, §6.3).

use crate::block_table::BlockId;

/// How a block record named its block (useful for dumps and statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// Part of a run record.
    Run,
    /// A block record, successor candidate 0.
    Candidate0,
    /// A block record, successor candidate 1.
    Candidate1,
    /// A block record with an explicit block id.
    Explicit,
}

/// One memory access of a block execution: a present operand and its address.
///
/// ```
/// let a = tf_trace::Access { operand: 0, addr: 0x7ffc_0000, size: 8, write: false };
/// assert!(!a.write);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Access {
    /// Index of the operand in the block's [`operands`](crate::Block::operands).
    pub operand: u16,
    /// Access size in bytes (from the block table).
    pub size: u16,
    /// A write (from the block table).
    pub write: bool,
    /// The effective address.
    pub addr: u64,
}

/// One block execution, borrowed from the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockExec<'a> {
    /// The block.
    pub block: BlockId,
    /// Instructions executed (all of the block's unless partial).
    pub insns: u32,
    /// False for a partial execution (one preceded by a `partial` event).
    pub complete: bool,
    /// Operands of this execution, present or absent: all of the block's
    /// for a complete execution, the first `n_ops` for a partial one.
    pub operands: u32,
    /// How the record named the block.
    pub via: Via,
    pub(crate) present: u32,
    pub(crate) accesses: &'a [Access],
}

impl<'a> BlockExec<'a> {
    /// The present operands' accesses, in operand order (absent
    /// conditional operands are left out).
    #[inline]
    pub fn accesses(&self) -> &'a [Access] {
        self.accesses
    }

    /// How many of its operands accessed memory (absent conditional
    /// operands left out): the length of [`accesses`](Self::accesses),
    /// known also to a reader that does not decode addresses.
    ///
    /// ```
    /// # fn main() -> tf_trace::Result<()> {
    /// use tf_trace::{BlockDef, Event, Trace, TraceWriter};
    /// let dir = std::env::temp_dir().join(format!("tf-doc-present-{}", std::process::id()));
    /// let mut w = TraceWriter::create(&dir)?;
    /// // a load, and a store that may not happen
    /// let b = w.block(&BlockDef::new(0x1000).insn(4).read(8).insn(4).cond_write(8))?;
    /// w.thread(1)?.exec_opt(b, &[Some(0x5000), Some(0x6000)])?;
    /// w.thread(1)?.exec_opt(b, &[Some(0x5000), None])?;
    /// w.finish()?;
    /// let trace = Trace::open(&dir)?;
    /// let mut r = trace.read_thread(1)?;
    /// r.set_addresses(false);
    /// let mut present = Vec::new();
    /// while let Some(ev) = r.next_event() {
    ///     if let Event::Block(x) = ev? {
    ///         assert!(x.accesses().is_empty());
    ///         present.push(x.present_operands());
    ///     }
    /// }
    /// assert_eq!(present, [2, 1]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn present_operands(&self) -> u32 {
        self.present
    }
}
