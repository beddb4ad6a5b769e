//! [`BlockDef`]: a block to define in a trace being written, built
//! instruction by instruction (or parsed from a one-line spec).

use crate::block_table::{EndKind, FunctionId, Operand};
use crate::error::{Error, Result};

/// The recommended x86 NOP of each length 1..=15, used as default code.
fn nop(len: u8) -> Vec<u8> {
    const BASE: [&[u8]; 9] = [
        &[0x90],
        &[0x66, 0x90],
        &[0x0f, 0x1f, 0x00],
        &[0x0f, 0x1f, 0x40, 0x00],
        &[0x0f, 0x1f, 0x44, 0x00, 0x00],
        &[0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
        &[0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
        &[0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
        &[0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    ];
    let len = len.clamp(1, 15) as usize;
    let mut v = vec![0x66; len.saturating_sub(9)];
    v.extend_from_slice(BASE[len.min(9) - 1]);
    v
}

/// A block to define: a compact builder.
///
/// Instructions are added with [`insn`](Self::insn); operand methods
/// ([`read`](Self::read), [`write`](Self::write), …) attach a memory operand
/// to the instruction added last. Without [`code`](Self::code), each
/// instruction's code is an x86 NOP of its length.
///
/// ```
/// use tf_trace::{BlockDef, EndKind};
/// // 0x1000: a 3-byte load of 8 bytes, a 4-byte read-modify-write of 4
/// // bytes, a 2-byte conditional branch.
/// let def = BlockDef::new(0x1000).insn(3).read(8).insn(4).read(4).write(4).insn(2).end(EndKind::Branch);
/// assert_eq!(def.insn_lengths(), [3, 4, 2]);
/// assert_eq!(def.operands().len(), 3);
/// assert_eq!(def.operands()[2].insn, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockDef {
    pub(crate) address: u64,
    pub(crate) function: FunctionId,
    pub(crate) end: EndKind,
    pub(crate) code: Option<Vec<u8>>,
    pub(crate) lens: Vec<u8>,
    pub(crate) ops: Vec<Operand>,
}

impl BlockDef {
    /// A block at `address` with no instructions yet, ending in `fallthrough`.
    pub fn new(address: u64) -> BlockDef {
        BlockDef {
            address,
            ..BlockDef::default()
        }
    }
    /// Adds an instruction of `len` bytes.
    pub fn insn(mut self, len: u8) -> BlockDef {
        self.lens.push(len);
        self
    }
    /// Adds instructions of these lengths.
    pub fn insns(mut self, lens: &[u8]) -> BlockDef {
        self.lens.extend_from_slice(lens);
        self
    }
    /// Adds an operand to the last instruction.
    pub fn operand(mut self, size: u16, write: bool, conditional: bool) -> BlockDef {
        self.ops.push(Operand {
            insn: self.lens.len().saturating_sub(1) as u16,
            size,
            write,
            conditional,
        });
        self
    }
    /// The last instruction reads `size` bytes.
    pub fn read(self, size: u16) -> BlockDef {
        self.operand(size, false, false)
    }
    /// The last instruction writes `size` bytes.
    pub fn write(self, size: u16) -> BlockDef {
        self.operand(size, true, false)
    }
    /// The last instruction may read `size` bytes (conditional operand).
    pub fn cond_read(self, size: u16) -> BlockDef {
        self.operand(size, false, true)
    }
    /// The last instruction may write `size` bytes (conditional operand).
    pub fn cond_write(self, size: u16) -> BlockDef {
        self.operand(size, true, true)
    }
    /// How the block ends.
    pub fn end(mut self, end: EndKind) -> BlockDef {
        self.end = end;
        self
    }
    /// The function it lies in.
    pub fn function(mut self, f: FunctionId) -> BlockDef {
        self.function = f;
        self
    }
    /// Its machine code (must be as long as the instructions together).
    pub fn code(mut self, code: &[u8]) -> BlockDef {
        self.code = Some(code.to_vec());
        self
    }
    /// A block from a compact description: instructions separated by
    /// spaces, each its length in bytes followed by its operands (`r8` reads
    /// 8 bytes, `w4` writes 4, a trailing `?` makes one conditional), then
    /// optionally how the block ends, as FORMAT.md names it (`branch`,
    /// `call`, `return`, …; default `fallthrough`).
    ///
    /// ```
    /// use tf_trace::{BlockDef, EndKind};
    /// let d = BlockDef::parse(0x1000, "3r8 4r4w4 2r8? branch").unwrap();
    /// assert_eq!(d, BlockDef::new(0x1000).insn(3).read(8).insn(4).read(4).write(4)
    ///     .insn(2).cond_read(8).end(EndKind::Branch));
    /// assert!(BlockDef::parse(0x1000, "3x8").is_err());
    /// ```
    pub fn parse(address: u64, spec: &str) -> Result<BlockDef> {
        let bad = |what: String| Error::Invalid(format!("block description {spec:?}: {what}"));
        let mut def = BlockDef::new(address);
        let mut words = spec.split_whitespace().peekable();
        while let Some(w) = words.next() {
            if !w.starts_with(|c: char| c.is_ascii_digit()) {
                def.end = EndKind::ALL
                    .into_iter()
                    .find(|e| e.name() == w)
                    .ok_or_else(|| bad(format!("unknown end kind {w:?}")))?;
                if words.peek().is_some() {
                    return Err(bad("the end kind comes last".into()));
                }
                break;
            }
            let digits = w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len());
            let len = w[..digits]
                .parse()
                .map_err(|_| bad(format!("bad length in {w:?}")))?;
            def = def.insn(len);
            let mut rest = &w[digits..];
            while !rest.is_empty() {
                let write = match rest.as_bytes()[0] {
                    b'r' => false,
                    b'w' => true,
                    _ => return Err(bad(format!("expected r or w in {w:?}"))),
                };
                rest = &rest[1..];
                let n = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                let size = rest[..n]
                    .parse()
                    .map_err(|_| bad(format!("bad size in {w:?}")))?;
                rest = &rest[n..];
                let conditional = rest.starts_with('?');
                if conditional {
                    rest = &rest[1..];
                }
                def = def.operand(size, write, conditional);
            }
        }
        Ok(def)
    }

    /// The instruction lengths so far.
    pub fn insn_lengths(&self) -> &[u8] {
        &self.lens
    }
    /// The operands so far.
    pub fn operands(&self) -> &[Operand] {
        &self.ops
    }
    pub(crate) fn code_bytes(&self) -> Vec<u8> {
        match &self.code {
            Some(c) => c.clone(),
            None => self.lens.iter().flat_map(|&l| nop(l)).collect(),
        }
    }
}
