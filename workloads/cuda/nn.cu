/* nn N: the twin of ../omp_nn.c (Rodinia's nn kernel): one GPU thread per
 * record. */
#include "common.cuh"
#include "../nn.h"

__global__ void distance(const struct record *records, float *dist, long n)
{
    long i = item_index();
    if (i < n)
        dist[i] = record_distance(&records[i]);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 4096);
    struct record *r = host_zeros<struct record>(n);
    float *dist = host_zeros<float>(n);
    make_records(r, n);
    struct record *dr = to_device(r, n);
    float *dd = device_zeros<float>(n);
    LAUNCH_ITEMS(distance, n)(dr, dd, n);
    finish();
    to_host(dist, dd, n);
    print_nearest(r, dist, n);
    return 0;
}
