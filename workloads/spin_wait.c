/* spin_wait THREADS PAUSES MODE: THREADS threads (default 4), each of which
 * runs work() and then waits in one of five ways (MODE):
 *   backoff  pauses PAUSES times in a fixed loop (`pause; dec; jnz`), as a
 *            lock's back-off does between two tries;
 *   stagger  the same loop, thread t (from 0) pausing (t + 1) * PAUSES
 *            times;
 *   flag     spins with `pause` until every thread has arrived at a
 *            counter it increments (a barrier built from atomic
 *            instructions, which no tracer recognizes);
 *   yield    the same, calling sched_yield() where flag pauses;
 *   none     does not wait.
 * Prints the sum of the threads' work.
 *
 * Hand-derived, for the tf figures (units: the threads' start routine
 * calls): the `pause` is the first instruction of backoff()'s loop, a block
 * of 3 instructions (`pause`, `dec`, `jnz`) that runs PAUSES times per call,
 * so in backoff mode the units' spin-wait loops run THREADS * 3 * PAUSES
 * thread instructions, all of them in backoff(), whatever blocks the tracer
 * splits the loop into. In stagger mode they run 3 * PAUSES * (1 + 2 + ... +
 * THREADS); in a warp that holds all the threads' units, the lanes go round
 * together and leave the loop one by one: each leaving is a divergent branch
 * but the last lane's, which goes round alone, so THREADS - 1 divergences
 * and THREADS * PAUSES rounds of 3 warp instructions. In flag mode how long
 * each thread spins depends on when the others arrive (at least one round
 * of the loop for every thread but the last to come), all of it in
 * spin_barrier(). In yield mode the same holds of yield_barrier()'s loop,
 * and all of sched_yield()'s instructions wait too (not the PLT stub's jump
 * into it, nor the dynamic linker resolving the first call). In none mode
 * nothing waits. */
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long pauses;
static enum { BACKOFF, STAGGER, FLAG, YIELD, NONE } mode;
static long n_threads;
static atomic_long arrived;
static unsigned long results[64];

__attribute__((noinline)) static unsigned long work(long t)
{
    unsigned long v = (unsigned long)t + 1;
    for (int k = 0; k < 1000; k++)
        v = v * 6364136223846793005ul + 1442695040888963407ul;
    return v;
}

__attribute__((noinline)) static void backoff(long k)
{
    if (k <= 0)
        return;
    __asm__ volatile("1: pause\n\t"
                     "dec %0\n\t"
                     "jnz 1b"
                     : "+r"(k)
                     :
                     : "cc");
}

__attribute__((noinline)) static void spin_barrier(void)
{
    atomic_fetch_add(&arrived, 1);
    while (atomic_load(&arrived) < n_threads)
        _mm_pause();
}

__attribute__((noinline)) static void yield_barrier(void)
{
    atomic_fetch_add(&arrived, 1);
    while (atomic_load(&arrived) < n_threads)
        sched_yield();
}

static void *thread(void *arg)
{
    long t = (long)arg;
    results[t] = work(t);
    if (mode == BACKOFF)
        backoff(pauses);
    else if (mode == STAGGER)
        backoff((t + 1) * pauses);
    else if (mode == FLAG)
        spin_barrier();
    else if (mode == YIELD)
        yield_barrier();
    return NULL;
}

int main(int argc, char **argv)
{
    n_threads = argc > 1 ? atol(argv[1]) : 4;
    pauses = argc > 2 ? atol(argv[2]) : 1000;
    const char *m = argc > 3 ? argv[3] : "backoff";
    mode = !strcmp(m, "stagger") ? STAGGER
           : !strcmp(m, "flag")  ? FLAG
           : !strcmp(m, "yield") ? YIELD
           : !strcmp(m, "none")  ? NONE
                                 : BACKOFF;
    if (n_threads < 1 || n_threads > 64) {
        fprintf(stderr, "spin_wait: 1 to 64 threads\n");
        return 2;
    }
    pthread_t tid[64];
    for (long t = 0; t < n_threads; t++)
        pthread_create(&tid[t], NULL, thread, (void *)t);
    unsigned long sum = 0;
    for (long t = 0; t < n_threads; t++) {
        pthread_join(tid[t], NULL);
        sum += results[t];
    }
    printf("%lu\n", sum);
    return 0;
}
