/* pool N: the twin of ../pool.c, one GPU thread per item: the hash, then
 * the table update under one global spin lock (threads of a warp take it
 * one after another, which independent thread scheduling, sm_70 and
 * later, allows). */
#include "common.cuh"
#include "../pool.h"

__device__ void lock(int *mutex)
{
    while (atomicCAS(mutex, 0, 1) != 0) {
    }
    __threadfence();
}

__device__ void unlock(int *mutex)
{
    __threadfence();
    atomicExch(mutex, 0);
}

__global__ void process_item(uint64_t *table, uint64_t *total, int *mutex, long n)
{
    long i = item_index();
    if (i < n) {
        uint64_t h = hash64(i);
        lock(mutex);
        tally_into(table, total, h);
        unlock(mutex);
    }
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    uint64_t *table = host_zeros<uint64_t>(BUCKETS), total;
    uint64_t *dtable = device_zeros<uint64_t>(BUCKETS), *dtotal = device_zeros<uint64_t>(1);
    int *dmutex = device_zeros<int>(1);
    LAUNCH_ITEMS(process_item, n)(dtable, dtotal, dmutex, n);
    finish();
    to_host(table, dtable, BUCKETS);
    to_host(&total, dtotal, 1);
    print_table(table, total);
    return 0;
}
