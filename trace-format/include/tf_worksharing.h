/* tf_worksharing.h: the preload library's requests (tf_requests.h) turned
 * into loop_chunk and static_loop events (FORMAT.md 6.6, 6.7). Shared by
 * the Valgrind tool and the Pin tool; freestanding C99 that also compiles
 * as C++ (no library calls).
 *
 * A loop *instance* is one execution of a worksharing loop by a team.
 * Every thread of the team announces it (its own _start call, or its first
 * chunk of a combined `parallel for`, whose bounds the master announced);
 * the n-th announcement of a loop by a thread of a team joins the oldest
 * instance of the same loop and team that this thread has not joined yet
 * and that has fewer members than the team, or opens a new one. Instances
 * are numbered from 1 in the order they open: program order.
 *
 * The state (tf_ws_state) is the process's; the caller serializes calls of
 * tf_ws_request (Valgrind runs one thread at a time; the Pin tool takes a
 * lock). A thread's own part is a tf_ws_thread, zeroed when it starts. */
#ifndef TF_WORKSHARING_H
#define TF_WORKSHARING_H

#include "tf_requests.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_ws_instance {
    uint64_t id, start, incr, trip, team, size, joined;
} tf_ws_instance;

/* Open instances (fewer members than their team), oldest first. */
#define TF_WS_MAX_OPEN 256
typedef struct tf_ws_open {
    tf_ws_instance at[TF_WS_MAX_OPEN];
    unsigned n;
} tf_ws_open;

/* Loops of combined `parallel for`s about to start, by team. */
#define TF_WS_MAX_PENDING 64

typedef struct tf_ws_state {
    /* of runtime-scheduled loops, and (apart, so that a program's own calls
     * of the omp_get_num_threads, omp_get_thread_num pair cannot crowd
     * those out) of inline static schedules */
    tf_ws_open loops, statics;
    struct {
        uint64_t team, start, incr, trip;
    } pending[TF_WS_MAX_PENDING];
    unsigned n_pending;
    uint64_t last_id;
    /* chunks that belong to no loop the tracer saw begin */
    uint64_t lost_chunks;
} tf_ws_state;

/* What a tracer says at the end when lost_chunks (the argument, as an
 * unsigned long long) is not 0. */
#define TF_WS_LOST_MESSAGE                                                                    \
    "%llu chunk(s) of OpenMP worksharing loops came from loops whose bounds were not seen; " \
    "tf analyze cannot number those loops' iterations"

typedef struct tf_ws_thread {
    uint64_t loop_id;     /* the instance it takes chunks of, 0 = none */
    uint64_t loop_last;   /* the last instance it joined */
    uint64_t static_last; /* the last inline-static instance it joined */
    uint64_t loop_start, loop_incr, loop_trip;
} tf_ws_thread;

/* What a request asks the tracer to record in the thread's stream. */
enum tf_ws_kind { TF_WS_NONE = 0, TF_WS_LOOP_CHUNK, TF_WS_STATIC_LOOP };
typedef struct tf_ws_event {
    enum tf_ws_kind kind;
    /* loop_chunk: loop, first, count, stride, trip;
     * static_loop: loop, thread (in `first`), threads (in `count`) */
    uint64_t loop, first, count, stride, trip;
} tf_ws_event;

static inline uint64_t tf__ws_logical(uint64_t x, uint64_t start, uint64_t incr)
{
    int64_t d = (int64_t)(x - start), s = (int64_t)incr;
    if (s == 0)
        return 0;
    return s > 0 ? (uint64_t)(d / s) : (uint64_t)(-d / -s);
}

/* The instance the thread joins (see above); `last` is the last one of its
 * kind the thread joined. Inline static schedules join by call site, as
 * `start` with `incr` 0, which no loop has. */
static inline uint64_t tf__ws_join_instance(tf_ws_state *s, tf_ws_open *open, uint64_t *last,
                                            uint64_t start, uint64_t incr, uint64_t trip,
                                            uint64_t team, uint64_t size)
{
    unsigned i;
    uint64_t id;
    tf_ws_instance *in = 0;
    for (i = 0; i < open->n && in == 0; i++) {
        tf_ws_instance *o = &open->at[i];
        if (o->team == team && o->start == start && o->incr == incr && o->trip == trip &&
            o->id > *last)
            in = o;
    }
    if (in == 0) {
        if (open->n == TF_WS_MAX_OPEN) { /* a team that never filled: forget the oldest */
            for (i = 1; i < open->n; i++)
                open->at[i - 1] = open->at[i];
            open->n--;
        }
        in = &open->at[open->n++];
        in->id = ++s->last_id;
        in->start = start;
        in->incr = incr;
        in->trip = trip;
        in->team = team;
        in->size = size > 0 ? size : 1;
        in->joined = 0;
    }
    id = in->id;
    *last = id;
    if (++in->joined >= in->size) {
        for (i = (unsigned)(in - open->at) + 1; i < open->n; i++)
            open->at[i - 1] = open->at[i];
        open->n--;
    }
    return id;
}

