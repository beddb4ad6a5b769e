//! Encoders of block-table records, used by the writer.

use super::{BlockId, EndKind, FunctionId, ModuleId, Operand};
use crate::varint;

pub(crate) fn module(
    out: &mut Vec<u8>,
    id: ModuleId,
    base: u64,
    size: u64,
    path: &[u8],
    build_id: &[u8],
) {
    varint::put(out, 1);
    varint::put(out, id as u64);
    varint::put(out, base);
    varint::put(out, size);
    varint::put_bytes(out, path);
    varint::put_bytes(out, build_id);
}

pub(crate) fn function(
    out: &mut Vec<u8>,
    id: FunctionId,
    entry: u64,
    module: ModuleId,
    name: &[u8],
) {
    varint::put(out, 2);
    varint::put(out, id as u64);
    varint::put(out, entry);
    varint::put(out, module as u64);
    varint::put_bytes(out, name);
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn block(
    out: &mut Vec<u8>,
    id: BlockId,
    address: u64,
    function: FunctionId,
    end: EndKind,
    code: &[u8],
    lens: &[u8],
    ops: &[Operand],
) {
    varint::put(out, 3);
    varint::put(out, id as u64);
    varint::put(out, address);
    varint::put(out, function as u64);
    varint::put(out, end as u64);
    varint::put_bytes(out, code);
    varint::put(out, lens.len() as u64);
    out.extend_from_slice(lens);
    varint::put(out, ops.len() as u64);
    for op in ops {
        varint::put(out, op.insn as u64);
        out.push(op.flags());
        varint::put(out, op.size as u64);
    }
}
