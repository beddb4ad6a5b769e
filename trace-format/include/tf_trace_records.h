/*
 * tf_trace_records.h - the encoder's records (FORMAT.md sections 6.1, 6.4
 * and 6.5): block executions under the canonical writer procedure, events,
 * the end of a stream.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_RECORDS_H
#define TF_TRACE_RECORDS_H

#include "tf_trace_predict.h"

/* Writes the record of an execution whose successor code is `s` and whose
 * operand values are in e->scratch, with the pending run as its prefix
 * (at most TF_MAX_RUN_PREFIX; 0 for a partial execution, whose run was
 * written before it). The caller has made room for it. */
TF__INLINE int tf__enc_put_record(tf_encoder *e, int partial, uint32_t n_insns, uint32_t n_ops,
                                  uint64_t s, int all_pred)
{
    uint8_t *p, *q;
    uint32_t j;
    uint64_t prefix = e->pending;
    e->pending = 0;
    e->pending_ops = 0;
    p = q = tf_stream_tail(&e->s);
    if (partial) {
        uint8_t ev[2 * TF_VARINT_MAX];
        size_t n = tf_put_varint(ev, n_insns);
        n += tf_put_varint(ev + n, n_ops);
        q += tf_put_varint(q, (TF_EV_PARTIAL << 2) | 2);
        q += tf_put_bytes(q, ev, n);
    }
    q += tf_put_varint(q, (s << 5) | (prefix << 3) | (all_pred ? 0 : 4));
    if (!all_pred)
        for (j = 0; j < n_ops; j++)
            q += tf_put_varint(q, e->scratch[j]);
    e->s.len += (size_t)(q - p);
    return tf__enc_end_record(e) == 0 && !e->s.error ? 0 : -1;
}

/* An execution that is not part of a run: the pending run, then its record.
 * If writing the run closes the chunk, the state was reset and the
 * execution is encoded afresh. */
TF__NOINLINE int tf__enc_record(tf_encoder *e, uint32_t id, const tf_block_info *b, int partial,
                                uint32_t n_insns, uint32_t n_ops, const uint64_t *addrs,
                                uint64_t s, int all_pred)
{
    for (;;) {
        int closed;
        if (all_pred < 0) {
            e->s.error = 1;
            return -1;
        }
        /* a complete execution carries a short pending run as its prefix
         * (section 6.1); otherwise the run is a record of its own */
        closed = (partial || e->pending > TF_MAX_RUN_PREFIX) && tf__enc_write_run(e);
        if (!closed) {
            if (TF__LIKELY(e->s.len + tf__enc_record_max(n_ops) <= e->s.cap))
                break;
            /* only with a buffer smaller than tf_enc_mem_size asks for */
            if (e->s.len == 0) {
                e->s.error = 1;
                return -1;
            }
            if (!tf__enc_write_run(e))
                tf__enc_close(e);
        }
        s = tf__enc_successor(e, id, b, partial);
        all_pred = tf__enc_operands(e, id, b, n_ops, addrs);
    }
    return tf__enc_put_record(e, partial, n_insns, n_ops, s, all_pred);
}

/* tf_enc_exec_info without the argument checks, for callers that know
 * their executions are valid. */
TF__INLINE int tf_enc_exec_fast(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                int partial, uint32_t n_insns, uint32_t n_ops,
                                const uint64_t *addrs)
{
    uint64_t s = tf__enc_successor(e, id, b, partial);
    int all_pred = tf__enc_operands(e, id, b, n_ops, addrs);
    if (TF__LIKELY(s == 0 && all_pred > 0 && !partial)) {
        e->pending++;
        e->pending_ops += n_ops;
        if (TF__UNLIKELY(e->pending == TF_MAX_RUN || e->pending_ops >= TF_RUN_OPS)) {
            tf__enc_write_run(e);
            return e->s.error ? -1 : 0;
        }
        return 0;
    }
    /* the common record: complete, a short run before it, room for it */
    if (TF__LIKELY(!partial && all_pred >= 0 && e->pending <= TF_MAX_RUN_PREFIX &&
                   e->s.len < e->roomy_below))
        return tf__enc_put_record(e, 0, n_insns, n_ops, s, all_pred);
    return tf__enc_record(e, id, b, partial, n_insns, n_ops, addrs, s, all_pred);
}

/*
 * One block execution of block `id` (described by `b`): the first `n_insns`
 * instructions ran and `addrs` holds the first `n_ops` operand addresses.
 * `partial` says whether a partial event precedes the record (section 6.4);
 * a complete execution has n_insns = b->n_insns and n_ops = b->n_ops.
 * Returns 0, or -1 if a sink failed or the execution is invalid.
 */
static inline int tf_enc_exec_info(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                   int partial, uint32_t n_insns, uint32_t n_ops,
                                   const uint64_t *addrs)
{
    if (TF__UNLIKELY(n_ops > e->max_ops || n_ops > b->n_ops || n_insns > b->n_insns ||
                     (partial ? n_insns == 0 : n_ops != b->n_ops || n_insns != b->n_insns))) {
        e->s.error = 1;
        return -1;
    }
    return tf_enc_exec_fast(e, id, b, partial, n_insns, n_ops, addrs);
}

/* A complete execution of block `id`; `addrs` holds all its operands. */
static inline int tf_enc_exec(tf_encoder *e, uint32_t id, const uint64_t *addrs)
{
    const tf_block_info *b = e->info(e->ctx, id);
    return tf_enc_exec_info(e, id, b, 0, b->n_insns, b->n_ops, addrs);
}

