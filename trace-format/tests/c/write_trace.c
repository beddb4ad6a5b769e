/*
 * Writes a trace with tf_trace.h, for the C-header <-> Rust-reader test
 * (tests/c_header.rs). Usage: write_trace DIR [tiny]
 *
 * DIR/blocks.tfc and DIR/thread-<tid>.tfc are written with the header's
 * encoder; DIR/ops.txt logs every definition and every call made to the
 * encoder, one per line, so that the Rust side can check what it decodes
 * and feed the same calls to its own writer:
 *
 *   table TARGET
 *   module ID BASE SIZE PATHHEX BUILDIDHEX
 *   function ID ENTRY MODULE NAMEHEX
 *   block ID ADDRESS FUNCTION END CODEHEX LENGTHSHEX OPS   (OPS: insn:flags:size,... or -)
 *   thread TID ADDR_BITS SUCC_BITS RET_DEPTH TARGET
 *   x TID ID ADDR...                complete execution (0 = absent operand)
 *   p TID ID N_INSNS N_OPS ADDR...  partial execution
 *   ev TID TYPE FIELD...            event with varint fields
 *   raw TID TYPE PAYLOADHEX         event with a raw payload
 *   flush TID
 *
 * All numbers are hexadecimal without prefix. The records come from a fixed
 * part (hand-picked cases) and a seeded pseudo-random walk over a generated
 * control-flow graph with calls, returns, strided and offset addresses,
 * conditional operands, partial executions, events and flushes.
 *
 * "tiny" writes a thread whose encoder has max_ops = 0 (no block has memory
 * operands) and events with the largest payloads, near chunk boundaries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_trace.h"

#define N_BLOCKS 64
#define MAX_OPS_PER_BLOCK 5

static FILE *ops_log;

static int sink(void *ctx, const uint8_t *chunk, size_t len)
{
    return fwrite(chunk, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

static void die(const char *what)
{
    fprintf(stderr, "write_trace: %s\n", what);
    exit(1);
}

static void hex(const uint8_t *p, size_t n)
{
    size_t i;
    if (n == 0)
        fputc('-', ops_log);
    for (i = 0; i < n; i++)
        fprintf(ops_log, "%02x", p[i]);
}

/* ---- the blocks ---- */

#include "write_trace_blocks.h"

/* ---- threads ---- */

typedef struct thr {
    uint64_t tid;
    tf_encoder e;
    FILE *f;
    void *mem;
    uint64_t iter[N_BLOCKS];
    uint32_t cur;
    uint64_t shadow[256];
    int depth;
} thr;

static void thread_open(thr *t, const char *dir, uint64_t tid, unsigned ab, unsigned sb, unsigned rd,
                        size_t target, uint32_t max_ops)
{
    char path[4096];
    uint8_t hdr[TF_FILE_HEADER_SIZE];
    tf_enc_params p;
    memset(t, 0, sizeof *t);
    t->tid = tid;
    p.addr_table_bits = ab;
    p.succ_table_bits = sb;
    p.ret_stack_depth = rd;
    p.chunk_target = target;
    p.max_ops = max_ops;
    snprintf(path, sizeof path, "%s/thread-%llu.tfc", dir, (unsigned long long)tid);
    t->f = fopen(path, "wb");
    if (!t->f)
        die("cannot create a thread file");
    t->mem = aligned_alloc(8, (tf_enc_mem_size(&p) + 7) & ~(size_t)7);
    if (!t->mem || tf_enc_init(&t->e, &p, t->mem, info_fn, block_at_fn, sink, t->f))
        die("tf_enc_init failed");
    tf_enc_file_header(&t->e, tid, hdr);
    fwrite(hdr, 1, sizeof hdr, t->f);
    fprintf(ops_log, "thread %llx %x %x %x %llx\n", (unsigned long long)tid, ab, sb, rd,
            (unsigned long long)target);
}

static void check(int r)
{
    if (r)
        die("encoder call failed");
}

