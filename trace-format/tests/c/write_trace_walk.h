/* The seeded pseudo-random walk of write_trace.c over the blocks of
 * write_trace_blocks.h: calls, returns, strided and offset addresses,
 * conditional operands, partial executions, events and flushes. Included
 * once, by write_trace.c, after its thread helpers. */

/* Addresses of one execution of block id by the walk. */
static void walk_addrs(thr *t, uint32_t id, uint64_t *a)
{
    blk *b = &blocks[id];
    uint64_t i = t->iter[id]++;
    uint32_t j;
    for (j = 0; j < b->info.n_ops; j++) {
        uint64_t v;
        switch (b->pattern[j]) {
        case 0: v = b->base[j] + i * b->k[j]; break;
        case 1: v = j ? a[j - 1] + b->k[j] + 0x100 : b->base[j] + 8 * below(1000); break;
        case 2: v = b->base[j]; break;
        default: v = 0x10000 + below(1ull << 46); break;
        }
        if (below(25) == 0)
            v += 8 * below(64); /* a surprise now and then */
        if (v == 0)
            v = 8;
        if ((b->flags[j] & TF_OP_COND) && below(10) < 3)
            v = TF_ABSENT;
        a[j] = v;
    }
}

/* One step of the walk. */
static void walk(thr *t)
{
    uint64_t a[MAX_OPS_PER_BLOCK];
    uint32_t id = t->cur;
    blk *b = &blocks[id];
    uint64_t r = below(1000);
    uint32_t next;
    walk_addrs(t, id, a);
    if (r < 30) {
        uint32_t n_insns = 1 + (uint32_t)below(b->info.n_insns);
        uint32_t n_ops = (uint32_t)below(b->info.n_ops + 1);
        px(t, id, n_insns, n_ops, a);
    } else {
        x(t, id, a);
    }
    r = below(1000);
    if (r < 40) {
        static const unsigned types[] = {TF_EV_LOCK_ACQUIRE, TF_EV_LOCK_RELEASE, TF_EV_SKIP,
                                         TF_EV_SYSCALL, TF_EV_SIGNAL, TF_EV_SIGNAL_RETURN,
                                         TF_EV_MARKER, TF_EV_THREAD_START, TF_EV_THREAD_EXIT};
        unsigned ty = types[below(9)];
        int n = ty == TF_EV_THREAD_START ? 4 : (ty == TF_EV_SIGNAL || ty == TF_EV_SIGNAL_RETURN || ty == TF_EV_THREAD_EXIT) ? 1 : 2;
        ev(t, ty, n, below(9), rnd() >> below(64), rnd(), below(2) ? 0 : rnd());
    } else if (r < 44) {
        uint8_t p[40];
        size_t n = (size_t)below(40), i;
        for (i = 0; i < n; i++)
            p[i] = (uint8_t)rnd();
        raw(t, 13 + (unsigned)below(100), p, n);
    } else if (r < 46) {
        flush(t);
    } else if (r < 48) {
        loop_chunk(t, 1 + below(9), rnd() >> below(64), below(100), below(2) ? 0 : below(64),
                   rnd());
    } else if (r < 50) {
        static_loop(t, 1 + below(9), below(64), 1 + below(64));
    } else if (r < 51) {
        region_entry(t, rnd() >> below(64));
    }
    /* control flow */
    if (b->info.end == TF_END_CALL || b->info.end == TF_END_INDIRECT_CALL) {
        uint64_t ret = b->info.address + b->info.code_len;
        if (t->depth < 256)
            t->shadow[t->depth++] = ret;
        if (below(10) == 0) { /* a skipped call: straight to the return site */
            uint32_t at = block_at_fn(0, ret);
            t->depth--;
            ev(t, TF_EV_SKIP, 2, TF_SKIP_EXCLUDED, 50, 0, 0);
            next = at != TF_NO_BLOCK ? at : b->succ_a;
        } else {
            next = b->succ_a;
        }
    } else if (b->info.end == TF_END_RETURN && t->depth > 0) {
        uint64_t ret = t->shadow[--t->depth];
        uint32_t at = block_at_fn(0, ret);
        next = at != TF_NO_BLOCK && below(20) != 0 ? at : (uint32_t)below(n_blocks);
    } else {
        r = below(100);
        next = r < 70 ? b->succ_a : r < 92 ? b->succ_b : (uint32_t)below(n_blocks);
    }
    t->cur = next;
}
