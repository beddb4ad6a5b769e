/* strided N: the twin of ../omp_strided.c, one GPU thread per item. */
#include "common.cuh"
#include "../strided.h"
#include "../vecadd.h"

__global__ void saxpy_strided(const float *x, float *y, long n)
{
    long i = item_index();
    if (i < n)
        saxpy_item(x, y, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    float *x = host_zeros<float>(STRIDE * n), *y = host_zeros<float>(STRIDE * n);
    make_strided(x, y, n);
    float *dx = to_device(x, STRIDE * n), *dy = to_device(y, STRIDE * n);
    LAUNCH_ITEMS(saxpy_strided, n)(dx, dy, n);
    finish();
    to_host(y, dy, STRIDE * n);
    print_sum(y, STRIDE * n);
    return 0;
}
