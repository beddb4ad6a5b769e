/* omp_combined N: a combined `parallel for schedule(dynamic, 3)` of N
 * iterations on 4 threads, written as older GCCs compiled it (GCC 12 no
 * longer does): the master starts the team and the loop in one call,
 * GOMP_parallel_loop_dynamic, and each thread takes its first chunk with
 * GOMP_loop_dynamic_next, as it takes every later one. This is the path on
 * which the tracers learn a loop's bounds from the master before any
 * thread of the team announces it (tf_requests.h, TF_REQ_LOOP_COMBINED).
 *
 * Hand-derived, N = 256 (a multiple of 64): two loop instances, of N
 * iterations and of N / 2 (by 2 from 1, a loop that does not start at 0),
 * each iteration handed out exactly once, so 3N / 2 = 384 units under
 * --unit auto; every iteration loads and stores out[i] (8-byte longs,
 * 16-byte aligned heap): a warp of 32 consecutive iterations touches 256
 * bytes (8 sectors) in the first loop and 32 longs 16 bytes apart (512
 * bytes, 16 sectors) in the second. At W = 32: 8 warps × 2 requests × 8
 * sectors + 4 warps × 2 requests × 16 sectors = 256 sectors in 24 requests,
 * 32 / 3 per request; 100% SIMT efficiency. The sum printed is N (N - 1) /
 * 2 + the odd numbers below N. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void GOMP_parallel_loop_dynamic(void (*fn)(void *), void *data, unsigned num_threads, long start,
                                long end, long incr, long chunk_size, unsigned flags);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);

static long *out;

struct loop {
    long incr;
};

static void body(void *data)
{
    const struct loop *l = data;
    long lo, hi;
    while (GOMP_loop_dynamic_next(&lo, &hi))
        for (long i = lo; i < hi; i += l->incr)
            out[i] += i;
    GOMP_loop_end_nowait();
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1024;
    struct loop by1 = {1}, by2 = {2};
    out = calloc((size_t)n, sizeof *out);
    if (out == NULL)
        return 1;
    GOMP_parallel_loop_dynamic(body, &by1, 4, 0, n, 1, 3, 0);
    GOMP_parallel_loop_dynamic(body, &by2, 4, 1, n, 2, 3, 0);
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += out[i];
    printf("%ld\n", sum);
    return 0;
}
