/* omp_locks N: an OpenMP loop of N iterations with an unnamed critical
 * section, a named one (`tally`) and an atomic update that GCC cannot do with
 * one instruction (an x87 long double, so it calls GOMP_atomic_start/end).
 * Expected trace: N acquisitions and N releases of each, over all threads. */
#include <stdio.h>
#include <stdlib.h>

static long plain, named;
static long double acc;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
#pragma omp parallel for num_threads(4) schedule(static)
    for (long i = 0; i < n; i++) {
#pragma omp critical
        plain += i;
#pragma omp critical(tally)
        named += 1;
#pragma omp atomic
        acc += (long double)i;
    }
    printf("plain=%ld named=%ld acc=%Lf\n", plain, named, acc);
    return 0;
}
