/* tf_wait_call.h: the runtime's calls of the program while a thread waits
 * (OpenMP tasks run in a barrier or a task wait), kept aside until the
 * callee shows whose code it is; the tracers' side of tf_skip_callback.
 * Freestanding C99 that also compiles as C++ (no library calls). */
#ifndef TF_WAIT_CALL_H
#define TF_WAIT_CALL_H

#ifndef TF_TRACER_H
#error "include tf_tracer.h, not tf_wait_call.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The most memory operands of a runtime block whose indirect call can be
 * recorded as a callback; a call block has a few. */
#define TF_CALLBACK_MAX_OPS 16

/* The OpenMP runtime's last block while the thread waited, when it ended
 * in an indirect call: kept aside, and recorded if the callee turns out to
 * be the program's (tf_skip_callback). */
typedef struct tf_wait_call {
    int pending;
    uint32_t id, n_insns, n_ops;
    uint64_t addrs[TF_CALLBACK_MAX_OPS];
} tf_wait_call;

/* Before the execution of a block (`in_runtime`: of an OpenMP runtime
 * module): whether the caller must now record the kept call, a complete
 * execution of block c->id with c->n_insns, c->n_ops and c->addrs, because
 * this block is the program's code called back while the thread waits. */
static inline int tf_wait_call_before(tf_skipper *s, tf_wait_call *c, int in_runtime)
{
    int record = c->pending && !in_runtime && tf_skip_waiting(s) && tf_skip_callback(s, c->n_insns);
    c->pending = 0;
    return record;
}

/* After the execution of block `id` (after tf_skip_ran): keeps it aside when
 * it is a complete one of the runtime's (`in_runtime`) that ended in an
 * indirect call while the thread waits. */
static inline void tf_wait_call_after(tf_skipper *s, tf_wait_call *c, uint32_t id, unsigned end,
                                      int in_runtime, int complete, uint32_t n_insns,
                                      uint32_t n_ops, const uint64_t *addrs)
{
    uint32_t j;
    if (!complete || end != TF_END_INDIRECT_CALL || !in_runtime || n_ops > TF_CALLBACK_MAX_OPS ||
        !tf_skip_waiting(s))
        return;
    c->pending = 1;
    c->id = id;
    c->n_insns = n_insns;
    c->n_ops = n_ops;
    for (j = 0; j < n_ops; j++)
        c->addrs[j] = addrs[j];
}

#ifdef __cplusplus
}
#endif

#endif
