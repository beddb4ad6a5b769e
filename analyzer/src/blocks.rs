//! Stage 3: canonical basic blocks.
//!
//! A tracer's blocks overlap when a jump lands inside an existing block: thread
//! A runs `[0x10, 0x30)` while thread B enters at `0x20`. Lanes of a warp can
//! only meet at a block they both name, so every dynamic block is split at
//! every observed block start ("leader") that falls inside it. Each resulting
//! piece is a *canonical block*, identified by its address range and its
//! code: code written at run time may put other instructions where some ran
//! before (a JIT reusing its code space), and those are another block, which
//! no lane running the first code meets. A dynamic block becomes a fixed
//! sequence of pieces.
//!
//! ```
//! use tf_analyzer::blocks::CanonicalBlocks;
//! use tf_trace::{BlockDef, EndKind, TraceWriter, Trace};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("tf-doc-blocks-{}", std::process::id()));
//! let mut w = TraceWriter::create(&dir)?;
//! // [0x10, 0x16): three 2-byte instructions; another block starts at 0x14.
//! let a = w.block(&BlockDef::new(0x10).insn(2).insn(2).insn(2).end(EndKind::Jump))?;
//! let b = w.block(&BlockDef::new(0x14).insn(2).end(EndKind::Jump))?;
//! w.finish()?;
//! let trace = Trace::open(&dir)?;
//! let canon = CanonicalBlocks::build(trace.blocks());
//! let pieces = canon.pieces(a);
//! assert_eq!(pieces.len(), 2);
//! assert_eq!(canon.block(pieces[0].cblock).n_insns, 2);
//! assert_eq!(pieces[1].cblock, canon.pieces(b)[0].cblock); // they meet at 0x14
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

use std::collections::{HashMap, HashSet};
use tf_trace::{Access, BlockId, BlockTable, EndKind, FunctionId};

/// Index of a canonical block.
pub type CBlockId = u32;

/// A canonical basic block: a range of instructions that every thread enters
/// only at its first instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CBlock {
    /// Address of the first instruction.
    pub address: u64,
    /// Address just past the last instruction.
    pub end_address: u64,
    /// Number of instructions.
    pub n_insns: u32,
    /// Number of memory operands.
    pub n_ops: u32,
    /// The function the tracer placed it in (0 = unknown).
    pub function: FunctionId,
    /// How it ends: the dynamic block's end for its last piece,
    /// [`EndKind::Fallthrough`] for the others.
    pub end: EndKind,
    /// Whether it starts its function (its address is the symbol's entry).
    pub is_entry: bool,
    /// Whether its function is a compiler-split cold part (`foo.cold`), which
    /// is reached by jumps and belongs to its parent's frames.
    pub is_cold: bool,
    /// A dynamic block containing it, and the index of its first instruction
    /// and first operand there (to find code bytes and operand sizes).
    pub origin: (BlockId, u16, u16),
}

/// One piece of a dynamic block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The canonical block.
    pub cblock: CBlockId,
    /// Index of its first instruction in the dynamic block.
    pub first_insn: u16,
    /// Its instruction count.
    pub n_insns: u16,
    /// Index of its first operand in the dynamic block.
    pub first_op: u16,
    /// Its operand count.
    pub n_ops: u16,
}

/// The canonical blocks of a block table, and how each dynamic block splits.
#[derive(Debug)]
pub struct CanonicalBlocks {
    blocks: Vec<CBlock>,
    pieces: Vec<Piece>,
    /// `pieces[piece_start[b]..piece_start[b + 1]]` are block `b`'s pieces.
    piece_start: Vec<u32>,
    /// Per dynamic block: when it is one piece, that canonical block and
    /// how it ends (most blocks: a complete execution is then one step,
    /// without cutting); else `None`.
    whole: Vec<Option<(CBlockId, EndKind)>>,
}

impl CanonicalBlocks {
    /// Splits every block of the table at every block start inside it.
    pub fn build(table: &BlockTable) -> CanonicalBlocks {
        CanonicalBlocks::build_with(table, &[])
    }

