/* omp_strided N T: an uncoalesced vector operation, y[5i] = alpha·x[5i] +
 * y[5i] for items i in [0, N) (default 1024, as the paper's uncoalesced
 * vector operation), in an OpenMP loop on T threads (default 4) with a
 * static schedule: thread t (created t-th, the main thread first) runs the
 * contiguous items [t·N/T, (t+1)·N/T) in order. One unit = one item:
 *
 *     OMP_WAIT_POLICY=passive tf trace -- omp_strided
 *     tf analyze TRACE --unit call:saxpy_strided --warp 8,16,32
 *
 * The item's work is saxpy_item() of strided.h (the CUDA twin:
 * cuda/strided.cu).
 *
 * Expected for saxpy_strided() at width W, at every -O level:
 *   SIMT efficiency  100%: straight-line code.
 *   heap             5W/8 = 5, 10, 20 sectors per request. Each heap operand
 *                    (load x[5i], load y[5i], store y[5i]) is a 4-byte float
 *                    at byte 20·i of a 128-byte aligned array. Lane l of a
 *                    warp touches byte 20·l past the warp's base, which is
 *                    20·W·w, a multiple of 32 for W a multiple of 8. The
 *                    offsets 20·l (l < W) never straddle a sector (20·l mod
 *                    32 is a multiple of 4, at most 28) and, being less than
 *                    32 apart, leave no sector between them untouched: the
 *                    lanes cover sectors 0 ..= floor(20(W-1)/32), that is
 *                    floor(5(W-1)/8) + 1 = 5W/8 sectors.
 *   heap loads, heap stores  5W/8 each.
 *   stack            1 at every W: each thread runs N/T = 256 consecutive
 *                    items, so all lanes of a warp share one stack and make
 *                    the same stack access.
 *   stack interleaved
 *                    W/4 = 2, 4, 8: every stack operand is 8 bytes (ret; at
 *                    -O0 the frame pointer and the spill of i), two rows of
 *                    W words.
 */
#include <omp.h>

#include "items.h"
#include "strided.h"
#include "vecadd.h"

static float *x, *y;

__attribute__((noipa)) void saxpy_strided(long i)
{
    saxpy_item(x, y, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    int t = (int)arg_long(argc, argv, 2, 4);
    x = alloc128(STRIDE * n * sizeof *x);
    y = alloc128(STRIDE * n * sizeof *y);
    make_strided(x, y, n);
#pragma omp parallel for num_threads(t) schedule(static)
    for (long i = 0; i < n; i++)
        saxpy_strided(i);
    print_sum(y, STRIDE * n);
    return 0;
}
