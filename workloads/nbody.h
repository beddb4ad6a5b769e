/* N-body (nbody.c, cuda/nbody.cu): bodies, the forces on one body, and the
 * report. See twin.h. */
#ifndef TF_WORKLOAD_NBODY_H
#define TF_WORKLOAD_NBODY_H

#include <math.h>

#include "twin.h"

#define SOFTENING 0.01f

/* A body: position and mass (an acceleration uses x, y, z). */
struct body {
    float x, y, z, m;
};

/* n bodies from a fixed seed. */
static inline void make_bodies(struct body *b, long n)
{
    uint64_t seed = 42;
    for (long i = 0; i < n; i++) {
        b[i].x = lcg_float(&seed, -10.0f, 2000);
        b[i].y = lcg_float(&seed, -10.0f, 2000);
        b[i].z = lcg_float(&seed, -10.0f, 2000);
        b[i].m = lcg_float(&seed, 1.0f, 100);
    }
}

/* One GPU thread's work after reading its own body `me`: the acceleration
 * that all n bodies exert on it (softened, so that `me` itself adds
 * nothing and no pair needs a branch), written to *out. */
TWIN void accumulate(struct body me, const struct body *bodies, long n, struct body *out)
{
    float ax = 0, ay = 0, az = 0;
    for (long j = 0; j < n; j++) {
        float dx = bodies[j].x - me.x;
        float dy = bodies[j].y - me.y;
        float dz = bodies[j].z - me.z;
        float d2 = dx * dx + dy * dy + dz * dz + SOFTENING;
        float inv = 1.0f / sqrtf(d2);
        float s = bodies[j].m * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    out->x = ax;
    out->y = ay;
    out->z = az;
    out->m = 0.0f;
}

/* Prints a checksum of the accelerations. */
static inline void print_accelerations(const struct body *a, long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += fabs(a[i].x) + fabs(a[i].y) + fabs(a[i].z);
    printf("%.3f\n", sum);
}

#endif
