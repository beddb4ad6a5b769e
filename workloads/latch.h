/* The items of omp_latch.c and its CUDA twin cuda/latch.cu: the 24-byte
 * structs of schedules.h, item i marked light (b = -1) when i is a multiple
 * of 3 and heavy (b = 1) otherwise. See twin.h. */
#ifndef TF_WORKLOAD_LATCH_H
#define TF_WORKLOAD_LATCH_H

#include "schedules.h"

static inline void make_latch_items(Item *items, long n)
{
    for (long i = 0; i < n; i++) {
        items[i].a = 0;
        items[i].b = i % 3 == 0 ? -1 : 1;
        items[i].c = 0;
    }
}

/* What a heavy item's function does. */
TWIN void heavy_item(Item *items, long i)
{
    items[i].a = items[i].b * 2 + (double)i;
}

/* What a light item's function does. */
TWIN void light_item(Item *items, long i)
{
    items[i].a = (double)i;
}

/* What a run prints: the sum of every item's a. */
static inline void print_latch_items(const Item *items, long n)
{
    print_items(items, n);
}

#endif
