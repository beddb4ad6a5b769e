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

Bool tf_omp_request(Thread *t, const UWord *a)
{
   const uint64_t args[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
   tf_ws_event ev;
   ULong *m;
   if (!tf_worksharing) /* --tf-worksharing=no: the requests are known, not recorded */
      return a[0] >= TF_REQ_LOOP_BEGIN && a[0] <= TF_REQ_TEAM_PLACE;
   if (!tf_ws_request(&loops, &t->ws, args, &ev))
      return False;
   switch (ev.kind) {
   case TF_WS_LOOP_CHUNK:
      m = tf_raw_marker_room(t, 6);
      m[0] = tf_raw_marker(MK_LOOP, 0);
      m[1] = ev.loop;
      m[2] = ev.first;
      m[3] = ev.count;
      m[4] = ev.stride;
      m[5] = ev.trip;
      tf_raw_wrote(t, m + 6);
      break;
   case TF_WS_STATIC_LOOP:
      m = tf_raw_marker_room(t, 4);
      m[0] = tf_raw_marker(MK_STATIC, 0);
      m[1] = ev.loop;
      m[2] = ev.first;
      m[3] = ev.count;
      tf_raw_wrote(t, m + 4);
      break;
   default:
      break;
   }
   return True;
}
