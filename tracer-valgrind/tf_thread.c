/* Per-thread encoding, in the encoder thread: the raw records of a thread
 * go through the skip state machine shared by every tracer (tf_tracer.h,
 * which decides what is traced and what is skipped and where lock events
 * go), and into the thread's encoder. */
#include "tf.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"

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
   if (tf_bench == 3) /* measuring the encoding without the write-out */
      return 0;
   return tf_output_append(t->file, &t->file_created, t->header, chunk, len) ? 0 : -1;
}

/* ---- creation (Valgrind thread) ---- */

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
   tf_thread_file_name(t->file, t->tid);
   t->mem = VG_(malloc)("tf.encoder", tf_enc_mem_size(&params));
   tl_assert(tf_enc_init(&t->enc, &params, t->mem, block_info, block_at, thread_sink, t) == 0);
   tf_enc_file_header(&t->enc, t->tid, t->header);
   /* outside the traced region until an --tf-only function is entered */
   tf_skip_init(&t->skip, &t->enc, tf_only && VG_(sizeXA)(tf_only) > 0);
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

static __attribute__((noinline)) void exec_slow(Thread *t, UInt id, const Block *b, ULong word, const ULong *slots)
{
   Bool partial = (word & TF_RAW_PARTIAL) != 0;
   UInt n_insns = partial ? tf_raw_partial_insns(word) : b->info.n_insns;
   UInt n_ops = partial ? tf_raw_partial_ops(word) : b->info.n_ops;
   const FnRole *r = &b->role;
   Addr lock = r->arg == ARG_FIXED ? tf_fixed_lock(r->fixed)
               : b->arg_slot != TF_NO_SLOT ? (Addr)slots[b->arg_slot] : 0;
   Bool have_rax = b->rax_slot != TF_NO_SLOT;
   tf_wait_call *c = &t->wait_call;
   /* a task the runtime runs while the thread waits: its call first */
   if (tf_wait_call_before(&t->skip, c, b->in_omp_runtime) && tf_bench != 2)
      tf_enc_exec_fast(&t->enc, c->id, &tf_block(c->id)->info, False, c->n_insns, c->n_ops,
                       (const uint64_t *)c->addrs);
   if (tf_skip_enter(&t->skip, r->role != ROLE_NONE ? r : NULL, lock) && tf_bench != 2)
      tf_enc_exec_fast(&t->enc, id, &b->info, partial, n_insns, n_ops, (const uint64_t *)slots);
   tf_skip_ran(&t->skip, n_insns, !partial, b->info.end, have_rax,
               have_rax ? slots[b->rax_slot] : 0);
   tf_wait_call_after(&t->skip, c, id, b->info.end, b->in_omp_runtime, !partial, n_insns, n_ops,
                      (const uint64_t *)slots);
}

/* ---- events (encoder thread) ---- */

static void stream_end(Thread *t, UInt how)
{
   tf_skip_end(&t->skip, how);
   __sync_synchronize();
   t->ended = True;
}

/* A marker at p; returns the record after it. */
static __attribute__((noinline)) const ULong *marker(Thread *t, const ULong *p)
{
   ULong payload = p[0] & ((1ull << 56) - 1);
   switch ((UInt)(p[0] >> 56) & 0x7F) {
   case MK_START:
      t->stack_lo = p[1];
      t->stack_hi = p[2];
      tf_enc_thread_start(&t->enc, t->parent, t->stack_lo, t->stack_hi, t->start_routine);
      return p + 3;
   case MK_SYSCALL:
      tf_skip_syscall(&t->skip, payload, p[1]);
      return p + 2;
   case MK_SIGNAL:
      tf_skip_signal(&t->skip, payload);
      return p + 1;
   case MK_SIGRET:
      tf_skip_signal_return(&t->skip, payload);
      return p + 1;
   case MK_LOOP:
      tf_skip_loop_chunk(&t->skip, p[1], p[2], p[3], p[4], p[5]);
      return p + 6;
   case MK_STATIC:
      tf_skip_static_loop(&t->skip, p[1], p[2], p[3]);
      return p + 4;
   default: /* MK_EXIT */
      stream_end(t, (UInt)payload);
      return p + 1;
   }
}

/* Whether a complete execution of a block without a role is traced as it
 * is, changing nothing else but the traced count: what tf_skip_enter and
 * tf_skip_ran would do then, without calling them. Only they and the
 * markers change the skip state. */
static inline Bool plain_tracing(Thread *t)
{
   const tf_skip_frame *f = tf__skip_top(&t->skip);
   return f->mode == TF_MODE_TRACE && f->pop != TF_POP_ON_RETURN;
}

/* The hot loop: every record of a segment. */
void tf_thread_consume(Thread *t, const ULong *p, const ULong *end)
{
   Bool plain = plain_tracing(t), encode = tf_bench != 2;
   ULong traced = 0;
   while (p < end) {
      ULong word = *p;
      UInt id = (UInt)word - 1;
      /* The records 2 KiB on: the segments are read once, from memory, and
       * the hardware's prefetcher stops at every page boundary. The walk
       * waited on these loads; with the hint its own CPU time falls by 40%
       * (--tf-bench=2), and tf trace's by 2-3%. */
      __builtin_prefetch(p + 256);
      const Block *b;
      const ULong *slots = p + 1;
      if (UNLIKELY(word & TF_RAW_MARKER)) {
         p = marker(t, p);
         plain = plain_tracing(t);
         continue;
      }
      b = tf_block(id);
      if (UNLIKELY(word & TF_RAW_PARTIAL)) {
         p = slots + b->slots;
         exec_slow(t, id, b, word, slots);
         plain = plain_tracing(t);
         continue;
      }
      /* the next record's place from this word alone: reading it does not
       * wait for the block's description */
      p = slots + tf_raw_slots(word);
      if (LIKELY(plain && b->role.role == ROLE_NONE)) {
         if (encode)
            tf_enc_exec_fast(&t->enc, id, &b->info, False, b->info.n_insns, b->info.n_ops,
                             (const uint64_t *)slots);
         traced += b->info.n_insns;
         continue;
      }
      exec_slow(t, id, b, word, slots);
      plain = plain_tracing(t);
   }
   t->skip.traced += traced;
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
      tf_manifest_thread(mp, t->tid, t->parent, t->stack_lo, t->stack_hi, t->start_routine,
                         t->skip.traced, t->skip.skipped);
      *traced += t->skip.traced;
      *skipped += t->skip.skipped;
   }
}
