/* divergence KERNEL N: N threads, thread i (0-based, in creation order) runs
 * worker(i), which runs one kernel. Every unit is one call of worker().
 *
 *   oddeven   odd items call odd_work(), even items even_work(): both have the
 *             same fixed length, so in a warp of W consecutive items each runs
 *             with W/2 lanes: per-function SIMT efficiency 50% at any even W.
 *   triangle  item i calls body() (i mod 32) + 1 times: in a warp of 32 items
 *             0..31 body runs 32 times with lanes {l >= k} in round k, so its
 *             efficiency is sum(1..32) / (32 * 32) = 33/64 = (W+1)/(2W).
 *   uniform   every item calls body() 8 times: efficiency 100% at every W
 *             that divides N.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 64
static volatile long sink[WORK];

__attribute__((noinline)) void odd_work(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] += i;
}

__attribute__((noinline)) void even_work(long i)
{
    for (int k = 0; k < WORK; k++)
        sink[k] -= i;
}

__attribute__((noinline)) void body(long k)
{
    sink[k & (WORK - 1)] += k;
}

static const char *kernel;

__attribute__((noinline)) void *worker(void *arg)
{
    long i = (long)arg;
    if (strcmp(kernel, "oddeven") == 0) {
        if (i & 1)
            odd_work(i);
        else
            even_work(i);
    } else if (strcmp(kernel, "triangle") == 0) {
        long trips = (i % 32) + 1;
        for (long k = 0; k < trips; k++)
            body(k);
    } else {
        for (long k = 0; k < 8; k++)
            body(k);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    kernel = argc > 1 ? argv[1] : "oddeven";
    long n = argc > 2 ? atol(argv[2]) : 64;
    pthread_t *t = malloc(n * sizeof *t);
    /* Thread ids follow creation order, so units follow item order. */
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
    return 0;
}
