//! Where a canonical block can go next, read from its code: the static
//! successors of its last instruction. A loop whose back edge never ran in
//! the trace (every chunk of a worksharing loop held one iteration) still
//! has that edge in its code.

use crate::blocks::{CBlockId, CanonicalBlocks};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register};
use tf_trace::BlockTable;

/// The addresses `c` can continue at within its function: a direct jump's
/// target; a conditional branch's target and the next instruction; the next
/// instruction after a call (the callee returns there) or any other
/// instruction; none after a return or an indirect jump.
pub fn successors(canon: &CanonicalBlocks, table: &BlockTable, c: CBlockId) -> Vec<u64> {
    let cb = canon.block(c);
    let next = cb.end_address;
    let (origin, first, _) = cb.origin;
    let Some(block) = table.block(origin) else {
        return vec![next];
    };
    let last = first as usize + cb.n_insns as usize - 1;
    let (Some(&start), Some(&len)) = (
        block.insn_offsets().get(last),
        block.insn_lengths().get(last),
    ) else {
        return vec![next];
    };
    let Some(code) = block
        .code()
        .get(start as usize..start as usize + len as usize)
    else {
        return vec![next];
    };
    let insn = Decoder::with_ip(64, code, block.insn_address(last), DecoderOptions::NONE).decode();
    match insn.flow_control() {
        FlowControl::UnconditionalBranch => vec![insn.near_branch_target()],
        FlowControl::ConditionalBranch => vec![insn.near_branch_target(), next],
        FlowControl::Return | FlowControl::IndirectBranch | FlowControl::Exception => vec![],
        _ => vec![next],
    }
}

/// Whether `c` divides integers (`div` or `idiv`): the mark of the code
/// that splits a loop among a team's threads (crate::static_schedule).
pub fn divides(canon: &CanonicalBlocks, table: &BlockTable, c: CBlockId) -> bool {
    instructions(canon, table, c).any(|i| matches!(i.mnemonic(), Mnemonic::Div | Mnemonic::Idiv))
}

/// Whether `c` computes on several lanes of a vector register at once
/// (`paddq`, `addpd`, `vfmadd231ps` …; not moves, logic or scalar `…sd`
/// forms): the mark of a vectorized loop, whose pass runs several
/// iterations (crate::static_schedule).
pub fn vector_arithmetic(canon: &CanonicalBlocks, table: &BlockTable, c: CBlockId) -> bool {
    const PACKED_INT: [&str; 4] = ["padd", "psub", "pmul", "pmadd"];
    const PACKED_FP: [&str; 13] = [
        "add", "sub", "mul", "div", "sqrt", "max", "min", "fmadd", "fmsub", "fnmadd", "fnmsub",
        "hadd", "hsub",
    ];
    instructions(canon, table, c).any(|i| {
        let name = format!("{:?}", i.mnemonic()).to_lowercase();
        let n = name.strip_prefix('v').unwrap_or(&name);
        PACKED_INT.iter().any(|p| n.starts_with(p))
            || ((n.ends_with("ps") || n.ends_with("pd"))
                && PACKED_FP.iter().any(|p| n.starts_with(p)))
    })
}

/// Whether `c` holds a `pause`: the spin-wait hint, the mark of code that
/// waits by spinning on memory (crate::spin_wait).
pub fn pauses(canon: &CanonicalBlocks, table: &BlockTable, c: CBlockId) -> bool {
    instructions(canon, table, c).any(|i| i.mnemonic() == Mnemonic::Pause)
}

