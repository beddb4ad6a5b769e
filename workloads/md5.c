/* md5 N T: the MD5 compression function (RFC 1321) applied to one 64-byte
 * block per item, N items (default 512, as the paper's MD5), on T threads
 * (default 256) of N/T = 2 consecutive items each (items.h). Item i's block
 * is 16 words generated from a fixed seed at 64·i of a 128-byte aligned
 * array; its 16-byte digest goes to 16·i of another. One unit = one item:
 *
 *     tf analyze TRACE --unit call:md5_item --warp 8,16,32
 *
 * The item's work is md5_block() of md5.h (the CUDA twin: cuda/md5.cu).
 *
 * Expected for md5_item() at width W, at every -O level:
 *   SIMT efficiency  100%: 64 steps in every lane, and which of the four
 *                    round functions a step uses depends on the step
 *                    number only; no branch depends on the data.
 *   heap loads       W = 8, 16, 32: every load reads within the lane's own
 *                    64-byte block (a 4-byte word, or 16 bytes where GCC
 *                    vectorizes, aligned, so within one sector), and the
 *                    blocks of a warp's lanes are 64 bytes apart: one
 *                    sector per lane.
 *   heap stores      W/2 = 4, 8, 16: the lanes' digests are 16·W
 *                    contiguous bytes, written in 4-byte or wider operands
 *                    within each lane's 16 bytes.
 *   stack            ceil(W/k), k = 2: 4, 8, 16.
 * The stack holds 4-byte state words at -O0 and spills of several sizes at
 * -O1 and above, so the interleaved stack figure is not derived here.
 */
#include "items.h"
#include "md5.h"

static uint32_t *blocks; /* 16 words per item */
static uint32_t *digests; /* 4 words per item */

__attribute__((noipa)) void md5_item(long i)
{
    md5_block(blocks + 16 * i, digests + 4 * i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 512);
    long t = arg_long(argc, argv, 2, 256);
    blocks = alloc128(16 * n * sizeof *blocks);
    digests = alloc128(4 * n * sizeof *digests);
    make_blocks(blocks, n);
    run_items(n, t, md5_item);
    print_digests(digests, n);
    return 0;
}
