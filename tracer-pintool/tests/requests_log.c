/* A stand-in for the Pin tool's request handler, to test the native
 * preload library (libtf_omp.so) without Pin: loaded before it
 * (LD_PRELOAD="requests_log.so:libtf_omp.so"), its tf_request interposes
 * the library's, and runs the requests through the bookkeeping the tracers
 * share (tf_worksharing.h) under a lock, as the Pin tool does, with the
 * program's threads running in parallel. Each event becomes a line of
 * $TF_REQUESTS_LOG:
 *
 *   chunk LOOP FIRST COUNT STRIDE TRIP
 *   static LOOP THREAD THREADS
 *   lost N          (at exit: chunks of loops never announced)
 */
#include "tf_worksharing.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tf_ws_state state;
static __thread tf_ws_thread self;
static FILE *out;

void tf_request(unsigned long code, unsigned long a1, unsigned long a2, unsigned long a3,
                unsigned long a4, unsigned long a5);
void tf_request(unsigned long code, unsigned long a1, unsigned long a2, unsigned long a3,
                unsigned long a4, unsigned long a5)
{
    const uint64_t a[6] = {code, a1, a2, a3, a4, a5};
    tf_ws_event ev;
    pthread_mutex_lock(&lock);
    if (out == NULL && getenv("TF_REQUESTS_LOG"))
        out = fopen(getenv("TF_REQUESTS_LOG"), "w");
    if (out == NULL) {
        fputs("requests_log: cannot write $TF_REQUESTS_LOG\n", stderr);
    } else if (tf_ws_request(&state, &self, a, &ev)) {
        if (ev.kind == TF_WS_LOOP_CHUNK)
            fprintf(out, "chunk %lu %lu %lu %lu %lu\n", (unsigned long)ev.loop,
                    (unsigned long)ev.first, (unsigned long)ev.count, (unsigned long)ev.stride,
                    (unsigned long)ev.trip);
        else if (ev.kind == TF_WS_STATIC_LOOP)
            fprintf(out, "static %lu %lu %lu\n", (unsigned long)ev.loop, (unsigned long)ev.first,
                    (unsigned long)ev.count);
    }
    pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void done(void)
{
    pthread_mutex_lock(&lock);
    if (out != NULL) {
        fprintf(out, "lost %lu\n", (unsigned long)state.lost_chunks);
        fclose(out);
        out = NULL;
    }
    pthread_mutex_unlock(&lock);
}
