/* signals: a handled SIGUSR1 (signal, handler, signal_return), a SIGSEGV
 * inside a block after a store (partial execution of 1 instruction with the
 * store's address, then the signal; the handler leaves with siglongjmp, so no
 * signal_return), and rep movsb with a zero and a non-zero count (the last
 * iteration's operands are absent). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static sigjmp_buf jb;
static volatile long sink;
static volatile int usr;
static void on_segv(int s) { siglongjmp(jb, 1); }
static void on_usr(int s) { usr++; }
int main(void) {
    signal(SIGUSR1, on_usr);
    raise(SIGUSR1);
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_segv; sigaction(SIGSEGV, &sa, 0);
    if (sigsetjmp(jb, 1) == 0) {
        volatile int *p = (int *)16;
        sink = 5;
        sink = *p;          /* faults after the store above, in the same block */
        sink = 7;
    }
    char a[64], b[64]; memset(b, 1, 64);
    size_t n = 0;
    char *d = a, *s = b;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");  /* zero count */
    n = 3; d = a; s = b;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    printf("usr %d sink %ld\n", usr, sink);
    return 0;
}
