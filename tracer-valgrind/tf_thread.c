/* Per-thread encoding, in the encoder thread: the raw records of a thread
 * go through a state machine that decides what is traced and what is
 * skipped, and into the thread's encoder.
 *
 * A thread has a small stack of frames. The top frame says whether blocks
 * are traced (TF_MODE_TRACE) or skipped with a reason (0..3). Entering a
 * runtime, excluded or --tf-only function at its entry pushes a frame, which
 * counts calls and returns and pops at the function's own return (depth 0);
 * a tail call is followed naturally, since the callee's return pops it. A
 * signal handler gets a frame of the interrupted mode that pops at the
 * signal's return. Lock events are emitted where FORMAT.md 6.4 puts them:
 * a release before the skip of its function, an acquire after it. */
#include "tf.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"

#define TF_MODE_TRACE 0xFF
#define TF_NO_LOCK 0xFF

typedef enum { POP_NEVER = 0, POP_ON_RETURN, POP_ON_SIGRETURN } PopRule;

static Thread *all[TF_MAX_THREADS]; /* by tid - 1 */
static volatile UInt n_all;

Thread *tf_thread_at(UInt index)
{
   return index < n_all ? all[index] : NULL;
}

UInt tf_threads_count(void)
{
   return n_all;
}

/* ---- encoder callbacks (encoder thread) ---- */

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

static int thread_sink(void *ctx, const uint8_t *chunk, size_t len)
{
   Thread *t = ctx;
   return tf_output_append(t->file, &t->file_created, t->header, chunk, len) ? 0 : -1;
}

/* ---- creation (Valgrind thread) ---- */

/* Pushes a frame; past MAX_FRAMES (signal handlers interrupted by signal
 * handlers ...) the current frame goes on, a loss of detail only. */
static void push(Thread *t, UChar mode, UChar pop)
{
   Frame *f;
   if (t->n_frames == MAX_FRAMES)
      return;
   f = &t->frames[t->n_frames++];
   VG_(memset)(f, 0, sizeof *f);
   f->mode = mode;
   f->pop = pop;
   f->acquire = TF_NO_LOCK;
}

Thread *tf_thread_new(ThreadId vgtid, Thread *parent)
{
   tf_enc_params params = {TF_SUCC_BITS, TF_ADDR_BITS, TF_RET_DEPTH, TF_CHUNK_TARGET,
                           TF_MAX_BLOCK_OPS};
   Thread *t = VG_(calloc)("tf.thread", 1, sizeof(Thread));
   t->vgtid = vgtid;
   t->worker = -1;
   if (n_all == TF_MAX_THREADS) {
      /* Not traced, but its code still writes raw records: they go to a
       * segment of its own that is overwritten. */
      static Bool said;
      if (!said)
         tf_error("more than %d threads: the others are not traced", TF_MAX_THREADS);
      said = True;
      t->discard = True;
      t->started = True;
      tf_raw_attach(t);
      return t;
   }
   t->tid = n_all + 1;
   t->parent = parent ? parent->tid : 0;
   if (parent) {
      t->start_routine = parent->created_routine;
      parent->created_routine = 0;
   }
   VG_(sprintf)(t->file, "thread-%u.tfc", t->tid);
   t->mem = VG_(malloc)("tf.encoder", tf_enc_mem_size(&params));
   tl_assert(tf_enc_init(&t->enc, &params, t->mem, block_info, block_at, thread_sink, t) == 0);
   tf_enc_file_header(&t->enc, t->tid, t->header);
   /* outside the traced region until an --tf-only function is entered */
   push(t, tf_only && VG_(sizeXA)(tf_only) > 0 ? TF_SKIP_OUTSIDE : TF_MODE_TRACE, POP_NEVER);
   tf_raw_attach(t);
   all[n_all] = t;
   __sync_synchronize();
   n_all++;
   return t;
}

/* A thread's stack as the trace states it: what Valgrind registered (from
 * the start of the mapping that holds the initial stack pointer up to that
 * pointer, page-rounded) and, for threads other than the first, the rest of
 * that anonymous mapping, where glibc keeps the thread's static TLS block
 * and its descriptor: they are the thread's private memory, as its stack
 * is (README, segments). */
