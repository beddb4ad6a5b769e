/* tf_skip.h: the skip state machine every tf tracer runs per thread
 * (included by tf_tracer.h, which defines the roles it reads). Freestanding
 * C99 that also compiles as C++. */
#ifndef TF_SKIP_H
#define TF_SKIP_H

#ifndef TF_TRACER_H
#error "include tf_tracer.h, not tf_skip.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A thread has a small stack of frames. The top frame says whether blocks
 * are traced (TF_MODE_TRACE) or skipped with a reason (0..3). Entering a
 * runtime, excluded or --only function at its entry pushes a frame, which
 * counts calls and returns and pops at the function's own return (depth 0);
 * a tail call is followed naturally, since the callee's return pops it. Lazy
 * binding's trampoline, entered by a jump and left by one, pops where it
 * jumps on to the function it bound (TF_POP_ON_JUMP_OUT). A
 * signal handler gets a frame of the interrupted mode that pops at the
 * signal's return. Lock events go where FORMAT.md 6.4 puts them: a release
 * before the skip of its function, an acquire after it.
 *
 * Per block execution, a tracer calls tf_skip_enter (before: whether the
 * execution is traced), encodes it if so, then tf_skip_ran (its instruction
 * count and, for a complete execution, how it ended). */

#define TF_MODE_TRACE 0xFF
#define TF_NO_LOCK 0xFF
#define TF_SKIP_MAX_FRAMES 64
#define TF_SKIP_MAX_RWLOCKS 16

/* TF_POP_ON_JUMP_OUT: at the function's indirect jump out of itself (depth
 * 0), or at its return, whichever comes first (lazy binding's trampoline) */
enum tf_pop { TF_POP_NEVER = 0, TF_POP_ON_RETURN, TF_POP_ON_SIGRETURN, TF_POP_ON_JUMP_OUT };

/* tf_skipper.fixed_held has a bit for each address-less lock */
typedef char tf__skip_fixed_fit[TF_N_FIXED <= 8 ? 1 : -1];

typedef struct tf_skip_frame {
    uint8_t mode;      /* TF_MODE_TRACE or a skip reason */
    uint8_t pop;       /* enum tf_pop */
    uint8_t acquire;   /* lock kind taken when the frame pops, or TF_NO_LOCK */
    uint8_t taken;     /* enum tf_taken: ... when the function returns */
    uint8_t callback;  /* a callback of a wait's runtime (tf_skip_callback) */
    int32_t depth;     /* calls made inside the frame's function */
    uint64_t count;    /* instructions skipped in this frame, not yet emitted */
    uint64_t lock;
} tf_skip_frame;

typedef struct tf_skipper {
    tf_encoder *enc;
    tf_skip_frame frames[TF_SKIP_MAX_FRAMES];
    unsigned n_frames;
    struct {
        uint64_t lock;
        uint8_t kind;
    } rw[TF_SKIP_MAX_RWLOCKS]; /* rwlocks held: what their unlock releases */
    unsigned n_rw;
    uint64_t traced, skipped;
    /* a callback (tf_skip_callback) returned: its return site is traced */
    uint8_t trace_return_site;
    /* the address-less locks (TF_FIXED_*) the thread holds, a bit each: a
     * thread takes one once (a doacross iteration waits once per
     * depend(sink), and only its first wait takes the lock), and releases
     * only one it holds */
    uint8_t fixed_held;
} tf_skipper;

static inline tf_skip_frame *tf__skip_top(tf_skipper *s)
{
    return &s->frames[s->n_frames - 1];
}

/* Pushes a frame; past TF_SKIP_MAX_FRAMES (signal handlers interrupted by
 * signal handlers ...) the current frame goes on, a loss of detail only. */
static inline void tf__skip_push(tf_skipper *s, uint8_t mode, uint8_t pop)
{
    tf_skip_frame *f;
    if (s->n_frames == TF_SKIP_MAX_FRAMES)
        return;
    f = &s->frames[s->n_frames++];
    f->mode = mode;
    f->pop = pop;
    f->acquire = TF_NO_LOCK;
    f->taken = TF_TAKEN_ALWAYS;
    f->callback = 0;
    f->depth = 0;
    f->count = 0;
    f->lock = 0;
}

/* A new thread's state; `only`: outside the traced region until an --only
 * function is entered. */
