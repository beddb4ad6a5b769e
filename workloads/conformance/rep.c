/* rep string instructions: copy(d, s, n) is `rep movsb`, fill8(d, n) is
 * `rep stosq` (rax = 0).
 *   copy:  +0 mov %rdx,%rcx   +3 rep movsb   +5 ret
 *   fill8: +0 mov %rsi,%rcx   +3 xor %eax,%eax   +5 rep stosq   +8 ret */
#include "asm.h"
#include <stdio.h>
char src[8] = "abcdefg", dst[8];
long words[4] = {1, 2, 3, 4};
void copy(char *d, const char *s, long n);
void fill8(long *d, long n);
__asm__(FUNC(copy) "  mov %rdx,%rcx\n  rep movsb\n  ret\n" END(copy)
        FUNC(fill8) "  mov %rsi,%rcx\n  xor %eax,%eax\n  rep stosq\n  ret\n" END(fill8));
int main(void) {
    copy(dst, src, 3);
    copy(dst, src, 0);
    fill8(words, 2);
    printf("%s %ld %ld %ld\n", dst, words[0], words[1], words[2]);
    return 0;
}
