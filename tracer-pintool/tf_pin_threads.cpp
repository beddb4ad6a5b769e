/* Per thread: the raw records of its Pin buffer go through the skip state
 * machine of tf_tracer.h into the thread's encoder; files and manifest.
 * Everything here runs on the thread itself (or, at its exit, on the
 * thread Pin chooses, never concurrently for one thread), so a thread's
 * state needs no lock; only thread creation and the manifest take one. */
#include "tf_pin.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct Thread {
    UINT32 tid, parent;
    OS_THREAD_ID os_tid;
    ADDRINT stack_lo, stack_hi, start_routine, created_routine;
    char file[32];
    bool file_created, ended;
    UINT8 header[TF_FILE_HEADER_SIZE];
    tf_encoder enc;
    tf_skipper skip;
    void *mem;
    const Rec *next; /* first record of the buffer not decoded yet */
    /* the block execution being decoded */
    bool pend, have_rax;
    UINT32 pend_id, rep_extra;
    UINT64 arg, rax, syscall_no, syscall_start;
    UINT64 addrs[TF_PIN_MAX_OPS];
    int sigs[16];
    UINT32 n_sigs;
    tf_ws_thread ws; /* its part of the worksharing loops */
    tf_wait_call wait_call; /* a runtime's call kept aside while waiting */
};

static Thread *all[TF_PIN_MAX_THREADS]; /* by tid - 1 */
static UINT32 n_all;
static Thread *by_pin[TF_PIN_MAX_THREADS]; /* by Pin's THREADID (reused) */
static PIN_MUTEX threads_mutex;
static std::string out_dir;
static std::vector<std::string> command;
static std::string cwd;
static UINT64 start_time;
/* Worksharing loops (tf_worksharing.h): the process's instances, shared by
 * the threads, which run in parallel. */
static tf_ws_state loops;
static PIN_MUTEX loops_mutex;
static bool worksharing;

static const tf_block_info *info_of(void *, uint32_t id) { return &block(id)->info; }
static uint32_t at_of(void *, uint64_t a) { return block_at(a); }

static int thread_sink(void *ctx, const uint8_t *chunk, size_t len)
{
    Thread *t = (Thread *)ctx;
    blocks_flush(); /* the table first: every block this chunk names is on disk */
    return output_append(t->file, &t->file_created, t->header, chunk, len) ? 0 : -1;
}

static UINT64 now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000000000ull + (UINT64)ts.tv_nsec;
}

