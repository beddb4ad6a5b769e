/* omp_lock_api N: an OpenMP loop of N iterations on 4 threads that uses the
 * OpenMP lock API, which neither libgomp nor libomp builds on pthread
 * mutexes. Iteration i
 *   - takes `lock` with omp_set_lock and adds i to a sum (update_sum);
 *   - takes `nest` twice with omp_set_nest_lock (nested) and counts;
 *   - takes `tested` with omp_test_lock, retrying until it succeeds (a
 *     failed test takes nothing), and adds i to a second sum.
 * Prints the lock addresses (lock=0x… nest=0x… tested=0x…) and the results.
 *
 * Hand-derived, for the tf figures: N acquisitions and N releases of `lock`
 * and of `tested`, 2N of `nest`, all of kind mutex. With --unit auto (each
 * iteration a unit), every warp's lanes hold `lock` in turn, so update_sum,
 * the body of that critical section, runs one lane at a time: SIMT
 * efficiency 1/W.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long sum, nested, tested_sum;
static omp_lock_t lock, tested;
static omp_nest_lock_t nest;

__attribute__((noinline)) void update_sum(long i)
{
    sum += i;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 64;
    omp_init_lock(&lock);
    omp_init_lock(&tested);
    omp_init_nest_lock(&nest);
#pragma omp parallel for num_threads(4) schedule(static)
    for (long i = 0; i < n; i++) {
        omp_set_lock(&lock);
        update_sum(i);
        omp_unset_lock(&lock);
        omp_set_nest_lock(&nest);
        omp_set_nest_lock(&nest);
        nested += 1;
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
        while (!omp_test_lock(&tested))
            ;
        tested_sum += i;
        omp_unset_lock(&tested);
    }
    printf("lock=%p nest=%p tested=%p sum=%ld nested=%ld tested_sum=%ld\n", (void *)&lock,
           (void *)&nest, (void *)&tested, sum, nested, tested_sum);
    omp_destroy_lock(&lock);
    omp_destroy_lock(&tested);
    omp_destroy_nest_lock(&nest);
    return 0;
}
