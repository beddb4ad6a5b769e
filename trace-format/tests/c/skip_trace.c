/* The shared tracer header (include/tf_tracer.h) on a scripted thread: main
 * calls pthread_mutex_lock (which calls an inner function), a critical
 * section, pthread_mutex_unlock, a pthread_mutex_trylock that fails (returns
 * 16), GOMP_barrier (whose inner function runs a task of the program's
 * through a pointer while the thread waits), calls foo for the first time
 * through the dynamic linker's lazy binding, and returns. Roles come from the runtime table by the names a symbol
 * table would give; the skip state machine decides what is traced and emits
 * the lock and skip events; tests/tracer_header.rs reads the trace back.
 * Also checks the name matching rules. Usage: skip_trace DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_tracer.h"

static int sink(void *ctx, const uint8_t *chunk, size_t len)
{
    return fwrite(chunk, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "skip_trace: %s\n", what);
        exit(1);
    }
}

/* address, instruction count, end */
static const struct {
    uint64_t addr;
    uint32_t n;
    unsigned end;
} shapes[] = {
    {0x1000, 2, TF_END_CALL},   /* 0 main: call pthread_mutex_lock */
    {0x2000, 3, TF_END_CALL},   /* 1 pthread_mutex_lock: call inner */
    {0x2100, 2, TF_END_RETURN}, /* 2 inner */
    {0x2003, 1, TF_END_RETURN}, /* 3 pthread_mutex_lock returns 0 */
    {0x1002, 2, TF_END_CALL},   /* 4 critical section: call unlock */
    {0x3000, 4, TF_END_RETURN}, /* 5 pthread_mutex_unlock */
    {0x1004, 1, TF_END_CALL},   /* 6 call pthread_mutex_trylock */
    {0x2200, 2, TF_END_RETURN}, /* 7 pthread_mutex_trylock returns 16 */
    {0x1005, 1, TF_END_CALL},   /* 8 main: call GOMP_barrier */
    {0x4000, 2, TF_END_CALL},   /* 9 GOMP_barrier: call its inner function */
    {0x4100, 3, TF_END_INDIRECT_CALL}, /* 10 inner: run a task */
    {0x1100, 4, TF_END_RETURN}, /* 11 the task, the program's */
    {0x4103, 2, TF_END_RETURN}, /* 12 inner, where the task returns */
    {0x4002, 1, TF_END_RETURN}, /* 13 GOMP_barrier returns */
    {0x1006, 1, TF_END_RETURN}, /* 14 main returns */
    {0x1007, 1, TF_END_CALL},   /* 15 main: the first call of foo, through the PLT */
    {0x6000, 2, TF_END_INDIRECT_JUMP}, /* 16 PLT0: on to the dynamic linker */
    {0x9000, 5, TF_END_CALL},   /* 17 _dl_runtime_resolve_xsavec: call _dl_fixup */
    {0x9100, 6, TF_END_CALL},   /* 18 _dl_fixup: call do_lookup_x */
    {0x9200, 7, TF_END_RETURN}, /* 19 do_lookup_x */
    {0x9106, 2, TF_END_RETURN}, /* 20 _dl_fixup returns foo's address */
    {0x9005, 3, TF_END_INDIRECT_JUMP}, /* 21 the trampoline jumps on to foo */
    {0x1200, 4, TF_END_RETURN}, /* 22 foo returns to main */
};
#define N (sizeof shapes / sizeof shapes[0])
static tf_block_info infos[N];

static const tf_block_info *info_fn(void *ctx, uint32_t id)
{
    (void)ctx;
    return &infos[id];
}

static uint32_t at_fn(void *ctx, uint64_t a)
{
    uint32_t i;
    (void)ctx;
    for (i = 0; i < N; i++)
        if (shapes[i].addr == a)
            return i;
    return TF_NO_BLOCK;
}