static inline void tf_skip_init(tf_skipper *s, tf_encoder *enc, int only)
{
    s->enc = enc;
    s->n_frames = 0;
    s->n_rw = 0;
    s->traced = s->skipped = 0;
    s->trace_return_site = 0;
    s->fixed_held = 0;
    tf__skip_push(s, only ? TF_SKIP_OUTSIDE : TF_MODE_TRACE, TF_POP_NEVER);
}

/* Whether the thread records blocks now. */
static inline int tf_skip_tracing(tf_skipper *s)
{
    return tf__skip_top(s)->mode == TF_MODE_TRACE;
}

static inline void tf__skip_emit(tf_skipper *s, tf_skip_frame *f)
{
    if (f->mode != TF_MODE_TRACE && f->count > 0)
        tf_enc_skip(s->enc, f->mode, f->count);
    f->count = 0;
}

static inline void tf__skip_note_rwlock(tf_skipper *s, uint64_t lock, uint8_t kind)
{
    unsigned i;
    if (s->n_rw == TF_SKIP_MAX_RWLOCKS) { /* forget the oldest */
        for (i = 1; i < s->n_rw; i++)
            s->rw[i - 1] = s->rw[i];
        s->n_rw--;
    }
    s->rw[s->n_rw].lock = lock;
    s->rw[s->n_rw].kind = kind;
    s->n_rw++;
}

/* The kind of the rwlock this thread holds at `lock` (write if unknown). */
static inline uint8_t tf__skip_take_rwlock(tf_skipper *s, uint64_t lock)
{
    int i;
    unsigned j;
    for (i = (int)s->n_rw - 1; i >= 0; i--) {
        if (s->rw[i].lock == lock) {
            uint8_t kind = s->rw[i].kind;
            for (j = (unsigned)i + 1; j < s->n_rw; j++)
                s->rw[j - 1] = s->rw[j];
            s->n_rw--;
            return kind;
        }
    }
    return TF_LOCK_RWLOCK_WRITE;
}

/* The top frame pops: its skip, then the lock it acquired, if any (`rax`:
 * the function's return value, `have_rax`: whether it is known). */
static inline void tf__skip_pop(tf_skipper *s, int have_rax, uint64_t rax)
{
    tf_skip_frame *f = tf__skip_top(s);
    tf__skip_emit(s, f);
    int zero = have_rax && (uint32_t)rax == 0, nonzero = have_rax && (uint32_t)rax != 0;
    int took = f->taken == TF_TAKEN_IF_ZERO      ? zero
               : f->taken == TF_TAKEN_IF_NONZERO ? nonzero
                                                 : 1;
    if (f->acquire != TF_NO_LOCK && took) {
        tf_enc_lock_acquire(s->enc, f->acquire, f->lock);
        if (f->acquire == TF_LOCK_RWLOCK_READ || f->acquire == TF_LOCK_RWLOCK_WRITE)
            tf__skip_note_rwlock(s, f->lock, f->acquire);
    }
    s->trace_return_site = f->callback;
    if (s->n_frames > 1)
        s->n_frames--;
}

/* A traced thread enters a runtime or excluded function. */
static inline void tf__skip_enter_fn(tf_skipper *s, const tf_function_role *r, uint64_t lock)
{
    tf_skip_frame *f;
    uint8_t fixed = r->arg == TF_ARG_FIXED ? (uint8_t)(1u << r->fixed) : 0;
    switch (r->role) {
    case TF_ROLE_ACQUIRE:
        tf__skip_push(s, TF_SKIP_LOCK_RUNTIME, TF_POP_ON_RETURN);
        if (s->fixed_held & fixed)
            return;
        s->fixed_held |= fixed;
        break;
    case TF_ROLE_RELEASE: {
        uint8_t kind =
            r->lock_kind == TF_LOCK_RWLOCK_WRITE ? tf__skip_take_rwlock(s, lock) : r->lock_kind;
        if (!fixed || (s->fixed_held & fixed))
            tf_enc_lock_release(s->enc, kind, lock);
        s->fixed_held &= (uint8_t)~fixed;
        tf__skip_push(s, TF_SKIP_LOCK_RUNTIME, TF_POP_ON_RETURN);
        return;
    }
    case TF_ROLE_COND_WAIT:
        tf_enc_lock_release(s->enc, r->lock_kind, lock);
        tf__skip_push(s, TF_SKIP_SYNC_WAIT, TF_POP_ON_RETURN);
        break;
    case TF_ROLE_WAIT:
        tf__skip_push(s, TF_SKIP_SYNC_WAIT, TF_POP_ON_RETURN);
        return;
    case TF_ROLE_SCHEDULE:
        tf__skip_push(s, TF_SKIP_LOOP_SCHEDULE, TF_POP_ON_RETURN);
        return;
    case TF_ROLE_BIND:
        tf__skip_push(s, TF_SKIP_OTHER, TF_POP_ON_JUMP_OUT);
        return;
    default: /* TF_ROLE_EXCLUDE */
        tf__skip_push(s, TF_SKIP_EXCLUDED, TF_POP_ON_RETURN);
        return;
    }
    f = tf__skip_top(s);
    f->acquire = r->lock_kind;
    f->taken = r->taken;
    f->lock = lock;
}

