/* latch N: the twin of ../omp_latch.c, one GPU thread per item: heavy or
 * light items call different functions (latch.h). */
#include "common.cuh"
#include "../latch.h"

__device__ __noinline__ void heavy(Item *items, long i)
{
    heavy_item(items, i);
}

__device__ __noinline__ void light(Item *items, long i)
{
    light_item(items, i);
}

__global__ void walk(Item *items, long n)
{
    long i = item_index();
    if (i >= n)
        return;
    if (items[i].b > 0)
        heavy(items, i);
    else
        light(items, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    Item *items = host_zeros<Item>(n);
    make_latch_items(items, n);
    Item *d = to_device(items, n);
    LAUNCH_ITEMS(walk, n)(d, n);
    finish();
    to_host(items, d, n);
    print_latch_items(items, n);
    return 0;
}
