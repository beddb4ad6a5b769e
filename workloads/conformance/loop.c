/* A counted loop: sum4 adds buf[0..4) (4 iterations of a 4-instruction body).
 *   +0  xor %eax,%eax      +2  mov $4,%ecx
 *   +7  add (%rdi),%rax    +10 add $8,%rdi    +14 dec %ecx    +16 jnz +7
 *   +18 ret */
#include "asm.h"
#include <stdio.h>
long buf[4] = {1, 2, 3, 4};
long sum4(long *p);
__asm__(FUNC(sum4) "  xor %eax,%eax\n  mov $4,%ecx\n"
        "1: add (%rdi),%rax\n  add $8,%rdi\n  dec %ecx\n  jnz 1b\n  ret\n" END(sum4));
int main(void) {
    printf("%ld\n", sum4(buf));
    return 0;
}
