//! Where a stripped program's `main` starts, so that `--unit auto` cuts the
//! first thread's unit at it as when a symbol names it: the address that
//! the program's entry code (`_start`) hands `__libc_start_main` in its
//! first argument. glibc's x86-64 start code loads it right before that
//! call, with `lea rdi, [rip + main]` (or `mov rdi, main` without PIE).

use crate::symbols::module_file;
use iced_x86::{Decoder, DecoderOptions, FlowControl, Mnemonic, OpKind, Register};
use object::Object;
use tf_trace::{Block, BlockTable};

/// `main`'s address, from the entry code of the module whose entry point
/// ran (a block starts there) and ends in a call with its first argument
/// set from a constant address; `None` when no module's does.
pub fn main_from_entry(table: &BlockTable) -> Option<u64> {
    table.modules().iter().find_map(|m| {
        let (data, bias) = module_file(&m.path, m.base)?;
        let entry = object::File::parse(&*data).ok()?.entry();
        let start = table.block(table.block_at(entry.wrapping_add(bias))?)?;
        first_argument_of_call(&start)
    })
}

/// The constant address block `b` puts in `rdi` before the call it ends
/// with, if it does.
fn first_argument_of_call(b: &Block<'_>) -> Option<u64> {
    let mut decoder = Decoder::with_ip(64, b.code(), b.address(), DecoderOptions::NONE);
    let mut rdi = None;
    let mut last_is_call = false;
    for insn in decoder.iter() {
        last_is_call = matches!(
            insn.flow_control(),
            FlowControl::Call | FlowControl::IndirectCall
        );
        if !matches!(insn.op0_register(), Register::RDI | Register::EDI) {
            continue;
        }
        rdi = match (insn.mnemonic(), insn.op1_kind()) {
            (Mnemonic::Lea, OpKind::Memory) if insn.is_ip_rel_memory_operand() => {
                Some(insn.ip_rel_memory_address())
            }
            (Mnemonic::Mov, OpKind::Immediate32to64 | OpKind::Immediate64) => {
                Some(insn.immediate(1))
            }
            (Mnemonic::Mov, OpKind::Immediate32) => Some(insn.immediate(1) & 0xffff_ffff),
            // anything else written to rdi: not a constant address
            _ => None,
        };
    }
    rdi.filter(|_| last_is_call)
}
