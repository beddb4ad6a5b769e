//! The translation of hand-assembled x86 instructions.

use crate::translate::{translate, BlockCode, MemKind, MemOp, RiscOp, TraceOperand};

fn op(insn: u16, size: u16, write: bool) -> TraceOperand {
    TraceOperand { insn, size, write }
}

/// Translates instructions given as byte strings, with the trace operands.
fn lower(insns: &[&[u8]], operands: &[TraceOperand]) -> BlockCode {
    let code: Vec<u8> = insns.concat();
    let lens: Vec<u8> = insns.iter().map(|i| i.len() as u8).collect();
    let b = translate(&code, 0x401000, &lens, operands).unwrap();
    assert_eq!(b.undecoded, 0);
    b
}

/// One line per operation: opcode, dst, srcs, memory (operand, offset, width, kind).
fn show(b: &BlockCode) -> Vec<String> {
    b.insns
        .iter()
        .flat_map(|i| i.ops.iter())
        .map(
            |RiscOp {
                 opcode,
                 dst,
                 srcs,
                 mem,
             }| {
                let mut s = format!("{opcode} {dst:?} {srcs:?}");
                if let Some(MemOp {
                    operand,
                    offset,
                    width,
                    kind,
                }) = mem
                {
                    s += &format!(" m{operand}+{offset}:{width}:{kind:?}");
                }
                s
            },
        )
        .collect()
}

#[test]
fn push_pop_call_ret_get_their_stack_accesses() {
    // push rbx; pop rbp; call +0; ret
    let b = lower(
        &[&[0x53], &[0x5d], &[0xe8, 0, 0, 0, 0], &[0xc3]],
        &[
            op(0, 8, true),
            op(1, 8, false),
            op(2, 8, true),
            op(3, 8, false),
        ],
    );
    assert_eq!(
        show(&b),
        [
            "ST None [4, 3] m0+0:8:Store",
            "LD Some(5) [4] m1+0:8:Load",
            "ST None [4] m2+0:8:Store",
            "CALL.REL.NOINC None []",
            "LD Some(17) [4] m3+0:8:Load",
            "RET.REL.NODEC None [17]",
        ]
    );
}

#[test]
fn memory_source_is_a_load_then_the_operation_memory_destination_the_operation_then_a_store() {
    // mov [rdi+8], eax; add dword [rdi], 1; mov rax, [rbx+rcx*8]
    let b = lower(
        &[
            &[0x89, 0x47, 0x08],
            &[0x83, 0x07, 0x01],
            &[0x48, 0x8b, 0x04, 0xcb],
        ],
        &[
            op(0, 4, true),
            op(1, 4, false),
            op(1, 4, true),
            op(2, 8, false),
        ],
    );
    assert_eq!(
        show(&b),
        [
            "ST None [7, 0] m0+0:4:Store",
            "LD Some(17) [7] m1+0:4:Load",
            "IADD3 Some(17) [17] ",
            "ST None [7, 17] m2+0:4:Store",
            "LD Some(0) [3, 1] m3+0:8:Load",
        ]
        .map(|s| s.trim_end().to_string())
    );
}

#[test]
fn branches_read_the_flags_of_the_instruction_that_set_them() {
    // cmp eax, ebx; jne +0; dec ecx; jne +0
    let b = lower(
        &[&[0x39, 0xd8], &[0x75, 0x00], &[0xff, 0xc9], &[0x75, 0x00]],
        &[],
    );
    assert_eq!(
        show(&b),
        [
            "ISETP.NE.AND Some(16) [0, 3]",
            "BRA None [16]",
            "IADD3 Some(1) [1]",
            "BRA None [1]",
        ]
    );
}

#[test]
fn floating_point_and_vector_registers() {
    // movups xmm0, [rsi]; mulsd xmm0, xmm1; vmovdqu ymm2, [rsi] (32 bytes: two 16-byte loads)
    let b = lower(
        &[
            &[0x0f, 0x10, 0x06],
            &[0xf2, 0x0f, 0x59, 0xc1],
            &[0xc5, 0xfe, 0x6f, 0x16],
        ],
        &[op(0, 16, false), op(2, 32, false)],
    );
    assert_eq!(
        show(&b),
        [
            "LD Some(19) [6] m0+0:16:Load",
            "DMUL Some(19) [19, 20]",
            "LD Some(21) [6] m1+0:16:Load",
            "LD Some(21) [6] m1+16:16:Load",
        ]
    );
}

#[test]
fn locked_read_modify_write_is_one_atomic() {
    // lock add [rdi], eax
    let b = lower(&[&[0xf0, 0x01, 0x07]], &[op(0, 4, false), op(0, 4, true)]);
    let ops = &b.insns[0].ops;
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0].opcode, "ATOMG.E.ADD.STRONG.GPU");
    assert_eq!(
        ops[0].mem.unwrap().kind,
        MemKind::Atomic("ATOMG.E.ADD.STRONG.GPU")
    );
    assert_eq!(ops[1].mem.unwrap().kind, MemKind::AtomicWrite);
}

#[test]
fn division_expands_and_register_moves_are_one_mov() {
    // div rcx; mov rbx, rax
    let b = lower(&[&[0x48, 0xf7, 0xf1], &[0x48, 0x89, 0xc3]], &[]);
    assert_eq!(b.insns[0].ops.len(), 7);
    assert_eq!(b.insns[0].ops[0].opcode, "I2F.U32.RP");
    assert!(b.insns[0].ops.iter().all(|o| o.srcs.len() <= 4));
    assert_eq!(show(&b)[7], "MOV Some(3) [0]");
}

#[test]
fn undecodable_bytes_become_a_nop_and_keep_their_accesses() {
    let b = translate(&[0x0f, 0x0b], 0, &[2], &[]).unwrap(); // ud2 decodes
    assert_eq!(b.undecoded, 0);
    let b = translate(&[0xff, 0xff], 0, &[2], &[op(0, 4, false)]).unwrap();
    assert_eq!(b.undecoded, 1);
    assert_eq!(b.insns[0].ops.len(), 2);
    assert!(translate(&[0x90], 0, &[1], &[op(3, 4, false)]).is_err());
}
