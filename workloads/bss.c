/* bss N: a 512 KiB array in .bss with global pointers after it (most of
 * .bss lies beyond the last page the executable's file maps, in anonymous
 * memory); N threads, all alive at once; thread i calls each kernel once
 * with item i (use --unit call:KERNEL: one unit per thread, in item order).
 *
 * Each kernel copies one heap item into g.out[i]: it loads a pointer from
 * .bss (the same 8 bytes in every lane), loads the item through it (heap),
 * and stores 8 bytes into g.out (global). At W = 32, per request:
 *   copy_i32    heap load  a32[i] (4 bytes):          32 × 4 / 32 =  4 sectors
 *   copy_i64    heap load  a64[i] (8 bytes):          32 × 8 / 32 =  8 sectors
 *   copy_stride heap load  a32[32 i] (128 B apart):                 32 sectors
 *   all three   global load of the pointer:                          1 sector
 *               global store g.out[i] (8 bytes):      32 × 8 / 32 =  8 sectors
 * and at width W: W/8, W/4 and W heap sectors; 1 and W/4 global ones. The
 * heap arrays are 128-byte aligned (a warp's items never straddle more
 * sectors than needed); a32 is 1 MiB, which glibc serves with mmap: it stays
 * heap. g is 128-byte aligned and g.out[i] is 8-byte, so a warp's stores
 * fill whole sectors. Every -O level: the kernels are noinline and their
 * only other accesses are to the stack (-O0 spills i).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The pointers after the array: in the anonymous part of .bss. */
static struct {
    long out[1 << 16];
    int32_t *a32;
    int64_t *a64;
} g __attribute__((aligned(128)));

__attribute__((noinline)) void copy_i32(long i) { g.out[i] = g.a32[i]; }
__attribute__((noinline)) void copy_i64(long i) { g.out[i] = g.a64[i]; }
__attribute__((noinline)) void copy_stride(long i) { g.out[i] = g.a32[32 * i]; }

static void *worker(void *arg)
{
    long i = (long)arg;
    copy_i32(i);
    copy_i64(i);
    copy_stride(i);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    size_t big = (size_t)1 << 20;
    if (n < 1 || 32 * n * sizeof *g.a32 > big || n > (1 << 16))
        return 2;
    g.a32 = aligned_alloc(128, big);
    g.a64 = aligned_alloc(128, (n * sizeof *g.a64 + 127) / 128 * 128);
    if (!g.a32 || !g.a64)
        return 1;
    for (long i = 0; i < 32 * n; i++)
        g.a32[i] = (int32_t)i;
    for (long i = 0; i < n; i++)
        g.a64[i] = i;
    pthread_t *t = malloc(n * sizeof *t);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += g.out[i];
    printf("sum=%ld out=%p a32=%p a64=%p\n", sum, (void *)g.out, (void *)g.a32, (void *)&g.a32);
    free(t);
    return 0;
}
