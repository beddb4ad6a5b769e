/* never_ran N: main starts N threads that would wait forever, then ends the
 * process at once (_exit). Under the tracer, which runs one thread at a
 * time, none of them runs an instruction before the process ends.
 * Expected trace: 1 + N threads; threads 2 .. N + 1 have parent 1, start
 * routine idle() and no instructions (their streams have no thread_start
 * event: the manifest lists their parent and start routine). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle, NULL) != 0)
            return 1;
    }
    _exit(0);
}
