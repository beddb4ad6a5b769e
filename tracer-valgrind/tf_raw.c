/* Raw segments and the encoder thread.
 *
 * Each client thread fills its own segment. The write cursor and the limit
 * live in the thread's shadow guest state (shadow area 1, unused by this
 * tool otherwise), so instrumented code reaches them with one %rbp-relative
 * access. The core copies guest state around (into signal frames and back,
 * into a cloned child), so the tool keeps its own copy of the cursor while
 * the thread does not run and writes it back each time the thread starts
 * running client code.
 *
 * When a segment is nearly full, the instrumented code exits to the
 * scheduler (an emulation-warning exit, which the core handles silently)
 * and the tool hands the segment over in start_client_code. Segments go
 * through a single-producer single-consumer queue to an encoder thread, a
 * plain OS thread the tool starts with clone(); it makes only system calls
 * and touches only memory that the queue hands to it, so it never needs
 * Valgrind's lock. Segments come back through a second ring.
 */
#include "tf.h"
#include "tf_sys.h"
#include "libvex_guest_offsets.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vkiscnums.h"

/* ---- the cursor in the shadow guest state ---- */

#define SH_CUR OFFSET_amd64_RAX /* offsets within shadow area 1 */
#define SH_LIM OFFSET_amd64_RCX
static Int shadow_base = -1; /* IR offset of shadow area 1 */

Int tf_raw_cursor_offset(void)
{
   return shadow_base + SH_CUR;
}

Int tf_raw_limit_offset(void)
{
   return shadow_base + SH_LIM;
}

static ULong *cursor_of(Thread *t)
{
   ULong v;
   if (!t->running)
      return t->cursor;
   VG_(get_shadow_regs_area)(t->vgtid, (UChar *)&v, 1, SH_CUR, 8);
   return (ULong *)(Addr)v;
}

static void set_cursor(Thread *t, ULong *c)
{
   ULong v = (ULong)(Addr)c;
   t->cursor = c;
   if (t->running)
      VG_(set_shadow_regs_area)(t->vgtid, 1, SH_CUR, 8, (const UChar *)&v);
}

#define FENCE() __sync_synchronize()

/* ---- encoder threads and their queues ----
 * Each client thread belongs to one encoder thread, which processes its
 * segments in order; with several cores, several encoder threads work on
 * different client threads at once. */

enum { IT_SEGMENT, IT_DRAIN };
typedef struct {
   Thread *t;
   ULong *seg;
   UInt n;
   UInt kind; /* IT_DRAIN: n = flush the encoders */
} Item;

#define QCAP 1024u
#define FCAP 4096u
#define MAX_WORKERS 8
#define MAX_QUEUED_SEGS 128 /* per encoder thread, waiting to be encoded (32 MiB) */

typedef struct {
   UInt index;
   Item queue[QCAP];
   volatile UInt q_tail;  /* items published (Valgrind thread) */
   volatile UInt q_head;  /* items done (encoder thread) */
   ULong *free_segs[FCAP];
   volatile UInt f_tail;  /* segments returned (encoder thread) */
   UInt f_head;           /* segments reused (Valgrind thread) */
   volatile UInt worker_waiting, vg_waiting;
   UInt n_segs;           /* segments allocated for it */
   UInt n_threads;        /* client threads it has */
   Bool started;
} Worker;

static Worker workers[MAX_WORKERS];
static UInt n_workers;

/* The loop of encoder thread w. */
static void worker_main(Worker *w)
{
   ULong all_signals = ~0ull;
   static const char name[] = "tf-encoder"; /* as top -H and perf show it */
   sys(__NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)(Addr)&all_signals, 0, 8);
   sys(__NR_prctl, 15 /* PR_SET_NAME */, (long)(Addr)name, 0, 0);
   for (;;) {
      Item *it;
      UInt tail = w->q_tail;
      if (w->q_head == tail) {
         w->worker_waiting = 1;
         FENCE();
         if (w->q_head == w->q_tail)
            futex_wait(&w->q_tail, tail);
         w->worker_waiting = 0;
         continue;
      }
      FENCE();
      it = &w->queue[w->q_head % QCAP];
      if (it->kind == IT_SEGMENT) {
         if (tf_bench != 1)
            tf_thread_consume(it->t, it->seg, it->seg + it->n);
         w->free_segs[w->f_tail % FCAP] = it->seg;
         FENCE();
         w->f_tail++;
      } else if (it->n) {
         tf_threads_flush_encoders(w->index);
      }
      FENCE();
      w->q_head++;
      FENCE();
      if (w->vg_waiting)
         futex_wake(&w->q_head);
   }
}

