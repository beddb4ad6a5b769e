/*
 * tf_trace_encoder.h - tf_encoder, the thread-stream encoder of FORMAT.md
 * section 6: its state and parameters, and the framing of its chunks and
 * pending runs.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_ENCODER_H
#define TF_TRACE_ENCODER_H

#include "tf_trace_stream.h"

/* ------------------------------------------------------------------------
 * 5. tf_encoder: thread streams (section 6)
 * ------------------------------------------------------------------------ */

/* What the encoder needs to know of a block. The caller keeps one per block
 * id, alive as long as the encoder may refer to it. */
typedef struct tf_block_info {
    uint64_t address;
    uint32_t code_len;
    uint32_t n_insns;
    uint32_t n_ops;
    uint32_t end;             /* enum tf_end */
    const uint8_t *op_flags;  /* n_ops entries; only TF_OP_COND matters here */
} tf_block_info;

/* Block info by id (ids the caller has defined). */
typedef const tf_block_info *(*tf_info_fn)(void *ctx, uint32_t id);
/* The lowest block id whose address is `address`, or TF_NO_BLOCK. The encoder
 * applies the max_exec bound of section 6.2 itself. */
typedef uint32_t (*tf_block_at_fn)(void *ctx, uint64_t address);

typedef struct tf_enc_params {
    unsigned succ_table_bits; /* 8..=16 */
    unsigned addr_table_bits; /* 8..=16 */
    unsigned ret_stack_depth; /* 1..=255 */
    size_t chunk_target;      /* payload bytes that close a chunk (tracers: 1 MiB) */
    uint32_t max_ops;         /* the most operands any block passed to this encoder has */
} tf_enc_params;

typedef struct tf__succ_entry {
    uint32_t key; /* block id, TF_NO_BLOCK when empty */
    uint32_t s0, s1;
} tf__succ_entry;

#define TF__ADDR_MODE_OFFSET ((uint64_t)1 << 63)

typedef struct tf__addr_entry {
    uint64_t key; /* B.id * 65536 + j, bit 63 = mode offset; all ones when empty */
    uint64_t last;
    uint64_t stride;
    uint64_t offset;
} tf__addr_entry;

typedef struct tf_encoder {
    tf_stream s;
    tf_info_fn info;
    tf_block_at_fn block_at;
    void *ctx;
    unsigned succ_bits, addr_bits, ret_cap;
    unsigned succ_shift, addr_shift; /* 64 - bits */
    tf__succ_entry *succ;
    tf__addr_entry *addr;
    uint64_t *ret;     /* the return stack, bottom first: ret[0..ret_len) */
    uint64_t *scratch; /* operand values of the record being written */
    uint32_t max_ops;
    /* prediction state, reset per chunk */
    unsigned ret_len;
    uint64_t ret_top;      /* ret[ret_len - 1], or all ones when empty */
    uint32_t prev;         /* TF_NO_BLOCK = none */
    uint32_t prev_end;     /* prev's end kind if it was complete, else TF_END_OTHER */
    uint64_t prev_next;    /* prev.address + len(prev.code) */
    int64_t max_exec;      /* -1 = none */
    uint64_t last_any;
    uint64_t pending;      /* run being gathered */
    uint64_t pending_ops;  /* its executions' operands */
    /* The open chunk has room for any record while s.len is below this
     * (0 if never; else cap less the largest record of max_ops operands,
     * plus one): one comparison per record instead of working out that
     * record's largest size. */
    size_t roomy_below;
} tf_encoder;