void tf_thread_started(Thread *t)
{
   ULong *m = tf_raw_marker_room(t, 4);
   Addr hi = VG_(thread_get_stack_max)(t->vgtid) + 1;
   Addr lo = hi - VG_(thread_get_stack_size)(t->vgtid);
   NSegment const *seg = VG_(am_find_nsegment)(hi - 1);
   if (t->tid > 1 && lo < hi && seg && seg->kind == SkAnonC && seg->start <= lo && seg->end >= hi)
      hi = seg->end + 1;
   m[0] = tf_raw_marker(MK_START, 0);
   m[1] = lo;
   m[2] = hi;
   tf_raw_wrote(t, m + 3);
}

void tf_threads_free_ended(void)
{
   UInt i;
   for (i = 0; i < n_all; i++) {
      Thread *t = all[i];
      if (t->ended && !t->mem_freed) {
         VG_(free)(t->mem);
         t->mem_freed = True;
      }
   }
}

/* ---- the state machine (encoder thread) ---- */

static inline Frame *top(Thread *t)
{
   return &t->frames[t->n_frames - 1];
}

static void emit_skip(Thread *t, Frame *f)
{
   if (f->mode != TF_MODE_TRACE && f->count > 0)
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
   if (f->acquire != TF_NO_LOCK &&
       (!f->check_ret || (b->rax_slot != TF_NO_SLOT && (UInt)slots[b->rax_slot] == 0))) {
      tf_enc_lock_acquire(&t->enc, f->acquire, f->lock);
      if (f->acquire == TF_LOCK_RWLOCK_READ || f->acquire == TF_LOCK_RWLOCK_WRITE)
         note_rwlock(t, f->lock, f->acquire);
   }
   if (t->n_frames > 1)
      t->n_frames--;
}

/* Calls and returns of a complete execution, for frames that end at their
 * function's return. A return first ends the frames of functions that have
 * no call in flight (a function entered by a tail jump returns with the one
 * it jumped to), then goes back into the function that made the call. */
static void track_depth(Thread *t, const Block *b, const ULong *slots)
{
   Frame *f = top(t);
   if (f->pop != POP_ON_RETURN)
      return;
   if (b->info.end == TF_END_CALL || b->info.end == TF_END_INDIRECT_CALL) {
      f->depth++;
   } else if (b->info.end == TF_END_RETURN) {
      while (f->pop == POP_ON_RETURN && f->depth == 0) {
         pop(t, b, slots);
         f = top(t);
      }
      if (f->pop == POP_ON_RETURN)
         f->depth--;
   }
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

/* Inlined into the hot loop: the encoder's fast path with it. */
static inline __attribute__((always_inline)) void trace(Thread *t, UInt id, const Block *b,
                                                        Bool partial, UInt n_insns, UInt n_ops,
                                                        const ULong *slots)
{
   if (tf_bench != 2)
      tf_enc_exec_fast(&t->enc, id, &b->info, partial, n_insns, n_ops, (const uint64_t *)slots);
   t->traced += n_insns;
}

static void exec_slow(Thread *t, UInt id, const Block *b, ULong word, const ULong *slots)
{
   Bool partial = (word >> 32) != 0;
   UInt n_insns = partial ? (UInt)(word >> 32) & TF_RAW_MAX_PARTIAL_INSNS : b->info.n_insns;
   UInt n_ops = partial ? (UInt)(word >> 44) & TF_RAW_MAX_PARTIAL_OPS : b->info.n_ops;
   UChar role = b->role.role;
   Frame *f = top(t);

   if (f->mode == TF_MODE_TRACE && role != ROLE_NONE && role != ROLE_CREATE && role != ROLE_ONLY) {
      enter_skipped_fn(t, b, slots);
      f = top(t);
   } else if (f->mode == TF_SKIP_OUTSIDE && role == ROLE_ONLY) {
      emit_skip(t, f);
      push(t, TF_MODE_TRACE, POP_ON_RETURN);
      f = top(t);
   }
   if (f->mode == TF_MODE_TRACE) {
      trace(t, id, b, partial, n_insns, n_ops, slots);
   } else {
      f->count += n_insns;
      t->skipped += n_insns;
   }
   if (!partial)
      track_depth(t, b, slots);
}

/* ---- events (encoder thread) ---- */

static void signal_start(Thread *t, Int signo)
{
   UChar mode = top(t)->mode;
   if (mode == TF_MODE_TRACE)
      tf_enc_signal(&t->enc, (ULong)signo);
   push(t, mode, POP_ON_SIGRETURN);
}

static void signal_return(Thread *t, Int signo)
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
         if (mode == TF_MODE_TRACE)
            tf_enc_signal_return(&t->enc, (ULong)signo);
         return;
      }
   }
}

