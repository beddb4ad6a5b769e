/* omp_single ROUNDS: a parallel region of 4 threads that runs ROUNDS rounds;
 * in each, one thread computes a value (compute, a fixed-length loop, under
 * `single copyprivate`), which the runtime copies to every thread of the
 * team, and each thread adds it to its share of a sum (a reduction).
 * Prints the sum.
 *
 * Hand-derived, for the tf figures: 4 units, the threads' calls of the
 * region's function. In each round one lane runs compute while the others
 * wait for its value, so compute runs at 1/W at W = 4. The team's waiting
 * for the copy (GOMP_single_copy_start and _end, libomp's
 * __kmpc_copyprivate) is skipped as a wait: none of its instructions is in
 * a unit, but for libomp's blocks that call the program's copy function
 * back from inside the wait and that it returns to, traced with it. */
#include <stdio.h>
#include <stdlib.h>

#define WORK 4096

__attribute__((noinline)) unsigned long compute(unsigned long seed)
{
    unsigned long v = seed;
    for (long k = 0; k < WORK; k++)
        v = v * 6364136223846793005ul + 1442695040888963407ul;
    return v;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 8;
    unsigned long sum = 0;
#pragma omp parallel num_threads(4) reduction(+ : sum)
    for (long r = 0; r < rounds; r++) {
        unsigned long x;
#pragma omp single copyprivate(x)
        x = compute((unsigned long)r);
        sum += x;
    }
    printf("%lu\n", sum);
    return 0;
}
