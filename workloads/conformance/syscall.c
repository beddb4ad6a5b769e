/* A raw system call: my_getppid runs `syscall` with rax = 110 (getppid);
 * the syscall event follows the instruction.
 *   my_getppid: +0 mov $110,%eax  +5 syscall  +7 ret */
#include "asm.h"
#include <stdio.h>
long my_getppid(void);
__asm__(FUNC(my_getppid) "  mov $110,%eax\n  syscall\n  ret\n" END(my_getppid));
int main(void) {
    printf("%d\n", my_getppid() > 0);
    return 0;
}
