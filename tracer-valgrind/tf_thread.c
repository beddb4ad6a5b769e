/* Per-thread state: the thread's encoder, and the state machine that decides
 * what of its execution is traced and what is skipped.
 *
 * A thread has a small stack of frames. The top frame says whether blocks
 * are traced (MODE_TRACE) or skipped with a reason (0..3). Entering a
 * runtime, excluded or --tf-only function at its entry pushes a frame, which
 * counts calls and returns and pops at the function's own return (depth 0);
 * a tail call is followed naturally, since the callee's return pops it. A
 * signal handler gets a frame of the interrupted mode that pops at the
 * signal's return. Lock events are emitted where FORMAT.md 6.4 puts them:
 * a release before the skip of its function, an acquire after it. */
#include "tf.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"

#define MODE_TRACE 0xFF
#define NO_LOCK 0xFF
#define MAX_FRAMES 16
#define MAX_RWLOCKS 16

typedef enum { POP_NEVER = 0, POP_ON_RETURN, POP_ON_SIGRETURN } PopRule;

typedef struct {
   UChar mode;      /* MODE_TRACE or a skip reason */
   UChar pop;       /* PopRule */
   UChar acquire;   /* lock kind taken when the frame pops, or NO_LOCK */
   UChar check_ret; /* ... only if the function returned 0 */
   Int depth;       /* calls made inside the frame's function */
   ULong count;     /* instructions skipped in this frame, not yet emitted */
   Addr lock;
} Frame;

struct Thread {
   UInt tid, parent;
   Addr stack_lo, stack_hi, start_routine;
   Addr next_start_routine; /* RDX at this thread's last pthread_create */
   ULong traced, skipped;
   Bool live, exit_syscall, file_created;
   Frame frames[MAX_FRAMES];
   UInt n_frames;
   struct {
      Addr lock;
      UChar kind;
   } rw[MAX_RWLOCKS]; /* rwlocks held: what their unlock releases */
   UInt n_rw;
   ULong syscall_start;
   HChar file[32];
   UChar header[TF_FILE_HEADER_SIZE];
   tf_encoder enc;
   void *mem;
};

static Thread **all;        /* every thread, by tid - 1 */
static UInt n_all, cap_all;
static Thread **by_vgtid;   /* live threads by Valgrind thread id */
static UInt *pending_parent; /* by Valgrind thread id: set at creation */
static Addr *pending_start;

static void ensure_tables(void)
{
   if (by_vgtid == NULL) {
      by_vgtid = VG_(calloc)("tf.threads", VG_N_THREADS + 1, sizeof(Thread *));
      pending_parent = VG_(calloc)("tf.threads", VG_N_THREADS + 1, sizeof(UInt));
      pending_start = VG_(calloc)("tf.threads", VG_N_THREADS + 1, sizeof(Addr));
   }
}

/* ---- encoder callbacks ---- */

static const tf_block_info *block_info(void *ctx, uint32_t id)
{
   (void)ctx;
   return &tf_block(id)->info;
}

static uint32_t block_at(void *ctx, uint64_t a)
{
   (void)ctx;
   return tf_block_at(a);
}

/* Writes one chunk of a thread: the block table goes first. */
static int thread_sink(void *ctx, const uint8_t *chunk, size_t len)
{
   Thread *t = ctx;
   tf_blocks_flush();
   return tf_output_append(t->file, &t->file_created, t->header, chunk, len) ? 0 : -1;
}

/* ---- creation ---- */

void tf_thread_created(ThreadId parent, ThreadId child)
{
   Thread *p = tf_thread_if_any(parent);
   ensure_tables();
   pending_parent[child] = p ? p->tid : 0;
   pending_start[child] = p ? p->next_start_routine : 0;
   if (p)
      p->next_start_routine = 0;
}

Thread *tf_thread_if_any(ThreadId vgtid)
{
   return by_vgtid && vgtid > 0 && vgtid <= VG_N_THREADS ? by_vgtid[vgtid] : NULL;
}

static void push(Thread *t, UChar mode, UChar pop)
{
   Frame *f;
   tl_assert(t->n_frames < MAX_FRAMES);
   f = &t->frames[t->n_frames++];
   VG_(memset)(f, 0, sizeof *f);
   f->mode = mode;
   f->pop = pop;
   f->acquire = NO_LOCK;
}