    /// [`build`](Self::build), also splitting at the instructions at
    /// `starts` (`--merge-tails`' shared tails: crate::common_tails).
    pub fn build_with(table: &BlockTable, starts: &[u64]) -> CanonicalBlocks {
        let leaders: HashSet<u64> = (table.iter().map(|b| b.address()))
            .chain(starts.iter().copied())
            .collect();
        let mut ids: HashMap<(u64, u64, &[u8]), CBlockId> = HashMap::new();
        let mut blocks = Vec::new();
        let mut pieces = Vec::new();
        let mut piece_start = Vec::with_capacity(table.len() + 1);
        for b in table.iter() {
            piece_start.push(pieces.len() as u32);
            let n = b.n_insns();
            let ops = b.operands();
            let (entry, cold) = match table.function(b.function()) {
                Some(f) => (f.entry, is_cold_name(&f.name)),
                None => (u64::MAX, false),
            };
            let (code, offsets) = (b.code(), b.insn_offsets());
            // The piece's code (none when the tracer recorded none).
            let code_of = |start: usize, stop: usize| {
                let end = offsets.get(stop).map_or(code.len(), |&o| o as usize);
                code.get(offsets[start] as usize..end).unwrap_or(&[])
            };
            let mut start = 0usize;
            while start < n {
                let mut stop = start + 1;
                while stop < n && !leaders.contains(&b.insn_address(stop)) {
                    stop += 1;
                }
                let address = b.insn_address(start);
                let end_address = if stop < n {
                    b.insn_address(stop)
                } else {
                    b.end_address()
                };
                let first_op = ops.partition_point(|o| (o.insn as usize) < start);
                let end_op = ops.partition_point(|o| (o.insn as usize) < stop);
                let key = (address, end_address, code_of(start, stop));
                let id = *ids.entry(key).or_insert_with(|| {
                    blocks.push(CBlock {
                        address,
                        end_address,
                        n_insns: (stop - start) as u32,
                        n_ops: (end_op - first_op) as u32,
                        function: b.function(),
                        end: if stop < n {
                            EndKind::Fallthrough
                        } else {
                            b.end()
                        },
                        is_entry: address == entry,
                        is_cold: cold,
                        origin: (b.id(), start as u16, first_op as u16),
                    });
                    (blocks.len() - 1) as CBlockId
                });
                pieces.push(Piece {
                    cblock: id,
                    first_insn: start as u16,
                    n_insns: (stop - start) as u16,
                    first_op: first_op as u16,
                    n_ops: (end_op - first_op) as u16,
                });
                start = stop;
            }
        }
        piece_start.push(pieces.len() as u32);
        let whole = (piece_start.windows(2))
            .map(|w| match &pieces[w[0] as usize..w[1] as usize] {
                [p] => Some((p.cblock, blocks[p.cblock as usize].end)),
                _ => None,
            })
            .collect();
        CanonicalBlocks {
            blocks,
            pieces,
            piece_start,
            whole,
        }
    }

    /// The pieces of dynamic block `b`, in execution order.
    #[inline]
    pub fn pieces(&self, b: BlockId) -> &[Piece] {
        let lo = self.piece_start[b as usize] as usize;
        let hi = self.piece_start[b as usize + 1] as usize;
        &self.pieces[lo..hi]
    }

    /// The canonical block `c`.
    #[inline]
    pub fn block(&self, c: CBlockId) -> &CBlock {
        &self.blocks[c as usize]
    }

    /// All canonical blocks, by id.
    pub fn blocks(&self) -> &[CBlock] {
        &self.blocks
    }

    /// Number of canonical blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// GCC's hot/cold splitting names the cold part `foo.cold` (or `foo.cold.N`).
fn is_cold_name(name: &[u8]) -> bool {
    name.ends_with(b".cold") || name.windows(6).any(|w| w == b".cold.")
}

/// One executed piece: a canonical block, how many of its instructions ran,
/// its memory accesses, and how it ended.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// The canonical block.
    pub cblock: CBlockId,
    /// Instructions executed (fewer than the block's only when it faulted).
    pub insns: u32,
    /// How the execution ended: the block's end kind, or [`EndKind::Other`]
    /// when it stopped early (a fault).
    pub end: EndKind,
    /// Index of the block's first operand in the dynamic block: subtract it
    /// from [`Access::operand`] to get the operand's index in the canonical block.
    pub first_op: u16,
    /// The accesses made by this piece (present operands only).
    pub accesses: &'a [Access],
}

