/* omp_tasks N: one thread of an OpenMP team of 4 creates N tasks, each
 * computing work(i), the same fixed-length loop for every i, and waits for
 * them (taskwait); the team's threads run them, some of them inside that
 * wait. Prints the sum of the results.
 *
 * Hand-derived, for the tf figures: work's thread instructions are N times
 * those of one task, wherever the tasks ran: a task run inside the runtime's
 * wait is the program's work, not a wait to skip.
 */
#include <stdio.h>
#include <stdlib.h>

#define WORK 1000
static long out[4096];

__attribute__((noinline)) long work(long i)
{
    long v = 0;
    for (long k = 0; k < WORK; k++)
        v += k ^ i;
    return v;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    long sum = 0;
    if (n < 1 || n > 4096)
        return 2;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
        for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
            out[i] = work(i);
        }
#pragma omp taskwait
    }
    for (long i = 0; i < n; i++)
        sum += out[i];
    printf("%ld\n", sum);
    return 0;
}
