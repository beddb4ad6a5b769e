/* Helpers of the CUDA twins: one GPU thread per item, running the same
 * TWIN function (../twin.h) as one unit of the C workload.
 *
 * LAUNCH(kernel, blocks, threads)(args...) launches a kernel; with
 * TF_HOST_STUB defined the twins compile with a host C++ compiler and run
 * their GPU threads one after another on the CPU (host_stub.h), which
 * checks them where no GPU is. */
#ifndef TF_CUDA_COMMON_CUH
#define TF_CUDA_COMMON_CUH

#ifdef TF_HOST_STUB
#include "host_stub.h"
#else
#include <cuda_runtime.h>
#define LAUNCH(kernel, blocks, threads) kernel<<<(blocks), (threads)>>>
#endif

#include "../twin.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* Threads per block (fewer when there are fewer items). */
#define BLOCK 128

/* This GPU thread's item. */
__device__ inline long item_index()
{
    return (long)blockIdx.x * blockDim.x + threadIdx.x;
}

/* Threads per block and blocks for n items: every warp full when n is a
 * multiple of 32. */
static inline unsigned block_size(long n)
{
    return n < BLOCK ? (unsigned)n : BLOCK;
}

static inline unsigned blocks_for(long n)
{
    return (unsigned)((n + block_size(n) - 1) / block_size(n));
}

/* LAUNCH for n items. */
#define LAUNCH_ITEMS(kernel, n) LAUNCH(kernel, blocks_for(n), block_size(n))

/* A host array of n T, zeroed. */
template <class T> T *host_zeros(long n)
{
    T *p = (T *)calloc(n > 0 ? n : 1, sizeof(T));
    if (!p) {
        perror("calloc");
        exit(1);
    }
    return p;
}

/* A device array of n T, zeroed. */
template <class T> T *device_zeros(long n)
{
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemset(d, 0, n * sizeof(T)));
    return d;
}

/* A device copy of host[0 .. n). */
template <class T> T *to_device(const T *host, long n)
{
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* Copies dev[0 .. n) back into host. */
template <class T> void to_host(T *host, const T *dev, long n)
{
    CHECK(cudaMemcpy(host, dev, n * sizeof(T), cudaMemcpyDeviceToHost));
}

/* Waits for the kernels launched so far; fails on any error. */
static inline void finish()
{
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

#endif
