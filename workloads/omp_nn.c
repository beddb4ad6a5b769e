/* omp_nn N T: nearest neighbour (after Rodinia's nn). N records (default
 * 4096) of {latitude, longitude}, generated from a fixed seed; every item
 * computes the distance of its record to a target point, in an OpenMP loop
 * on T threads (default 4, static schedule: thread t runs items
 * [t·N/T, (t+1)·N/T) in order); the host then picks the nearest record.
 * As in Rodinia's CUDA version, one GPU thread computes one distance:
 *
 *     OMP_WAIT_POLICY=passive tf trace -- omp_nn
 *     tf analyze TRACE --unit call:distance --warp 8,16,32
 *
 * The item's work is record_distance() of nn.h (the CUDA twin: cuda/nn.cu).
 *
 * Expected for distance() at width W, at every -O level:
 *   SIMT efficiency  100%. The code is straight-line except for the check
 *                    that GCC adds after an inlined sqrtf (-O1 and up) for a
 *                    negative argument (to set errno): a sum of squares is
 *                    never negative, so no lane takes it. At -O0 sqrtf is a
 *                    call into libm, whose instructions are not distance()'s.
 *   heap loads       W/4 = 2, 4, 8: lane l reads the 8-byte record at
 *                    8·i of a 128-byte aligned array (its latitude, its
 *                    longitude, or both in one 8-byte load): a warp's reads
 *                    of one field cover 8·W contiguous bytes, W/4 sectors.
 *   heap stores      W/8 = 1, 2, 4: the 4-byte distance at 4·i.
 *   heap (all)       a mix of the two, in proportion to how many load
 *                    operands GCC emits (two 4-byte loads, or one 8-byte
 *                    load), so not given here.
 *   stack            1: 1024 items per thread, all lanes on one stack.
 *   stack interleaved
 *                    W/4 at -O0 (8-byte operands only: frame pointer, the
 *                    spill of i, call/ret) and -O1..-O3 (ret, and the call
 *                    into sqrtf's slow path is never made).
 */
#include <omp.h>

#include "items.h"
#include "nn.h"

static struct record *records;
static float *dist;

__attribute__((noipa)) void distance(long i)
{
    dist[i] = record_distance(&records[i]);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 4096);
    int t = (int)arg_long(argc, argv, 2, 4);
    records = alloc128(n * sizeof *records);
    dist = alloc128(n * sizeof *dist);
    make_records(records, n);
#pragma omp parallel for num_threads(t) schedule(static)
    for (long i = 0; i < n; i++)
        distance(i);
    print_nearest(records, dist, n);
    return 0;
}
