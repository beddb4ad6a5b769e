/* glib_locks N: N threads (default 8) use GLib's locks, found in
 * libglib-2.0.so.0 at run time (dlopen: the workload builds without GLib's
 * headers; without GLib it exits with status 77). Thread i
 *   - takes `mutex` (GMutex, which GLib builds on futexes, not on pthread
 *     mutexes) and adds i to a sum (update_sum);
 *   - takes `rec` (GRecMutex) twice, nested, and counts;
 *   - takes `rw` (GRWLock) for writing and counts;
 *   - takes `tried` with g_mutex_trylock, retrying until it succeeds (a
 *     failed try takes nothing), and adds i to a second sum.
 * Prints the lock addresses (mutex=0x… rec=0x… rw=0x… tried=0x…) and the
 * results.
 *
 * Hand-derived, for the tf figures, with --unit call:worker (each thread a
 * unit): N acquisitions of `mutex`, `rw` and `tried`, 2N of `rec`; the
 * lanes of a warp hold `mutex` in turn, so update_sum runs one lane at a
 * time: SIMT efficiency 1/W.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* GLib's lock types: opaque unions of a pointer and two ints. */
typedef union {
    void *p;
    unsigned int i[2];
} GLock;

static void (*g_mutex_init)(GLock *), (*g_mutex_lock)(GLock *), (*g_mutex_unlock)(GLock *);
static int (*g_mutex_trylock)(GLock *);
static void (*g_rec_mutex_init)(GLock *), (*g_rec_mutex_lock)(GLock *),
    (*g_rec_mutex_unlock)(GLock *);
static void (*g_rw_lock_init)(GLock *), (*g_rw_lock_writer_lock)(GLock *),
    (*g_rw_lock_writer_unlock)(GLock *);

static GLock mutex, rec, rw, tried;
static long sum, nested, written, tried_sum;

__attribute__((noinline)) void update_sum(long i)
{
    sum += i;
}

static void *worker(void *arg)
{
    long i = (long)arg;
    g_mutex_lock(&mutex);
    update_sum(i);
    g_mutex_unlock(&mutex);
    g_rec_mutex_lock(&rec);
    g_rec_mutex_lock(&rec);
    nested += 1;
    g_rec_mutex_unlock(&rec);
    g_rec_mutex_unlock(&rec);
    g_rw_lock_writer_lock(&rw);
    written += 1;
    g_rw_lock_writer_unlock(&rw);
    while (!g_mutex_trylock(&tried))
        ;
    tried_sum += i;
    g_mutex_unlock(&tried);
    return NULL;
}

/* The GLib function `name`, or exit 77 (GLib missing). */
static void *glib(void *lib, const char *name)
{
    void *f = lib ? dlsym(lib, name) : NULL;
    if (f == NULL) {
        fprintf(stderr, "glib_locks: GLib's %s is missing\n", name);
        exit(77);
    }
    return f;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    void *lib = dlopen("libglib-2.0.so.0", RTLD_NOW);
    pthread_t t[256];
    if (n < 1 || n > 256)
        return 2;
    *(void **)&g_mutex_init = glib(lib, "g_mutex_init");
    *(void **)&g_mutex_lock = glib(lib, "g_mutex_lock");
    *(void **)&g_mutex_unlock = glib(lib, "g_mutex_unlock");
    *(void **)&g_mutex_trylock = glib(lib, "g_mutex_trylock");
    *(void **)&g_rec_mutex_init = glib(lib, "g_rec_mutex_init");
    *(void **)&g_rec_mutex_lock = glib(lib, "g_rec_mutex_lock");
    *(void **)&g_rec_mutex_unlock = glib(lib, "g_rec_mutex_unlock");
    *(void **)&g_rw_lock_init = glib(lib, "g_rw_lock_init");
    *(void **)&g_rw_lock_writer_lock = glib(lib, "g_rw_lock_writer_lock");
    *(void **)&g_rw_lock_writer_unlock = glib(lib, "g_rw_lock_writer_unlock");
    g_mutex_init(&mutex);
    g_mutex_init(&tried);
    g_rec_mutex_init(&rec);
    g_rw_lock_init(&rw);
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("mutex=%p rec=%p rw=%p tried=%p sum=%ld nested=%ld written=%ld tried_sum=%ld\n",
           (void *)&mutex, (void *)&rec, (void *)&rw, (void *)&tried, sum, nested, written,
           tried_sum);
    return 0;
}
