/* array_walk N [K]: walk() reads a[0..N) of 8-byte elements once, in order.
 * Prints the array's base address, so that a test can expect the load
 * addresses base + 8*i.
 *
 * With K (default 1), main calls walk() K times, call k on the slice
 * a[k·N .. (k+1)·N) of a K·N-element array. With a large N and
 * --unit call:walk each call is a long unit (more events than tf reads
 * whole), all of them side by side in one thread. In a warp of W calls the
 * lanes run walk()'s loop in lockstep, each in its own slice, N·8 bytes
 * from the next lane's: every load of a[] is one sector per lane (K = 6:
 * at W = 4, warps of 4 and 2 calls, 3 sectors per load request in all; at
 * W = 8, one warp of 6 calls, 6). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int64_t walk(const int64_t *a, long n)
{
    int64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += a[i];
    return sum;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long k = argc > 2 ? atol(argv[2]) : 1;
    int64_t *a = malloc(k * n * sizeof *a);
    for (long i = 0; i < k * n; i++)
        a[i] = i;
    int64_t sum = 0;
    for (long j = 0; j < k; j++)
        sum += walk(a + j * n, n);
    printf("base=%p sum=%ld\n", (void *)a, (long)sum);
    free(a);
    return 0;
}