static void stream_end(Thread *t, UInt how)
{
   Int i;
   for (i = (Int)t->n_frames - 1; i >= 0; i--)
      emit_skip(t, &t->frames[i]);
   tf_enc_thread_exit(&t->enc, how);
   tf_enc_flush(&t->enc);
   __sync_synchronize();
   t->ended = True;
}

/* A marker at p; returns the record after it. */
static const ULong *marker(Thread *t, const ULong *p)
{
   ULong payload = p[0] & ((1ull << 56) - 1);
   switch ((UInt)(p[0] >> 56) & 0x7F) {
   case MK_START:
      t->stack_lo = p[1];
      t->stack_hi = p[2];
      tf_enc_thread_start(&t->enc, t->parent, t->stack_lo, t->stack_hi, t->start_routine);
      return p + 3;
   case MK_SYSCALL:
      if (top(t)->mode == TF_MODE_TRACE)
         tf_enc_syscall(&t->enc, payload, p[1]);
      return p + 2;
   case MK_SIGNAL:
      signal_start(t, (Int)payload);
      return p + 1;
   case MK_SIGRET:
      signal_return(t, (Int)payload);
      return p + 1;
   default: /* MK_EXIT */
      stream_end(t, (UInt)payload);
      return p + 1;
   }
}

/* The hot loop: every record of a segment. */
void tf_thread_consume(Thread *t, const ULong *p, const ULong *end)
{
   while (p < end) {
      ULong word = *p;
      UInt id = (UInt)word - 1;
      const Block *b;
      const ULong *slots = p + 1;
      const Frame *f = top(t);
      if (UNLIKELY(word & TF_RAW_MARKER)) {
         p = marker(t, p);
         continue;
      }
      b = tf_block(id);
      p = slots + b->slots;
      if (LIKELY((word >> 32) == 0 && f->mode == TF_MODE_TRACE && f->pop != POP_ON_RETURN &&
                 b->role.role == ROLE_NONE)) {
         trace(t, id, b, False, b->info.n_insns, b->info.n_ops, slots);
         continue;
      }
      exec_slow(t, id, b, word, slots);
   }
}

void tf_threads_flush_encoders(UInt worker)
{
   UInt i, n = n_all;
   for (i = 0; i < n; i++)
      if (all[i]->worker == (Int)worker && !all[i]->ended)
         tf_enc_flush(&all[i]->enc);
}

/* ---- manifest (Valgrind thread, after tf_raw_drain) ---- */

void tf_threads_manifest(tf_mp *mp, ULong *traced, ULong *skipped)
{
   UInt i;
   *traced = *skipped = 0;
   tf_mp_array(mp, n_all);
   for (i = 0; i < n_all; i++) {
      const Thread *t = all[i];
      const struct {
         const HChar *key;
         ULong value;
      } fields[] = {{"tid", t->tid},
                    {"parent", t->parent},
                    {"stack_lo", t->stack_lo},
                    {"stack_hi", t->stack_hi},
                    {"start_routine", t->start_routine},
                    {"traced_instructions", t->traced},
                    {"skipped_instructions", t->skipped}};
      UInt k;
      tf_mp_map(mp, sizeof fields / sizeof fields[0]);
      for (k = 0; k < sizeof fields / sizeof fields[0]; k++) {
         tf_mp_cstr(mp, fields[k].key);
         tf_mp_uint(mp, fields[k].value);
      }
      *traced += t->traced;
      *skipped += t->skipped;
   }
}
