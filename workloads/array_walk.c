/* array_walk N: walk() reads a[0..N) of 8-byte elements once, in order.
 * Prints the array's base address, so that a test can expect the load
 * addresses base + 8*i. */
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
    int64_t *a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++)
        a[i] = i;
    printf("base=%p sum=%ld\n", (void *)a, (long)walk(a, n));
    free(a);
    return 0;
}
