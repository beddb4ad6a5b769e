/* Helpers of the validation workloads (vecadd, nbody, md5, listwalk,
 * pool, ...) on the CPU: item loops over threads and aligned allocation
 * (twin.h has what the CUDA twins share).
 *
 * run_items(n, t, fn) runs fn(i) for every item i in [0, n) on t threads.
 * Thread j (created j-th, so the tracer numbers it j + 2, after main) takes
 * the contiguous items [j·n/t, (j+1)·n/t) in increasing order, one call of
 * fn per item. All t threads are created before any is joined, so every
 * thread has a stack of its own (glibc reuses only the stacks of joined
 * threads). With `--unit call:FN` one unit is one item, and units follow
 * item order: the consecutive batching of tf puts items 0..W-1 in warp 0,
 * as a GPU puts threads 0..W-1 in warp 0.
 *
 * With k = n/t items per thread, lanes of one warp that come from the same
 * thread share its stack: when k divides W (or W divides k), a stack access
 * made at the same place by every lane touches ceil(W/k) sectors, one per
 * distinct thread in the warp. */
#ifndef TF_WORKLOAD_ITEMS_H
#define TF_WORKLOAD_ITEMS_H

#include <pthread.h>

#include "twin.h"

/* A kernel: the work of one GPU thread, for item i. */
typedef void (*item_fn)(long i);

struct item_range {
    item_fn fn;
    long lo, hi;
};

static inline void *item_range_run(void *arg)
{
    const struct item_range *r = arg;
    for (long i = r->lo; i < r->hi; i++)
        r->fn(i);
    return NULL;
}

/* Runs fn(i) for i in [0, n) on t threads, thread j taking items
 * [j·n/t, (j+1)·n/t); returns when all are done. */
static inline void run_items(long n, long t, item_fn fn)
{
    pthread_t *threads = malloc(t * sizeof *threads);
    struct item_range *ranges = malloc(t * sizeof *ranges);
    if (!threads || !ranges) {
        perror("malloc");
        exit(1);
    }
    for (long j = 0; j < t; j++) {
        ranges[j].fn = fn;
        ranges[j].lo = j * n / t;
        ranges[j].hi = (j + 1) * n / t;
        if (pthread_create(&threads[j], NULL, item_range_run, &ranges[j]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (long j = 0; j < t; j++)
        pthread_join(threads[j], NULL);
    free(ranges);
    free(threads);
}

/* bytes of zeroed memory aligned to 128 bytes, so that a warp's consecutive
 * items never straddle more 32-byte sectors than the item size requires. */
static inline void *alloc128(size_t bytes)
{
    void *p;
    if (posix_memalign(&p, 128, bytes) != 0) {
        perror("posix_memalign");
        exit(1);
    }
    for (size_t k = 0; k < bytes; k++)
        ((unsigned char *)p)[k] = 0;
    return p;
}

#endif