/* clone() with a new stack; the child runs worker_main(w) forever. */
static void start_worker(Worker *w)
{
   SizeT size = 1u << 20;
   UChar *stack = VG_(malloc)("tf.encoder.stack", size);
   long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000;
   /* CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM */
   long r;
   register long r10 __asm__("r10") = 0;
   register long r8 __asm__("r8") = 0;
   register void (*fn)(Worker *) __asm__("r9") = worker_main;
   register Worker *arg __asm__("r12") = w;
   __asm__ volatile("syscall\n\t"
                    "testq %%rax, %%rax\n\t"
                    "jnz 1f\n\t"
                    "xorl %%ebp, %%ebp\n\t"
                    "andq $-16, %%rsp\n\t"
                    "movq %%r12, %%rdi\n\t"
                    "call *%%r9\n\t"
                    "hlt\n\t"
                    "1:\n\t"
                    : "=a"(r)
                    : "0"((long)__NR_clone), "D"(flags), "S"((long)(Addr)(stack + size - 64)),
                      "d"(0L), "r"(r10), "r"(r8), "r"(fn), "r"(arg)
                    : "rcx", "r11", "memory");
   tl_assert(r > 0);
   w->started = True;
}

/* Waits (Valgrind thread) until worker w has done `done` items. */
static void wait_done(Worker *w, UInt done)
{
   while ((Int)(w->q_head - done) < 0) {
      UInt h = w->q_head;
      w->vg_waiting = 1;
      FENCE();
      if ((Int)(w->q_head - done) < 0)
         futex_wait(&w->q_head, h);
      w->vg_waiting = 0;
   }
}

static void publish(Worker *w, Item it)
{
   if (!w->started)
      start_worker(w);
   wait_done(w, w->q_tail - QCAP + 1); /* room in the queue */
   w->queue[w->q_tail % QCAP] = it;
   FENCE();
   w->q_tail++;
   FENCE();
   if (w->worker_waiting)
      futex_wake(&w->q_tail);
}

/* A free segment of worker w: a returned one, a new one, or wait for one
 * (a bounded number of segments may wait for the encoder thread). */
static ULong *segment(Worker *w)
{
   ULong *s;
   while (w->f_head == w->f_tail && w->n_segs >= MAX_QUEUED_SEGS + w->n_threads)
      wait_done(w, w->q_head + 1);
   if (w->f_head != w->f_tail) {
      FENCE();
      s = w->free_segs[w->f_head % FCAP];
      w->f_head++;
   } else {
      s = VG_(malloc)("tf.segment", TF_SEG_WORDS * sizeof(ULong));
      w->n_segs++;
   }
   s[0] = 0;
   return s;
}

/* Encoder threads: 8 (or --tf-encoders=N), whatever the number of cores;
 * client thread i goes to encoder thread i mod 8 (mod N), so up to 8 client
 * threads each have their own. Valgrind runs one client thread at a time, and a
 * thread's stream is encoded by its encoder thread, in order. With an
 * encoder per busy client thread, the kernel shares the cores among the
 * streams that have a backlog; with one encoder per core, a busy stream
 * waited behind another stream's backlog on its encoder while the other
 * encoder sat idle. The queues are deep (about 32 MiB of raw records per
 * encoder thread) so that the client runs ahead while the encoders catch
 * up. On 2 cores, tf trace of pigz -p 4 (20 MB) took 11.3 s with 2 encoder
 * threads and 10.1 s with 8 (benches/trace_overhead.sh). Shallow queues
 * (8 segments each, 2 MiB) would keep the raw records in the cache, but the
 * client then waits on one encoder's full queue while the cores idle: the
 * same run took 16.7 s instead of 10.7 s, with 1.3 cores busy. */
static UInt count_workers(void)
{
   return tf_encoders > 0 ? (UInt)tf_encoders : MAX_WORKERS;
}

void tf_raw_init(Int base)
{
   shadow_base = base;
}

