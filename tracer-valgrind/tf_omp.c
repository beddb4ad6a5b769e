/* Worksharing loops: the preload library's requests (tf_requests.h) turned
 * into `loop_chunk` and `static_loop` markers (FORMAT.md 6.6, 6.7), in the
 * Valgrind thread.
 *
 * Valgrind runs one client thread at a time, so requests arrive in one
 * global order. A loop *instance* is one execution of a worksharing loop by
 * a team. Every thread of the team announces it (its own _start call, or
 * its first chunk of a combined `parallel for`, whose bounds the master
 * announced); the n-th announcement of a loop by a thread of a team joins
 * the oldest instance of the same loop and team that this thread has not
 * joined yet and that has fewer members than the team, or opens a new one.
 * Instances are numbered from 1 in the order they open: program order. */
#include "tf.h"
#include "tf_requests.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

typedef struct {
   ULong id, start, incr, trip, team, size, joined;
} Instance;

/* Open instances (fewer members than their team), oldest first: of
 * runtime-scheduled loops, and (apart, so that a program's own calls of the
 * pair cannot crowd those out) of inline static schedules. */
#define TF_MAX_OPEN_LOOPS 256
typedef struct {
   Instance at[TF_MAX_OPEN_LOOPS];
   UInt n;
} Open;
static Open open_loops, open_statics;
static ULong last_id;

/* Loops of combined `parallel for`s about to start, by team. */
#define TF_MAX_PENDING 64
static struct {
   ULong team, start, incr, trip;
} pending[TF_MAX_PENDING];
static UInt n_pending;

/* Chunks that belong to no loop the tool saw begin. */
ULong tf_omp_lost_chunks;

static ULong logical(ULong x, ULong start, ULong incr)
{
   Long d = (Long)(x - start), s = (Long)incr;
   if (s == 0)
      return 0;
   return s > 0 ? (ULong)(d / s) : (ULong)(-d / -s);
}

/* The instance the thread joins (see above); `last` is the last one of its
 * kind the thread joined. Inline static schedules join by call site, as
 * `start` with `incr` 0, which no loop has. */
static ULong join_instance(Open *open, ULong *last, ULong start, ULong incr, ULong trip,
                           ULong team, ULong size)
{
   UInt i;
   ULong id;
   Instance *in = NULL;
   for (i = 0; i < open->n && in == NULL; i++) {
      Instance *o = &open->at[i];
      if (o->team == team && o->start == start && o->incr == incr && o->trip == trip &&
          o->id > *last)
         in = o;
   }
   if (in == NULL) {
      if (open->n == TF_MAX_OPEN_LOOPS) { /* a team that never filled: forget the oldest */
         VG_(memmove)(&open->at[0], &open->at[1], (open->n - 1) * sizeof open->at[0]);
         open->n--;
      }
      in = &open->at[open->n++];
      in->id = ++last_id;
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
      i = (UInt)(in - open->at);
      VG_(memmove)(&open->at[i], &open->at[i + 1], (open->n - i - 1) * sizeof open->at[0]);
      open->n--;
   }
   return id;
}

static void join(Thread *t, ULong start, ULong incr, ULong trip, ULong team, ULong size)
{
   t->loop_id = join_instance(&open_loops, &t->loop_last, start, incr, trip, team, size);
   t->loop_start = start;
   t->loop_incr = incr;
   t->loop_trip = trip;
}

static void put_chunk(Thread *t, ULong first, ULong count, ULong stride)
{
   ULong *m = tf_raw_marker_room(t, 6);
   m[0] = tf_raw_marker(MK_LOOP, 0);
   m[1] = t->loop_id;
   m[2] = first;
   m[3] = count;
   m[4] = stride;
   m[5] = t->loop_trip;
   tf_raw_wrote(t, m + 6);
   if (count == 0)
      t->loop_id = 0;
}

/* The thread's chunk [lo, hi) in user space, with every further one
 * `stride` on (0: none). */
static void chunk(Thread *t, ULong lo, ULong hi, ULong stride)
{
   ULong n = tf_iterations(lo, hi, t->loop_incr);
   put_chunk(t, n ? logical(lo, t->loop_start, t->loop_incr) : 0, n,
             n ? logical(t->loop_start + stride, t->loop_start, t->loop_incr) : 0);
}

Bool tf_omp_request(Thread *t, const UWord *a)
{
   UInt i;
   if (!tf_worksharing) /* --tf-worksharing=no: the requests are known, not recorded */
      return a[0] >= TF_REQ_LOOP_BEGIN && a[0] <= TF_REQ_TEAM_PLACE;
   switch (a[0]) {
   case TF_REQ_LOOP_BEGIN:
      join(t, a[1], a[2], a[3], a[4], a[5]);
      return True;
   case TF_REQ_LOOP_COMBINED:
      for (i = 0; i < n_pending && pending[i].team != a[4]; i++)
         ;
      if (i == n_pending) {
         if (n_pending == TF_MAX_PENDING)
            return True; /* its chunks will count as lost */
         n_pending++;
      }
      pending[i].team = a[4];
      pending[i].start = a[1];
      pending[i].incr = a[2];
      pending[i].trip = a[3];
      return True;
   case TF_REQ_LOOP_CHUNK:
      if (t->loop_id == 0) {
         for (i = 0; i < n_pending && pending[i].team != a[4]; i++)
            ;
         if (i == n_pending) {
            tf_omp_lost_chunks++;
            return True;
         }
         join(t, pending[i].start, pending[i].incr, pending[i].trip, a[4], a[5]);
      }
      chunk(t, a[1], a[2], 0);
      return True;
   case TF_REQ_LOOP_STATIC:
      if (t->loop_id == 0) {
         tf_omp_lost_chunks++;
         return True;
      }
      chunk(t, a[1], a[2], a[3]);
      return True;
   case TF_REQ_LOOP_END:
      if (t->loop_id != 0)
         put_chunk(t, 0, 0, 0);
      return True;
   case TF_REQ_TEAM_PLACE: {
      ULong *m = tf_raw_marker_room(t, 4);
      m[0] = tf_raw_marker(MK_STATIC, 0);
      m[1] = join_instance(&open_statics, &t->static_last, a[1], 0, 0, a[4], a[3]);
      m[2] = a[2];
      m[3] = a[3];
      tf_raw_wrote(t, m + 4);
      return True;
   }
   default:
      return False;
   }
}