Thread *tf_thread_of(ThreadId vgtid)
{
   Thread *t = tf_thread_if_any(vgtid);
   tf_enc_params params = {TF_SUCC_BITS, TF_ADDR_BITS, TF_RET_DEPTH, TF_CHUNK_TARGET,
                           TF_MAX_BLOCK_OPS};
   SizeT size;
   if (t)
      return t;
   ensure_tables();
   tl_assert(vgtid > 0 && vgtid <= VG_N_THREADS);
   t = VG_(calloc)("tf.thread", 1, sizeof(Thread));
   if (n_all == cap_all) {
      cap_all = cap_all ? 2 * cap_all : 64;
      all = VG_(realloc)("tf.threads", all, cap_all * sizeof(Thread *));
   }
   all[n_all++] = t;
   by_vgtid[vgtid] = t;
   t->tid = n_all;
   t->parent = pending_parent[vgtid];
   t->start_routine = pending_start[vgtid];
   pending_parent[vgtid] = 0;
   pending_start[vgtid] = 0;
   t->stack_hi = VG_(thread_get_stack_max)(vgtid) + 1;
   t->stack_lo = t->stack_hi - VG_(thread_get_stack_size)(vgtid);
   t->live = True;
   VG_(sprintf)(t->file, "thread-%u.tfc", t->tid);
   size = tf_enc_mem_size(&params);
   t->mem = VG_(malloc)("tf.encoder", size);
   tl_assert(tf_enc_init(&t->enc, &params, t->mem, block_info, block_at, thread_sink, t) == 0);
   tf_enc_file_header(&t->enc, t->tid, t->header);
   /* outside the traced region until an --tf-only function is entered */
   push(t, tf_only && VG_(sizeXA)(tf_only) > 0 ? TF_SKIP_OUTSIDE : MODE_TRACE, POP_NEVER);
   tf_enc_thread_start(&t->enc, t->parent, t->stack_lo, t->stack_hi, t->start_routine);
   return t;
}

/* ---- the state machine ---- */

static inline Frame *top(Thread *t)
{
   return &t->frames[t->n_frames - 1];
}

static void emit_skip(Thread *t, Frame *f)
{
   if (f->mode != MODE_TRACE && f->count > 0)
      tf_enc_skip(&t->enc, f->mode, f->count);
   f->count = 0;
}

static void note_rwlock(Thread *t, Addr lock, UChar kind)
{
   if (t->n_rw == MAX_RWLOCKS) { /* forget the oldest */
      VG_(memmove)(&t->rw[0], &t->rw[1], (MAX_RWLOCKS - 1) * sizeof t->rw[0]);
      t->n_rw--;
   }
   t->rw[t->n_rw].lock = lock;
   t->rw[t->n_rw].kind = kind;
   t->n_rw++;
}

/* The kind of the rwlock this thread holds at `lock` (write if unknown). */
static UChar take_rwlock(Thread *t, Addr lock)
{
   Int i;
   for (i = (Int)t->n_rw - 1; i >= 0; i--) {
      if (t->rw[i].lock == lock) {
         UChar kind = t->rw[i].kind;
         VG_(memmove)(&t->rw[i], &t->rw[i + 1], (t->n_rw - i - 1) * sizeof t->rw[0]);
         t->n_rw--;
         return kind;
      }
   }
   return TF_LOCK_RWLOCK_WRITE;
}

/* The frame of `t` pops: its skip, then the lock it acquired, if any. */
static void pop(Thread *t, const Block *b, const ULong *slots)
{
   Frame *f = top(t);
   emit_skip(t, f);
   if (f->acquire != NO_LOCK &&
       (!f->check_ret || (b->rax_slot != TF_NO_SLOT && (UInt)slots[b->rax_slot] == 0))) {
      tf_enc_lock_acquire(&t->enc, f->acquire, f->lock);
      if (f->acquire == TF_LOCK_RWLOCK_READ || f->acquire == TF_LOCK_RWLOCK_WRITE)
         note_rwlock(t, f->lock, f->acquire);
   }
   if (t->n_frames > 1)
      t->n_frames--;
}

/* Calls and returns of a complete execution, for frames that end at their
 * function's return. */