impl Piece {
    /// Hands out this piece's share of an execution that has `left`
    /// instructions still to run (`complete`: the execution ran to the
    /// block's end): how many ran, how the piece ended ([`EndKind::Other`]
    /// when cut short), and the operand index just past the piece's operands.
    /// The one rule both the first pass and the lanes cut executions by.
    #[inline]
    pub fn cut(
        &self,
        canon: &CanonicalBlocks,
        left: &mut u32,
        complete: bool,
    ) -> (u32, EndKind, u16) {
        let ran = (*left).min(u32::from(self.n_insns));
        *left -= ran;
        let whole = ran == u32::from(self.n_insns) && (*left > 0 || complete);
        let end = if whole {
            canon.block(self.cblock).end
        } else {
            EndKind::Other
        };
        (ran, end, self.first_op + self.n_ops)
    }
}

/// Where the split of one block execution into the steps of its pieces
/// stands: the next piece, the instructions not handed out yet, and the
/// first access not handed out yet. The first pass ([`steps`]) and the
/// lanes' readers (which hand out one step at a time) both split executions
/// with it, so they agree on every position.
#[derive(Clone, Copy, Debug, Default)]
pub struct PieceCursor {
    block: BlockId,
    piece: usize,
    left: u32,
    complete: bool,
    access: usize,
}

impl PieceCursor {
    /// The start of an execution of dynamic block `block` that ran `insns`
    /// instructions (`complete`: to the block's end).
    pub fn new(block: BlockId, insns: u32, complete: bool) -> PieceCursor {
        PieceCursor {
            block,
            piece: 0,
            left: insns,
            complete,
            access: 0,
        }
    }

    /// The index of the next piece.
    pub fn piece(&self) -> usize {
        self.piece
    }

    /// Whether instructions are left to hand out.
    pub fn has_more(&self) -> bool {
        self.left > 0
    }

    /// The next step, its accesses those of `accesses` (the execution's
    /// present operands, in operand order) that it made.
    ///
    /// Inlined where called: returned through memory, the step is read back
    /// before its stores have landed, which stalls the first pass.
    #[inline(always)]
    pub fn next_in<'a>(
        &mut self,
        canon: &CanonicalBlocks,
        accesses: &'a [Access],
    ) -> Option<Step<'a>> {
        let (step, range) = self.next_step(canon, accesses)?;
        Some(Step {
            accesses: &accesses[range],
            ..step
        })
    }

    /// The next step, its accesses the range it returns of `accesses` (the
    /// execution's present operands, in operand order).
    #[inline(always)]
    pub fn next_step(
        &mut self,
        canon: &CanonicalBlocks,
        accesses: &[Access],
    ) -> Option<(Step<'static>, std::ops::Range<usize>)> {
        if self.left == 0 {
            return None;
        }
        if self.piece == 0 && self.complete {
            if let Some((cblock, end)) = canon.whole[self.block as usize] {
                // The one piece, whole: what cutting it gives, uncut.
                debug_assert!({
                    let p = canon.pieces(self.block)[0];
                    let mut left = self.left;
                    let cut = p.cut(canon, &mut left, true);
                    let n_ops = usize::from(cut.2);
                    cut == (self.left, end, p.n_ops)
                        && left == 0
                        && accesses.iter().all(|a| usize::from(a.operand) < n_ops)
                });
                self.piece = 1;
                let step = Step {
                    cblock,
                    insns: std::mem::take(&mut self.left),
                    end,
                    first_op: 0,
                    accesses: &[],
                };
                self.access = accesses.len();
                return Some((step, 0..accesses.len()));
            }
        }
        let p = *canon.pieces(self.block).get(self.piece)?;
        self.piece += 1;
        let (ran, end, end_op) = p.cut(canon, &mut self.left, self.complete);
        let lo = self.access;
        // A piece has few operands: counting beats a binary search.
        self.access += accesses[lo..]
            .iter()
            .take_while(|a| a.operand < end_op)
            .count();
        let step = Step {
            cblock: p.cblock,
            insns: ran,
            end,
            first_op: p.first_op,
            accesses: &[],
        };
        Some((step, lo..self.access))
    }
}

/// Splits one block execution into the steps of its pieces.
///
/// `accesses` are the execution's present operands in operand order, as the
/// trace reader returns them. A partial execution (`insns` short of the
/// block) yields only the pieces that ran, the last one cut short.
pub fn steps<'a>(
    canon: &'a CanonicalBlocks,
    block: BlockId,
    insns: u32,
    complete: bool,
    accesses: &'a [Access],
) -> impl Iterator<Item = Step<'a>> + 'a {
    let mut cursor = PieceCursor::new(block, insns, complete);
    std::iter::from_fn(move || cursor.next_in(canon, accesses))
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
