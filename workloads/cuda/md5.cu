/* md5 N: the twin of ../md5.c, one GPU thread per 64-byte block. */
#include "common.cuh"
#include "../md5.h"

__global__ void md5_item(const uint32_t *blocks, uint32_t *digests, long n)
{
    long i = item_index();
    if (i < n)
        md5_block(blocks + 16 * i, digests + 4 * i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 512);
    uint32_t *blocks = host_zeros<uint32_t>(16 * n), *digests = host_zeros<uint32_t>(4 * n);
    make_blocks(blocks, n);
    uint32_t *db = to_device(blocks, 16 * n), *dd = device_zeros<uint32_t>(4 * n);
    LAUNCH_ITEMS(md5_item, n)(db, dd, n);
    finish();
    to_host(digests, dd, 4 * n);
    print_digests(digests, n);
    return 0;
}
