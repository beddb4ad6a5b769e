/* omp_doacross N [chain|grid]: OpenMP doacross loops on 4 threads, whose
 * iterations wait for others (`ordered depend(sink)`) and then say they are
 * done (`depend(source)`).
 *   chain (default): `for ordered(1)` over i = 0 .. N-1, schedule(static, 1):
 *     iteration i computes work(i), the same fixed-length loop for every i,
 *     waits for iteration i-1 and appends the result to a running total
 *     (append, which must run in order);
 *   grid: `for ordered(2)` over the rows i = 1 .. N-1 of an N x N grid,
 *     each row's cells j = 1 .. N-1 in order; cell (i, j) waits for (i-1, j)
 *     and (i, j-1) (two sinks) and then adds them (update).
 * Prints the total, or the grid's last cell.
 *
 * Hand-derived, for the tf figures: each iteration of the worksharing loop
 * is a unit (chain: N; grid: N-1 rows). The part of an iteration from its
 * first wait to its post runs one lane at a time, as an ordered region
 * does: a lock (kind omp-critical, at the runtime's wait function) taken
 * once per wait-post pair, however many sinks the pair has. So append and
 * update run at 1/W, work at 100%. GCC calls no wait where every sink is
 * outside the loop (chain: iteration 0; grid: cell (1, 1)), libomp's wait
 * returns at once there: the lock is taken N-1 or N times in chain, and
 * (N-1)^2 - 1 or (N-1)^2 times in grid. The runtime's waiting is skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 64
#include "work.h"
#define MAX_N 256
static long total, grid[MAX_N][MAX_N];

__attribute__((noinline)) void append(long v)
{
    total += v;
}

__attribute__((noinline)) void update(long i, long j)
{
    grid[i][j] = grid[i - 1][j] + grid[i][j - 1];
}

static void chain(long n)
{
#pragma omp parallel for ordered(1) num_threads(4) schedule(static, 1)
    for (long i = 0; i < n; i++) {
        long v = work(i);
#pragma omp ordered depend(sink : i - 1)
        append(v);
#pragma omp ordered depend(source)
    }
    printf("%ld\n", total);
}

static void rows(long n)
{
    for (long k = 0; k < n; k++)
        grid[0][k] = grid[k][0] = k;
#pragma omp parallel for ordered(2) num_threads(4) schedule(static, 1)
    for (long i = 1; i < n; i++)
        for (long j = 1; j < n; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            update(i, j);
#pragma omp ordered depend(source)
        }
    printf("%ld\n", grid[n - 1][n - 1]);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    if (n < 2 || n > MAX_N) {
        fprintf(stderr, "omp_doacross: N from 2 to %d\n", MAX_N);
        return 2;
    }
    if (argc > 2 && strcmp(argv[2], "grid") == 0)
        rows(n);
    else
        chain(n);
    return 0;
}
