/* tls N: N threads, all alive at once; thread i calls each kernel once with
 * item i (use --unit call:KERNEL: one unit per thread, in item order).
 *   bump_tls   adds i to a __thread variable: one load and one store in the
 *              thread's static TLS block, which glibc keeps at the top of
 *              the thread's stack mapping; tf counts it as the thread's own
 *              stack (private memory), one sector per lane on the CPU.
 *   set_slot   stores i into slots[i], an array on main's stack: another
 *              thread's stack, segment "other"; W consecutive 8-byte items
 *              of a 128-byte-aligned array: W/4 sectors per request.
 * Neither kernel touches the heap or module data.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static __thread long counter;

__attribute__((noinline)) void bump_tls(long i) { counter += i; }
__attribute__((noinline)) void set_slot(long *slots, long i) { slots[i] = i; }

struct job {
    long *slots;
    long i;
    long seen;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    bump_tls(j->i);
    set_slot(j->slots, j->i);
    j->seen = counter;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    long slots[256] __attribute__((aligned(128)));
    if (n < 1 || n > 256)
        return 2;
    struct job *jobs = malloc(n * sizeof *jobs);
    pthread_t *t = malloc(n * sizeof *t);
    for (long i = 0; i < n; i++) {
        jobs[i] = (struct job){slots, i, 0};
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    }
    long sum = 0;
    for (long i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        sum += slots[i] + jobs[i].seen;
    }
    printf("sum=%ld\n", sum);
    free(jobs);
    free(t);
    return 0;
}
