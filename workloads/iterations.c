/* iterations N: one thread runs process(N), whose loop handles item i in
 * iteration i: odd items call odd_item(), even ones even_item() (the same
 * fixed length). With --unit iter:process every iteration is a SIMT thread;
 * a warp of W consecutive iterations has W/2 lanes in each function: both
 * run at 50% efficiency at every even W.
 * omp_iterations N (the same loop under `#pragma omp parallel for`) is
 * omp_iterations.c. */
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

__attribute__((noinline)) void process(long n)
{
    for (long i = 0; i < n; i++) {
        if (i & 1)
            odd_item(i);
        else
            even_item(i);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 256;
    process(n);
    printf("%ld\n", (long)sink[0]);
    return 0;
}
