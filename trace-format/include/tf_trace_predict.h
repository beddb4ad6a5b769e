/*
 * tf_trace_predict.h - the encoder's side of the prediction state (FORMAT.md
 * sections 6.2 and 6.3): the return stack, successor candidates and operand
 * addresses.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_PREDICT_H
#define TF_TRACE_PREDICT_H

#include "tf_trace_encoder.h"

static inline void tf__ret_push(tf_encoder *e, uint64_t a)
{
    unsigned i;
    if (e->ret_len == e->ret_cap) { /* full: discard the bottom */
        for (i = 1; i < e->ret_cap; i++)
            e->ret[i - 1] = e->ret[i];
        e->ret_len--;
    }
    e->ret[e->ret_len++] = a;
    e->ret_top = a;
}

static inline void tf__ret_pop(tf_encoder *e)
{
    e->ret_len--;
    e->ret_top = e->ret_len > 0 ? e->ret[e->ret_len - 1] : ~(uint64_t)0;
}

/* Steps 1-4 of section 6.2 for the execution of block `id` that follows
 * `prev`: returns its successor code, makes it the new `prev` and raises
 * max_exec. */
TF__INLINE uint64_t tf__enc_successor(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                      int partial)
{
    uint64_t s = (uint64_t)id + 2;
    uint32_t prev = e->prev;
    if (TF__LIKELY(prev != TF_NO_BLOCK)) {
        tf__succ_entry *pe = &e->succ[(prev * 0x9E3779B97F4A7C15ull) >> e->succ_shift];
        uint32_t s0 = TF_NO_BLOCK, s1 = TF_NO_BLOCK, c0, c1;
        int hit = pe->key == prev;
        if (TF__LIKELY(hit)) {
            s0 = pe->s0;
            s1 = pe->s1;
        }
        c0 = s0;
        c1 = s1;
        if (e->prev_end == TF_END_RETURN) {
            if (e->ret_len > 0) {
                uint32_t r = e->block_at(e->ctx, e->ret_top);
                if (r != TF_NO_BLOCK && (int64_t)r <= e->max_exec) {
                    c0 = r;
                    c1 = s0 == r ? s1 : s0;
                }
            }
        } else if (e->prev_end == TF_END_CALL || e->prev_end == TF_END_INDIRECT_CALL) {
            tf__ret_push(e, e->prev_next);
        }
        /* step 4, learn (the pop of step 3 does not touch this table) */
        if (TF__UNLIKELY(!hit)) {
            pe->key = prev;
            pe->s0 = id;
            pe->s1 = TF_NO_BLOCK;
        } else if (s0 != id) {
            pe->s1 = s0;
            pe->s0 = id;
        }
        s = c0 == id ? 0 : c1 == id ? 1 : s;
    }
    /* step 3, pop on arrival */
    if (e->ret_top == b->address)
        tf__ret_pop(e);
    e->prev = id;
    e->prev_end = partial ? (uint32_t)TF_END_OTHER : b->end;
    e->prev_next = b->address + b->code_len;
    if ((int64_t)id > e->max_exec)
        e->max_exec = id;
    return s;
}

/* Section 6.3 for one operand that is conditional or has no entry (the
 * general case): returns its record value, or 0 with *absent for an absent
 * operand. */
TF__INLINE uint64_t tf__enc_operand_general(tf_encoder *e, tf__addr_entry *E, uint64_t key,
                                            uint64_t a, uint64_t cond, int have_prev,
                                            uint64_t prev_addr, int *all_pred, int *bad)
{
    uint64_t ekey = E->key, mode = ekey & TF__ADDR_MODE_OFFSET, pred, d, v;
    int hit = (ekey ^ mode) == key;
    if (!hit)
        pred = have_prev ? prev_addr : e->last_any;
    else if (mode && have_prev)
        pred = prev_addr + E->offset;
    else
        pred = E->last + E->stride;
    d = a - pred;
    v = tf_zigzag((int64_t)d) + cond;
    *bad |= cond && v == 0;
    *all_pred &= d == 0;
    if (hit) {
        int stride_ok = E->last + E->stride == a;
        int offset_ok = have_prev && prev_addr + E->offset == a;
        if (mode ? !offset_ok && stride_ok : !stride_ok && offset_ok)
            E->key = ekey ^ TF__ADDR_MODE_OFFSET;
        E->stride = a - E->last;
        if (have_prev)
            E->offset = a - prev_addr;
    } else {
        E->key = key | (have_prev ? TF__ADDR_MODE_OFFSET : 0);
        E->stride = 0;
        E->offset = have_prev ? a - prev_addr : 0;
    }
    E->last = a;
    return v;
}

