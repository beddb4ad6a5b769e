//! The block table (§5): modules, functions and blocks, from `blocks.tfc`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use crate::error::DecodeError;
use crate::limits;
use crate::varint::Cursor;

/// A block id: dense, from 0, in definition order.
pub type BlockId = u32;
/// A function id: dense, from 1; 0 means "unknown".
pub type FunctionId = u32;
/// A module id: dense, from 1; 0 means "unknown".
pub type ModuleId = u32;

mod block;
pub(crate) mod encode;
mod entries;
pub use block::Block;
pub(crate) use block::BlockRec;
pub use entries::{EndKind, Function, Module, Operand};

/// A multiplicative hasher for address and id keys.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// All modules, functions and blocks of a trace.
///
/// Read by [`Trace::open`](crate::Trace::open); built by
/// [`TraceWriter`](crate::TraceWriter) as blocks are defined.
///
/// ```
/// # fn main() -> tf_trace::Result<()> {
/// use tf_trace::{BlockDef, EndKind, TraceWriter, Trace};
/// let dir = std::env::temp_dir().join(format!("tf-doc-bt-{}", std::process::id()));
/// let mut w = TraceWriter::create(&dir)?;
/// let f = w.function(0x1000, 0, "main")?;
/// let b = w.block(&BlockDef::new(0x1000).function(f).insn(3).read(8).insn(5).end(EndKind::Call))?;
/// w.finish()?;
/// let trace = Trace::open(&dir)?;
/// let block = trace.blocks().block(b).unwrap();
/// assert_eq!((block.address(), block.n_insns(), block.len_bytes()), (0x1000, 2, 8));
/// assert_eq!(block.insn_address(1), 0x1003);
/// assert_eq!(block.return_site(), Some(0x1008));
/// assert_eq!(block.operands()[0].size, 8);
/// assert_eq!(trace.blocks().function(f).unwrap().name, b"main");
/// assert_eq!(trace.blocks().block_at(0x1000), Some(b));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct BlockTable {
    modules: Vec<Module>,
    functions: Vec<Function>,
    pub(crate) recs: Vec<BlockRec>,
    code: Vec<u8>,
    insn_len: Vec<u8>,
    insn_off: Vec<u32>,
    pub(crate) ops: Vec<Operand>,
    lowest_at: AddrMap<BlockId>,
    /// The most operands of any block (never shrinks).
    max_ops: usize,
    /// Blocks sorted by address, and the longest block's length.
    by_addr: OnceLock<(Vec<(u64, BlockId)>, u64)>,
}

impl std::fmt::Debug for BlockTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockTable")
            .field("modules", &self.modules.len())
            .field("functions", &self.functions.len())
            .field("blocks", &self.recs.len())
            .finish()
    }
}

