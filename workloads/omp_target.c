/* omp_target N: `#pragma omp target teams distribute parallel for` over N
 * items of 24-byte structs (schedules.h), compiled for the host.
 * With LLVM's libomp (clang -fopenmp) the teams' distribute loop hands each
 * team a range and the team's parallel loop hands its threads chunks of it
 * (__kmpc_for_static_init): one unit per item, N units, SIMT efficiency
 * 100%, 6 / 12 / 24 heap sectors per request at W = 8 / 16 / 32, as in
 * omp_schedules.c. GCC expands the host fallback's static schedule inline:
 * one unit per call of the outlined function. */
#include "schedules.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1024;
    Item *items = aligned_alloc(64, ((size_t)n * sizeof(Item) + 63) / 64 * 64);
    make_items(items, n);
#pragma omp target teams distribute parallel for map(tofrom : items[0 : n]) num_threads(4)
    for (long i = 0; i < n; i++)
        fill_item(items, i);
    print_items(items, n);
    free(items);
    return 0;
}
