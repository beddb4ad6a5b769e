/* Shared by the C workloads and their CUDA twins (the .cu files in cuda/): what one GPU
 * thread does for one item is written once, in a workload's header
 * (md5.h, nbody.h, ...), as a TWIN function that the C kernel and the CUDA
 * kernel both call; inputs come from the same generators, seeded alike.
 * Valid C (the workloads) and C++ (the twins, nvcc).
 *
 *   TWIN        a function of a kernel's body: inlined into the C kernel at
 *               every -O level (always_inline, so that the kernel's own
 *               instructions are the whole item's work), a device function
 *               under nvcc.
 *   TWIN_TABLE  a constant table read by a kernel: static const in C,
 *               __constant__ memory under nvcc.
 */
#ifndef TF_WORKLOAD_TWIN_H
#define TF_WORKLOAD_TWIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __CUDACC__
#define TWIN __device__ __forceinline__
#define TWIN_TABLE __constant__ const
#else
#define TWIN static inline __attribute__((always_inline))
#define TWIN_TABLE static const
#endif

/* A 64-bit linear congruential generator (Knuth's MMIX constants): the same
 * seed always gives the same sequence. Returns the high 32 bits. */
static inline uint32_t lcg_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 32);
}

/* A float in [lo, lo + steps/100) in steps of 0.01, from the generator. */
static inline float lcg_float(uint64_t *state, float lo, uint32_t steps)
{
    return lo + (float)(lcg_next(state) % steps) / 100.0f;
}

/* argv[k] as a positive long, or def when absent. */
static inline long arg_long(int argc, char **argv, int k, long def)
{
    if (argc <= k)
        return def;
    long v = atol(argv[k]);
    if (v <= 0) {
        fprintf(stderr, "%s: argument %d must be a positive number\n", argv[0], k);
        exit(2);
    }
    return v;
}

#endif
