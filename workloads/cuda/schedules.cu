/* schedules N: the twin of ../omp_schedules.c, one GPU thread per item
 * (each OpenMP schedule there numbers its iterations as this grid does). */
#include "common.cuh"
#include "../schedules.h"

__global__ void fill(Item *items, long n)
{
    long i = item_index();
    if (i < n)
        fill_item(items, i);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    Item *items = host_zeros<Item>(n);
    make_items(items, n);
    Item *d = to_device(items, n);
    LAUNCH_ITEMS(fill, n)(d, n);
    finish();
    to_host(items, d, n);
    print_items(items, n);
    return 0;
}
