/* deep_unlock T ITERS: a lock released two calls below the function that took it.
 *
 * Each of the T workers does ITERS rounds of: lock `m`, crit() (the shared
 * update), unlock1() -> unlock2() -> pthread_mutex_unlock, then work(LEN), a
 * loop whose trip count is the same in every thread. Replayed as one warp of
 * T lanes (--unit call:worker, W = T), the lock rule gives:
 *  - crit runs one lane at a time: SIMT efficiency 1/W, W-1 serialized lanes
 *    per round;
 *  - after the release the lanes stand in unlock2, together, and rejoin: work
 *    has no divergence of its own, so it runs at 100%;
 *  - every recorded instruction is replayed, with locks on as with locks off.
 * The counts after each call keep gcc from turning the calls into jumps. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long iters;
static volatile long counter, released, sink;

__attribute__((noinline)) static void crit(void) { counter = counter * 3 + 1; }

__attribute__((noinline)) static void unlock2(void)
{
    pthread_mutex_unlock(&m);
    released++;
}

__attribute__((noinline)) static void unlock1(void)
{
    unlock2();
    released++;
}

__attribute__((noinline)) static long work(long len)
{
    long acc = 0;
    for (long j = 0; j < len; j++)
        acc += j * j;
    return acc;
}

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&m);
        crit();
        unlock1();
        sink += work(50);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = argc > 1 ? atol(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 20;
    pthread_t t[threads];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (long i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("counter=%ld released=%ld\n", (long)counter, (long)released);
    return 0;
}
