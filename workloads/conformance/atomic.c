/* Read-modify-write instructions: each is a read then a write of the same
 * bytes (lock add, xchg with memory, lock cmpxchg, lock xadd).
 *   rmw: +0 lock addl $1,counter(%rip)  +8 mov $5,%eax  +13 xchg %eax,counter(%rip)
 *        +19 lock cmpxchg %ecx,counter(%rip)  +27 lock xaddq %rdx,big(%rip)  +36 ret */
#include "asm.h"
#include <stdio.h>
int counter;
long big;
void rmw(void);
__asm__(FUNC(rmw) "  lock addl $1,counter(%rip)\n  mov $5,%eax\n  xchg %eax,counter(%rip)\n"
        "  lock cmpxchg %ecx,counter(%rip)\n  lock xaddq %rdx,big(%rip)\n  ret\n" END(rmw));
int main(void) {
    rmw();
    printf("%d %ld\n", counter, big);
    return 0;
}
