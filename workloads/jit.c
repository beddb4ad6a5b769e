/* jit: code written at run time, and rewritten at the same address, run by
 * several threads (what a JIT compiler's output looks like to tf: code in
 * anonymous memory, no module, no symbols).
 *
 * main writes version A of a function into an executable anonymous mapping,
 * starts 4 workers that each call it once with n = 1, 2, 3, 4, joins them,
 * writes version B at the same address (different code), and starts 4 more
 * workers that call it with n = 1..4. It prints "code=ADDRESS" and the
 * eight results.
 *
 * A(n) = 0 + 1 + ... + n-1:           B(n) = 3n:
 *   0: xor eax,eax                      0: mov eax,edi
 *   2: xor ecx,ecx                      2: add eax,eax
 *   4: cmp ecx,edi    (loop head)       4: add eax,edi
 *   6: jge 14                           6: ret
 *   8: add eax,ecx
 *  10: inc ecx
 *  12: jmp 4
 *  14: ret
 *
 * Expected, for the function at ADDRESS (own instructions; both versions
 * are one function, the code at that address):
 * - A's blocks: [0,2] 2 insns, [4,6] 2, [8,10,12] 3, [14] 1. A(n) runs
 *   2 + 5n + 3 = 5n + 5 instructions: 10, 15, 20, 25 for n = 1..4, 70 in
 *   all. Four lanes together under IPDOM (the loop's exit branch
 *   reconverges at the ret): [0,2] once (2 warp instructions), the loop
 *   head 5 times (10), the body 4 times (12), the ret once (1): 25 warp
 *   instructions.
 * - B: one block of 4 instructions: 16 thread, 4 warp instructions.
 * - W = 4 (phase A's units in one warp, phase B's in another): 86 thread,
 *   29 warp instructions, SIMT efficiency 86 / (29 * 4) = 74.14%.
 * - W = 8 (one warp): A's lanes and B's call different code (the same
 *   address, another block), so they run apart: 86 thread, 29 warp
 *   instructions, 86 / (29 * 8) = 37.07%.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*jit_fn)(int);

static const unsigned char version_a[] = {
    0x31, 0xc0,       /* xor eax,eax */
    0x31, 0xc9,       /* xor ecx,ecx */
    0x39, 0xf9,       /* cmp ecx,edi */
    0x7d, 0x06,       /* jge +6 (to the ret) */
    0x01, 0xc8,       /* add eax,ecx */
    0xff, 0xc1,       /* inc ecx */
    0xeb, 0xf6,       /* jmp -10 (to the cmp) */
    0xc3,             /* ret */
};

static const unsigned char version_b[] = {
    0x89, 0xf8, /* mov eax,edi */
    0x01, 0xc0, /* add eax,eax */
    0x01, 0xf8, /* add eax,edi */
    0xc3,       /* ret */
};

static jit_fn code;
static int results[8];

struct job {
    int n;
    int *out;
};

__attribute__((noinline)) static void *worker(void *arg)
{
    struct job *j = arg;
    *j->out = code(j->n);
    return NULL;
}

/* Starts four workers on the current code, for n = 1..4, and waits for them. */
static void run_phase(int *out)
{
    pthread_t t[4];
    struct job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct job){i + 1, &out[i]};
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

int main(void)
{
    unsigned char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    code = (jit_fn)(void *)buf;
    memcpy(buf, version_a, sizeof version_a);
    run_phase(&results[0]);
    /* The same address, other code: a JIT reusing its code space. */
    memset(buf, 0xcc, sizeof version_a);
    memcpy(buf, version_b, sizeof version_b);
    run_phase(&results[4]);
    printf("code=%p\n", (void *)buf);
    for (int i = 0; i < 8; i++)
        printf("%d%c", results[i], i == 7 ? '\n' : ' ');
    return 0;
}
