/* longjmp out of a recursion: deep(3) recurses to deep(0), which jumps back
 * to main's setjmp; the returns of the deep frames never run (mark() is never
 * called), then main calls after(). */
#include "asm.h"
#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
int marks, afters;
void mark(void);
void after(void);
__asm__(FUNC(mark) "  incl marks(%rip)\n  ret\n" END(mark)
        FUNC(after) "  incl afters(%rip)\n  ret\n" END(after));
__attribute__((noinline)) void deep(int n) {
    if (n == 0)
        longjmp(jb, 1);
    deep(n - 1);
    mark();
}
int main(void) {
    if (setjmp(jb) == 0)
        deep(3);
    after();
    printf("%d %d\n", marks, afters);
    return 0;
}
