/* --only and --exclude: main calls h(), then f(), which calls g(n) for
 * n = 10, 5, 20. g(n) runs 2n + 2 instructions.
 *   g: +0 mov %edi,%ecx  +2 dec %ecx  +4 jnz +2  +6 ret
 *   f: +0 push %rbx  +1 mov $10,%edi  +6 call g  +11 mov $5,%edi  +16 call g
 *      +21 mov $20,%edi  +26 call g  +31 pop %rbx  +32 ret
 *   h: +0 mov $3,%eax  +5 ret */
#include "asm.h"
#include <stdio.h>
void f(void);
int h(void);
__asm__(FUNC(g) "  mov %edi,%ecx\n1: dec %ecx\n  jnz 1b\n  ret\n" END(g)
        FUNC(f) "  push %rbx\n  mov $10,%edi\n  call g\n  mov $5,%edi\n  call g\n"
        "  mov $20,%edi\n  call g\n  pop %rbx\n  ret\n" END(f)
        FUNC(h) "  mov $3,%eax\n  ret\n" END(h));
int main(void) {
    int x = h();
    f();
    printf("%d\n", x);
    return 0;
}
