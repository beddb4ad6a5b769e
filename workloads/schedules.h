/* One item of omp_schedules.c and its CUDA twin cuda/schedules.cu: a heap
 * array of 24-byte structs; item i reads items[i].b and writes items[i].a
 * (or items[i].c when b is not positive). See twin.h. */
#ifndef TF_WORKLOAD_SCHEDULES_H
#define TF_WORKLOAD_SCHEDULES_H

#include "twin.h"

typedef struct {
    double a, b, c;
} Item;

/* Every item has b = 1: every item takes the same path. */
static inline void make_items(Item *items, long n)
{
    for (long i = 0; i < n; i++) {
        items[i].a = 0;
        items[i].b = 1;
        items[i].c = 0;
    }
}

/* What a run prints: the sum of every item's a. */
static inline void print_items(const Item *items, long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += items[i].a;
    printf("%.0f\n", sum);
}

/* One GPU thread's work. */
TWIN void fill_item(Item *items, long i)
{
    Item *it = &items[i];
    if (it->b > 0)
        it->a = it->b * 2 + (double)i;
    else
        it->c = (double)i;
}

#endif
