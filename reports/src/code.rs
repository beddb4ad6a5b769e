//! A canonical block's machine code: its instructions' addresses, their
//! source lines (DWARF), which instruction each memory operand belongs to,
//! and their disassembly (iced-x86, Intel syntax) from the trace's code bytes.

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use std::collections::HashMap;
use std::sync::Mutex;
use tf_analyzer::blocks::CBlock;
use tf_analyzer::symbols::{SourceLine, SourceLines};
use tf_trace::Trace;

/// Looks up code, lines and source text, caching what it read.
pub struct CodeView<'a> {
    trace: &'a Trace,
    lines: SourceLines,
    line_cache: Mutex<HashMap<u64, Option<SourceLine>>>,
    files: Mutex<HashMap<String, Option<Vec<String>>>>,
}

impl<'a> CodeView<'a> {
    /// A view of `trace`'s code.
    pub fn new(trace: &'a Trace) -> CodeView<'a> {
        CodeView {
            trace,
            lines: SourceLines::new(trace.blocks()),
            line_cache: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// Addresses of the block's instructions.
    pub fn addresses(&self, b: &CBlock) -> Vec<u64> {
        let (id, first, _) = b.origin;
        match self.trace.blocks().block(id) {
            Some(block) => (0..b.n_insns as usize)
                .map(|k| block.insn_address(first as usize + k))
                .collect(),
            None => vec![b.address; b.n_insns as usize],
        }
    }

    /// For each memory operand of the block, the index of its instruction.
    pub fn operand_instructions(&self, b: &CBlock) -> Vec<usize> {
        let (id, first, first_op) = b.origin;
        let Some(block) = self.trace.blocks().block(id) else {
            return vec![0; b.n_ops as usize];
        };
        block
            .operands()
            .iter()
            .skip(first_op as usize)
            .take(b.n_ops as usize)
            .map(|o| (o.insn as usize).saturating_sub(first as usize))
            .collect()
    }

    /// The source line of the instruction at `addr`.
    pub fn line(&self, addr: u64) -> Option<SourceLine> {
        let mut cache = self.line_cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(addr)
            .or_insert_with(|| self.lines.line(addr))
            .clone()
    }

    /// The text of `line` (1-based) of `file`, when the file can be read.
    pub fn source_text(&self, file: &str, line: u32) -> Option<String> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let lines = files.entry(file.to_string()).or_insert_with(|| {
            let bytes = std::fs::read(file).ok()?;
            Some(
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_string)
                    .collect(),
            )
        });
        lines
            .as_ref()?
            .get((line as usize).checked_sub(1)?)
            .map(|s| s.trim_end().to_string())
    }

    /// The block's instructions as `(address, Intel syntax)`, decoded from
    /// the code bytes the tracer recorded.
    pub fn disassemble(&self, b: &CBlock) -> Vec<(u64, String)> {
        let (id, first, _) = b.origin;
        let Some(block) = self.trace.blocks().block(id) else {
            return Vec::new();
        };
        let offsets = block.insn_offsets();
        let start = offsets.get(first as usize).copied().unwrap_or(0) as usize;
        let end = offsets
            .get(first as usize + b.n_insns as usize)
            .map_or(block.code().len(), |&o| o as usize);
        let Some(code) = block.code().get(start..end) else {
            return Vec::new();
        };
        disassemble(code, b.address)
    }
}

/// Decodes x86-64 `code` loaded at `ip`, one line per instruction.
///
/// ```
/// // mov eax, 1; jne 0x1000; ret
/// let asm = tf_reports::code::disassemble(&[0xb8, 1, 0, 0, 0, 0x75, 0xf9, 0xc3], 0x1000);
/// let text: Vec<&str> = asm.iter().map(|(_, t)| t.as_str()).collect();
/// assert_eq!(text, ["mov eax,1", "jne 0x1000", "ret"]);
/// assert_eq!(asm[2].0, 0x1007);
/// ```
pub fn disassemble(code: &[u8], ip: u64) -> Vec<(u64, String)> {
    let mut decoder = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let o = formatter.options_mut();
    o.set_space_after_operand_separator(false);
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_branch_leading_zeros(false);
    o.set_show_branch_size(false);
    let mut insn = Instruction::default();
    let mut out = Vec::new();
    while decoder.can_decode() {
        decoder.decode_out(&mut insn);
        let mut text = String::new();
        formatter.format(&insn, &mut text);
        out.push((insn.ip(), text));
    }
    out
}
