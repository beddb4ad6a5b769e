/* List walk (listwalk.c, cuda/listwalk.cu): the lists, one walk, and the
 * report. See twin.h. */
#ifndef TF_WORKLOAD_LISTWALK_H
#define TF_WORKLOAD_LISTWALK_H

#include "twin.h"

/* A node: 32 bytes, one sector when the pool is 32-byte aligned. */
struct node {
    struct node *next;
    long value;
    long pad[2];
};

/* Links n lists of len nodes in pool[0 .. n·len): node i is the head of
 * list i, the other nodes are the rest of the pool in an order shuffled
 * from a fixed seed. Pointers are written as if the pool were at `base`
 * (the pool itself on the CPU, its device copy for a GPU). */
static inline void make_lists(struct node *pool, struct node *base, long n, long len)
{
    long total = n * len;
    /* order[k]: the pool index of the (k / n + 1)-th node after the head of
     * list k % n, a permutation of the non-head nodes. */
    long *order = (long *)malloc((total - n + 1) * sizeof *order);
    for (long k = 0; k < total - n; k++)
        order[k] = n + k;
    uint64_t seed = 11;
    for (long k = total - n - 1; k > 0; k--) {
        long r = (long)(lcg_next(&seed) % (uint32_t)(k + 1));
        long tmp = order[k];
        order[k] = order[r];
        order[r] = tmp;
    }
    for (long i = 0; i < n; i++) {
        long p = i;
        pool[p].value = i;
        for (long s = 1; s < len; s++) {
            long q = order[(s - 1) * n + i];
            pool[q].value = i * s;
            pool[p].next = base + q;
            p = q;
        }
        pool[p].next = NULL;
    }
    free(order);
}

/* One GPU thread's work: the sum of the values along the list at p. */
TWIN long walk_list(const struct node *p)
{
    long sum = 0;
    for (; p; p = p->next)
        sum += p->value;
    return sum;
}

/* Prints a checksum of n sums. */
static inline void print_sums(const long *sums, long n)
{
    long x = 0;
    for (long i = 0; i < n; i++)
        x += sums[i];
    printf("%ld\n", x);
}

#endif
