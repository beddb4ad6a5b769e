/* coroutine N: N threads (default 8); thread i runs one coroutine on a
 * 64 KiB stack from malloc (ucontext: makecontext, swapcontext), which
 * calls sum_local(1) and switches back; then the thread calls
 * sum_local(i) on its own stack. sum_local sums a local array of 64 longs.
 * Prints the sum of what the threads return.
 *
 * Hand-derived, for the tf figures: the coroutine's code runs on the heap,
 * outside the stack range its thread started with. With --unit auto each
 * thread is a unit: N + 1 units (main's), of which the N workers ran on
 * another stack, each through 2 calls made there (body() calls sum_local
 * and swapcontext; swapcontext itself calls nothing). With
 * --unit call:sum_local, 2N units: the N that start on a coroutine's stack
 * ran there (sum_local makes no call). Either way tf warns that memory on
 * such a stack counts as heap.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define STACK (64 * 1024)
#define WORDS 64
static __thread ucontext_t back, coro;
static __thread long result;

__attribute__((noinline)) long sum_local(long seed)
{
    volatile long local[WORDS];
    long s = 0;
    for (int k = 0; k < WORDS; k++)
        local[k] = seed + k;
    for (int k = 0; k < WORDS; k++)
        s += local[k];
    return s;
}

/* The coroutine: runs on its own stack, then switches back for good. */
static void body(void)
{
    result = sum_local(1);
    swapcontext(&coro, &back);
}

static void *worker(void *arg)
{
    char *stack = malloc(STACK);
    if (stack == NULL || getcontext(&coro) != 0)
        abort();
    coro.uc_stack.ss_sp = stack;
    coro.uc_stack.ss_size = STACK;
    coro.uc_link = NULL;
    makecontext(&coro, body, 0);
    if (swapcontext(&back, &coro) != 0)
        abort();
    free(stack);
    return (void *)(result + sum_local((long)arg));
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    pthread_t t[64];
    long total = 0;
    if (n < 1 || n > 64)
        return 2;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("%ld\n", total);
    return 0;
}
