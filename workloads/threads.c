/* threads T: main starts T workers; each worker starts one helper.
 * Expected trace: 1 + 2T threads; workers' parent is thread 1, each helper's
 * parent is a worker; start routines are worker() and helper(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static void *helper(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < 1000 + n; i++)
        sink += i;
    return NULL;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    pthread_t t;
    pthread_create(&t, NULL, helper, arg);
    pthread_join(t, NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 4;
    pthread_t *t = malloc(n * sizeof *t);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("worker=%p helper=%p\n", (void *)worker, (void *)helper);
    free(t);
    return 0;
}