static inline uint64_t tf_hash(uint64_t x, unsigned bits)
{
    return (x * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

/* Room kept past the chunk target for one more record: the largest block
 * record (a partial event, a block header, max_ops values) or the largest
 * standard event (a thread_start: header, length and four varints). */
static inline size_t tf__enc_record_max(uint32_t max_ops)
{
    size_t block = 2 + 2 * TF_VARINT_MAX + TF_VARINT_MAX + (size_t)max_ops * TF_VARINT_MAX;
    size_t event = 2 * TF_VARINT_MAX + 4 * TF_VARINT_MAX;
    return block > event ? block : event;
}

static inline size_t tf__align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Bytes of memory tf_enc_init needs for these parameters. */
static inline size_t tf_enc_mem_size(const tf_enc_params *p)
{
    return tf__align8(sizeof(tf__succ_entry) << p->succ_table_bits) +
           (sizeof(tf__addr_entry) << p->addr_table_bits) + 8 * (size_t)p->ret_stack_depth +
           8 * (size_t)p->max_ops +
           tf__align8(TF_CHUNK_HEADER_SIZE + p->chunk_target + tf__enc_record_max(p->max_ops));
}

static inline void tf__enc_reset(tf_encoder *e)
{
    size_t i, n;
    n = (size_t)1 << e->succ_bits;
    for (i = 0; i < n; i++) {
        e->succ[i].key = TF_NO_BLOCK;
        e->succ[i].s0 = TF_NO_BLOCK;
        e->succ[i].s1 = TF_NO_BLOCK;
    }
    n = (size_t)1 << e->addr_bits;
    for (i = 0; i < n; i++)
        e->addr[i].key = ~(uint64_t)0;
    e->ret_len = 0;
    e->ret_top = ~(uint64_t)0;
    e->prev = TF_NO_BLOCK;
    e->prev_end = TF_END_OTHER;
    e->prev_next = 0;
    e->max_exec = -1;
    e->last_any = 0;
}

/* Sets up an encoder in `mem` (tf_enc_mem_size bytes, 8-byte aligned).
 * Returns 0, or -1 if a parameter is out of range. */
static inline int tf_enc_init(tf_encoder *e, const tf_enc_params *p, void *mem,
                              tf_info_fn info, tf_block_at_fn block_at, tf_sink_fn sink,
                              void *ctx)
{
    uint8_t *m = (uint8_t *)mem;
    if (p->succ_table_bits < TF_TABLE_BITS_MIN || p->succ_table_bits > TF_TABLE_BITS_MAX ||
        p->addr_table_bits < TF_TABLE_BITS_MIN || p->addr_table_bits > TF_TABLE_BITS_MAX ||
        p->ret_stack_depth < 1 || p->ret_stack_depth > TF_RET_DEPTH_MAX ||
        p->chunk_target < 1 || p->chunk_target > TF_CHUNK_MAX_PAYLOAD ||
        p->max_ops > TF_MAX_OPS)
        return -1;
    e->info = info;
    e->block_at = block_at;
    e->ctx = ctx;
    e->succ_bits = p->succ_table_bits;
    e->addr_bits = p->addr_table_bits;
    e->succ_shift = 64 - p->succ_table_bits;
    e->addr_shift = 64 - p->addr_table_bits;
    e->ret_cap = p->ret_stack_depth;
    e->max_ops = p->max_ops;
    e->succ = (tf__succ_entry *)m;
    m += tf__align8(sizeof(tf__succ_entry) << p->succ_table_bits);
    e->addr = (tf__addr_entry *)m;
    m += sizeof(tf__addr_entry) << p->addr_table_bits;
    e->ret = (uint64_t *)m;
    m += 8 * (size_t)p->ret_stack_depth;
    e->scratch = (uint64_t *)m;
    m += 8 * (size_t)p->max_ops;
    tf_stream_init(&e->s, m, TF_CHUNK_HEADER_SIZE + p->chunk_target + tf__enc_record_max(p->max_ops),
                   p->chunk_target, sink, ctx);
    e->pending = 0;
    e->pending_ops = 0;
    e->roomy_below = e->s.cap >= tf__enc_record_max(p->max_ops)
                         ? e->s.cap - tf__enc_record_max(p->max_ops) + 1
                         : 0;
    tf__enc_reset(e);
    return 0;
}

/* The file header of this encoder's stream. */
static inline void tf_enc_file_header(const tf_encoder *e, uint64_t tid,
                                      uint8_t out[TF_FILE_HEADER_SIZE])
{
    tf_file_header(out, TF_KIND_THREAD, tid, e->addr_bits, e->succ_bits, e->ret_cap);
}

#if defined(__GNUC__)
#define TF__INLINE static inline __attribute__((always_inline))
#define TF__NOINLINE static __attribute__((noinline))
#else
#define TF__INLINE static inline
#define TF__NOINLINE static
#endif

/* Closes the open chunk (if any) and resets the prediction state. Once a
 * chunk: kept out of the encoding loop. */
TF__NOINLINE int tf__enc_close(tf_encoder *e)
{
    int r;
    if (e->s.len == 0)
        return 0;
    r = tf_stream_close(&e->s);
    tf__enc_reset(e);
    return r;
}

/* Makes room for an event of at most n bytes. An event that does not fit
 * in what is left (only a raw event larger than the room kept past the
 * target) closes the chunk first, through tf__enc_close so that the
 * prediction state is reset with it. */
static inline int tf__enc_room(tf_encoder *e, size_t n)
{
    if (TF__LIKELY(e->s.len + n <= e->s.cap))
        return 0;
    if (n > e->s.cap) {
        e->s.error = 1;
        return -1;
    }
    tf__enc_close(e);
    return 0;
}

TF__INLINE int tf__enc_end_record(tf_encoder *e)
{
    if (e->s.len >= e->s.target)
        return tf__enc_close(e);
    return 0;
}

/* write_pending_run() of section 6.5. Returns 1 if it closed the chunk (the
 * prediction state was reset), else 0. */
static inline int tf__enc_write_run(tf_encoder *e)
{
    uint8_t *q;
    if (e->pending == 0)
        return 0;
    /* Never closes: a record starts below the target, and the room kept past
     * it (tf__enc_record_max) holds a run header. */
    tf__stream_room(&e->s, TF_VARINT_MAX);
    q = tf_stream_tail(&e->s);
    e->s.len += tf_put_varint(q, ((e->pending - 1) << 1) | 1);
    e->pending = 0;
    e->pending_ops = 0;
    if (e->s.len >= e->s.target) {
        tf__enc_close(e);
        return 1;
    }
    return 0;
}

#endif /* TF_TRACE_ENCODER_H */
