/* client_request T N: main and T workers each ask RUNNING_ON_VALGRIND (a
 * Valgrind client request, as glib makes), then each worker adds up N
 * numbers in work().
 *
 * A client request is the 16-byte rotation preamble of valgrind.h (four
 * 4-byte `rol $k, %rdi`) and `xchg %rbx, %rbx` (3 bytes): five x86
 * instructions that Valgrind decodes as one of 19 bytes. Expected trace:
 * a block holding them as five instructions of 4, 4, 4, 4 and 3 bytes;
 * every chunk readable; in each worker, work()'s loop body runs N times
 * after the request. Prints "running_on_valgrind=R sum=S" with R = 1 under
 * Valgrind (0 natively) and S = T·N(N−1)/2.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/valgrind.h>

static volatile long sink;
static long n_items;

__attribute__((noinline)) static long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    return s;
}

static void *worker(void *arg)
{
    (void)arg;
    if (RUNNING_ON_VALGRIND > 1000)
        abort(); /* never: only makes the request */
    __atomic_fetch_add(&sink, work(n_items), __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    long t = argc > 1 ? atol(argv[1]) : 4;
    n_items = argc > 2 ? atol(argv[2]) : 1000;
    int running = RUNNING_ON_VALGRIND;
    pthread_t *th = malloc(t * sizeof *th);
    for (long i = 0; i < t; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (long i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    printf("running_on_valgrind=%d sum=%ld\n", running, (long)sink);
    free(th);
    return 0;
}