static inline void tf__ws_join(tf_ws_state *s, tf_ws_thread *t, uint64_t start, uint64_t incr,
                               uint64_t trip, uint64_t team, uint64_t size)
{
    t->loop_id = tf__ws_join_instance(s, &s->loops, &t->loop_last, start, incr, trip, team, size);
    t->loop_start = start;
    t->loop_incr = incr;
    t->loop_trip = trip;
}

static inline void tf__ws_put_chunk(tf_ws_thread *t, tf_ws_event *ev, uint64_t first,
                                    uint64_t count, uint64_t stride)
{
    ev->kind = TF_WS_LOOP_CHUNK;
    ev->loop = t->loop_id;
    ev->first = first;
    ev->count = count;
    ev->stride = stride;
    ev->trip = t->loop_trip;
    if (count == 0)
        t->loop_id = 0;
}

/* The thread's chunk [lo, hi) in user space, with every further one
 * `stride` on (0: none). */
static inline void tf__ws_chunk(tf_ws_thread *t, tf_ws_event *ev, uint64_t lo, uint64_t hi,
                                uint64_t stride)
{
    uint64_t n = tf_iterations(lo, hi, t->loop_incr);
    tf__ws_put_chunk(t, ev, n ? tf__ws_logical(lo, t->loop_start, t->loop_incr) : 0, n,
                     n ? tf__ws_logical(t->loop_start + stride, t->loop_start, t->loop_incr)
                       : 0);
}

static inline unsigned tf__ws_pending(const tf_ws_state *s, uint64_t team)
{
    unsigned i;
    for (i = 0; i < s->n_pending && s->pending[i].team != team; i++)
        ;
    return i;
}

/* Request `a[0]` of thread `t` with arguments a[1..5]; fills `ev` (kind
 * TF_WS_NONE when there is nothing to record). Returns 0 when a[0] is not
 * one of tf_requests.h. */
static inline int tf_ws_request(tf_ws_state *s, tf_ws_thread *t, const uint64_t a[6],
                                tf_ws_event *ev)
{
    unsigned i;
    ev->kind = TF_WS_NONE;
    switch (a[0]) {
    case TF_REQ_LOOP_BEGIN:
        tf__ws_join(s, t, a[1], a[2], a[3], a[4], a[5]);
        return 1;
    case TF_REQ_LOOP_COMBINED:
        i = tf__ws_pending(s, a[4]);
        if (i == s->n_pending) {
            if (s->n_pending == TF_WS_MAX_PENDING)
                return 1; /* its chunks will count as lost */
            s->n_pending++;
        }
        s->pending[i].team = a[4];
        s->pending[i].start = a[1];
        s->pending[i].incr = a[2];
        s->pending[i].trip = a[3];
        return 1;
    case TF_REQ_LOOP_CHUNK:
        if (t->loop_id == 0) {
            i = tf__ws_pending(s, a[4]);
            if (i == s->n_pending) {
                s->lost_chunks++;
                return 1;
            }
            tf__ws_join(s, t, s->pending[i].start, s->pending[i].incr, s->pending[i].trip, a[4],
                        a[5]);
        }
        tf__ws_chunk(t, ev, a[1], a[2], 0);
        return 1;
    case TF_REQ_LOOP_STATIC:
        if (t->loop_id == 0) {
            s->lost_chunks++;
            return 1;
        }
        tf__ws_chunk(t, ev, a[1], a[2], a[3]);
        return 1;
    case TF_REQ_LOOP_END:
        if (t->loop_id != 0)
            tf__ws_put_chunk(t, ev, 0, 0, 0);
        return 1;
    case TF_REQ_TEAM_PLACE:
        ev->kind = TF_WS_STATIC_LOOP;
        ev->loop = tf__ws_join_instance(s, &s->statics, &t->static_last, a[1], 0, 0, a[4], a[3]);
        ev->first = a[2];
        ev->count = a[3];
        return 1;
    default:
        return 0;
    }
}

#ifdef __cplusplus
}
#endif

#endif