/* An operand that is conditional or has no entry: its record value, and
 * whether it is present (an absent operand changes nothing). */
TF__INLINE uint64_t tf__enc_operand_other(tf_encoder *e, tf__addr_entry *E, uint64_t key,
                                          uint64_t a, uint8_t flags, int have_prev,
                                          uint64_t prev_addr, int *all_pred, int *bad,
                                          int *present)
{
    *present = !(flags & TF_OP_COND) || a != TF_ABSENT;
    if (!*present) {
        *all_pred = 0;
        return 0;
    }
    return tf__enc_operand_general(e, E, key, a, (flags >> 1) & 1, have_prev, prev_addr, all_pred,
                                   bad);
}

/* Section 6.3 for the operands of one execution: predicts, stores each
 * value of the record in e->scratch and updates the state. Returns 1 if every
 * operand is present and predicted, 0 if not, -1 for an inexpressible value.
 * Two loops: up to the first present operand (no previous operand: offset
 * mode predicts by the stride), and after it. */
TF__INLINE int tf__enc_operands(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                uint32_t n_ops, const uint64_t *addrs)
{
    const uint8_t *flags = b->op_flags;
    uint64_t *vals = e->scratch;
    tf__addr_entry *table = e->addr;
    unsigned shift = e->addr_shift;
    uint64_t key = (uint64_t)id << 16, prev_addr = 0;
    uint64_t h = key * 0x9E3779B97F4A7C15ull; /* hash(key) before the shift */
    int all_pred = 1, bad = 0;
    uint32_t j = 0;
    for (;; j++, key++, h += 0x9E3779B97F4A7C15ull) {
        uint64_t a, ekey;
        tf__addr_entry *E;
        if (j == n_ops)
            return all_pred; /* no operand present: nothing else changes */
        a = addrs[j];
        E = &table[h >> shift];
        ekey = E->key;
        if (TF__LIKELY((ekey & ~TF__ADDR_MODE_OFFSET) == key && !(flags[j] & TF_OP_COND))) {
            /* the stride predicts; offset mode, right or wrong, switches
             * to stride mode when the stride was right */
            uint64_t last = E->last;
            uint64_t d = a - (last + E->stride);
            vals[j] = tf_zigzag((int64_t)d);
            if (d == 0)
                E->key = key;
            else
                all_pred = 0;
            E->stride = a - last;
            E->last = a;
        } else {
            int present;
            vals[j] = tf__enc_operand_other(e, E, key, a, flags[j], 0, 0, &all_pred, &bad,
                                            &present);
            if (!present)
                continue;
        }
        prev_addr = a;
        break;
    }
    for (j++, key++, h += 0x9E3779B97F4A7C15ull; j < n_ops;
         j++, key++, h += 0x9E3779B97F4A7C15ull) {
        uint64_t a = addrs[j];
        tf__addr_entry *E = &table[h >> shift];
        uint64_t ekey = E->key, mode = ekey & TF__ADDR_MODE_OFFSET;
        if (TF__LIKELY((ekey ^ mode) == key && !(flags[j] & TF_OP_COND))) {
            uint64_t last = E->last;
            uint64_t by_stride = last + E->stride;
            uint64_t by_offset = prev_addr + E->offset;
            uint64_t d = a - (mode ? by_offset : by_stride);
            vals[j] = tf_zigzag((int64_t)d);
            if (TF__UNLIKELY(d != 0)) {
                /* the mode switches when only the other prediction was right */
                int stride_ok = by_stride == a;
                int offset_ok = by_offset == a;
                all_pred = 0;
                if (mode ? !offset_ok && stride_ok : !stride_ok && offset_ok)
                    E->key = ekey ^ TF__ADDR_MODE_OFFSET;
            }
            E->stride = a - last;
            E->offset = a - prev_addr;
            E->last = a;
        } else {
            int present;
            vals[j] = tf__enc_operand_other(e, E, key, a, flags[j], 1, prev_addr, &all_pred, &bad,
                                            &present);
            if (!present)
                continue;
        }
        prev_addr = a;
    }
    e->last_any = prev_addr;
    return TF__UNLIKELY(bad) ? -1 : all_pred; /* bad: a difference of -2^63 */
}

#endif /* TF_TRACE_PREDICT_H */
