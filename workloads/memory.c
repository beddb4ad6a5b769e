/* memory N: N threads, all alive at once; thread i calls each kernel once
 * with item i (use --unit call:KERNEL: one unit per thread, in item order).
 *
 * At W = 32, per heap request of the kernel (the arrays are 128-byte
 * aligned, so a warp's 32 consecutive items never straddle more sectors
 * than needed):
 *   load_i32    reads a32[i] (4 bytes):          32 × 4 / 32   =  4 sectors
 *   load_i64    reads a64[i] (8 bytes):          32 × 8 / 32   =  8 sectors
 *   load_stride reads a32[32 * i] (128 B apart):                  32 sectors
 * and at width W: W/8, W/4 and W sectors.
 *   stack_slot  writes one 4-byte local at the same offset from the stack
 *               pointer in every lane: each lane's own CPU stack puts the
 *               32 writes in 32 sectors; GPU local memory interleaves word k
 *               of lane l at base + 4·(k·W + l), so the 32 writes are 128
 *               contiguous bytes: 4 sectors (W/8 at width W).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int32_t *a32;
static int64_t *a64;
static volatile int64_t sink;

__attribute__((noinline)) void load_i32(long i) { sink += a32[i]; }
__attribute__((noinline)) void load_i64(long i) { sink += a64[i]; }
__attribute__((noinline)) void load_stride(long i) { sink += a32[32 * i]; }

/* No frame: the slot is the function's only stack store. */
__attribute__((noinline, optimize("omit-frame-pointer"))) void stack_slot(long i)
{
    volatile int32_t slot;
    slot = (int32_t)i;
    (void)slot;
}

static void *worker(void *arg)
{
    long i = (long)arg;
    load_i32(i);
    load_i64(i);
    load_stride(i);
    stack_slot(i);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    void *p;
    if (posix_memalign(&p, 128, 32 * n * sizeof *a32) != 0)
        return 1;
    a32 = p;
    if (posix_memalign(&p, 128, n * sizeof *a64) != 0)
        return 1;
    a64 = p;
    for (long i = 0; i < 32 * n; i++)
        a32[i] = (int32_t)i;
    for (long i = 0; i < n; i++)
        a64[i] = i;
    pthread_t *t = malloc(n * sizeof *t);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", (long)sink);
    return 0;
}
