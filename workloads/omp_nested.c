/* omp_nested: nested parallel regions (max active levels 2): an outer team
 * of 2 threads, each of which starts an inner team of 2; each of the 4
 * inner threads calls inner_work(id), the same fixed-length loop for every
 * id, on its own element of `sink`. Prints sink[3].
 *
 * Hand-derived, for the tf figures: the runtime calls the inner region's
 * function inside the outer one's (on each outer thread, which is the
 * inner team's master) and on the 2 further threads: each of those 4 calls
 * is a unit, and the outer region's 2 calls are none (their work is cut
 * into the inner ones). So 4 units, one warp at W = 4, inner_work at 100%
 * SIMT efficiency. Before, the outer calls were units that held the
 * masters' inner calls, and inner_work ran at 50%. */
#include <omp.h>
#include <stdio.h>

static volatile long sink[4];

__attribute__((noinline)) void inner_work(int id)
{
    for (int k = 0; k < 1000; k++)
        sink[id] += k;
}

int main(void)
{
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        inner_work(outer * 2 + omp_get_thread_num());
    }
    printf("%ld\n", (long)sink[3]);
    return 0;
}
