/* omp_ordered N: an OpenMP parallel region of 4 threads whose loop of N
 * iterations (schedule(static, 1), ordered) computes work(i), the same
 * fixed-length loop for every i, and then, in iteration order, appends the
 * result to a list (append, inside `#pragma omp ordered`). The loop has no
 * nowait, and code follows it in the region: at its end (GOMP_loop_end, or
 * libomp's __kmpc_barrier) each thread waits for the team. Prints the
 * threads, the list's length and its sum.
 *
 * Hand-derived, for the tf figures: each iteration is a unit (N units);
 * work runs at 100% SIMT efficiency and append one lane at a time, 1/W:
 * the ordered region is a lock (kind omp-critical, at GOMP_ordered_start's
 * entry) taken N times. The runtime's waits (there for the iterations
 * before, at the loop's end for the team) are skipped, never traced.
 */
#include <stdio.h>
#include <stdlib.h>

#define WORK 64
#include "work.h"
static long list[4096];
static long length, threads;

__attribute__((noinline)) void append(long v)
{
    list[length++ % 4096] = v;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    long sum = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp for schedule(static, 1) ordered
        for (long i = 0; i < n; i++) {
            long v = work(i);
#pragma omp ordered
            append(v);
        }
        /* code after the loop keeps its end's barrier */
#pragma omp atomic
        threads += 1;
    }
    for (long k = 0; k < length && k < 4096; k++)
        sum += list[k];
    printf("%ld %ld %ld\n", threads, length, sum);
    return 0;
}
