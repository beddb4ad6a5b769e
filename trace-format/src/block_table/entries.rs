//! The table's entries: modules, functions, memory operands and how a
//! block ends (§5).

use super::{FunctionId, ModuleId};

/// How a block ends (§5, field `end`).
///
/// ```
/// use tf_trace::EndKind;
/// assert_eq!(EndKind::from_code(4), Some(EndKind::Call));
/// assert!(EndKind::IndirectCall.is_call());
/// assert_eq!(EndKind::Return.name(), "return");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum EndKind {
    /// Cut at a size limit or before a jump target: the next address follows.
    #[default]
    Fallthrough = 0,
    /// One fixed target.
    Jump = 1,
    /// Conditional: the target or the next address.
    Branch = 2,
    /// A computed target.
    IndirectJump = 3,
    /// A direct call.
    Call = 4,
    /// A call through a register or memory.
    IndirectCall = 5,
    /// `ret`.
    Return = 6,
    /// `syscall`, `int 0x80`, `sysenter`.
    Syscall = 7,
    /// Anything else (`ud2`, `hlt`, a faulting instruction).
    Other = 8,
}

impl EndKind {
    /// All kinds, in code order.
    pub const ALL: [EndKind; 9] = [
        EndKind::Fallthrough,
        EndKind::Jump,
        EndKind::Branch,
        EndKind::IndirectJump,
        EndKind::Call,
        EndKind::IndirectCall,
        EndKind::Return,
        EndKind::Syscall,
        EndKind::Other,
    ];

    /// The kind with this code, if any.
    pub fn from_code(code: u64) -> Option<EndKind> {
        EndKind::ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// `call` or `indirect_call`.
    #[inline]
    pub fn is_call(self) -> bool {
        matches!(self, EndKind::Call | EndKind::IndirectCall)
    }

    /// The name FORMAT.md uses.
    pub fn name(self) -> &'static str {
        [
            "fallthrough",
            "jump",
            "branch",
            "indirect_jump",
            "call",
            "indirect_call",
            "return",
            "syscall",
            "other",
        ][self as usize]
    }
}

/// One memory operand of a block (§5).
///
/// ```
/// use tf_trace::Operand;
/// let op = Operand { insn: 2, size: 8, write: true, conditional: false };
/// assert_eq!(op.flags(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Operand {
    /// The instruction (0-based index in the block) it belongs to.
    pub insn: u16,
    /// Access size in bytes, 1..=4096.
    pub size: u16,
    /// A write (else a read).
    pub write: bool,
    /// May be skipped at run time (`rep` with zero count, masked AVX).
    pub conditional: bool,
}

impl Module {
    /// The last component of its path, as reports name it (invalid UTF-8
    /// replaced).
    pub fn file_name(&self) -> String {
        let path = String::from_utf8_lossy(&self.path);
        path.rsplit('/').next().unwrap_or_default().to_string()
    }
}

impl Operand {
    /// The `flags` byte: bit 0 write, bit 1 conditional.
    pub fn flags(&self) -> u8 {
        self.write as u8 | (self.conditional as u8) << 1
    }
}

/// A mapped object file (§5, tag 1).
///
/// ```
/// let m = tf_trace::Module { id: 1, base: 0x400000, size: 0x1000,
///     path: b"/usr/bin/pigz".to_vec(), build_id: vec![] };
/// assert_eq!(m.file_name(), "pigz");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// Module id, from 1.
    pub id: ModuleId,
    /// Lowest mapped address.
    pub base: u64,
    /// Bytes mapped.
    pub size: u64,
    /// Path as the tracer saw it (normally UTF-8).
    pub path: Vec<u8>,
    /// Build id (may be empty).
    pub build_id: Vec<u8>,
}

/// A function (§5, tag 2).
///
/// ```
/// let f = tf_trace::Function { id: 1, entry: 0x401000, module: 0, name: b"main".to_vec() };
/// assert_eq!(f.name_lossy(), "main");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Function id, from 1.
    pub id: FunctionId,
    /// Address of its first instruction.
    pub entry: u64,
    /// Module id, 0 = unknown.
    pub module: ModuleId,
    /// The symbol as the tracer saw it (normally mangled; may be empty).
    pub name: Vec<u8>,
}

impl Function {
    /// The name as text (invalid UTF-8 replaced).
    pub fn name_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }
}
