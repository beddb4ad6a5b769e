/* remap_libraries LIB_A LIB_B: a program that unloads a library and loads
 * another, which the dynamic linker maps at the same addresses. It loads
 * LIB_A, calls its compute() on four threads (n = 1..4), unloads it, then
 * does the same with LIB_B. Prints where each compute() was and the eight
 * results. The libraries' sources are remap/a.c and remap/b.c (built with
 * gcc -shared -fPIC by tests/remapped_libraries.rs). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef int (*compute_fn)(int);

static compute_fn compute;
static int results[8];

__attribute__((noinline)) static void *worker(void *arg)
{
    int *out = arg;
    *out = compute((int)(out - results) % 4 + 1);
    return NULL;
}

/* Loads `path`, runs its compute() on four threads writing out[0..4), and
 * unloads it; 0, or -1 when it does not load. */
static int phase(const char *path, int *out)
{
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib || !(compute = (compute_fn)dlsym(lib, "compute"))) {
        fprintf(stderr, "%s\n", dlerror());
        return -1;
    }
    printf("compute=%p\n", (void *)compute);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, &out[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    dlclose(lib);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: remap_libraries LIB_A LIB_B\n");
        return 2;
    }
    if (phase(argv[1], &results[0]) || phase(argv[2], &results[4]))
        return 1;
    for (int i = 0; i < 8; i++)
        printf("%d%c", results[i], i == 7 ? '\n' : ' ');
    return 0;
}
