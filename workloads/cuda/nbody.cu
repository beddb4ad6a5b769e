/* nbody N: the twin of ../nbody.c, one GPU thread per body. */
#include "common.cuh"
#include "../nbody.h"

__global__ void accelerate(const struct body *bodies, struct body *accel, long n)
{
    long i = item_index();
    if (i < n)
        accumulate(bodies[i], bodies, n, &accel[i]);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 1024);
    struct body *b = host_zeros<struct body>(n), *a = host_zeros<struct body>(n);
    make_bodies(b, n);
    struct body *db = to_device(b, n), *da = device_zeros<struct body>(n);
    LAUNCH_ITEMS(accelerate, n)(db, da, n);
    finish();
    to_host(a, da, n);
    print_accelerations(a, n);
    return 0;
}