/* Before a block execution. `role`: the role of the function whose entry
 * the block starts at (NULL or TF_ROLE_NONE otherwise); `lock`: the lock
 * address its role names (the argument register, or the fixed address; for
 * an --only function, the stack pointer). Returns whether the execution is
 * traced. */
static inline int tf_skip_enter(tf_skipper *s, const tf_function_role *role, uint64_t lock)
{
    uint8_t r = role ? role->role : (uint8_t)TF_ROLE_NONE;
    tf_skip_frame *f = tf__skip_top(s);
    if (f->mode == TF_MODE_TRACE && r != TF_ROLE_NONE && r != TF_ROLE_CREATE &&
        r != TF_ROLE_ONLY) {
        tf__skip_enter_fn(s, role, lock);
    } else if (f->mode == TF_SKIP_OUTSIDE && r == TF_ROLE_ONLY) {
        tf__skip_emit(s, f);
        tf_enc_region_entry(s->enc, lock);
        tf__skip_push(s, TF_MODE_TRACE, TF_POP_ON_RETURN);
    }
    return tf_skip_tracing(s) || s->trace_return_site;
}

/* Whether the thread waits in a synchronization function (a barrier, a
 * join): while it does, the OpenMP runtime may run the team's tasks. */
static inline int tf_skip_waiting(tf_skipper *s)
{
    return tf__skip_top(s)->mode == TF_SKIP_SYNC_WAIT;
}

/* Inside a wait, the runtime's block that ran last (`call_insns`
 * instructions, skipped with the wait) called the program back through a
 * pointer: a task that the thread runs while it waits is work, not waiting.
 * The skip so far is written but for that block, which the caller records
 * next, so that the call and its return are in the trace as the program
 * made them; the callback is traced until it returns, and then the block it
 * returns to. With no frame left for it (tasks that wait for tasks, nested
 * deeper than the frames go), the rest of the wait is traced instead, its
 * waiting with its tasks: a loss of detail, never of work. Returns 0, and
 * changes nothing, when that block was not counted in the wait's skip.
 * Tracers use it through tf_wait_call_before/_after (tf_wait_call.h). */
static inline int tf_skip_callback(tf_skipper *s, uint32_t call_insns)
{
    tf_skip_frame *f = tf__skip_top(s);
    if (f->count < call_insns)
        return 0;
    f->count -= call_insns;
    s->skipped -= call_insns;
    s->traced += call_insns;
    tf__skip_emit(s, f);
    if (s->n_frames == TF_SKIP_MAX_FRAMES) {
        f->mode = TF_MODE_TRACE;
        return 1;
    }
    tf__skip_push(s, TF_MODE_TRACE, TF_POP_ON_RETURN);
    tf__skip_top(s)->callback = 1;
    return 1;
}

/* Whether frame `f` counts the calls made in it, to pop where its function
 * returns (or, lazy binding's, jumps out of itself). */
static inline int tf__skip_counts_calls(const tf_skip_frame *f)
{
    return f->pop == TF_POP_ON_RETURN || f->pop == TF_POP_ON_JUMP_OUT;
}

/* After the block execution tf_skip_enter was asked about: `n_insns` ran;
 * for a complete execution, `end` is how the block ends and `rax` the
 * return value when it is a return (have_rax). A return first ends the
 * frames of functions that have no call in flight (a function entered by a
 * tail jump returns with the one it jumped to), then goes back into the
 * function that made the call. */
