/* Vector add (vecadd.c, cuda/vecadd.cu): inputs and report. See twin.h. */
#ifndef TF_WORKLOAD_VECADD_H
#define TF_WORKLOAD_VECADD_H

#include "twin.h"

/* a[i] = i, b[i] = 2i. */
static inline void make_vectors(float *a, float *b, long n)
{
    for (long i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i);
    }
}

/* One GPU thread's work. */
TWIN void add_item(const float *a, const float *b, float *c, long i)
{
    c[i] = a[i] + b[i];
}

/* Prints the sum of v[0 .. n). */
static inline void print_sum(const float *v, long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += v[i];
    printf("%.1f\n", sum);
}

#endif