static void x(thr *t, uint32_t id, const uint64_t *a)
{
    uint32_t j;
    fprintf(ops_log, "x %llx %x", (unsigned long long)t->tid, id);
    for (j = 0; j < blocks[id].info.n_ops; j++)
        fprintf(ops_log, " %llx", (unsigned long long)a[j]);
    fputc('\n', ops_log);
    check(tf_enc_exec(&t->e, id, a));
}

static void px(thr *t, uint32_t id, uint32_t n_insns, uint32_t n_ops, const uint64_t *a)
{
    uint32_t j;
    fprintf(ops_log, "p %llx %x %x %x", (unsigned long long)t->tid, id, n_insns, n_ops);
    for (j = 0; j < n_ops; j++)
        fprintf(ops_log, " %llx", (unsigned long long)a[j]);
    fputc('\n', ops_log);
    check(tf_enc_exec_partial(&t->e, id, n_insns, n_ops, a));
}

static void ev(thr *t, unsigned type, int n, uint64_t f0, uint64_t f1, uint64_t f2, uint64_t f3)
{
    uint64_t f[4];
    int i;
    f[0] = f0, f[1] = f1, f[2] = f2, f[3] = f3;
    fprintf(ops_log, "ev %llx %x", (unsigned long long)t->tid, type);
    for (i = 0; i < n; i++)
        fprintf(ops_log, " %llx", (unsigned long long)f[i]);
    fputc('\n', ops_log);
    switch (type) {
    case TF_EV_THREAD_START: check(tf_enc_thread_start(&t->e, f0, f1, f2, f3)); break;
    case TF_EV_THREAD_EXIT: check(tf_enc_thread_exit(&t->e, (unsigned)f0)); break;
    case TF_EV_LOCK_ACQUIRE: check(tf_enc_lock_acquire(&t->e, (unsigned)f0, f1)); break;
    case TF_EV_LOCK_RELEASE: check(tf_enc_lock_release(&t->e, (unsigned)f0, f1)); break;
    case TF_EV_SKIP: check(tf_enc_skip(&t->e, (unsigned)f0, f1)); break;
    case TF_EV_SYSCALL: check(tf_enc_syscall(&t->e, f0, f1)); break;
    case TF_EV_SIGNAL: check(tf_enc_signal(&t->e, f0)); break;
    case TF_EV_SIGNAL_RETURN: check(tf_enc_signal_return(&t->e, f0)); break;
    case TF_EV_MARKER: check(tf_enc_marker(&t->e, f0, f1)); break;
    default: die("bad event type");
    }
}

static void loop_chunk(thr *t, uint64_t loop, uint64_t first, uint64_t count, uint64_t stride,
                       uint64_t trip)
{
    fprintf(ops_log, "ev %llx %x %llx %llx %llx %llx %llx\n", (unsigned long long)t->tid,
            TF_EV_LOOP_CHUNK, (unsigned long long)loop, (unsigned long long)first,
            (unsigned long long)count, (unsigned long long)stride, (unsigned long long)trip);
    check(tf_enc_loop_chunk(&t->e, loop, first, count, stride, trip));
}

static void static_loop(thr *t, uint64_t loop, uint64_t thread, uint64_t threads)
{
    fprintf(ops_log, "ev %llx %x %llx %llx %llx\n", (unsigned long long)t->tid, TF_EV_STATIC_LOOP,
            (unsigned long long)loop, (unsigned long long)thread, (unsigned long long)threads);
    check(tf_enc_static_loop(&t->e, loop, thread, threads));
}

static void region_entry(thr *t, uint64_t sp)
{
    fprintf(ops_log, "ev %llx %x %llx\n", (unsigned long long)t->tid, TF_EV_REGION_ENTRY,
            (unsigned long long)sp);
    check(tf_enc_region_entry(&t->e, sp));
}

static void raw(thr *t, unsigned type, const uint8_t *p, size_t n)
{
    fprintf(ops_log, "raw %llx %x ", (unsigned long long)t->tid, type);
    hex(p, n);
    fputc('\n', ops_log);
    check(tf_enc_event(&t->e, type, p, n));
}

