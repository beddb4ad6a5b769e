/* omp_schedules N SCHEDULE [REPEAT]: one OpenMP loop of N iterations on 4
 * threads (REPEAT times, default once), under the schedule SCHEDULE names:
 *   dynamic    schedule(dynamic)        chunks of 1, handed out on demand
 *   dynamic3   schedule(dynamic, 3)     chunks of 3
 *   guided     schedule(guided, 2)      shrinking chunks, at least 2
 *   runtime    schedule(runtime)        OMP_SCHEDULE decides
 *   static     schedule(static)         one block of N/4 per thread
 *   plain      no schedule clause       the compiler's default (static)
 *   static5    schedule(static, 5)      chunks of 5, round robin
 *   collapse   schedule(dynamic, 7) collapse(2) over (N / 32) x 32
 *   all        every loop above, one after the other
 *   static1    schedule(static, 1)      round robin, one at a time (not in
 *              `all`: GCC's code for it is a stride loop, tested apart)
 * Iteration i reads items[i].b and writes items[i].a of a heap array of
 * 24-byte structs (three doubles), 64-byte aligned.
 *
 * Hand-derived figures, per iteration as a GPU numbers its threads (one
 * unit per iteration, warps of consecutive iterations, `--unit auto`):
 * - units: N per loop. GCC expands static schedules inline: no runtime
 *   call hands out their chunks. The tracer records each thread's place in
 *   the team and the analyzer infers its block (static, plain) or its
 *   chunks of 5, T * 5 apart (static5) (FORMAT.md 6.7), so they are N units
 *   too. GCC's static1 leaves no mark in its code (from -O1 on it is
 *   `for (i = t; i < n; i += T)`), but each thread runs exactly the
 *   iterations round robin gives it: `--unit auto`, as
 *   `--unit iter:fill_static1._omp_fn.0`, gives its N units in logical
 *   order, with the figures below, and counts the instance as a stride by
 *   the team's size in its header line.
 * - SIMT efficiency 100%: every item has b = 1, so every iteration takes
 *   the same path. Not for collapse: the CPU code steps its (row, column)
 *   pair with a branch at the end of each row, which one lane in 32 takes.
 * - heap sectors per request: a warp of W consecutive iterations touches W
 *   doubles 24 bytes apart, starting 8 bytes into a 192-byte-aligned group
 *   (W = 8: bytes 8..183 of 192 → 6 sectors), so 6, 12 and 24 sectors at
 *   W = 8, 16 and 32, loads and stores alike. A CPU thread's chunk order
 *   (iteration i, i + 4, i + 8 … in one warp) would give fewer.
 * - stack, words interleaved across lanes as GPU local memory lays them
 *   out, at -O0 (from -O1 on the loop touches no stack): 2, 4 and 8 sectors
 *   at W = 8, 16 and 32. Every stack operand of an iteration is 8 bytes (the
 *   spills of i and of the item's address), at the same offset from the
 *   start of its thread's frame in every lane, so a warp's request covers
 *   W rows of two 4-byte words: 8W bytes.
 * Every -O level keeps one store and one load of the array per iteration
 * (the branch on b keeps GCC from vectorizing the loop). */
#include <string.h>
#include "schedules.h"

static Item *items;

/* One loop over the items under `#pragma omp parallel for CLAUSES`. */
#define STR(x) #x
#define FILL(name, clauses)                                         \
    __attribute__((noinline)) void name(long n)                     \
    {                                                               \
        _Pragma(STR(omp parallel for num_threads(4) clauses))       \
        for (long i = 0; i < n; i++)                                \
            fill_item(items, i);                                    \
    }

FILL(fill_dynamic, schedule(dynamic))
FILL(fill_dynamic3, schedule(dynamic, 3))
FILL(fill_guided, schedule(guided, 2))
FILL(fill_runtime, schedule(runtime))
FILL(fill_static, schedule(static))
FILL(fill_plain, )
FILL(fill_static5, schedule(static, 5))
FILL(fill_static1, schedule(static, 1))

__attribute__((noinline)) void fill_collapse(long n)
{
    long rows = n / 32;
#pragma omp parallel for num_threads(4) schedule(dynamic, 7) collapse(2)
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < 32; c++)
            fill_item(items, r * 32 + c);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1024;
    const char *s = argc > 2 ? argv[2] : "all";
    int all = strcmp(s, "all") == 0;
    int repeat = argc > 3 ? atoi(argv[3]) : 1;
    items = aligned_alloc(64, ((size_t)n * sizeof(Item) + 63) / 64 * 64);
    make_items(items, n);
    for (int r = 0; r < repeat; r++) {
        if (all || strcmp(s, "dynamic") == 0)
            fill_dynamic(n);
        if (all || strcmp(s, "dynamic3") == 0)
            fill_dynamic3(n);
        if (all || strcmp(s, "guided") == 0)
            fill_guided(n);
        if (all || strcmp(s, "runtime") == 0)
            fill_runtime(n);
        if (all || strcmp(s, "static") == 0)
            fill_static(n);
        if (all || strcmp(s, "plain") == 0)
            fill_plain(n);
        if (all || strcmp(s, "static5") == 0)
            fill_static5(n);
        if (all || strcmp(s, "collapse") == 0)
            fill_collapse(n);
        if (strcmp(s, "static1") == 0)
            fill_static1(n);
    }
    print_items(items, n);
    free(items);
    return 0;
}