int main(int argc, char **argv)
{
    static uint8_t tbuf[1 << 16], code[16], lens[16];
    static uint64_t mem[1 << 18];
    char path[4096], name[32];
    uint8_t hdr[TF_FILE_HEADER_SIZE];
    tf_stream table;
    tf_encoder e;
    tf_skipper s;
    tf_enc_params p = {TF_SUCC_BITS, TF_ADDR_BITS, TF_RET_DEPTH, 4096, 4};
    const tf_function_role *lock, *unlock, *trylock, *barrier, *bind;
    tf_wait_call c = {0, 0, 0, 0, {0}};
    uint64_t none[1] = {0};
    FILE *bf, *tf;
    uint32_t i;

    check(argc == 2, "usage: skip_trace DIR");
    check(tf_pattern_matches("ns::Class::method", "_ZN2ns5Class6methodEi"), "C++ name");
    check(tf_pattern_matches("foo", "foo@@GLIBC_2.2.5"), "versioned name");
    check(!tf_pattern_matches("fo", "foo"), "prefix is not a match");
    check(tf_runtime_lookup("__pthread_mutex_unlock@GLIBC_2.2.5") != 0, "runtime alias");
    check(tf_runtime_lookup("pthread_mutex_lockx") == 0, "longer name");
    tf_thread_file_name(name, 12);
    check(strcmp(name, "thread-12.tfc") == 0, "thread file name");
    lock = &tf_runtime_lookup("pthread_mutex_lock")->role;
    unlock = &tf_runtime_lookup("__pthread_mutex_unlock")->role;
    trylock = &tf_runtime_lookup("pthread_mutex_trylock")->role;
    barrier = &tf_runtime_lookup("GOMP_barrier")->role;
    bind = &tf_runtime_lookup("_dl_runtime_resolve_xsavec")->role;
    check(bind->role == TF_ROLE_BIND && tf_runtime_lookup("_dl_runtime_resolve_fxsave") &&
              tf_runtime_lookup("_dl_runtime_profile_avx512") == 0,
          "lazy binding's trampolines, not LD_AUDIT's");
    check(tf_is_omp_runtime("/usr/lib/x86_64-linux-gnu/libgomp.so.1") &&
              tf_is_omp_runtime("libomp.so.5") && !tf_is_omp_runtime("/usr/lib/libc.so.6"),
          "OpenMP runtime modules");

    snprintf(path, sizeof path, "%s/" TF_FILE_BLOCKS, argv[1]);
    bf = fopen(path, "wb");
    check(bf != 0, "cannot create blocks.tfc");
    tf_file_header(hdr, TF_KIND_BLOCKS, 0, 0, 0, 0);
    fwrite(hdr, 1, sizeof hdr, bf);
    tf_stream_init(&table, tbuf, sizeof tbuf, 4096, sink, bf);
    memset(code, 0x90, sizeof code);
    memset(lens, 1, sizeof lens);
    for (i = 0; i < N; i++) {
        tf_block_rec r = {i, shapes[i].addr, 0, shapes[i].end, code, shapes[i].n,
                          shapes[i].n, lens, 0, 0};
        infos[i].address = shapes[i].addr;
        infos[i].code_len = infos[i].n_insns = shapes[i].n;
        infos[i].end = shapes[i].end;
        check(tf_table_block(&table, &r) == 0, "block record");
    }
    check(tf_stream_close(&table) == 0, "block table");
    fclose(bf);

    snprintf(path, sizeof path, "%s/%s", argv[1], "thread-1.tfc");
    tf = fopen(path, "wb");
    check(tf != 0 && tf_enc_mem_size(&p) <= sizeof mem, "thread file");
    check(tf_enc_init(&e, &p, mem, info_fn, at_fn, sink, tf) == 0, "encoder");
    tf_enc_file_header(&e, 1, hdr);
    fwrite(hdr, 1, sizeof hdr, tf);
    tf_skip_init(&s, &e, 0);
    tf_enc_thread_start(&e, 0, 0x7000, 0x8000, 0);

    /* block id, role, lock argument, RAX at a return, in the OpenMP runtime */
    {
        const struct {
            uint32_t id;
            const tf_function_role *role;
            uint64_t lock, rax;
            int runtime;
        } script[] = {{0, 0, 0, 0, 0},  {1, lock, 0x5000, 0, 0},     {2, 0, 0, 0, 0},
                      {3, 0, 0, 0, 0},  {4, 0, 0, 0, 0},             {5, unlock, 0x5000, 0, 0},
                      {6, 0, 0, 0, 0},  {7, trylock, 0x5000, 16, 0}, {8, 0, 0, 0, 0},
                      {9, barrier, 0, 0, 1}, {10, 0, 0, 0, 1},       {11, 0, 0, 0, 0},
                      {12, 0, 0, 0, 1}, {13, 0, 0, 0, 1},            {15, 0, 0, 0, 0},
                      {16, 0, 0, 0, 0}, {17, bind, 0, 0, 0},         {18, 0, 0, 0, 0},
                      {19, 0, 0, 0, 0}, {20, 0, 0, 0, 0},            {21, 0, 0, 0, 0},
                      {22, 0, 0, 0, 0}, {14, 0, 0, 0, 0}};
        for (i = 0; i < sizeof script / sizeof script[0]; i++) {
            uint32_t id = script[i].id;
            if (tf_wait_call_before(&s, &c, script[i].runtime))
                check(tf_enc_exec(&e, c.id, none) == 0, "exec of the kept call");
            if (tf_skip_enter(&s, script[i].role, script[i].lock))
                check(tf_enc_exec(&e, id, none) == 0, "exec");
            tf_skip_ran(&s, shapes[id].n, 1, shapes[id].end, shapes[id].end == TF_END_RETURN,
                        script[i].rax);
            tf_wait_call_after(&s, &c, id, shapes[id].end, script[i].runtime, 1, shapes[id].n, 0,
                               none);
        }
    }
    check(tf_skip_end(&s, TF_EXIT_ENDED) == 0, "end");
    fclose(tf);
    printf("traced %llu skipped %llu\n", (unsigned long long)s.traced,
           (unsigned long long)s.skipped);
    return 0;
}