static void track_depth(Thread *t, const Block *b, const ULong *slots)
{
   Frame *f = top(t);
   if (f->pop != POP_ON_RETURN)
      return;
   if (b->info.end == TF_END_CALL || b->info.end == TF_END_INDIRECT_CALL)
      f->depth++;
   else if (b->info.end == TF_END_RETURN && f->depth-- == 0)
      pop(t, b, slots);
}

/* A traced thread enters a runtime or excluded function. */
static void enter_skipped_fn(Thread *t, const Block *b, const ULong *slots)
{
   const FnRole *r = &b->role;
   Addr lock = r->arg == ARG_FIXED ? tf_fixed_lock(r->fixed)
               : b->arg_slot != TF_NO_SLOT ? (Addr)slots[b->arg_slot] : 0;
   Frame *f;
   switch (r->role) {
   case ROLE_ACQUIRE:
      push(t, TF_SKIP_LOCK_RUNTIME, POP_ON_RETURN);
      break;
   case ROLE_RELEASE: {
      UChar kind = r->lock_kind == TF_LOCK_RWLOCK_WRITE ? take_rwlock(t, lock) : r->lock_kind;
      tf_enc_lock_release(&t->enc, kind, lock);
      push(t, TF_SKIP_LOCK_RUNTIME, POP_ON_RETURN);
      return;
   }
   case ROLE_COND_WAIT:
      tf_enc_lock_release(&t->enc, r->lock_kind, lock);
      push(t, TF_SKIP_SYNC_WAIT, POP_ON_RETURN);
      break;
   case ROLE_WAIT:
      push(t, TF_SKIP_SYNC_WAIT, POP_ON_RETURN);
      return;
   default: /* ROLE_EXCLUDE */
      push(t, TF_SKIP_EXCLUDED, POP_ON_RETURN);
      return;
   }
   f = top(t);
   f->acquire = r->lock_kind;
   f->check_ret = r->check_ret;
   f->lock = lock;
}

extern Int tf_bench;
static void trace(Thread *t, UInt id, const Block *b, Bool partial, UInt n_insns, UInt n_ops,
                  const ULong *slots)
{
   if (tf_bench == 2) { t->traced += n_insns; return; }
   if (tf_bench == 3) { static tf_block_info bi; bi = b->info; bi.n_ops = 0; tf_enc_exec_info(&t->enc, id, &bi, partial, n_insns, 0, (const uint64_t *)slots); t->traced += n_insns; return; }
   tf_enc_exec_info(&t->enc, id, &b->info, partial, n_insns, n_ops, (const uint64_t *)slots);
   t->traced += n_insns;
}

static void exec_slow(Thread *t, UInt id, const Block *b, ULong word, const ULong *slots)
{
   Bool partial = (word >> 32) != 0;
   UInt n_insns = partial ? (UInt)(word >> 32) & TF_RAW_MAX_PARTIAL_INSNS : b->info.n_insns;
   UInt n_ops = partial ? (UInt)(word >> 44) & TF_RAW_MAX_PARTIAL_OPS : b->info.n_ops;
   UChar role = b->role.role;
   Frame *f = top(t);

   if (role == ROLE_CREATE && b->arg_slot != TF_NO_SLOT)
      t->next_start_routine = (Addr)slots[b->arg_slot];
   if (f->mode == MODE_TRACE && role != ROLE_NONE && role != ROLE_CREATE && role != ROLE_ONLY) {
      enter_skipped_fn(t, b, slots);
      f = top(t);
   } else if (f->mode == TF_SKIP_OUTSIDE && role == ROLE_ONLY) {
      emit_skip(t, f);
      push(t, MODE_TRACE, POP_ON_RETURN);
      f = top(t);
   }
   if (f->mode == MODE_TRACE) {
      trace(t, id, b, partial, n_insns, n_ops, slots);
   } else {
      f->count += n_insns;
      t->skipped += n_insns;
   }
   if (!partial)
      track_depth(t, b, slots);
}

/* The hot loop: every block execution of the raw buffer. */
void tf_thread_consume(Thread *t, const ULong *p, const ULong *end)
{
   while (p < end) {
      ULong word = *p;
      UInt id = (UInt)word - 1;
      const Block *b = tf_block(id);
      const ULong *slots = p + 1;
      const Frame *f = top(t);
      p = slots + b->slots;
      if (LIKELY((word >> 32) == 0 && f->mode == MODE_TRACE && f->pop != POP_ON_RETURN &&
                 b->role.role == ROLE_NONE)) {
         trace(t, id, b, False, b->info.n_insns, b->info.n_ops, slots);
         continue;
      }
      exec_slow(t, id, b, word, slots);
   }
}

