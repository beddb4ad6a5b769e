/* fault: like workloads/crash.c, but the faulting load follows two stores in
 * its block, so the trace ends with a partial execution of main (2
 * instructions, the two store addresses) and the manifest names SIGSEGV. */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;

static void *work(void *arg)
{
    for (long i = 0; i < 10000; i++)
        sink += i + (long)arg;
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("threads done\n");
    fflush(stdout);
    volatile int *null = 0;
    sink = 1;
    sink = 2;
    return *null;
}
