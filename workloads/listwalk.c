/* listwalk N T L: pointer chasing. N linked lists (default 256) of L nodes
 * each (default 16), walked on T threads (default 256: one item per
 * thread, items.h). Item i sums the values along list i and stores the sum.
 * The nodes are 32 bytes, in a 128-byte aligned pool, so every node is
 * exactly one sector. Node i is the head of list i; the other nodes of all
 * lists are the rest of the pool in an order shuffled from a fixed seed, so
 * a list's nodes are scattered and no node belongs to two lists.
 *
 *     tf analyze TRACE --unit call:walk --warp 8,16,32
 *
 * The item's work is walk_list() of listwalk.h (the CUDA twin:
 * cuda/listwalk.cu).
 *
 * Expected for walk() at width W, at every -O level:
 *   SIMT efficiency  100%: every list has L nodes, so every lane makes the
 *                    same number of trips.
 *   heap loads       W = 8, 16, 32: at every step the lanes read different
 *                    nodes (value and next pointer, in one or two operands),
 *                    each node its own sector.
 *   heap stores      W/4 = 2, 4, 8: the 8-byte sums at 8·i of a 128-byte
 *                    aligned array.
 *   stack            ceil(W/k) with k = N/T = 1: W = 8, 16, 32.
 *   stack interleaved
 *                    W/4 = 2, 4, 8: the only locals are 8 bytes (a pointer
 *                    and a long, on the stack at -O0; in registers above,
 *                    where ret is the only stack operand).
 */
#include "items.h"
#include "listwalk.h"

static struct node *pool;
static long *sums;

__attribute__((noipa)) void walk(long i)
{
    sums[i] = walk_list(&pool[i]);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 256);
    long t = arg_long(argc, argv, 2, 256);
    long len = arg_long(argc, argv, 3, 16);
    pool = alloc128(n * len * sizeof *pool);
    make_lists(pool, pool, n, len);
    sums = alloc128(n * sizeof *sums);
    run_items(n, t, walk);
    print_sums(sums, n);
    return 0;
}