impl BlockTable {
    /// An empty table.
    pub fn new() -> BlockTable {
        BlockTable::default()
    }
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.recs.len()
    }
    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    /// The block with this id.
    #[inline]
    pub fn block(&self, id: BlockId) -> Option<Block<'_>> {
        self.recs.get(id as usize).map(|rec| Block {
            id,
            rec,
            table: self,
        })
    }
    /// All blocks, in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Block<'_>> + '_ {
        self.recs.iter().enumerate().map(|(i, rec)| Block {
            id: i as BlockId,
            rec,
            table: self,
        })
    }
    /// The function with this id (ids start at 1).
    pub fn function(&self, id: FunctionId) -> Option<&Function> {
        self.functions.get((id as usize).checked_sub(1)?)
    }
    /// All functions, in id order.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }
    /// The module with this id (ids start at 1).
    pub fn module(&self, id: ModuleId) -> Option<&Module> {
        self.modules.get((id as usize).checked_sub(1)?)
    }
    /// All modules, in id order.
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }
    /// The module whose mapping `[base, base + size)` contains `addr`.
    pub fn module_containing(&self, addr: u64) -> Option<&Module> {
        self.modules
            .iter()
            .find(|m| addr.wrapping_sub(m.base) < m.size)
    }
    /// The most memory operands that any block has.
    pub fn max_ops(&self) -> usize {
        self.max_ops
    }
    /// The lowest block id whose address is `addr`.
    #[inline]
    pub fn block_at(&self, addr: u64) -> Option<BlockId> {
        self.lowest_at.get(&addr).copied()
    }
    /// Every block whose code covers `addr`, in address order.
    pub fn blocks_containing(&self, addr: u64) -> impl Iterator<Item = Block<'_>> + '_ {
        let (sorted, max_len) = self.by_addr.get_or_init(|| {
            let mut v: Vec<(u64, BlockId)> = self
                .recs
                .iter()
                .enumerate()
                .map(|(i, r)| (r.address, i as BlockId))
                .collect();
            v.sort_unstable();
            let max = self
                .recs
                .iter()
                .map(|r| r.code_len as u64)
                .max()
                .unwrap_or(0);
            (v, max)
        });
        let lo = sorted.partition_point(|&(a, _)| a < addr.saturating_sub(*max_len));
        let hi = sorted.partition_point(|&(a, _)| a <= addr);
        sorted[lo..hi]
            .iter()
            .map(|&(_, id)| self.block(id).unwrap())
            .filter(move |b| addr.wrapping_sub(b.address()) < b.len_bytes())
    }

    pub(crate) fn rec(&self, id: BlockId) -> &BlockRec {
        &self.recs[id as usize]
    }

    /// Decodes one block-table chunk payload and adds its records. On error
    /// nothing of the chunk is kept.
    pub(crate) fn decode_chunk(&mut self, payload: &[u8]) -> Result<(), DecodeError> {
        let mark = self.mark();
        let mut cur = Cursor::new(payload);
        while !cur.is_empty() {
            if let Err(e) = self.decode_record(&mut cur) {
                self.rollback(mark);
                return Err(e);
            }
        }
        Ok(())
    }

    fn mark(&self) -> [usize; 6] {
        [
            self.modules.len(),
            self.functions.len(),
            self.recs.len(),
            self.code.len(),
            self.insn_len.len(),
            self.ops.len(),
        ]
    }

    fn rollback(&mut self, m: [usize; 6]) {
        for id in m[2]..self.recs.len() {
            let a = self.recs[id].address;
            if self.lowest_at.get(&a) == Some(&(id as BlockId)) {
                self.lowest_at.remove(&a);
            }
        }
        self.modules.truncate(m[0]);
        self.functions.truncate(m[1]);
        self.recs.truncate(m[2]);
        self.code.truncate(m[3]);
        self.insn_len.truncate(m[4]);
        self.insn_off.truncate(m[4]);
        self.ops.truncate(m[5]);
        self.by_addr = OnceLock::new();
    }

    /// Decodes one record at the cursor, checks it against §5 and adds it.
    pub(crate) fn decode_record(&mut self, cur: &mut Cursor<'_>) -> Result<(), DecodeError> {
        let pos = cur.pos();
        let err = |what: String| Err(DecodeError::new(pos, what));
        let tag = cur.varint()?;
        let id = cur.varint()?;
        match tag {
            1 => {
                let expect = self.modules.len() as u64 + 1;
                if id != expect {
                    return err(format!("module id {id}, expected {expect}"));
                }
                let base = cur.varint()?;
                let size = cur.varint()?;
                let path = cur.bytes()?.to_vec();
                let build_id = cur.bytes()?.to_vec();
                self.modules.push(Module {
                    id: id as ModuleId,
                    base,
                    size,
                    path,
                    build_id,
                });
            }
            2 => {
                let expect = self.functions.len() as u64 + 1;
                if id != expect || id > u32::MAX as u64 {
                    return err(format!("function id {id}, expected {expect}"));
                }
                let entry = cur.varint()?;
                let module = cur.varint()?;
                if module > self.modules.len() as u64 {
                    return err(format!("function {id}: module {module} not defined"));
                }
                let name = cur.bytes()?.to_vec();
                self.functions.push(Function {
                    id: id as FunctionId,
                    entry,
                    module: module as ModuleId,
                    name,
                });
            }
            3 => {
                let expect = self.recs.len() as u64;
                // u32::MAX is the predictor's "none".
                if id != expect || id >= u32::MAX as u64 {
                    return err(format!("block id {id}, expected {expect}"));
                }
                self.decode_block(cur, id as BlockId)
                    .or_else(|what| err(format!("block {id}: {what}")))?;
            }
            _ => return err(format!("unknown block-table record tag {tag}")),
        }
        Ok(())
    }

    fn decode_block(&mut self, cur: &mut Cursor<'_>, id: BlockId) -> Result<(), String> {
        let address = cur.varint().map_err(|e| e.what)?;
        let function = cur.varint().map_err(|e| e.what)?;
        if function > self.functions.len() as u64 {
            return Err(format!("function {function} not defined"));
        }
        let end_code = cur.varint().map_err(|e| e.what)?;
        let end = EndKind::from_code(end_code).ok_or(format!("end kind {end_code} unknown"))?;
        let code = cur.bytes().map_err(|e| e.what)?;
        let n = cur.varint().map_err(|e| e.what)?;
        if !(1..=limits::MAX_BLOCK_INSNS).contains(&n) {
            let max = limits::MAX_BLOCK_INSNS;
            return Err(format!("instruction count {n} out of range 1..={max}"));
        }
        let lens = cur.raw(n).map_err(|e| e.what)?;
        let mut total = 0usize;
        for (i, &l) in lens.iter().enumerate() {
            if !(1..=15).contains(&l) {
                return Err(format!("instruction {i} length {l} out of range 1..=15"));
            }
            total += l as usize;
        }
        if total != code.len() {
            return Err(format!(
                "instruction lengths add up to {total}, code has {} bytes",
                code.len()
            ));
        }
        let m = cur.varint().map_err(|e| e.what)?;
        if m > limits::MAX_BLOCK_OPERANDS {
            let max = limits::MAX_BLOCK_OPERANDS;
            return Err(format!("operand count {m} out of range 0..={max}"));
        }
        let ops_start = self.ops.len();
        let mut last_insn = 0u64;
        for j in 0..m {
            let r = (|| -> Result<Operand, String> {
                let insn = cur.varint().map_err(|e| e.what)?;
                let flags = cur.u8().map_err(|e| e.what)?;
                let size = cur.varint().map_err(|e| e.what)?;
                if insn >= n {
                    return Err(format!("instruction {insn} out of range"));
                }
                if insn < last_insn {
                    return Err(format!("instruction {insn} after {last_insn}"));
                }
                if flags & !3 != 0 {
                    return Err(format!("flags {flags:#x} has unknown bits"));
                }
                if !(1..=4096).contains(&size) {
                    return Err(format!("size {size} out of range 1..=4096"));
                }
                last_insn = insn;
                Ok(Operand {
                    insn: insn as u16,
                    size: size as u16,
                    write: flags & 1 != 0,
                    conditional: flags & 2 != 0,
                })
            })();
            match r {
                Ok(op) => self.ops.push(op),
                Err(what) => {
                    self.ops.truncate(ops_start);
                    return Err(format!("operand {j}: {what}"));
                }
            }
        }
        let insn_start = self.insn_len.len();
        if insn_start + n as usize > u32::MAX as usize || ops_start + m as usize > u32::MAX as usize
        {
            self.ops.truncate(ops_start);
            return Err("block table too large".into());
        }
        let mut off = 0u32;
        for &l in lens {
            self.insn_len.push(l);
            self.insn_off.push(off);
            off += l as u32;
        }
        let code_start = self.code.len();
        self.code.extend_from_slice(code);
        self.recs.push(BlockRec {
            address,
            end_addr: address.wrapping_add(code.len() as u64),
            code_start,
            code_len: code.len() as u32,
            insn_start: insn_start as u32,
            ops_start: ops_start as u32,
            n_insns: n as u32,
            n_ops: m as u32,
            function: function as FunctionId,
            end,
            conditional: self.ops[ops_start..].iter().any(|o| o.conditional),
        });
        self.lowest_at.entry(address).or_insert(id);
        self.max_ops = self.max_ops.max(m as usize);
        self.by_addr = OnceLock::new();
        Ok(())
    }
}