/* The stack mapping around `sp`, from /proc/self/maps. */
static void stack_range(ADDRINT sp, ADDRINT *lo, ADDRINT *hi)
{
    static char buf[1 << 16];
    *lo = *hi = 0;
    int fd = open("/proc/self/maps", O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n, len = 0;
    while (len < (ssize_t)sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += n;
    close(fd);
    buf[len] = 0;
    for (char *line = buf; line && *line;) {
        char *end;
        ADDRINT a = strtoull(line, &end, 16), b = strtoull(end + 1, NULL, 16);
        if (a <= sp && sp < b) {
            *lo = a;
            *hi = b;
            return;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
}

Thread *thread_new(THREADID tid, OS_THREAD_ID parent_os, ADDRINT sp)
{
    tf_enc_params params = {TF_SUCC_BITS, TF_ADDR_BITS, TF_RET_DEPTH, TF_CHUNK_TARGET,
                            TF_PIN_MAX_OPS};
    Thread *t = new Thread();
    PIN_MutexLock(&threads_mutex);
    if (n_all == TF_PIN_MAX_THREADS || tid >= TF_PIN_MAX_THREADS) {
        PIN_MutexUnlock(&threads_mutex);
        delete t;
        return NULL;
    }
    t->tid = n_all + 1;
    t->os_tid = PIN_GetTid();
    for (UINT32 i = 0; i < n_all; i++) {
        if (all[i]->os_tid == parent_os && !all[i]->ended) {
            t->parent = all[i]->tid;
            t->start_routine = all[i]->created_routine;
            all[i]->created_routine = 0;
        }
    }
    all[n_all++] = t;
    by_pin[tid] = t;
    PIN_MutexUnlock(&threads_mutex);
    tf_thread_file_name(t->file, t->tid);
    t->mem = malloc(tf_enc_mem_size(&params));
    tf_enc_init(&t->enc, &params, t->mem, info_of, at_of, thread_sink, t);
    tf_enc_file_header(&t->enc, t->tid, t->header);
    tf_skip_init(&t->skip, &t->enc, !opt_only.empty());
    t->rep_extra = TF_NO_BLOCK;
    stack_range(sp, &t->stack_lo, &t->stack_hi);
    /* the main stack grows on demand: its range is what it may grow to */
    struct rlimit rl;
    if (t->tid == 1 && getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < t->stack_hi)
        t->stack_lo = t->stack_hi - rl.rlim_cur;
    tf_enc_thread_start(&t->enc, t->parent, t->stack_lo, t->stack_hi, t->start_routine);
    return t;
}

Thread *thread_of(THREADID tid) { return tid < TF_PIN_MAX_THREADS ? by_pin[tid] : NULL; }

void thread_note_create(Thread *t, ADDRINT start_routine)
{
    t->created_routine = start_routine;
    if (start_routine)
        function_note(start_routine);
}

/* One block execution through the skip state machine into the encoder. */
static void exec(Thread *t, UINT32 id, bool complete, UINT32 n_insns, UINT32 n_ops)
{
    const Block *b = block(id);
    const tf_function_role *role = b->role.role != TF_ROLE_NONE ? &b->role : NULL;
    UINT64 lock = role && role->arg == TF_ARG_FIXED ? fixed_lock(role->fixed) : t->arg;
    if (role && role->role == TF_ROLE_CREATE)
        thread_note_create(t, t->arg);
    if (disabled)
        return;
    tf_wait_call *c = &t->wait_call;
    /* a task the runtime runs while the thread waits: its call first */
    if (tf_wait_call_before(&t->skip, c, b->in_omp_runtime))
        tf_enc_exec_info(&t->enc, c->id, &block(c->id)->info, 0, c->n_insns, c->n_ops, c->addrs);
    if (tf_skip_enter(&t->skip, role, lock))
        tf_enc_exec_info(&t->enc, id, &b->info, !complete, n_insns, n_ops, t->addrs);
    tf_skip_ran(&t->skip, n_insns, complete, b->info.end, t->have_rax, t->rax);
    tf_wait_call_after(&t->skip, c, id, b->info.end, b->in_omp_runtime, complete, n_insns, n_ops,
                       t->addrs);
}

/* The pending execution ran to its end. */
static void finish(Thread *t)
{
    if (!t->pend)
        return;
    const Block *b = block(t->pend_id);
    exec(t, t->pend_id, true, b->info.n_insns, b->info.n_ops);
    t->pend = false;
    if (t->rep_extra != TF_NO_BLOCK) {
        /* the count test that ends a rep loop: one more execution, no operand */
        memset(t->addrs, 0, sizeof t->addrs[0] * block(t->rep_extra)->info.n_ops);
        exec(t, t->rep_extra, true, 1, block(t->rep_extra)->info.n_ops);
        t->rep_extra = TF_NO_BLOCK;
    }
}

/* The pending execution stopped at `ip` (a fault or a signal). */
static void stop_at(Thread *t, ADDRINT ip)
{
    if (!t->pend)
        return;
    const Block *b = block(t->pend_id);
    if (ip <= b->info.address || ip >= b->info.address + b->info.code_len) {
        if (ip == b->info.address)
            t->pend = false; /* its first instruction did not complete */
        else
            finish(t);
        return;
    }
    UINT32 k = 0, n_ops = 0;
    while (k < b->info.n_insns && b->info.address + b->insn_offset[k] < ip)
        k++;
    while (n_ops < b->info.n_ops && b->op_insn[n_ops] < k)
        n_ops++;
    exec(t, t->pend_id, false, k, n_ops);
    t->pend = false;
    t->rep_extra = TF_NO_BLOCK;
}

void thread_drain(Thread *t, const Rec *upto)
{
    if (!t->next || t->ended)
        return;
    for (const Rec *r = t->next; r < upto; r++) {
        UINT64 low = r->word & ((1ull << 56) - 1);
        switch (r->word >> 56) {
        case R_BLOCK:
            finish(t);
            t->pend = true;
            t->pend_id = (UINT32)low;
            t->have_rax = false;
            memset(t->addrs, 0, sizeof t->addrs[0] * block(t->pend_id)->info.n_ops);
            break;
        case R_OP:
            if (t->pend && low < TF_PIN_MAX_OPS)
                t->addrs[low] = r->value;
            break;
        case R_ARG:
            t->arg = r->value;
            break;
        case R_RAX:
            t->have_rax = true;
            t->rax = r->value;
            break;
        case R_REP:
            if (r->value == 1)
                t->rep_extra = (UINT32)low;
            break;
        }
    }
    t->next = upto;
}

void thread_buffer_start(Thread *t, const Rec *buf) { t->next = buf; }

void thread_fault(Thread *t, ADDRINT ip) { stop_at(t, ip); }

void thread_buffer_done(Thread *t, const Rec *buf, UINT64 n)
{
    if (!t->next || t->next < buf || t->next > buf + n)
        t->next = buf;
    thread_drain(t, buf + n);
    t->next = buf;
}

void thread_syscall(Thread *t, UINT64 number)
{
    finish(t);
    if (number == ~0ull) { /* returned */
        if (!disabled)
            tf_skip_syscall(&t->skip, t->syscall_no, now_ns() - t->syscall_start);
    } else {
        t->syscall_no = number;
        t->syscall_start = now_ns();
    }
}

void thread_signal(Thread *t, int signo, ADDRINT ip)
{
    stop_at(t, ip);
    if (t->n_sigs < 16)
        t->sigs[t->n_sigs++] = signo;
    if (!disabled)
        tf_skip_signal(&t->skip, (UINT64)signo);
}

void thread_signal_return(Thread *t)
{
    finish(t);
    if (t->n_sigs > 0 && !disabled)
        tf_skip_signal_return(&t->skip, (UINT64)t->sigs[--t->n_sigs]);
}

void thread_gather(Thread *t, UINT32 first_op, const PIN_MULTI_MEM_ACCESS_INFO *m)
{
    for (UINT32 i = 0; i < m->numberOfMemops && first_op + i < TF_PIN_MAX_OPS; i++)
        t->addrs[first_op + i] = m->memop[i].maskOn ? m->memop[i].memoryAddress : 0;
}

void worksharing_found() { worksharing = true; }

void worksharing_report()
{
    if (loops.lost_chunks > 0) {
        fprintf(stderr, "tf: " TF_WS_LOST_MESSAGE "\n", (unsigned long long)loops.lost_chunks);
        fflush(stderr);
    }
}

void thread_request(Thread *t, const uint64_t a[6])
{
    tf_ws_event ev;
    PIN_MutexLock(&loops_mutex);
    int known = tf_ws_request(&loops, &t->ws, a, &ev);
    PIN_MutexUnlock(&loops_mutex);
    if (!known || disabled)
        return;
    if (ev.kind == TF_WS_LOOP_CHUNK)
        tf_skip_loop_chunk(&t->skip, ev.loop, ev.first, ev.count, ev.stride, ev.trip);
    else if (ev.kind == TF_WS_STATIC_LOOP)
        tf_skip_static_loop(&t->skip, ev.loop, ev.first, ev.count);
}

void thread_end(Thread *t, unsigned how)
{
    if (t->ended)
        return;
    finish(t);
    if (!disabled)
        tf_skip_end(&t->skip, how);
    t->ended = true;
}

/* ---- files ---- */

static bool write_all(int fd, const UINT8 *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool output_append(const char *name, bool *created, const UINT8 *header, const UINT8 *data,
                   size_t len)
{
    if (disabled)
        return true;
    std::string path = out_dir + "/" + name;
    int fd = open(path.c_str(), O_WRONLY | (*created ? O_APPEND : O_CREAT | O_TRUNC), 0644);
    if (fd < 0)
        return false;
    bool ok = (*created || !header || write_all(fd, header, TF_FILE_HEADER_SIZE)) &&
              write_all(fd, data, len);
    *created = true;
    close(fd);
    return ok;
}

bool output_init(const std::string &dir, int argc, char **argv)
{
    char buf[4096];
    PIN_MutexInit(&threads_mutex);
    PIN_MutexInit(&loops_mutex);
    out_dir = dir;
    for (int i = 0; i < argc; i++)
        command.push_back(argv[i]);
    cwd = getcwd(buf, sizeof buf) ? buf : "";
    start_time = (UINT64)time(NULL);
    manifest_write(false, false, 0, 0);
    return access((dir + "/" TF_FILE_MANIFEST).c_str(), F_OK) == 0;
}

void manifest_write(bool complete, bool have_code, INT64 code, int signo)
{
    if (disabled)
        return;
    std::vector<const char *> cmd, only, exclude;
    for (size_t i = 0; i < command.size(); i++)
        cmd.push_back(command[i].c_str());
    for (size_t i = 0; i < opt_only.size(); i++)
        only.push_back(opt_only[i].c_str());
    for (size_t i = 0; i < opt_exclude.size(); i++)
        exclude.push_back(opt_exclude[i].c_str());
    std::string backend = "pin-" + PIN_Version();
    tf_manifest_run run = {"tf-pin", TF_PIN_VERSION, backend.c_str(), cmd.data(), cmd.size(),
                           cwd.c_str(), (UINT64)PIN_GetPid(), start_time, only.data(),
                           only.size(), exclude.data(), exclude.size(), complete, have_code,
                           signo, code, worksharing, forks, NULL, 0};
    for (size_t cap = 64 << 10;; cap *= 4) {
        std::vector<UINT8> buf(cap);
        tf_mp mp;
        UINT64 traced = 0, skipped = 0;
        tf_mp_init(&mp, buf.data(), cap);
        tf_manifest_common(&mp, &run);
        PIN_MutexLock(&threads_mutex);
        tf_mp_cstr(&mp, "threads");
        tf_mp_array(&mp, n_all);
        for (UINT32 i = 0; i < n_all; i++) {
            const Thread *t = all[i];
            tf_manifest_thread(&mp, t->tid, t->parent, t->stack_lo, t->stack_hi,
                               t->start_routine, t->skip.traced, t->skip.skipped);
            traced += t->skip.traced;
            skipped += t->skip.skipped;
        }
        PIN_MutexUnlock(&threads_mutex);
        tf_mp_cstr(&mp, "modules");
        blocks_manifest_modules(&mp);
        tf_manifest_totals(&mp, traced, skipped, blocks_count());
        if (mp.overflow)
            continue;
        bool created = false;
        std::string tmp = out_dir + "/" TF_FILE_MANIFEST_TMP;
        if (output_append(TF_FILE_MANIFEST_TMP, &created, NULL, buf.data(), tf_mp_len(&mp)))
            rename(tmp.c_str(), (out_dir + "/" TF_FILE_MANIFEST).c_str());
        return;
    }
}
