/* An AVX2 gather with every lane on: one 4-byte read per element, in
 * element order (tab[3], tab[0], tab[7], tab[1]).
 *   gather: +0 vmovdqu idx(%rip),%xmm1  +8 lea tab(%rip),%rax
 *           +15 vpcmpeqd %xmm2,%xmm2,%xmm2  +19 vpgatherdd %xmm2,(%rax,%xmm1,4),%xmm0
 *           +25 vmovdqu %xmm0,out(%rip)  +33 ret */
#include "asm.h"
#include <stdio.h>
int tab[8] = {10, 11, 12, 13, 14, 15, 16, 17};
int idx[4] = {3, 0, 7, 1};
int out[4];
void gather(void);
__asm__(FUNC(gather) "  vmovdqu idx(%rip),%xmm1\n  lea tab(%rip),%rax\n  vpcmpeqd %xmm2,%xmm2,%xmm2\n"
        "  vpgatherdd %xmm2,(%rax,%xmm1,4),%xmm0\n  vmovdqu %xmm0,out(%rip)\n  ret\n" END(gather));
int main(void) {
    gather();
    printf("%d %d %d %d\n", out[0], out[1], out[2], out[3]);
    return 0;
}
