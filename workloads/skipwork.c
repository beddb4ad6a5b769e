/* skipwork K: main calls heavy() K times (a loop of known length, run under
 * --exclude heavy to skip it) and writes K lines to stdout with write(2),
 * one system call each. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void heavy(long k)
{
    for (long j = 0; j < 1000; j++)
        sink += j ^ k;
}

int main(int argc, char **argv)
{
    long k = argc > 1 ? atol(argv[1]) : 10;
    for (long i = 0; i < k; i++) {
        heavy(i);
        char line[] = "line\n";
        if (write(1, line, sizeof line - 1) < 0)
            return 1;
    }
    return 0;
}
