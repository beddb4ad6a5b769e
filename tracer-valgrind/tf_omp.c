/* Worksharing loops: the preload library's requests (tf_requests.h) turned
 * into `loop_chunk` and `static_loop` markers (FORMAT.md 6.6, 6.7), in the
 * Valgrind thread, by the bookkeeping both tracers share
 * (tf_worksharing.h). Valgrind runs one client thread at a time, so
 * requests arrive in one global order and need no lock. */
#include "tf.h"

static tf_ws_state loops;

/* The requests' codes are Valgrind's for tool 'T', 'F'. */
typedef char tf_req_base_is_valgrinds[TF_REQ_BASE == VG_USERREQ_TOOL_BASE('T', 'F') ? 1 : -1];

ULong tf_omp_lost_chunks(void)
{
   return loops.lost_chunks;
}

/* A marker of `n` words after its kind into the thread's raw records. */
static void put(Thread *t, UInt kind, const ULong *words, UInt n)
{
   ULong *m = tf_raw_marker_room(t, n + 1);
   UInt i;
   m[0] = tf_raw_marker(kind, 0);
   for (i = 0; i < n; i++)
      m[i + 1] = words[i];
   tf_raw_wrote(t, m + n + 1);
}

Bool tf_omp_request(Thread *t, const UWord *a)
{
   const uint64_t args[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
   tf_ws_event ev;
   if (!tf_worksharing) /* --tf-worksharing=no: the requests are known, not recorded */
      return a[0] >= TF_REQ_LOOP_BEGIN && a[0] <= TF_REQ_TEAM_PLACE;
   if (!tf_ws_request(&loops, &t->ws, args, &ev))
      return False;
   if (ev.kind == TF_WS_LOOP_CHUNK) {
      const ULong words[5] = {ev.loop, ev.first, ev.count, ev.stride, ev.trip};
      put(t, MK_LOOP, words, 5);
   } else if (ev.kind == TF_WS_STATIC_LOOP) {
      const ULong words[3] = {ev.loop, ev.first, ev.count};
      put(t, MK_STATIC, words, 3);
   }
   return True;
}
