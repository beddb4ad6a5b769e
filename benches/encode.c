/*
 * The C header's encoder alone: encodes again the block executions that
 * the `executions` example of tf-trace wrote, with the parameters every
 * tracer uses (tf_tracer.h), and prints the time per execution, the bytes
 * written and a checksum of them (the same for any encoder that writes the
 * canonical encoding). benches/encode_throughput.sh builds and runs it.
 *
 *   encode EXECUTIONS_FILE [RUNS]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tf_tracer.h"

typedef struct {
    uint32_t n_blocks, max_ops;
    tf_block_info *info;
    uint32_t *at_key_id; /* open addressing: block id + 1, 0 = empty */
    uint64_t *at_key;
    uint32_t at_mask;
    uint64_t *execs, *end; /* per execution: id | n_ops << 32, insns, n_ops addresses */
} Input;

/* The encoder's context: its blocks and what it wrote. */
typedef struct {
    const Input *in;
    uint64_t bytes;
    uint32_t crc;
} Output;

static void die(const char *what)
{
    fprintf(stderr, "encode: %s\n", what);
    exit(1);
}

static void *zalloc(size_t n, size_t size)
{
    void *m = calloc(n, size);
    if (!m)
        die("out of memory");
    return m;
}

/* Dies unless n more bytes follow p before end. */
static void need(const uint8_t *p, const uint8_t *end, size_t n)
{
    if ((size_t)(end - p) < n)
        die("the executions file ends inside its block table");
}

static uint32_t u32_at(const uint8_t **p)
{
    uint32_t v;
    memcpy(&v, *p, 4);
    *p += 4;
    return v;
}

static uint64_t u64_at(const uint8_t **p)
{
    uint64_t v;
    memcpy(&v, *p, 8);
    *p += 8;
    return v;
}

static const tf_block_info *info_of(void *ctx, uint32_t id)
{
    return &((Output *)ctx)->in->info[id];
}

/* The lowest block id at `address` (ids are defined in increasing order). */
static uint32_t block_at(void *ctx, uint64_t address)
{
    const Input *in = ((Output *)ctx)->in;
    uint32_t h = (uint32_t)tf_hash(address, 32) & in->at_mask;
    for (; in->at_key_id[h]; h = (h + 1) & in->at_mask)
        if (in->at_key[h] == address)
            return in->at_key_id[h] - 1;
    return TF_NO_BLOCK;
}

static int sink(void *ctx, const uint8_t *chunk, size_t len)
{
    Output *o = ctx;
    o->bytes += len;
    o->crc = tf_crc32c(o->crc, chunk, len);
    return 0;
}

static Input load(const char *path)
{
    Input in;
    FILE *f = fopen(path, "rb");
    long size;
    uint8_t *data;
    const uint8_t *p;
    uint32_t i, j;
    if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
        die("cannot read the executions file");
    if (size < 12)
        die("not an executions file (shorter than its header)");
    data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size)
        die("cannot read the executions file");
    fclose(f);
    if (memcmp(data, "TFEX", 4) != 0)
        die("not an executions file (no TFEX)");
    p = data + 4;
    in.n_blocks = u32_at(&p);
    in.max_ops = u32_at(&p);
    in.info = zalloc(in.n_blocks + 1, sizeof *in.info);
    for (in.at_mask = 1; in.at_mask < 2 * in.n_blocks; in.at_mask <<= 1)
        ;
    in.at_key_id = zalloc(in.at_mask, sizeof *in.at_key_id);
    in.at_key = zalloc(in.at_mask, sizeof *in.at_key);
    in.at_mask--;
    for (i = 0; i < in.n_blocks; i++) {
        tf_block_info *b = &in.info[i];
        uint32_t h;
        need(p, data + size, 24);
        b->address = u64_at(&p);
        b->code_len = u32_at(&p);
        b->n_insns = u32_at(&p);
        b->n_ops = u32_at(&p);
        b->end = u32_at(&p);
        if (b->n_ops > in.max_ops)
            die("a block has more operands than the file's largest count");
        need(p, data + size, b->n_ops);
        b->op_flags = p;
        p += b->n_ops;
        h = (uint32_t)tf_hash(b->address, 32) & in.at_mask;
        while (in.at_key_id[h] && in.at_key[h] != b->address)
            h = (h + 1) & in.at_mask;
        if (!in.at_key_id[h]) {
            in.at_key_id[h] = i + 1;
            in.at_key[h] = b->address;
        }
    }
    /* check the executions once, so that the timed loop needs not, and
     * keep them 8-byte aligned */
    in.execs = in.end = zalloc((size_t)(data + size - p) / 12 * 16 + 16, 1);
    while (p < data + size) {
        uint32_t id = u32_at(&p), n_ops = u32_at(&p), insns = u32_at(&p);
        if (id >= in.n_blocks || n_ops > in.info[id].n_ops ||
            (insns & 0x7FFFFFFFu) > in.info[id].n_insns ||
            (size_t)(data + size - p) < 8 * (size_t)n_ops)
            die("an execution does not fit its block");
        *in.end++ = id | (uint64_t)n_ops << 32;
        *in.end++ = insns;
        for (j = 0; j < n_ops; j++)
            *in.end++ = u64_at(&p);
    }
    return in;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    Input in;
    int runs = argc > 2 ? atoi(argv[2]) : 5, r;
    double best = 1e30;
    uint64_t n = 0;
    Output out = {NULL, 0, 0};
    if (argc < 2 || runs < 1)
        die("usage: encode EXECUTIONS_FILE [RUNS]");
    in = load(argv[1]);
    out.in = &in;
    for (r = 0; r < runs; r++) {
        tf_enc_params params = {TF_SUCC_BITS, TF_ADDR_BITS, TF_RET_DEPTH, TF_CHUNK_TARGET,
                                in.max_ops};
        void *mem = malloc(tf_enc_mem_size(&params));
        tf_encoder e;
        const uint64_t *p = in.execs;
        double t0, t;
        out.bytes = 0;
        out.crc = 0;
        n = 0;
        if (!mem || tf_enc_init(&e, &params, mem, info_of, block_at, sink, &out) != 0)
            die("cannot set up the encoder");
        t0 = now();
        while (p < in.end) {
            uint32_t id = (uint32_t)p[0], n_ops = (uint32_t)(p[0] >> 32), insns = (uint32_t)p[1];
            int partial = (insns >> 31) != 0;
            if (tf_enc_exec_fast(&e, id, &in.info[id], partial, insns & 0x7FFFFFFFu, n_ops,
                                 p + 2) != 0)
                die("the encoder failed");
            p += 2 + n_ops;
            n++;
        }
        if (tf_enc_flush(&e) != 0)
            die("the encoder failed");
        t = now() - t0;
        if (t < best)
            best = t;
        free(mem);
    }
    printf("%llu executions: %.2f ns each (best of %d), %llu bytes, crc32c %08x\n",
           (unsigned long long)n, 1e9 * best / (double)n, runs, (unsigned long long)out.bytes,
           out.crc);
    return 0;
}
