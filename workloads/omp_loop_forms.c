/* omp_loop_forms N: worksharing loops of N iterations on 4 threads in the
 * forms the OpenMP runtime sees differently, each over a heap array of
 * 24-byte structs (schedules.h):
 *   down   i from N - 1 down to 0, schedule(dynamic, 2)
 *   step3  i from 0 to 3N by 3, schedule(guided)
 *   ull    an unsigned long long index, schedule(dynamic, 5) (GOMP_loop_ull_*)
 *   red    a reduction(+) loop, schedule(dynamic, 4)
 *   two    two `omp for` loops in one parallel region (each thread asks the
 *          runtime itself: GOMP_loop_*_start), the first `nowait`
 *   vec    a = 2 b, schedule(dynamic, 8): a body GCC vectorizes at -O3
 * Every body but vec's branches on b (fill_item), which keeps GCC from
 * vectorizing it. Hand-derived figures (one unit per iteration, in logical
 * order): 7 N units (at -O3, vec runs two iterations per pass: tf says so
 * and makes each of its 4 calls one unit instead, 6 N + 4); every loop body
 * takes one path (SIMT efficiency 100%); a warp of W consecutive logical
 * iterations touches W doubles 24 bytes apart, 6, 12 and 24 heap sectors
 * per request at W = 8, 16, 32 (the downward loop walks the same addresses
 * from the top). */
#include "schedules.h"

static Item *items;

__attribute__((noinline)) void down(long n)
{
#pragma omp parallel for num_threads(4) schedule(dynamic, 2)
    for (long i = n - 1; i >= 0; i--)
        fill_item(items, i);
}

__attribute__((noinline)) void step3(long n)
{
#pragma omp parallel for num_threads(4) schedule(guided)
    for (long i = 0; i < 3 * n; i += 3)
        fill_item(items, i / 3);
}

__attribute__((noinline)) void ull(unsigned long long n)
{
#pragma omp parallel for num_threads(4) schedule(dynamic, 5)
    for (unsigned long long i = 0; i < n; i++)
        fill_item(items, (long)i);
}

__attribute__((noinline)) double red(long n)
{
    double s = 0;
#pragma omp parallel for num_threads(4) schedule(dynamic, 4) reduction(+ : s)
    for (long i = 0; i < n; i++) {
        fill_item(items, i);
        s += items[i].a;
    }
    return s;
}

__attribute__((noinline)) void two(long n)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp for schedule(dynamic, 3) nowait
        for (long i = 0; i < n; i++)
            fill_item(items, i);
#pragma omp for schedule(guided, 2)
        for (long i = 0; i < n; i++)
            fill_item(items, i);
    }
}

__attribute__((noinline)) void vec(long n)
{
#pragma omp parallel for num_threads(4) schedule(dynamic, 8)
    for (long i = 0; i < n; i++)
        items[i].a = items[i].b * 2;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 512;
    items = aligned_alloc(64, ((size_t)n * sizeof(Item) + 63) / 64 * 64);
    make_items(items, n);
    down(n);
    step3(n);
    ull((unsigned long long)n);
    double s = red(n);
    two(n);
    vec(n);
    printf("%.0f %.0f\n", s, items[n / 2].a);
    free(items);
    return 0;
}
