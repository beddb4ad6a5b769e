/* omp_place N: OpenMP code that asks each thread's place in its team for its
 * own purposes, which tf must not take for GCC's inline static schedule
 * (FORMAT.md 6.7, docs/ARCHITECTURE.md 2.5), on 4 threads:
 *   stride   a parallel region whose threads stride through the N items by
 *            the team's size (no division splits the loop): the items are
 *            dealt out round robin, as GCC's schedule(static, 1) deals
 *            iterations (and its code looks the same), so N units in item
 *            order, named (--unit iter:stride._omp_fn.0) or not, 8 sectors
 *            per request at W = 32 (consecutive longs). At -O3 GCC unrolls
 *            it (two items per pass): auto leaves its 4 calls whole, and
 *            iter: refuses it (exit 1);
 *   tagged   a schedule(dynamic) loop whose iterations record the thread's
 *            place: one unit per iteration;
 *   both     two static `omp for` loops in one parallel region. At -O0 GCC
 *            asks for the thread's place before each loop; from -O1 on it
 *            asks once for both (they have the same iteration space) and
 *            runs each thread's block of the first loop, then of the
 *            second. Either way each loop is cut per iteration: 2N units.
 * Hand-derived, under --unit auto: 4N units in 4 loop instances at -O0 to
 * -O2, no warning. At -O3 GCC vectorizes the loops of `tagged` and `both`
 * (two iterations per pass): neither is cut, each says so in a warning, and
 * every call is one unit: 12 units. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long *out;

__attribute__((noinline)) void stride(long n)
{
#pragma omp parallel num_threads(4)
    {
        int size = omp_get_num_threads();
        int me = omp_get_thread_num();
        for (long i = me; i < n; i += size)
            out[i] = i * 2;
    }
}

__attribute__((noinline)) void tagged(long n)
{
#pragma omp parallel for num_threads(4) schedule(dynamic)
    for (long i = 0; i < n; i++) {
        int size = omp_get_num_threads();
        int me = omp_get_thread_num();
        out[i] += me * 100 + size;
    }
}

__attribute__((noinline)) void both(long n)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp for
        for (long i = 0; i < n; i++)
            out[i] += i;
#pragma omp for
        for (long i = 0; i < n; i++)
            out[i] -= i;
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 256;
    long sum = 0;
    out = calloc((size_t)n, sizeof *out);
    stride(n);
    tagged(n);
    both(n);
    for (long i = 0; i < n; i++)
        sum += out[i] - i * 2;
    printf("%d\n", sum > 0);
    free(out);
    return 0;
}