static void flush(thr *t)
{
    fprintf(ops_log, "flush %llx\n", (unsigned long long)t->tid);
    check(tf_enc_flush(&t->e));
}

static void thread_close(thr *t)
{
    flush(t);
    fclose(t->f);
    free(t->mem);
}

#include "write_trace_walk.h"

static void fixed_part(thr *t)
{
    /* blocks 0..5 are hand-made, see main */
    uint64_t a[MAX_OPS_PER_BLOCK];
    int i;
    ev(t, TF_EV_THREAD_START, 4, 0, 0x7ff000000000ull, 0x7ff000800000ull, 0x401000);
    for (i = 0; i < 20; i++) { /* self loop with a stride: runs */
        a[0] = 0x601000 + 8 * (uint64_t)i;
        a[1] = 0x601000 + 8 * (uint64_t)i + 0x40;
        x(t, 0, a);
    }
    x(t, 1, a); /* call: pushes 0x...; block 2 is at the return site */
    x(t, 3, a); /* the callee returns */
    x(t, 2, a);
    x(t, 1, a);
    x(t, 3, a);
    x(t, 2, a);
    a[0] = TF_ABSENT;
    a[1] = 0x7000;
    x(t, 4, a); /* conditional operand 0 absent */
    a[0] = 0x9000;
    x(t, 4, a);
    a[0] = 0x5000;
    px(t, 4, 1, 1, a);
    ev(t, TF_EV_LOCK_ACQUIRE, 2, TF_LOCK_MUTEX, 0x601040, 0, 0);
    ev(t, TF_EV_LOCK_RELEASE, 2, TF_LOCK_MUTEX, 0x601040, 0, 0);
    ev(t, TF_EV_SKIP, 2, TF_SKIP_LOCK_RUNTIME, 120, 0, 0);
    ev(t, TF_EV_MARKER, 2, ~0ull, ~0ull, 0, 0);
    raw(t, 77, (const uint8_t *)"hello", 5);
    a[0] = ~0ull - 7; /* far from every prediction */
    a[1] = 8;
    x(t, 5, a);
    x(t, 5, a);
    flush(t);
    x(t, 5, a);
}


