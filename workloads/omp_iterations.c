/* omp_iterations N: `#pragma omp parallel for` over N items on 4 threads
 * (static schedule: contiguous ranges); item i calls odd_item() or
 * even_item() as in iterations.c.
 * --unit auto: one unit per call of the outlined loop body (one per thread);
 * --unit iter:main._omp_fn.0: one unit per item, odd_item and even_item at 50%. */
#include <stdio.h>
#include <stdlib.h>

#define WORK 32
static volatile long sink[WORK];

__attribute__((noinline)) void odd_item(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] += i;
}

__attribute__((noinline)) void even_item(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] -= i;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 256;
#pragma omp parallel for num_threads(4) schedule(static)
    for (long i = 0; i < n; i++) {
        if (i & 1)
            odd_item(i);
        else
            even_item(i);
    }
    printf("%ld\n", (long)sink[0]);
    return 0;
}
