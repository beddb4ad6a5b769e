/* A crash: crash() stores to flag, then loads from address 16 (SIGSEGV).
 * The store completes, the load does not: the trace ends with crash+0 and
 * the process dies with signal 11.
 *   crash: +0 movq $1,flag(%rip)  +11 mov 16,%rax  +19 ret */
#include "asm.h"
#include <stdio.h>
long flag;
void crash(void);
__asm__(FUNC(crash) "  movq $1,flag(%rip)\n  mov 16,%rax\n  ret\n" END(crash));
int main(void) {
    puts("before");
    fflush(stdout);
    crash();
    puts("after");
    return 0;
}
