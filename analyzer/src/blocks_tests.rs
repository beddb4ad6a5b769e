use super::*;
use crate::testutil::TempTrace;
use tf_trace::BlockDef;

fn table(defs: &[BlockDef]) -> (TempTrace, Vec<BlockId>) {
    let mut t = TempTrace::new();
    let ids = defs.iter().map(|d| t.writer().block(d).unwrap()).collect();
    (t, ids)
}

/// [0x10, 0x30): four 8-byte instructions with one access each (reads of
/// 4, 4 and 8 bytes, a write of 4), ending in a branch.
fn four_accesses_at_0x10() -> BlockDef {
    BlockDef::new(0x10)
        .insn(8)
        .read(4)
        .insn(8)
        .read(4)
        .insn(8)
        .read(8)
        .insn(8)
        .write(4)
        .end(EndKind::Branch)
}

/// [0x20, 0x30): the last two instructions of [`four_accesses_at_0x10`]
/// entered on their own (a read of 8 bytes, a write of 4), ending in a
/// branch.
fn tail_at_0x20() -> BlockDef {
    BlockDef::new(0x20)
        .insn(8)
        .read(8)
        .insn(8)
        .write(4)
        .end(EndKind::Branch)
}

#[test]
fn overlapping_blocks_share_their_common_tail() {
    // A = [0x10..0x30) of four 8-byte instructions with one access each;
    // B enters at 0x20. C = [0x40, 0x44) overlaps nothing.
    let a = four_accesses_at_0x10();
    let b = tail_at_0x20();
    let c = BlockDef::new(0x40).insn(4).end(EndKind::Return);
    let (t, ids) = table(&[a, b, c]);
    let trace = t.finish();
    let canon = CanonicalBlocks::build(trace.blocks());
    assert_eq!(canon.len(), 3);
    let pa = canon.pieces(ids[0]);
    let pb = canon.pieces(ids[1]);
    assert_eq!(pa.len(), 2);
    assert_eq!(pb.len(), 1);
    assert_eq!(pa[1].cblock, pb[0].cblock);
    let head = canon.block(pa[0].cblock);
    assert_eq!(
        (head.address, head.end_address, head.n_insns, head.n_ops),
        (0x10, 0x20, 2, 2)
    );
    assert_eq!(head.end, EndKind::Fallthrough);
    let tail = canon.block(pb[0].cblock);
    assert_eq!(
        (tail.address, tail.end_address, tail.n_insns, tail.n_ops),
        (0x20, 0x30, 2, 2)
    );
    assert_eq!(tail.end, EndKind::Branch);
    assert_eq!((pa[1].first_insn, pa[1].first_op), (2, 2));
    assert_eq!(
        canon.block(canon.pieces(ids[2])[0].cblock).end,
        EndKind::Return
    );
}

#[test]
fn steps_split_accesses_and_stop_at_a_fault() {
    let a = four_accesses_at_0x10();
    let b = BlockDef::new(0x20).insn(8).end(EndKind::Jump);
    let (t, ids) = table(&[a, b]);
    let trace = t.finish();
    let canon = CanonicalBlocks::build(trace.blocks());
    let acc = |operand: u16, addr: u64| Access {
        operand,
        addr,
        size: 4,
        write: false,
    };
    let all = [acc(0, 100), acc(1, 200), acc(2, 300), acc(3, 400)];
    let s: Vec<Step> = steps(&canon, ids[0], 4, true, &all).collect();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].accesses, &all[..2]);
    assert_eq!(s[1].accesses, &all[2..]);
    assert_eq!(
        (s[0].end, s[1].end),
        (EndKind::Fallthrough, EndKind::Branch)
    );
    assert_eq!(s[1].first_op, 2);
    // Faulted in the third instruction: one whole piece, one cut short.
    let s: Vec<Step> = steps(&canon, ids[0], 3, false, &all[..3]).collect();
    assert_eq!(s.len(), 2);
    assert_eq!((s[1].insns, s[1].end), (1, EndKind::Other));
    // Faulted in the second instruction: the first piece is cut short.
    let s: Vec<Step> = steps(&canon, ids[0], 1, false, &all[..1]).collect();
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].insns, s[0].end), (1, EndKind::Other));
}

#[test]
fn a_one_piece_block_is_one_step_as_cutting_gives() {
    // B = [0x20, 0x30) is one piece of its own; A = [0x10, 0x30) is two.
    let a = four_accesses_at_0x10();
    let b = tail_at_0x20();
    let (t, ids) = table(&[a, b]);
    let trace = t.finish();
    let canon = CanonicalBlocks::build(trace.blocks());
    assert_eq!(canon.whole[ids[0] as usize], None);
    let piece = canon.pieces(ids[1])[0];
    assert_eq!(
        canon.whole[ids[1] as usize],
        Some((piece.cblock, EndKind::Branch))
    );
    let acc = |operand: u16, addr: u64| Access {
        operand,
        addr,
        size: 4,
        write: operand == 1,
    };
    let all = [acc(0, 100), acc(1, 200)];
    // Complete: the whole piece, as cutting it gives.
    let s: Vec<Step> = steps(&canon, ids[1], 2, true, &all).collect();
    let mut left = 2;
    let (ran, end, end_op) = piece.cut(&canon, &mut left, true);
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].cblock, s[0].insns, s[0].end, s[0].first_op),
        (piece.cblock, ran, end, piece.first_op)
    );
    assert_eq!((s[0].accesses, end_op), (&all[..], 2));
    // Not complete though every instruction ran (the last one faulted): cut
    // short, not whole.
    let s: Vec<Step> = steps(&canon, ids[1], 2, false, &all[..1]).collect();
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].insns, s[0].end, s[0].accesses),
        (2, EndKind::Other, &all[..1])
    );
}

#[test]
fn other_code_at_the_same_address_is_another_block() {
    // Code written at run time: at 0x1000, first `xor eax,eax; xor ecx,ecx`
    // then `mov eax,edi; add eax,eax`, both 4 bytes long; and the first
    // code once more, as a tracer that did not reuse its id would record it.
    let first = BlockDef::new(0x1000)
        .code(&[0x31, 0xc0, 0x31, 0xc9])
        .insns(&[2, 2])
        .end(EndKind::Fallthrough);
    let other = BlockDef::new(0x1000)
        .code(&[0x89, 0xf8, 0x01, 0xc0])
        .insns(&[2, 2])
        .end(EndKind::Fallthrough);
    let (t, ids) = table(&[first.clone(), other, first]);
    let trace = t.finish();
    let canon = CanonicalBlocks::build(trace.blocks());
    let block = |k: usize| canon.pieces(ids[k])[0].cblock;
    assert_ne!(
        block(0),
        block(1),
        "other code: lanes running it never meet"
    );
    assert_eq!(
        block(0),
        block(2),
        "the same code at the same place: one block"
    );
    assert_eq!(canon.len(), 2);
    assert_eq!(canon.block(block(1)).origin.0, ids[1]);
}
