/* critical MODE N: N threads; thread i calls update(i) once, which runs
 * critical(i) (a fixed-length body) under a mutex:
 *   global    one mutex for everyone: the lanes of a warp serialize, so
 *             critical() runs with one lane at a time: efficiency 1/W;
 *   per-item  each item its own mutex: no two lanes hold the same lock, so
 *             critical() runs as without locks: 100%.
 * Use --unit call:update. With --locks off both read 100%.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 16
static volatile long shared[WORK];
static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *per_item;
static int use_global;

__attribute__((noinline)) void critical(long i)
{
    for (int k = 0; k < WORK; k++)
        shared[k] += i;
}

__attribute__((noinline)) void update(long i)
{
    pthread_mutex_t *m = use_global ? &global : &per_item[i];
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
    use_global = argc < 2 || strcmp(argv[1], "per-item") != 0;
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
