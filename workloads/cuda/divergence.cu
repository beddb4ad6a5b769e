/* divergence KERNEL N: the twin of ../divergence.c, one GPU thread per
 * item: odd/even items call different functions (oddeven), item i calls
 * body() (i mod 32) + 1 times (triangle), or 8 times (uniform). */
#include <string.h>

#include "common.cuh"

#define WORK 64
__device__ volatile long sink[WORK];

__device__ __noinline__ void odd_work(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] += i;
}

__device__ __noinline__ void even_work(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] -= i;
}

__device__ __noinline__ void body(long k)
{
    sink[k & (WORK - 1)] += k;
}

enum kernel { ODDEVEN, TRIANGLE, UNIFORM };

__global__ void worker(int kernel, long n)
{
    long i = item_index();
    if (i >= n)
        return;
    if (kernel == ODDEVEN) {
        if (i & 1)
            odd_work(i);
        else
            even_work(i);
    } else {
        long trips = kernel == TRIANGLE ? (i % 32) + 1 : 8;
        for (long k = 0; k < trips; k++)
            body(k);
    }
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "oddeven";
    long n = arg_long(argc, argv, 2, 64);
    int kernel = strcmp(name, "oddeven") == 0    ? ODDEVEN
                 : strcmp(name, "triangle") == 0 ? TRIANGLE
                                                 : UNIFORM;
    LAUNCH_ITEMS(worker, n)(kernel, n);
    finish();
    return 0;
}
