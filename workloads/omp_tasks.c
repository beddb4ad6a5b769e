/* omp_tasks N [taskwait|barrier|nested|taskloop]: one thread of an OpenMP team of
 * 4 creates N tasks, each computing work(i), the same fixed-length loop for
 * every i, and either waits for them (taskwait, the default) or goes on to
 * the barrier at the end of its `single`, where the team waits for them
 * (barrier: GOMP_barrier). The team's threads run the tasks, many of them
 * inside that wait. `nested` makes a chain instead: task i computes
 * work(i), creates task i + 1 and waits for it, N deep. `taskloop` runs
 * the N iterations as a taskloop with the runtime's default grain (tasks of
 * several iterations each). Prints the threads and the sum of the results.
 *
 * Hand-derived, for the tf figures: work's thread instructions are N times
 * those of one task, wherever the tasks ran: a task run inside the runtime's
 * wait is the program's work, not a wait to skip. Each task is a unit
 * (taskwait, barrier: N units, work at 100% SIMT efficiency, the region's
 * calls no unit), but a task that runs inside another task, waiting for it,
 * is part of it (nested: fewer units than tasks, and a warning counts the
 * tasks that ran inside others). A taskloop's task is one unit whatever the
 * number of iterations it holds (taskloop: as many units as the runtime
 * made tasks, fewer than N, and a warning says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 1000
#include "work.h"
static long out[4096];

/* Task i of a chain of n: work(i), then task i + 1, waited for. */
static void chain(long i, long n)
{
    out[i] = work(i);
    if (i + 1 < n) {
#pragma omp task
        chain(i + 1, n);
#pragma omp taskwait
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    long sum = 0;
    if (n < 1 || n > 4096)
        return 2;
    const char *mode = argc > 2 ? argv[2] : "taskwait";
    int taskwait = strcmp(mode, "barrier") != 0, nested = strcmp(mode, "nested") == 0;
    int taskloop = strcmp(mode, "taskloop") == 0;
    long threads = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        {
            for (long i = 0; i < n && !nested && !taskloop; i++) {
#pragma omp task firstprivate(i)
                out[i] = work(i);
            }
            if (taskloop) {
#pragma omp taskloop
                for (long i = 0; i < n; i++)
                    out[i] = work(i);
            }
            if (nested) {
#pragma omp task
                chain(0, n);
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
