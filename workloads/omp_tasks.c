/* omp_tasks N [taskwait|barrier]: one thread of an OpenMP team of 4
 * creates N tasks, each computing work(i), the same fixed-length loop for
 * every i, and either waits for them (taskwait, the default) or goes on to
 * the barrier at the end of its `single`, where the team waits for them
 * (barrier: GOMP_barrier). The team's threads run the tasks, many of them
 * inside that wait. Prints the sum of the results.
 *
 * Hand-derived, for the tf figures: work's thread instructions are N times
 * those of one task, wherever the tasks ran: a task run inside the runtime's
 * wait is the program's work, not a wait to skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int taskwait = argc < 3 || strcmp(argv[2], "barrier") != 0;
    long threads = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        {
            for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
                out[i] = work(i);
            }
            if (taskwait) {
#pragma omp taskwait
            }
        }
        /* code after the single keeps its end's barrier (GOMP_barrier) */
#pragma omp atomic
        threads += 1;
    }
    for (long i = 0; i < n; i++)
        sum += out[i];
    printf("%ld %ld\n", threads, sum);
    return 0;
}
