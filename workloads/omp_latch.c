/* omp_latch N: an OpenMP loop whose latch the compiler duplicates: item i
 * calls heavy() or light() (latch.h: light when i is a multiple of 3), 4
 * threads, schedule(dynamic, 4). From -O2 on GCC gives each arm of the `if`
 * its own copy of the loop's increment, test and back edge, and enters the
 * loop in the middle (at the test of items[i].b): the arms never rejoin
 * inside the loop. Every iteration is still one unit: N units.
 *
 * Hand-derived figures, one unit per iteration in logical order (`--unit
 * auto`), N = 1024:
 * - SIMT efficiency: every warp of W = 8, 16 or 32 consecutive items holds
 *   both kinds (a multiple of 3 every three items), so each warp runs each
 *   function once, with its heavy or its light lanes: heavy() at
 *   682 / 1024 = 66.60% and light() at 342 / 1024 = 33.40% (1024 items,
 *   342 of them multiples of 3), at every W.
 * - heap sectors per load request of the loop's own test of items[i].b: a
 *   warp of W consecutive items reads W doubles 24 bytes apart: 6, 12 and 24
 *   at W = 8, 16, 32 (as omp_schedules.c).
 * - heavy() and light() touch only their own lanes' items. Items come in
 *   groups of four per 96 bytes (three sectors), group g holding items
 *   4g .. 4g+3. Field b (offset 8) of item 4g lies alone in the group's
 *   first sector, of 4g+1 and 4g+2 in its second, of 4g+3 alone in its
 *   third; field a (offset 0) of 4g and 4g+1 in the first, 4g+2 in the
 *   second, 4g+3 in the third. Item 4g+k is light when g + k is a multiple
 *   of 3 (4 = 1 mod 3). Per group, by g mod 3 = 0, 1, 2:
 *   heavy() loads b from 1, 3, 3 sectors and stores a to 2, 2, 3;
 *   light() stores a to 2, 1, 1 (it loads nothing from the heap).
 *   The 256 groups of 1024 items have g mod 3 = 0 for 86 of them and 1 or 2
 *   for 85 each: heavy() loads 86 + 3 * 170 = 596 sectors, stores
 *   2 * 171 + 3 * 85 = 597; light() stores 2 * 86 + 170 = 342. Each
 *   warp issues each access once, so per request (1024 / W requests):
 *   heavy() loads 4.65625, 9.3125, 18.625 and stores 4.6640625, 9.328125,
 *   18.65625 at W = 8, 16, 32; light() stores 2.671875, 5.34375, 10.6875.
 * - the loop function's own instructions, with GCC 12 (each iteration: the
 *   test of items[i].b, an arm that calls heavy() or light(), the latch;
 *   every warp holds both arms, so per warp each block issues once):
 *   -O0: test 11, light arm jmp 1 + call 3 + jmp 1, heavy arm call 3 +
 *   jmp 1, latch 3: per heavy lane 18, per light lane 19, in all
 *   682 * 18 + 342 * 19 = 18774 thread and 23 warp instructions a warp.
 *   -O1: test 7, light arm 2, heavy arm 2 + jmp 1, latch 3: 682 * 13 +
 *   342 * 12 = 12970, 15 a warp. -O2 and -O3: test 4, each arm 4 and its
 *   own copy of the latch 2: 1024 * 10 = 10240, 16 a warp (62.5%).
 *   Under `--merge-tails` the copies issue once: the two latches at -O2
 *   and -O3 (14 a warp: 71.43%), the arms' two `jmp` to the latch at -O0
 *   (22); -O1 has no copies (15).
 * The CUDA twin (cuda/latch.cu) runs the same `if` per GPU thread. */
#include "latch.h"

static Item *items;

__attribute__((noinline)) void heavy(long i)
{
    heavy_item(items, i);
}

__attribute__((noinline)) void light(long i)
{
    light_item(items, i);
}

__attribute__((noinline)) void walk(long n)
{
#pragma omp parallel for num_threads(4) schedule(dynamic, 4)
    for (long i = 0; i < n; i++) {
        if (items[i].b > 0)
            heavy(i);
        else
            light(i);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1024;
    items = aligned_alloc(64, ((size_t)n * sizeof(Item) + 63) / 64 * 64);
    make_latch_items(items, n);
    walk(n);
    print_latch_items(items, n);
    free(items);
    return 0;
}