/// The constants `c` adds (`lea r, [b + C]` or `add r, C`) before a
/// conditional move: the mark of GCC's `schedule(static, C)`, which bounds
/// each chunk at `min(start + C, n)` (crate::static_schedule).
pub fn chunk_bounds(canon: &CanonicalBlocks, table: &BlockTable, c: CBlockId) -> Vec<u64> {
    let mut added = Vec::new();
    let mut bounds = Vec::new();
    for i in instructions(canon, table, c) {
        match i.mnemonic() {
            Mnemonic::Lea
                if i.memory_index() == Register::None && i.memory_base() != Register::RIP =>
            {
                added.push(i.memory_displacement64());
            }
            Mnemonic::Add if i.op_count() == 2 && i.op1_kind() != OpKind::Register => {
                if let Ok(imm) = i.try_immediate(1) {
                    added.push(imm);
                }
            }
            m if is_cmov(m) => bounds.append(&mut added),
            _ => {}
        }
    }
    bounds.retain(|&b| b > 1 && b < 1 << 32);
    bounds.sort_unstable();
    bounds.dedup();
    bounds
}

fn is_cmov(m: Mnemonic) -> bool {
    matches!(
        m,
        Mnemonic::Cmova
            | Mnemonic::Cmovae
            | Mnemonic::Cmovb
            | Mnemonic::Cmovbe
            | Mnemonic::Cmove
            | Mnemonic::Cmovg
            | Mnemonic::Cmovge
            | Mnemonic::Cmovl
            | Mnemonic::Cmovle
            | Mnemonic::Cmovne
    )
}

/// Whether blocks `a` and `b` run the same instruction forms up to their
/// last (which may branch elsewhere), at least two of them, whatever their
/// registers and displacements: the copies of an unrolled loop's body
/// (crate::static_split).
pub fn same_code(canon: &CanonicalBlocks, table: &BlockTable, a: CBlockId, b: CBlockId) -> bool {
    let forms = |c| {
        instructions(canon, table, c)
            .map(|i| i.code())
            .collect::<Vec<_>>()
    };
    let (fa, fb) = (forms(a), forms(b));
    fa.len() >= 3 && fa.len() == fb.len() && fa[..fa.len() - 1] == fb[..fb.len() - 1]
}

/// The instructions of `c`, decoded from its origin block's code.
pub(crate) fn instructions<'a>(
    canon: &CanonicalBlocks,
    table: &'a BlockTable,
    c: CBlockId,
) -> impl Iterator<Item = Instruction> + 'a {
    let cb = canon.block(c);
    let (origin, first, _) = cb.origin;
    let first = first as usize;
    let code = table.block(origin).and_then(|block| {
        let start = *block.insn_offsets().get(first)?;
        Some((
            block.code().get(start as usize..)?,
            block.insn_address(first),
        ))
    });
    let n = if code.is_some() {
        cb.n_insns as usize
    } else {
        0
    };
    let (code, ip) = code.unwrap_or((&[], 0));
    let mut d = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    (0..n).map(move |_| d.decode())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempTrace;
    use tf_trace::{BlockDef, EndKind};

    #[test]
    fn branches_jumps_and_falls() {
        let mut t = TempTrace::new();
        // 0x1000: add rax, 1; cmp rax, rbx; jl 0x1000
        let branch = BlockDef::new(0x1000)
            .code(&[0x48, 0x83, 0xc0, 0x01, 0x48, 0x39, 0xd8, 0x7c, 0xf7])
            .insns(&[4, 3, 2])
            .end(EndKind::Branch);
        // 0x2000: jmp 0x2010
        let jump = BlockDef::new(0x2000)
            .code(&[0xeb, 0x0e])
            .insns(&[2])
            .end(EndKind::Jump);
        // 0x3000: ret
        let ret = BlockDef::new(0x3000)
            .code(&[0xc3])
            .insns(&[1])
            .end(EndKind::Return);
        for d in [&branch, &jump, &ret] {
            t.writer().block(d).unwrap();
        }
        let trace = t.finish();
        let canon = CanonicalBlocks::build(trace.blocks());
        let at = |a| {
            (0..canon.len() as CBlockId)
                .find(|&c| canon.block(c).address == a)
                .unwrap()
        };
        let succ = |a| successors(&canon, trace.blocks(), at(a));
        assert_eq!(succ(0x1000), [0x1000, 0x1009]);
        assert_eq!(succ(0x2000), [0x2010]);
        assert!(succ(0x3000).is_empty());
    }
}
