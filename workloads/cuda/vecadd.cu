/* vecadd N: the twin of ../vecadd.c, one GPU thread per item. */
#include "common.cuh"
#include "../vecadd.h"

__global__ void vecadd(const float *a, const float *b, float *c, long n)
{
    long i = item_index();
    if (i < n)
        add_item(a, b, c, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    float *a = host_zeros<float>(n), *b = host_zeros<float>(n), *c = host_zeros<float>(n);
    make_vectors(a, b, n);
    float *da = to_device(a, n), *db = to_device(b, n), *dc = device_zeros<float>(n);
    LAUNCH_ITEMS(vecadd, n)(da, db, dc, n);
    finish();
    to_host(c, dc, n);
    print_sum(c, n);
    return 0;
}