/* A partial execution: a partial event, then the block record. */
static inline int tf_enc_exec_partial(tf_encoder *e, uint32_t id, uint32_t n_insns,
                                      uint32_t n_ops, const uint64_t *addrs)
{
    return tf_enc_exec_info(e, id, e->info(e->ctx, id), 1, n_insns, n_ops, addrs);
}

/* Any event: `payload` is the event's field bytes (section 6.4). */
static inline int tf_enc_event(tf_encoder *e, unsigned type, const uint8_t *payload, size_t len)
{
    uint8_t *p, *q;
    tf__enc_write_run(e);
    if (tf__enc_room(e, 2 * TF_VARINT_MAX + len))
        return -1;
    p = q = tf_stream_tail(&e->s);
    q += tf_put_varint(q, ((uint64_t)type << 2) | 2);
    q += tf_put_bytes(q, payload, len);
    e->s.len += (size_t)(q - p);
    return tf__enc_end_record(e) == 0 && !e->s.error ? 0 : -1;
}

/* An event whose payload is the `n` varints of `f`. */
static inline int tf__enc_event_fields(tf_encoder *e, unsigned type, unsigned n,
                                       const uint64_t *f)
{
    uint8_t buf[5 * TF_VARINT_MAX];
    size_t len = 0;
    for (unsigned i = 0; i < n && i < 5; i++)
        len += tf_put_varint(buf + len, f[i]);
    return tf_enc_event(e, type, buf, len);
}

/* An event whose payload is `n` (at most 4) varints. */
static inline int tf__enc_event_varints(tf_encoder *e, unsigned type, unsigned n,
                                        uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    const uint64_t f[4] = {a, b, c, d};
    return tf__enc_event_fields(e, type, n, f);
}

static inline int tf_enc_thread_start(tf_encoder *e, uint64_t parent, uint64_t stack_lo,
                                      uint64_t stack_hi, uint64_t start_routine)
{
    return tf__enc_event_varints(e, TF_EV_THREAD_START, 4, parent, stack_lo, stack_hi,
                                 start_routine);
}

static inline int tf_enc_thread_exit(tf_encoder *e, unsigned how)
{
    return tf__enc_event_varints(e, TF_EV_THREAD_EXIT, 1, how, 0, 0, 0);
}

static inline int tf_enc_lock_acquire(tf_encoder *e, unsigned kind, uint64_t lock)
{
    return tf__enc_event_varints(e, TF_EV_LOCK_ACQUIRE, 2, kind, lock, 0, 0);
}

static inline int tf_enc_lock_release(tf_encoder *e, unsigned kind, uint64_t lock)
{
    return tf__enc_event_varints(e, TF_EV_LOCK_RELEASE, 2, kind, lock, 0, 0);
}

static inline int tf_enc_skip(tf_encoder *e, unsigned reason, uint64_t count)
{
    return tf__enc_event_varints(e, TF_EV_SKIP, 2, reason, count, 0, 0);
}

static inline int tf_enc_syscall(tf_encoder *e, uint64_t number, uint64_t nanos)
{
    return tf__enc_event_varints(e, TF_EV_SYSCALL, 2, number, nanos, 0, 0);
}

static inline int tf_enc_signal(tf_encoder *e, uint64_t signo)
{
    return tf__enc_event_varints(e, TF_EV_SIGNAL, 1, signo, 0, 0, 0);
}

static inline int tf_enc_signal_return(tf_encoder *e, uint64_t signo)
{
    return tf__enc_event_varints(e, TF_EV_SIGNAL_RETURN, 1, signo, 0, 0, 0);
}

static inline int tf_enc_marker(tf_encoder *e, uint64_t kind, uint64_t value)
{
    return tf__enc_event_varints(e, TF_EV_MARKER, 2, kind, value, 0, 0);
}

/* loop_chunk (FORMAT.md 6.6): `count` iterations from logical iteration
 * `first` of loop instance `loop`; count 0 = no more for this thread. */
static inline int tf_enc_loop_chunk(tf_encoder *e, uint64_t loop, uint64_t first,
                                    uint64_t count, uint64_t stride, uint64_t trip)
{
    const uint64_t f[5] = {loop, first, count, stride, trip};
    return tf__enc_event_fields(e, TF_EV_LOOP_CHUNK, 5, f);
}

/* static_loop (FORMAT.md 6.7): the thread, number `thread` of a team of
 * `threads`, begins its part of loop instance `loop`, whose static schedule
 * the compiler expanded inline. */
static inline int tf_enc_static_loop(tf_encoder *e, uint64_t loop, uint64_t thread,
                                     uint64_t threads)
{
    const uint64_t f[3] = {loop, thread, threads};
    return tf__enc_event_fields(e, TF_EV_STATIC_LOOP, 3, f);
}

/* region_entry (FORMAT.md 6.4): the thread enters the --only region; the
 * next block is the first of a call whose return address lies at `sp`. */
static inline int tf_enc_region_entry(tf_encoder *e, uint64_t sp)
{
    return tf__enc_event_varints(e, TF_EV_REGION_ENTRY, 1, sp, 0, 0, 0);
}

/* End of stream, or a flush before the process dies or execs: writes the
 * pending run and closes the chunk if it is not empty. */
static inline int tf_enc_flush(tf_encoder *e)
{
    tf__enc_write_run(e);
    tf__enc_close(e);
    return e->s.error ? -1 : 0;
}

#endif /* TF_TRACE_RECORDS_H */
