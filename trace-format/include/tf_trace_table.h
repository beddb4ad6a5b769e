/*
 * tf_trace_table.h - block-table records (FORMAT.md section 5: module,
 * function, block), written to a tf_stream.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_TABLE_H
#define TF_TRACE_TABLE_H

#include "tf_trace_stream.h"

/* ------------------------------------------------------------------------
 * 4. Block-table records (section 5), written to a tf_stream
 * ------------------------------------------------------------------------ */

typedef struct tf_block_op {
    uint16_t insn;  /* index of the instruction in the block */
    uint8_t flags;  /* TF_OP_WRITE | TF_OP_COND */
    uint16_t size;  /* bytes accessed, 1..=4096 */
} tf_block_op;

typedef struct tf_block_rec {
    uint64_t id;
    uint64_t address;
    uint64_t function;        /* function id, 0 = unknown */
    unsigned end;             /* enum tf_end */
    const uint8_t *code;      /* code_len bytes */
    uint32_t code_len;        /* = sum of lengths */
    uint32_t n_insns;         /* 1..=4096 */
    const uint8_t *lengths;   /* n_insns bytes, each 1..=15 */
    uint32_t n_ops;           /* 0..=2048 */
    const tf_block_op *ops;   /* n_ops operands, insn non-decreasing */
} tf_block_rec;

/* Upper bound of the encoded size of a block record. */
static inline size_t tf_table_block_size(const tf_block_rec *b)
{
    return 5 * TF_VARINT_MAX + TF_VARINT_MAX + b->code_len + TF_VARINT_MAX + b->n_insns +
           TF_VARINT_MAX + (size_t)b->n_ops * (3 + 1 + 2);
}

static inline int tf_table_module(tf_stream *s, uint64_t id, uint64_t base, uint64_t size,
                                  const void *path, size_t path_len, const void *build_id,
                                  size_t build_id_len)
{
    uint8_t *p, *q;
    if (tf__stream_room(s, 4 * TF_VARINT_MAX + 2 * TF_VARINT_MAX + path_len + build_id_len))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_MODULE);
    q += tf_put_varint(q, id);
    q += tf_put_varint(q, base);
    q += tf_put_varint(q, size);
    q += tf_put_bytes(q, path, path_len);
    q += tf_put_bytes(q, build_id, build_id_len);
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

static inline int tf_table_function(tf_stream *s, uint64_t id, uint64_t entry, uint64_t module,
                                    const void *name, size_t name_len)
{
    uint8_t *p, *q;
    if (tf__stream_room(s, 5 * TF_VARINT_MAX + name_len))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_FUNCTION);
    q += tf_put_varint(q, id);
    q += tf_put_varint(q, entry);
    q += tf_put_varint(q, module);
    q += tf_put_bytes(q, name, name_len);
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

/* Whether section 5 can hold the block record: 1..=65535 instructions of
 * 1..=15 bytes adding up to code_len, at most 65535 operands of 1..=4096
 * bytes, each naming an instruction of the block, in non-decreasing order. */
static inline int tf_block_rec_valid(const tf_block_rec *b)
{
    uint32_t i;
    uint64_t total = 0;
    if (b->n_insns < 1 || b->n_insns > TF_MAX_INSNS || b->n_ops > TF_MAX_OPS || b->end > TF_END_OTHER)
        return 0;
    for (i = 0; i < b->n_insns; i++) {
        if (b->lengths[i] < 1 || b->lengths[i] > TF_MAX_INSN_LEN)
            return 0;
        total += b->lengths[i];
    }
    if (total != b->code_len)
        return 0;
    for (i = 0; i < b->n_ops; i++)
        if (b->ops[i].insn >= b->n_insns || (i > 0 && b->ops[i].insn < b->ops[i - 1].insn) ||
            b->ops[i].size < 1 || b->ops[i].size > TF_MAX_OP_SIZE ||
            (b->ops[i].flags & ~(TF_OP_WRITE | TF_OP_COND)) != 0)
            return 0;
    return 1;
}

/* Writes a block record; -1 (and the stream's error) when the record is not
 * one the format can hold (tf_block_rec_valid) or does not fit. */
static inline int tf_table_block(tf_stream *s, const tf_block_rec *b)
{
    uint8_t *p, *q;
    uint32_t i;
    if (!tf_block_rec_valid(b)) {
        s->error = 1;
        return -1;
    }
    if (tf__stream_room(s, tf_table_block_size(b)))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_BLOCK);
    q += tf_put_varint(q, b->id);
    q += tf_put_varint(q, b->address);
    q += tf_put_varint(q, b->function);
    q += tf_put_varint(q, b->end);
    q += tf_put_bytes(q, b->code, b->code_len);
    q += tf_put_varint(q, b->n_insns);
    for (i = 0; i < b->n_insns; i++)
        *q++ = b->lengths[i];
    q += tf_put_varint(q, b->n_ops);
    for (i = 0; i < b->n_ops; i++) {
        q += tf_put_varint(q, b->ops[i].insn);
        *q++ = b->ops[i].flags;
        q += tf_put_varint(q, b->ops[i].size);
    }
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

#endif /* TF_TRACE_TABLE_H */
