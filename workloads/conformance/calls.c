/* Calls and returns: outer calls inner directly twice and once through a
 * register. Every call pushes its return address (an 8-byte write on the
 * stack) to the same slot; every ret reads it back.
 *   outer: +0 sub $8,%rsp  +4 call inner  +9 call inner
 *          +14 lea inner(%rip),%rdx  +21 call *%rdx  +23 add $8,%rsp  +27 ret
 *   inner: +0 mov $1,%eax  +5 ret */
#include "asm.h"
#include <stdio.h>
int outer(void);
__asm__(FUNC(inner) "  mov $1,%eax\n  ret\n" END(inner)
        FUNC(outer) "  sub $8,%rsp\n  call inner\n  call inner\n  lea inner(%rip),%rdx\n"
        "  call *%rdx\n  add $8,%rsp\n  ret\n" END(outer));
int main(void) {
    printf("%d\n", outer());
    return 0;
}
