/* Worker pool (pool.c, cuda/pool.cu): an item's hash, the update of the
 * shared table, and the report. See twin.h. */
#ifndef TF_WORKLOAD_POOL_H
#define TF_WORKLOAD_POOL_H

#include "twin.h"

#define BUCKETS 64

/* Item i's hash: 16 rounds of a 64-bit mixer. */
TWIN uint64_t hash64(long i)
{
    uint64_t x = (uint64_t)i + 1;
    for (int r = 0; r < 16; r++) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 29;
    }
    return x;
}

/* Counts hash h in the table and adds it to the total (under a lock;
 * volatile, so that a GPU thread reads what the previous holder wrote). */
TWIN void tally_into(volatile uint64_t *table, volatile uint64_t *total, uint64_t h)
{
    table[h % BUCKETS] += 1;
    *total += h;
}

/* Prints a checksum of the table and the total. */
static inline void print_table(const uint64_t *table, uint64_t total)
{
    uint64_t check = 0;
    for (int b = 0; b < BUCKETS; b++)
        check += table[b] * (uint64_t)(b + 1);
    printf("%llu %llx\n", (unsigned long long)check, (unsigned long long)total);
}

#endif
