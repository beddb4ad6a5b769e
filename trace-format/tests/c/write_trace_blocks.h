/* The block table of write_trace.c's trace: a generated control-flow graph
 * of N_BLOCKS blocks (each logged to ops.txt as it is defined), and the
 * block records the format refuses. Included once, by write_trace.c, after
 * its logging helpers. */

typedef struct blk {
    tf_block_info info;
    uint8_t code[15 * 8];
    uint8_t lens[8];
    uint8_t flags[MAX_OPS_PER_BLOCK];
    tf_block_op ops[MAX_OPS_PER_BLOCK];
    uint32_t function;
    /* walk */
    uint32_t succ_a, succ_b;
    int pattern[MAX_OPS_PER_BLOCK]; /* 0 stride, 1 offset, 2 const, 3 random */
    uint64_t base[MAX_OPS_PER_BLOCK], k[MAX_OPS_PER_BLOCK];
} blk;

static blk blocks[N_BLOCKS];
static uint32_t n_blocks;

static const tf_block_info *info_fn(void *ctx, uint32_t id)
{
    (void)ctx;
    return id < n_blocks ? &blocks[id].info : 0;
}

static uint32_t block_at_fn(void *ctx, uint64_t address)
{
    uint32_t i;
    (void)ctx;
    for (i = 0; i < n_blocks; i++)
        if (blocks[i].info.address == address)
            return i;
    return TF_NO_BLOCK;
}

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

static tf_stream table;
static int force_flags0 = -1; /* flags of operand 0 of the next block, if >= 0 */

static void define_block(uint64_t address, uint32_t function, unsigned end, int n_insns, int n_ops,
                         int with_ops)
{
    blk *b = &blocks[n_blocks];
    tf_block_rec r;
    int i, code_len = 0;
    for (i = 0; i < n_insns; i++) {
        int j;
        b->lens[i] = (uint8_t)(1 + below(15));
        for (j = 0; j < b->lens[i]; j++)
            b->code[code_len + j] = (uint8_t)rnd();
        code_len += b->lens[i];
    }
    if (!with_ops)
        n_ops = 0;
    for (i = 0; i < n_ops; i++) {
        uint16_t insn = (uint16_t)(i == 0 ? below(n_insns) : b->ops[i - 1].insn + below(2));
        static const uint16_t sizes[] = {1, 2, 4, 8, 16, 32, 64, 4096};
        if (insn >= n_insns)
            insn = (uint16_t)(n_insns - 1);
        b->ops[i].insn = insn;
        b->ops[i].flags = (uint8_t)((below(2) ? TF_OP_WRITE : 0) | (below(5) == 0 ? TF_OP_COND : 0));
        b->ops[i].size = sizes[below(8)];
        if (i == 0 && force_flags0 >= 0)
            b->ops[i].flags = (uint8_t)force_flags0;
        b->flags[i] = b->ops[i].flags;
        b->pattern[i] = (int)below(4);
        b->base[i] = 0x10000 + below(1ull << 44);
        b->k[i] = (uint64_t)(int64_t)((int)below(129) - 64) * 8;
    }
    b->info.address = address;
    b->info.code_len = (uint32_t)code_len;
    b->info.n_insns = (uint32_t)n_insns;
    b->info.n_ops = (uint32_t)n_ops;
    b->info.end = end;
    b->info.op_flags = b->flags;
    b->function = function;
    r.id = n_blocks;
    r.address = address;
    r.function = function;
    r.end = end;
    r.code = b->code;
    r.code_len = (uint32_t)code_len;
    r.n_insns = (uint32_t)n_insns;
    r.lengths = b->lens;
    r.n_ops = (uint32_t)n_ops;
    r.ops = b->ops;
    if (tf_table_block(&table, &r))
        die("tf_table_block failed");
    fprintf(ops_log, "block %x %llx %x %x ", n_blocks, (unsigned long long)address, function, end);
    hex(b->code, (size_t)code_len);
    fputc(' ', ops_log);
    hex(b->lens, (size_t)n_insns);
    fputc(' ', ops_log);
    if (n_ops == 0)
        fputc('-', ops_log);
    for (i = 0; i < n_ops; i++)
        fprintf(ops_log, "%s%x:%x:%x", i ? "," : "", b->ops[i].insn, b->ops[i].flags, b->ops[i].size);
    fputc('\n', ops_log);
    n_blocks++;
}

static int no_sink(void *ctx, const uint8_t *chunk, size_t len)
{
    (void)ctx, (void)chunk, (void)len;
    die("a refused block record reached the sink");
    return -1;
}

/* Block records the format cannot hold are refused, never written: an
 * instruction of 19 bytes (a Valgrind client request taken as one), of 0
 * bytes, lengths that do not add up to the code, an operand of a missing
 * instruction. A valid record goes through. */
static void refuse_invalid_blocks(void)
{
    static uint8_t buf[TF_CHUNK_HEADER_SIZE + 4096];
    static const uint8_t code[19] = {0x48, 0xC1, 0xC7, 0x03, 0x48, 0xC1, 0xC7, 0x0D, 0x48, 0xC1,
                                     0xC7, 0x3D, 0x48, 0xC1, 0xC7, 0x33, 0x48, 0x87, 0xDB};
    static const uint8_t one[1] = {19}, five[5] = {4, 4, 4, 4, 3}, zero[2] = {0, 19};
    static const uint8_t short_sum[5] = {4, 4, 4, 4, 2};
    tf_block_op op = {5, 0, 8};
    tf_stream s;
    tf_block_rec r = {0, 0x401000, 0, TF_END_FALLTHROUGH, code, 19, 1, one, 0, &op};
    tf_stream_init(&s, buf, sizeof buf, 2048, no_sink, NULL);
    if (tf_block_rec_valid(&r) || tf_table_block(&s, &r) != -1 || !s.error || s.len != 0)
        die("a 19-byte instruction was not refused");
    r.n_insns = 2, r.lengths = zero;
    if (tf_block_rec_valid(&r))
        die("a 0-byte instruction was not refused");
    r.n_insns = 5, r.lengths = short_sum;
    if (tf_block_rec_valid(&r))
        die("lengths short of the code were not refused");
    r.lengths = five, r.n_ops = 1;
    if (tf_block_rec_valid(&r))
        die("an operand of instruction 5 of 5 was not refused");
    op.insn = 4;
    tf_stream_init(&s, buf, sizeof buf, 2048, no_sink, NULL);
    if (!tf_block_rec_valid(&r) || tf_table_block(&s, &r) != 0 || s.error || s.len == 0)
        die("five instructions of 4, 4, 4, 4 and 3 bytes were refused");
}
