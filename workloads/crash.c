/* crash: starts 3 threads that finish some work, then the main thread
 * dereferences a null pointer. Under tf trace: exit status 139 and a readable
 * trace up to the crash. */
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
    /* The store runs, the load from address 0 faults in the same block: the
     * trace ends with a partial execution of that block. */
    volatile int *null = 0;
    sink = 1;
    return *null;
}
