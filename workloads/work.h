/* work(i): the same fixed-length loop of WORK rounds for every i (the
 * workload defines WORK before it includes this file), never inlined: a
 * piece of work whose lanes run in step whatever their i, at 100% SIMT
 * efficiency, for workloads that set it beside code that serializes. */
#ifndef TF_WORKLOAD_WORK_H
#define TF_WORKLOAD_WORK_H

__attribute__((noinline)) long work(long i)
{
    long v = 0;
    for (long k = 0; k < WORK; k++)
        v += k ^ i;
    return v;
}

#endif