static inline void tf_skip_ran(tf_skipper *s, uint32_t n_insns, int complete, unsigned end,
                               int have_rax, uint64_t rax)
{
    tf_skip_frame *f = tf__skip_top(s);
    if (f->mode == TF_MODE_TRACE || s->trace_return_site) {
        s->traced += n_insns;
        s->trace_return_site = 0;
    } else {
        f->count += n_insns;
        s->skipped += n_insns;
    }
    if (!complete || !tf__skip_counts_calls(f))
        return;
    if (end == TF_END_CALL || end == TF_END_INDIRECT_CALL) {
        f->depth++;
    } else if (end == TF_END_INDIRECT_JUMP && f->depth == 0 && f->pop == TF_POP_ON_JUMP_OUT) {
        /* lazy binding's trampoline jumps on to the function it bound: the
         * skip ends there, and the function runs as the PLT's jump would
         * have reached it */
        tf__skip_pop(s, have_rax, rax);
    } else if (end == TF_END_RETURN) {
        while (tf__skip_counts_calls(f) && f->depth == 0) {
            tf__skip_pop(s, have_rax, rax);
            f = tf__skip_top(s);
        }
        if (tf__skip_counts_calls(f))
            f->depth--;
    }
}

/* A worksharing loop's runtime handed the thread iterations (FORMAT.md
 * 6.6). Recorded when the function that asked for them is traced: the
 * thread is tracing, or it is inside a loop-scheduling function called from
 * traced code. */
static inline void tf_skip_loop_chunk(tf_skipper *s, uint64_t loop, uint64_t first, uint64_t count,
                                      uint64_t stride, uint64_t trip)
{
    const tf_skip_frame *f = tf__skip_top(s);
    if (f->mode == TF_SKIP_LOOP_SCHEDULE && s->n_frames > 1)
        f = &s->frames[s->n_frames - 2];
    if (f->mode == TF_MODE_TRACE)
        tf_enc_loop_chunk(s->enc, loop, first, count, stride, trip);
}

/* A thread learnt its place in the team before an inline static schedule
 * (FORMAT.md 6.7); recorded as tf_skip_loop_chunk records hand-outs. */
static inline void tf_skip_static_loop(tf_skipper *s, uint64_t loop, uint64_t thread,
                                       uint64_t threads)
{
    const tf_skip_frame *f = tf__skip_top(s);
    if (f->mode == TF_SKIP_LOOP_SCHEDULE && s->n_frames > 1)
        f = &s->frames[s->n_frames - 2];
    if (f->mode == TF_MODE_TRACE)
        tf_enc_static_loop(s->enc, loop, thread, threads);
}

/* A signal handler starts. */
static inline void tf_skip_signal(tf_skipper *s, uint64_t signo)
{
    uint8_t mode = tf__skip_top(s)->mode;
    if (mode == TF_MODE_TRACE)
        tf_enc_signal(s->enc, signo);
    tf__skip_push(s, mode, TF_POP_ON_SIGRETURN);
}

/* A signal handler returned; frames opened in it and not closed (it
 * longjmp'ed) end too. */
static inline void tf_skip_signal_return(tf_skipper *s, uint64_t signo)
{
    unsigned i;
    for (i = s->n_frames; i > 1; i--) {
        if (s->frames[i - 1].pop == TF_POP_ON_SIGRETURN) {
            uint8_t mode = s->frames[i - 1].mode;
            while (s->n_frames >= i) {
                tf__skip_emit(s, tf__skip_top(s));
                s->n_frames--;
            }
            if (mode == TF_MODE_TRACE)
                tf_enc_signal_return(s->enc, signo);
            return;
        }
    }
}

/* A system call completed (recorded only while tracing). */
static inline void tf_skip_syscall(tf_skipper *s, uint64_t number, uint64_t nanos)
{
    if (tf_skip_tracing(s))
        tf_enc_syscall(s->enc, number, nanos);
}

/* The thread's stream ends: pending skips, thread_exit, flush. */
static inline int tf_skip_end(tf_skipper *s, unsigned how)
{
    int i;
    for (i = (int)s->n_frames - 1; i >= 0; i--)
        tf__skip_emit(s, &s->frames[i]);
    tf_enc_thread_exit(s->enc, how);
    return tf_enc_flush(s->enc);
}

#ifdef __cplusplus
}
#endif

#endif