int main(int argc, char **argv)
{
    static uint8_t tbuf[TF_CHUNK_HEADER_SIZE + 512 + 4096];
    char path[4096];
    uint8_t hdr[TF_FILE_HEADER_SIZE];
    FILE *bf;
    thr *t;
    int i, tiny = argc > 2 && strcmp(argv[2], "tiny") == 0;
    static const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef};
    if (argc < 2)
        die("usage: write_trace DIR [tiny]");
    refuse_invalid_blocks();
    snprintf(path, sizeof path, "%s/ops.txt", argv[1]);
    ops_log = fopen(path, "w");
    snprintf(path, sizeof path, "%s/blocks.tfc", argv[1]);
    bf = fopen(path, "wb");
    if (!ops_log || !bf)
        die("cannot create files");
    tf_file_header(hdr, TF_KIND_BLOCKS, 0, 0, 0, 0);
    fwrite(hdr, 1, sizeof hdr, bf);
    tf_stream_init(&table, tbuf, sizeof tbuf, 512, sink, bf);
    fprintf(ops_log, "table 200\n");
    check(tf_table_module(&table, 1, 0x400000, 0x2000, "/bin/prog", 9, build_id, 4));
    fprintf(ops_log, "module 1 400000 2000 2f62696e2f70726f67 deadbeef\n");
    check(tf_table_function(&table, 1, 0x401000, 1, "main", 4));
    fprintf(ops_log, "function 1 401000 1 6d61696e\n");
    check(tf_table_function(&table, 2, 0x402000, 0, "", 0));
    fprintf(ops_log, "function 2 402000 0 -\n");

    if (tiny) {
        /* No memory operands anywhere: max_ops = 0. */
        for (i = 0; i < 8; i++)
            define_block(0x401000 + 0x20 * (uint64_t)i, 1, i % 2 ? TF_END_JUMP : TF_END_BRANCH, 2, 0, 0);
        check(tf_stream_close(&table));
        t = calloc(1, sizeof *t);
        thread_open(t, argv[1], 1, 14, 12, 64, 64, 0);
        for (i = 0; i < 400; i++) {
            uint64_t none[1] = {0};
            x(t, (uint32_t)(i * 5 % 8), none);
            if (i % 7 == 0)
                ev(t, TF_EV_THREAD_START, 4, ~0ull, ~0ull, ~0ull, ~0ull);
        }
        thread_close(t);
        fclose(bf);
        fclose(ops_log);
        return 0;
    }

    /* Hand-made blocks 0..5. */
    {
        define_block(0x401000, 1, TF_END_BRANCH, 2, 2, 1); /* 0: loop body */
        define_block(0x401100, 1, TF_END_CALL, 3, 0, 0); /* 1: a call */
        define_block(blocks[1].info.address + blocks[1].info.code_len, 1, TF_END_JUMP, 1, 0, 0); /* 2: its return site */
        define_block(0x402000, 2, TF_END_RETURN, 2, 0, 0); /* 3: callee */
        force_flags0 = TF_OP_COND;
        define_block(0x401200, 1, TF_END_BRANCH, 2, 2, 1); /* 4: operand 0 conditional */
        force_flags0 = -1;
        define_block(0x401300, 1, TF_END_OTHER, 1, 2, 1); /* 5 */
    }
    /* Block 0 and 4 need two operands with a known shape; 4's first is conditional. */
    if (blocks[0].info.n_ops != 2 || blocks[4].info.n_ops != 2 || blocks[5].info.n_ops != 2)
        die("hand-made blocks");
    /* Generated blocks: call blocks are followed by their return-site block. */
    while (n_blocks < N_BLOCKS - 1) {
        static const unsigned ends[] = {TF_END_FALLTHROUGH, TF_END_JUMP, TF_END_BRANCH, TF_END_BRANCH,
                                        TF_END_INDIRECT_JUMP, TF_END_CALL, TF_END_INDIRECT_CALL,
                                        TF_END_RETURN, TF_END_RETURN, TF_END_SYSCALL, TF_END_OTHER};
        unsigned end = ends[below(11)];
        uint64_t addr = 0x410000 + 0x100 * (uint64_t)n_blocks;
        if (n_blocks % 17 == 16)
            addr = blocks[n_blocks - 9].info.address; /* same address, new code */
        define_block(addr, (uint32_t)below(3), end, 1 + (int)below(8), (int)below(MAX_OPS_PER_BLOCK + 1), 1);
        if ((end == TF_END_CALL || end == TF_END_INDIRECT_CALL) && n_blocks < N_BLOCKS - 1)
            define_block(blocks[n_blocks - 1].info.address + blocks[n_blocks - 1].info.code_len,
                         (uint32_t)below(3), TF_END_JUMP, 1 + (int)below(4), (int)below(3), 1);
    }
    for (i = 0; i < (int)n_blocks; i++) {
        blocks[i].succ_a = (uint32_t)below(n_blocks);
        blocks[i].succ_b = (uint32_t)below(n_blocks);
    }
    check(tf_stream_close(&table));
    fclose(bf);

    {
        static thr threads[3];
        static const unsigned params[3][4] = {{14, 12, 64, 1 << 20}, {8, 8, 2, 300}, {10, 9, 8, 4096}};
        int k;
        for (k = 0; k < 3; k++) {
            thread_open(&threads[k], argv[1], (uint64_t)k + 1, params[k][0], params[k][1], params[k][2],
                        params[k][3], 1024);
            threads[k].cur = (uint32_t)below(n_blocks);
        }
        fixed_part(&threads[0]);
        fixed_part(&threads[1]);
        for (i = 0; i < 60000; i++)
            walk(&threads[below(3)]);
        for (k = 0; k < 3; k++) {
            ev(&threads[k], TF_EV_THREAD_EXIT, 1, 0, 0, 0, 0);
            thread_close(&threads[k]);
        }
    }
    fclose(ops_log);
    return 0;
}
