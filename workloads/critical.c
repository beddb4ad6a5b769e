/* critical MODE N: N threads; thread i calls update(i) once, which runs
 * critical(i) (a fixed-length body) under a mutex:
 *   global    one mutex for everyone: the lanes of a warp serialize, so
 *             critical() runs with one lane at a time: efficiency 1/W;
 *   per-item  each item its own mutex: no two lanes hold the same lock, so
 *             critical() runs as without locks: 100%;
 *   main-stack  one mutex for everyone, in main()'s stack frame: as global.
 * Use --unit call:update. With --locks off all read 100%. The lock table
 * places the locks: global, on the heap (per-item), on thread 1's stack.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 16
static volatile long shared[WORK];
static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *per_item;
/* The one mutex of every thread, or NULL for a mutex per item. */
static pthread_mutex_t *one_lock;

__attribute__((noinline)) void critical(long i)
{
    for (int k = 0; k < WORK; k++)
        shared[k] += i;
}

__attribute__((noinline)) void update(long i)
{
    pthread_mutex_t *m = one_lock ? one_lock : &per_item[i];
    pthread_mutex_lock(m);
    critical(i);
    pthread_mutex_unlock(m);
}

static void *worker(void *arg)
{
    update((long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_mutex_t on_stack = PTHREAD_MUTEX_INITIALIZER;
    const char *mode = argc > 1 ? argv[1] : "global";
    one_lock = strcmp(mode, "per-item") == 0     ? NULL
               : strcmp(mode, "main-stack") == 0 ? &on_stack
                                                 : &global;
    long n = argc > 2 ? atol(argv[2]) : 64;
    per_item = malloc(n * sizeof *per_item);
    for (long i = 0; i < n; i++)
        pthread_mutex_init(&per_item[i], NULL);
    pthread_t *t = malloc(n * sizeof *t);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", (long)shared[0]);
    return 0;
}
