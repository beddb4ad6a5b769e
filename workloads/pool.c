/* pool N T: a lock-heavy worker pool. T workers (default 8) take items
 * from a shared queue (a counter under a mutex) until N items (default
 * 1024) are done. For item i, process_item(i) hashes it (hash_item: 16
 * rounds of a 64-bit mixer) and then, under one global table mutex, counts
 * the hash in a 64-bucket table on the heap and adds it to a total
 * (tally). One unit = one item, however the queue handed items out:
 *
 *     tf analyze TRACE --unit call:process_item --warp 8,16,32
 *
 * The item's work is hash64() and tally_into() of pool.h; the CUDA twin
 * (cuda/pool.cu) takes a spin lock where this takes the mutex.
 *
 * Which worker gets which item depends on scheduling, so the units in a
 * warp are not consecutive items and may come from any threads; the figures
 * below hold for any such order (N is a multiple of W, so every warp is
 * full).
 *
 * Expected at width W, at every -O level:
 *   hash_item()  SIMT efficiency 100%: straight-line rounds, fixed count.
 *   tally()      SIMT efficiency 1/W = 12.5%, 6.25%, 3.125%: every lane of
 *                a warp takes the same mutex, so tally() runs for one lane
 *                at a time.
 *                heap 1: one active lane per request, and the 8-byte
 *                counter it updates (read and write) lies in one sector.
 *                stack 1 (one lane per request).
 *                stack interleaved 2: one lane's 8-byte operand is two
 *                words, which GPU local memory puts W words apart: two
 *                sectors. All of tally()'s stack operands are 8 bytes (the
 *                frame pointer, the spill of h at -O0, ret).
 * process_item() itself runs partly serialized (the instructions between
 * the lock and the unlock), partly not: not derived here.
 */
#include "items.h"
#include "pool.h"

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static long next_item, n_items;
static uint64_t *table;
static uint64_t total;

__attribute__((noipa)) uint64_t hash_item(long i)
{
    return hash64(i);
}

__attribute__((noipa)) void tally(uint64_t h)
{
    tally_into(table, &total, h);
}

__attribute__((noipa)) void process_item(long i)
{
    uint64_t h = hash_item(i);
    pthread_mutex_lock(&table_lock);
    tally(h);
    pthread_mutex_unlock(&table_lock);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        long i = next_item++;
        pthread_mutex_unlock(&queue_lock);
        if (i >= n_items)
            return NULL;
        process_item(i);
    }
}

int main(int argc, char **argv)
{
    n_items = arg_long(argc, argv, 1, 1024);
    long t = arg_long(argc, argv, 2, 8);
    table = alloc128(BUCKETS * sizeof *table);
    pthread_t *threads = malloc(t * sizeof *threads);
    for (long j = 0; j < t; j++)
        pthread_create(&threads[j], NULL, worker, NULL);
    for (long j = 0; j < t; j++)
        pthread_join(threads[j], NULL);
    print_table(table, total);
    free(threads);
    return 0;
}