void tf_raw_attach(Thread *t)
{
   Worker *w;
   if (n_workers == 0) {
      UInt i;
      n_workers = count_workers();
      for (i = 0; i < n_workers; i++)
         workers[i].index = i;
   }
   if (t->worker < 0) {
      t->worker = (Int)((t->tid - 1) % n_workers);
      workers[t->worker].n_threads++;
   }
   w = &workers[t->worker];
   t->seg = segment(w);
   t->cursor = t->seg;
}

/* Room a block needs: its words and the zero after them (tf_instrument.c);
 * the largest block fits in what start_client_code leaves. */
#define MARGIN (TF_MAX_BLOCK_OPS + 8)

void tf_raw_handoff(Thread *t, Bool more)
{
   ULong *c;
   Item it;
   if (t->seg == NULL)
      return;
   if (tf_disabled || t->discard) { /* nothing is recorded */
      t->seg[0] = 0;
      set_cursor(t, t->seg);
      return;
   }
   c = cursor_of(t);
   tf_blocks_flush(); /* the blocks it uses are on disk first */
   it.t = t;
   it.seg = t->seg;
   it.n = (UInt)(c - t->seg);
   it.kind = IT_SEGMENT;
   publish(&workers[t->worker], it);
   t->seg = NULL;
   if (more) {
      tf_raw_attach(t);
      set_cursor(t, t->seg);
   }
}

void tf_raw_start(Thread *t)
{
   ULong lim;
   if (t->seg == NULL)
      tf_raw_attach(t);
   if (t->seg + TF_SEG_WORDS - t->cursor < MARGIN)
      tf_raw_handoff(t, True);
   t->running = True;
   lim = (ULong)(Addr)(t->seg + TF_SEG_WORDS);
   set_cursor(t, t->cursor);
   VG_(set_shadow_regs_area)(t->vgtid, 1, SH_LIM, 8, (const UChar *)&lim);
}

void tf_raw_stop(Thread *t)
{
   t->cursor = cursor_of(t);
   t->running = False;
}

ULong *tf_raw_marker_room(Thread *t, UInt words)
{
   ULong *c;
   if (t->seg == NULL)
      tf_raw_attach(t);
   c = cursor_of(t);
   if (c + words + 1 > t->seg + TF_SEG_WORDS) {
      tf_raw_handoff(t, True);
      c = cursor_of(t);
   }
   return c;
}

void tf_raw_wrote(Thread *t, ULong *end)
{
   *end = 0;
   set_cursor(t, end);
}

Bool tf_raw_in_progress(Thread *t)
{
   ULong *c = t->seg ? cursor_of(t) : NULL;
   return c != NULL && c[0] != 0 && !(c[0] & TF_RAW_MARKER);
}

void tf_raw_fault(Thread *t, Addr ip)
{
   ULong *r = cursor_of(t);
   UInt id, k = 0, n_ops = 0;
   const Block *b;
   Addr a;
   if (!tf_raw_in_progress(t))
      return;
   id = (UInt)r[0] - 1;
   tl_assert(id < tf_blocks_count());
   b = tf_block(id);
   /* the faulting instruction: the instructions before it ran */
   a = b->info.address;
   while (k < b->info.n_insns && a != ip)
      a += b->ident[b->info.code_len + k++];
   if (k == 0 || k == b->info.n_insns) {
      r[0] = 0; /* nothing ran, or the address is not in the block */
      return;
   }
   while (n_ops < b->info.n_ops && tf_block_op_insn(b)[n_ops] < k)
      n_ops++;
   r[0] = tf_raw_partial_word(id, k, n_ops);
   tf_raw_wrote(t, r + 1 + b->slots);
}

void tf_raw_drain(Bool flush)
{
   UInt i;
   Item it = {NULL, NULL, flush, IT_DRAIN};
   Thread *t;
   if (tf_disabled)
      return;
   for (i = 0; (t = tf_thread_at(i)) != NULL; i++)
      if (t->seg && !t->ended_vg)
         tf_raw_handoff(t, True);
   tf_blocks_flush();
   for (i = 0; i < n_workers; i++)
      if (workers[i].started)
         publish(&workers[i], it);
   for (i = 0; i < n_workers; i++)
      wait_done(&workers[i], workers[i].q_tail);
}

void tf_raw_forget(void)
{
   /* In a forked child the encoder threads do not exist: nothing may wait
    * for them (tracing is off there, see tf_raw_handoff). */
   UInt i;
   for (i = 0; i < n_workers; i++)
      workers[i].started = True;
}
