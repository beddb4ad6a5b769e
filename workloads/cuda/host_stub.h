/* Just enough of CUDA for the twins to compile with a host C++ compiler
 * and run on the CPU, one GPU thread after another (common.cuh, with
 * TF_HOST_STUB): `make -C workloads/cuda host-check`. It checks that the
 * twins build and compute what the C workloads compute where there is no
 * nvcc; it models nothing of a GPU (no concurrency: an atomic is a plain
 * read-modify-write, a lock is always free). */
#ifndef TF_CUDA_HOST_STUB_H
#define TF_CUDA_HOST_STUB_H

#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))

struct tf_dim3 {
    unsigned x, y, z;
};
static tf_dim3 threadIdx, blockIdx, blockDim, gridDim;

typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost };

static inline const char *cudaGetErrorString(cudaError_t)
{
    return "host stub error";
}
template <class T> cudaError_t cudaMalloc(T **p, size_t bytes)
{
    void *v;
    if (posix_memalign(&v, 256, bytes ? bytes : 1) != 0)
        return 1;
    *p = (T *)v;
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind)
{
    memcpy(dst, src, bytes);
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *dst, int v, size_t bytes)
{
    memset(dst, v, bytes);
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize()
{
    return cudaSuccess;
}
static inline cudaError_t cudaGetLastError()
{
    return cudaSuccess;
}
template <class T> T atomicCAS(T *a, T compare, T value)
{
    T old = *a;
    if (old == compare)
        *a = value;
    return old;
}
template <class T> T atomicExch(T *a, T value)
{
    T old = *a;
    *a = value;
    return old;
}
static inline void __threadfence() {}

/* A launch: every thread of every block, in order. */
template <class K> struct tf_launch {
    unsigned blocks, threads;
    K kernel;
    template <class... A> void operator()(A... args) const
    {
        gridDim.x = blocks;
        blockDim.x = threads;
        for (unsigned b = 0; b < blocks; b++)
            for (unsigned t = 0; t < threads; t++) {
                blockIdx.x = b;
                threadIdx.x = t;
                kernel(args...);
            }
    }
};
template <class K> tf_launch<K> tf_make_launch(unsigned blocks, unsigned threads, K kernel)
{
    return tf_launch<K>{blocks, threads, kernel};
}
#define LAUNCH(kernel, blocks, threads) tf_make_launch((blocks), (threads), kernel)

#endif
