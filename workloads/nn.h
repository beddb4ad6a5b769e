/* Nearest neighbour (omp_nn.c, cuda/nn.cu): records, the distance of one
 * record to the target, and the report. See twin.h. */
#ifndef TF_WORKLOAD_NN_H
#define TF_WORKLOAD_NN_H

#include <math.h>

#include "twin.h"

struct record {
    float lat, lng;
};

#define TARGET_LAT 30.0f
#define TARGET_LNG 90.0f

/* n records from a fixed seed. */
static inline void make_records(struct record *r, long n)
{
    uint64_t seed = 7;
    for (long i = 0; i < n; i++) {
        r[i].lat = lcg_float(&seed, -90.0f, 18000);
        r[i].lng = lcg_float(&seed, -180.0f, 36000);
    }
}

/* One GPU thread's work: the distance of *r to the target. */
TWIN float record_distance(const struct record *r)
{
    return sqrtf((r->lat - TARGET_LAT) * (r->lat - TARGET_LAT) +
                 (r->lng - TARGET_LNG) * (r->lng - TARGET_LNG));
}

/* Prints the nearest record. */
static inline void print_nearest(const struct record *r, const float *dist, long n)
{
    long best = 0;
    for (long i = 1; i < n; i++)
        if (dist[i] < dist[best])
            best = i;
    printf("nearest %ld: (%.2f, %.2f) at %.3f\n", best, r[best].lat, r[best].lng, dist[best]);
}

#endif
