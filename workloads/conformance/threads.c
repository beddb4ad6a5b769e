/* Thread create and exit: main starts 3 threads at worker and joins them.
 * Each runs work(5): a loop of 5 iterations that saves and restores rbx on
 * its own stack.
 *   work: +0 push %rbx  +1 mov %edi,%ecx  +3 dec %ecx  +5 jnz +3
 *         +7 pop %rbx   +8 ret */
#include "asm.h"
#include <pthread.h>
#include <stdio.h>
void work(int n);
__asm__(FUNC(work) "  push %rbx\n  mov %edi,%ecx\n1: dec %ecx\n  jnz 1b\n  pop %rbx\n  ret\n"
        END(work));
static void *worker(void *arg) {
    (void)arg;
    work(5);
    return 0;
}
int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    puts("done");
    return 0;
}
