/* loop N: one thread runs a loop of exactly N iterations in loop_n().
 * Expected trace: the loop body's block in loop_n executes N times. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long loop_n(long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++) {
        sum += i * 3;
        __asm__ volatile("" : "+r"(sum)); /* keep the loop a loop */
    }
    return sum;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    printf("%ld\n", loop_n(n));
    return 0;
}
