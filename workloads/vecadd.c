/* vecadd N T: c[i] = a[i] + b[i] for N floats (default 1024, as the
 * paper's VectorAdd), on T threads (default 64) of N/T consecutive items
 * each (items.h). One unit = one item = one GPU thread:
 *
 *     tf analyze TRACE --unit call:vecadd --warp 8,16,32
 *
 * The item's work is add_item() of vecadd.h, which the CUDA twin
 * (cuda/vecadd.cu) runs as one GPU thread.
 *
 * Expected for vecadd() at width W (W = 8, 16, 32), at every -O level:
 *   SIMT efficiency  100%: straight-line code, no branch.
 *   heap             W/8 = 1, 2, 4 sectors per request. The three heap
 *                    operands (load a[i], load b[i], store c[i]) are 4 bytes
 *                    of 128-byte aligned arrays: a warp's W lanes read or
 *                    write 4·W contiguous bytes starting on a sector
 *                    boundary. The array pointers are globals (global
 *                    segment), so they do not count as heap.
 *   heap loads       W/8; heap stores W/8.
 *   stack            ceil(W/k) with k = N/T = 16 items per thread: 1, 1, 2.
 *                    Every stack access (the push/pop of the frame pointer,
 *                    ret, and at -O0 the spill of i) is 8 bytes at an
 *                    8-aligned address, made at the same place by every
 *                    lane; lanes of one thread share its stack.
 *   stack interleaved
 *                    W/4 = 2, 4, 8: all stack operands are 8 bytes (checked
 *                    in the disassembly at -O0..-O3), i.e. two 4-byte words,
 *                    two rows of W words each in GPU local-memory layout.
 */
#include "items.h"
#include "vecadd.h"

static float *a, *b, *c;

__attribute__((noipa)) void vecadd(long i)
{
    add_item(a, b, c, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    long t = arg_long(argc, argv, 2, 64);
    a = alloc128(n * sizeof *a);
    b = alloc128(n * sizeof *b);
    c = alloc128(n * sizeof *c);
    make_vectors(a, b, n);
    run_items(n, t, vecadd);
    print_sum(c, n);
    return 0;
}