/* ---- events ---- */

static Bool tracing(Thread *t)
{
   return top(t)->mode == MODE_TRACE;
}

void tf_thread_syscall(Thread *t, UInt number, ULong nanos)
{
   if (tracing(t))
      tf_enc_syscall(&t->enc, number, nanos);
}

void tf_thread_signal(Thread *t, Int signo)
{
   UChar mode = top(t)->mode;
   if (mode == MODE_TRACE)
      tf_enc_signal(&t->enc, (ULong)signo);
   if (t->n_frames < MAX_FRAMES)
      push(t, mode, POP_ON_SIGRETURN);
}

void tf_thread_signal_return(Thread *t, Int signo)
{
   UInt i;
   /* frames opened in the handler and not closed (it longjmp'ed) end too */
   for (i = t->n_frames; i > 1; i--) {
      if (t->frames[i - 1].pop == POP_ON_SIGRETURN) {
         UChar mode = t->frames[i - 1].mode;
         while (t->n_frames >= i) {
            emit_skip(t, top(t));
            t->n_frames--;
         }
         if (mode == MODE_TRACE)
            tf_enc_signal_return(&t->enc, (ULong)signo);
         return;
      }
   }
}

void tf_thread_note_exit(ThreadId vgtid)
{
   Thread *t = tf_thread_if_any(vgtid);
   if (t)
      t->exit_syscall = True;
}

void tf_thread_end(Thread *t, UInt how)
{
   Int i;
   if (!t->live)
      return;
   for (i = (Int)t->n_frames - 1; i >= 0; i--)
      emit_skip(t, &t->frames[i]);
   tf_enc_thread_exit(&t->enc, t->exit_syscall ? TF_EXIT_ENDED : how);
   tf_enc_flush(&t->enc);
   VG_(free)(t->mem);
   t->mem = NULL;
   t->live = False;
   for (i = 1; i <= (Int)VG_N_THREADS; i++)
      if (by_vgtid[i] == t)
         by_vgtid[i] = NULL;
}

void tf_threads_end_all(void)
{
   UInt i;
   for (i = 0; i < n_all; i++)
      tf_thread_end(all[i], TF_EXIT_PROCESS);
}

void tf_threads_flush_all(void)
{
   UInt i;
   for (i = 0; i < n_all; i++)
      if (all[i]->live)
         tf_enc_flush(&all[i]->enc);
}

void tf_thread_syscall_start(ThreadId vgtid)
{
   Thread *t = tf_thread_if_any(vgtid);
   struct vki_timespec ts;
   if (!t)
      return;
   VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
   t->syscall_start = (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

ULong tf_thread_syscall_nanos(ThreadId vgtid)
{
   Thread *t = tf_thread_if_any(vgtid);
   struct vki_timespec ts;
   ULong now;
   if (!t || t->syscall_start == 0)
      return 0;
   VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
   now = (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
   return now > t->syscall_start ? now - t->syscall_start : 0;
}

/* ---- manifest ---- */

UInt tf_threads_count(void)
{
   return n_all;
}

void tf_threads_manifest(tf_mp *mp, ULong *traced, ULong *skipped)
{
   UInt i;
   *traced = *skipped = 0;
   tf_mp_array(mp, n_all);
   for (i = 0; i < n_all; i++) {
      const Thread *t = all[i];
      tf_mp_map(mp, 7);
      tf_mp_cstr(mp, "tid");
      tf_mp_uint(mp, t->tid);
      tf_mp_cstr(mp, "parent");
      tf_mp_uint(mp, t->parent);
      tf_mp_cstr(mp, "stack_lo");
      tf_mp_uint(mp, t->stack_lo);
      tf_mp_cstr(mp, "stack_hi");
      tf_mp_uint(mp, t->stack_hi);
      tf_mp_cstr(mp, "start_routine");
      tf_mp_uint(mp, t->start_routine);
      tf_mp_cstr(mp, "traced_instructions");
      tf_mp_uint(mp, t->traced);
      tf_mp_cstr(mp, "skipped_instructions");
      tf_mp_uint(mp, t->skipped);
      *traced += t->traced;
      *skipped += t->skipped;
   }
}
