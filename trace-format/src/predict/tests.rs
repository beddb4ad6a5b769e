//! The prediction state against §6.2 and §6.3, rule by rule.

use super::*;

#[test]
fn hash_is_the_golden_ratio_top_bits() {
    assert_eq!(hash(0, 12), 0);
    assert_eq!(hash(1, 8), (GOLDEN >> 56) as usize);
    assert_eq!(hash(1, 8), 0x9E);
    assert_eq!(hash(2, 12), (GOLDEN.wrapping_mul(2) >> 52) as usize);
}

#[test]
fn entries_of_an_earlier_chunk_are_empty_across_the_generation_wrap() {
    let mut p = Predictor::new(TableParams::default());
    let learn = |p: &mut Predictor| {
        let pr = p.predict(7, 3, None);
        p.update(pr, 5000, None);
        assert!(p.predict(7, 3, None).hit);
    };
    // The largest block id and operand index still fit below the generation.
    let tag = p.tag((u64::from(NONE - 1) << 16) | 0xffff);
    assert_eq!(tag >> GEN_SHIFT, u64::from(p.gen));
    for gen in [GEN_MAX - 1, GEN_MAX] {
        p.gen = gen - 1;
        p.reset();
        assert_eq!(p.gen, gen);
        learn(&mut p);
        p.reset();
        assert!(
            !p.predict(7, 3, None).hit,
            "generation {gen} seen after a reset"
        );
    }
    // Past the last generation the tables were cleared and counting restarts.
    assert_eq!(p.gen, 1);
    p.gen = GEN_MAX - 1;
    learn(&mut p);
    p.gen = 1;
    assert!(!p.predict(7, 3, None).hit);
}

#[test]
fn address_modes() {
    let mut p = Predictor::new(TableParams::default());
    // First sight: predicted as last_any (0), creates a stride entry.
    let pr = p.predict(5, 0, None);
    assert_eq!(pr.addr, 0);
    p.update(pr, 1000, None);
    // Stride 0 until a second value is seen.
    let pr = p.predict(5, 0, None);
    assert_eq!(pr.addr, 1000);
    p.update(pr, 1008, None);
    assert_eq!(p.predict(5, 0, None).addr, 1016);
    // Operand 1 follows operand 0 at a fixed offset: offset mode at once.
    let pr = p.predict(5, 1, Some(1016));
    assert_eq!(pr.addr, 1016, "no entry: predicted as the previous operand");
    p.update(pr, 1020, Some(1016));
    assert_eq!(p.predict(5, 1, Some(2000)).addr, 2004);
}

#[test]
fn return_stack_discards_the_bottom() {
    let mut t = BlockTable::new();
    let mut out = Vec::new();
    crate::block_table::encode::block(&mut out, 0, 0x100, 0, EndKind::Call, &[0x90], &[1], &[]);
    t.decode_chunk(&out).unwrap();
    let mut p = Predictor::new(TableParams {
        ret_stack_depth: 2,
        ..TableParams::default()
    });
    let rec = *t.rec(0);
    for _ in 0..3 {
        p.arrive(0, 0x100);
        p.depart(0, &rec, true, &t);
    }
    assert_eq!(p.ret_len, 2);
    p.arrive(0, 0x101);
    assert_eq!(p.ret_len, 1);
}
