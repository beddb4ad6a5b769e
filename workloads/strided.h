/* Strided vector operation (omp_strided.c, cuda/strided.cu): inputs, the
 * item's work and report. See twin.h. */
#ifndef TF_WORKLOAD_STRIDED_H
#define TF_WORKLOAD_STRIDED_H

#include "twin.h"

/* Item i works on element STRIDE·i. */
#define STRIDE 5
#define ALPHA 3.0f

/* x and y, STRIDE·n floats each. */
static inline void make_strided(float *x, float *y, long n)
{
    for (long i = 0; i < STRIDE * n; i++) {
        x[i] = (float)(i % 7);
        y[i] = (float)(i % 3);
    }
}

/* One GPU thread's work: y[5i] = alpha·x[5i] + y[5i]. */
TWIN void saxpy_item(const float *x, float *y, long i)
{
    y[STRIDE * i] = ALPHA * x[STRIDE * i] + y[STRIDE * i];
}

#endif
