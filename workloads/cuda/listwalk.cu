/* listwalk N L: the twin of ../listwalk.c, one GPU thread per list. The
 * lists are linked on the host with device addresses, then copied. */
#include "common.cuh"
#include "../listwalk.h"

__global__ void walk(const struct node *pool, long *sums, long n)
{
    long i = item_index();
    if (i < n)
        sums[i] = walk_list(&pool[i]);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 256);
    long len = arg_long(argc, argv, 2, 16);
    struct node *pool = host_zeros<struct node>(n * len);
    struct node *dpool = device_zeros<struct node>(n * len);
    make_lists(pool, dpool, n, len);
    CHECK(cudaMemcpy(dpool, pool, n * len * sizeof *pool, cudaMemcpyHostToDevice));
    long *sums = host_zeros<long>(n), *dsums = device_zeros<long>(n);
    LAUNCH_ITEMS(walk, n)(dpool, dsums, n);
    finish();
    to_host(sums, dsums, n);
    print_sums(sums, n);
    return 0;
}
