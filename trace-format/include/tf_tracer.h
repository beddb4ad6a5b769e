/* tf_tracer.h: what every tf tracer knows, whatever instruments the program
 * (the Valgrind tool in tracer-valgrind/, the Pin tool in tracer-pintool/).
 * Freestanding C99 that also compiles as C++: no library calls, so that a
 * Valgrind tool (no libc) and a Pin tool (PinCRT) can both include it.
 *
 *   1. file names of the trace directory and the encoder parameters
 *   2. roles of functions: the lock and synchronization runtime table
 *      (which functions take or release which lock, from which argument)
 *      and the --only/--exclude name matching
 *   3. the skip state machine (tf_skip.h): per thread, which executions are
 *      traced and which are skipped (with a reason), and where lock events go
 *   4. the manifest's common fields
 *
 * FORMAT.md section 10 says what a tracer must record; this header is how
 * the tf tracers do it. */
#ifndef TF_TRACER_H
#define TF_TRACER_H

#include "tf_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* 1. Files and encoder parameters                                     */

#define TF_FILE_MANIFEST "manifest"
#define TF_FILE_MANIFEST_TMP "manifest.tmp"
#define TF_FILE_BLOCKS "blocks.tfc"

/* Encoder parameters of every thread stream. */
#define TF_SUCC_BITS 12
#define TF_ADDR_BITS 14
#define TF_RET_DEPTH 64
#define TF_CHUNK_TARGET (1u << 20)

/* "thread-<tid>.tfc" into out (at least 32 bytes). */
static inline void tf_thread_file_name(char *out, uint64_t tid)
{
    char digits[24];
    int n = 0, i = 0;
    const char *pre = "thread-", *suf = ".tfc";
    do {
        digits[n++] = (char)('0' + tid % 10);
        tid /= 10;
    } while (tid);
    while (*pre)
        out[i++] = *pre++;
    while (n)
        out[i++] = digits[--n];
    while (*suf)
        out[i++] = *suf++;
    out[i] = 0;
}

/* ------------------------------------------------------------------ */
/* 2. Roles of functions                                               */

enum tf_role {
    TF_ROLE_NONE = 0,
    TF_ROLE_ACQUIRE,   /* lock runtime: skip (reason 0), acquire at its return */
    TF_ROLE_RELEASE,   /* lock runtime: release at entry, then skip (reason 0) */
    TF_ROLE_COND_WAIT, /* release the mutex (2nd argument), skip (reason 1), re-acquire */
    TF_ROLE_WAIT,      /* barrier or join: skip (reason 1) */
    TF_ROLE_EXCLUDE,   /* --exclude: skip (reason 2) */
    TF_ROLE_ONLY,      /* --only: trace while it is on the call stack */
    TF_ROLE_CREATE,    /* pthread_create: the 3rd argument is the start routine */
    TF_ROLE_SCHEDULE   /* hands out a worksharing loop's iterations: skip (reason 5) */
};

/* Where the lock address (or start routine) comes from: an integer argument
 * register at the function's entry, or a fixed address; for an --only
 * function, the stack pointer at its entry (its region_entry event). */
enum tf_arg { TF_ARG_NONE = 0, TF_ARG_RDI, TF_ARG_RSI, TF_ARG_RDX, TF_ARG_FIXED, TF_ARG_RSP };

/* Address-less locks: the entry of the runtime function that takes them. */
enum { TF_FIXED_OMP_CRITICAL = 0, TF_FIXED_OMP_ATOMIC = 1, TF_N_FIXED = 2 };

typedef struct tf_function_role {
    uint8_t role;      /* enum tf_role */
    uint8_t lock_kind; /* enum tf_lock_kind */
    uint8_t arg;       /* enum tf_arg */
    uint8_t check_ret; /* the lock is taken only if the function returns 0 */
    uint8_t fixed;     /* TF_ARG_FIXED: which address-less lock */
} tf_function_role;

typedef struct tf_runtime_fn {
    const char *name;
    tf_function_role role;
} tf_runtime_fn;

#define TF__ACQ(kind, arg, chk) {TF_ROLE_ACQUIRE, kind, arg, chk, 0}
#define TF__REL(kind, arg) {TF_ROLE_RELEASE, kind, arg, 0, 0}
#define TF__WAIT {TF_ROLE_WAIT, 0, TF_ARG_NONE, 0, 0}

/* Names without leading underscores or a symbol version: glibc >= 2.34 has
 * these in libc.so.6, often reported under a `__`-prefixed alias. */
static const tf_runtime_fn tf_runtime_fns[] = {
    {"pthread_mutex_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, 1)},
    {"pthread_mutex_trylock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, 1)},
    {"pthread_mutex_timedlock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, 1)},
    {"pthread_mutex_clocklock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, 1)},
    {"pthread_mutex_unlock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    {"pthread_spin_lock", TF__ACQ(TF_LOCK_SPIN, TF_ARG_RDI, 1)},
    {"pthread_spin_trylock", TF__ACQ(TF_LOCK_SPIN, TF_ARG_RDI, 1)},
    {"pthread_spin_unlock", TF__REL(TF_LOCK_SPIN, TF_ARG_RDI)},
    /* glibc's pthread_spin_unlock is the same function as pthread_spin_init
     * (both store 0), and the debug info names it after the latter */
    {"pthread_spin_init", TF__REL(TF_LOCK_SPIN, TF_ARG_RDI)},
    {"pthread_rwlock_rdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, 1)},
    {"pthread_rwlock_tryrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, 1)},
    {"pthread_rwlock_timedrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, 1)},
    {"pthread_rwlock_clockrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, 1)},
    {"pthread_rwlock_wrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, 1)},
    {"pthread_rwlock_trywrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, 1)},
    {"pthread_rwlock_timedwrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, 1)},
    {"pthread_rwlock_clockwrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, 1)},
    /* the kind (read or write) is the one the thread acquired */
    {"pthread_rwlock_unlock", TF__REL(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI)},
    {"sem_wait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, 1)},
    {"sem_trywait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, 1)},
    {"sem_timedwait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, 1)},
    {"sem_clockwait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, 1)},
    {"sem_post", TF__REL(TF_LOCK_SEMAPHORE, TF_ARG_RDI)},
    {"GOMP_critical_start",
     {TF_ROLE_ACQUIRE, TF_LOCK_OMP_CRITICAL, TF_ARG_FIXED, 0, TF_FIXED_OMP_CRITICAL}},
    {"GOMP_critical_end",
     {TF_ROLE_RELEASE, TF_LOCK_OMP_CRITICAL, TF_ARG_FIXED, 0, TF_FIXED_OMP_CRITICAL}},
    {"GOMP_critical_name_start", TF__ACQ(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDI, 0)},
    {"GOMP_critical_name_end", TF__REL(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDI)},
    {"GOMP_atomic_start",
     {TF_ROLE_ACQUIRE, TF_LOCK_OMP_ATOMIC, TF_ARG_FIXED, 0, TF_FIXED_OMP_ATOMIC}},
    {"GOMP_atomic_end",
     {TF_ROLE_RELEASE, TF_LOCK_OMP_ATOMIC, TF_ARG_FIXED, 0, TF_FIXED_OMP_ATOMIC}},
    /* condition waits release the mutex (second argument) and re-take it,
     * also when they time out */
    {"pthread_cond_wait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_cond_timedwait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_cond_clockwait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_barrier_wait", TF__WAIT},
    {"pthread_join", TF__WAIT},
    {"pthread_timedjoin_np", TF__WAIT},
    {"pthread_clockjoin_np", TF__WAIT},
    {"GOMP_barrier", TF__WAIT},
    {"GOMP_barrier_cancel", TF__WAIT},
    {"pthread_create", {TF_ROLE_CREATE, 0, TF_ARG_RDX, 0, 0}},
};
#define TF_N_RUNTIME_FNS (sizeof tf_runtime_fns / sizeof tf_runtime_fns[0])

static inline size_t tf__strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

static inline int tf__strneq(const char *a, const char *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* `name` without leading underscores and without a trailing "@VERSION"
 * equals `want`. */
static inline int tf_runtime_name_is(const char *name, const char *want)
{
    size_t n = tf__strlen(want);
    while (*name == '_')
        name++;
    return tf__strneq(name, want, n) && (name[n] == 0 || name[n] == '@');
}

/* `name`, without leading underscores, starts with `prefix` and ends with
 * `suffix` (before any "@VERSION"). */
static inline int tf__name_shape(const char *name, const char *prefix, const char *suffix)
{
    size_t n = 0, p = tf__strlen(prefix), x = tf__strlen(suffix);
    while (*name == '_')
        name++;
    while (name[n] && name[n] != '@')
        n++;
    return n >= p + x && tf__strneq(name, prefix, p) && tf__strneq(name + n - x, suffix, x);
}

/* The OpenMP runtime functions that hand a thread the iterations of a
 * worksharing loop (libgomp's GOMP_loop_*_start / _next, libomp's
 * __kmpc_dispatch_* and __kmpc_for_static_*), and those from whose answers
 * inline static schedules compute them (omp_get_num_threads,
 * omp_get_thread_num). Not GOMP_parallel_loop_*: the team, the caller
 * included, runs inside it. */
static inline int tf_is_loop_schedule(const char *name)
{
    static const char *const shapes[][2] = {
        {"GOMP_loop_", "_start"},        {"GOMP_loop_", "_next"},
        {"kmpc_dispatch_init_", ""},     {"kmpc_dispatch_next_", ""},
        {"kmpc_for_static_init_", ""},   {"kmpc_for_static_fini", ""},
        {"omp_get_num_threads", ""},     {"omp_get_thread_num", ""},
    };
    size_t i;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (tf__name_shape(name, shapes[i][0], shapes[i][1]))
            return 1;
    return 0;
}

/* The runtime function a raw symbol names, or NULL. */
static inline const tf_runtime_fn *tf_runtime_lookup(const char *name)
{
    static const tf_runtime_fn schedule = {"", {TF_ROLE_SCHEDULE, 0, TF_ARG_NONE, 0, 0}};
    size_t i;
    if (tf_is_loop_schedule(name))
        return &schedule;
    if (name[0] != '_' && name[0] != 'p' && name[0] != 's' && name[0] != 'G')
        return 0;
    for (i = 0; i < TF_N_RUNTIME_FNS; i++)
        if (tf_runtime_name_is(name, tf_runtime_fns[i].name))
            return &tf_runtime_fns[i];
    return 0;
}

/* Writes the source names of an Itanium-mangled name as "a::b::c" (without
 * template arguments or parameters) to out; 0 if it is not of the simple
 * form _Z<name> or _ZN<qualifiers><name>...E. */
static inline int tf_simple_demangle(const char *m, char *out, size_t cap)
{
    size_t o = 0;
    int nested;
    if (m[0] != '_' || m[1] != 'Z')
        return 0;
    m += 2;
    nested = *m == 'N';
    if (nested) {
        m++;
        while (*m == 'r' || *m == 'V' || *m == 'K' || *m == 'R' || *m == 'O')
            m++;
    }
    if (m[0] == 'S' && m[1] == 't') { /* std:: */
        if (o + 5 >= cap)
            return 0;
        for (; o < 5; o++)
            out[o] = "std::"[o];
        m += 2;
    }
    for (;;) {
        size_t len = 0, i;
        if (*m < '0' || *m > '9')
            break;
        while (*m >= '0' && *m <= '9')
            len = len * 10 + (size_t)(*m++ - '0');
        if (tf__strlen(m) < len || o + len + 3 >= cap)
            return 0;
        if (o > 0 && !(o == 5 && tf__strneq(out, "std::", 5))) {
            out[o++] = ':';
            out[o++] = ':';
        }
        for (i = 0; i < len; i++)
            out[o++] = m[i];
        m += len;
        if (!nested)
            break;
    }
    /* a nested name must end here: no templates, constructors, ... */
    if (nested && *m != 'E')
        return 0;
    out[o] = 0;
    return o > 0;
}

/* The matching rule of --only / --exclude: the raw symbol, the symbol
 * without its "@VERSION", or for a C++ symbol its qualified name without
 * parameters ("ns::Class::method"). */
static inline int tf_pattern_matches(const char *pattern, const char *name)
{
    char buf[512];
    size_t p = tf__strlen(pattern), n = tf__strlen(name), at = 0;
    if (p == n && tf__strneq(pattern, name, n))
        return 1;
    while (at < n && name[at] != '@')
        at++;
    if (at < n && at > 0 && p == at && tf__strneq(pattern, name, at))
        return 1;
    return tf_simple_demangle(name, buf, sizeof buf) && tf__strlen(buf) == p &&
           tf__strneq(pattern, buf, p);
}

/* The role of a function by its raw symbol: the user's patterns first
 * (exclude, then only), then the runtime table. */
static inline tf_function_role tf_fn_role_of(const char *name, const char *const *only, size_t n_only,
                                       const char *const *exclude, size_t n_exclude)
{
    tf_function_role r = {TF_ROLE_NONE, 0, TF_ARG_NONE, 0, 0};
    const tf_runtime_fn *f;
    size_t i;
    for (i = 0; i < n_exclude; i++)
        if (tf_pattern_matches(exclude[i], name)) {
            r.role = TF_ROLE_EXCLUDE;
            return r;
        }
    for (i = 0; i < n_only; i++)
        if (tf_pattern_matches(only[i], name)) {
            r.role = TF_ROLE_ONLY;
            r.arg = TF_ARG_RSP;
            return r;
        }
    f = tf_runtime_lookup(name);
    return f ? f->role : r;
}

#include "tf_skip.h" /* 3. the skip state machine */

/* ------------------------------------------------------------------ */
/* 4. The manifest (FORMAT.md section 7)                               */

/* A string that may not be UTF-8 (paths, arguments): str if valid, else bin. */
static inline void tf_mp_text(tf_mp *mp, const char *s)
{
    size_t n = tf__strlen(s);
    if (tf_utf8_valid(s, n))
        tf_mp_str(mp, s, n);
    else
        tf_mp_bin(mp, s, n);
}

static inline void tf_mp_texts(tf_mp *mp, const char *const *xs, size_t n)
{
    size_t i;
    tf_mp_array(mp, (uint32_t)n);
    for (i = 0; i < n; i++)
        tf_mp_text(mp, xs[i]);
}

/* What a tracer knows about the run. */
typedef struct tf_manifest_run {
    const char *tracer, *tracer_version, *backend;
    const char *const *command;
    size_t n_command;
    const char *cwd;
    uint64_t pid, start_time;
    const char *const *only;
    size_t n_only;
    const char *const *exclude;
    size_t n_exclude;
    int complete, have_exit_code, exit_signal; /* exit_signal 0 = none */
    int64_t exit_code;
    int worksharing; /* the tracer writes loop_chunk and static_loop events */
} tf_manifest_run;

/* Number of keys tf_manifest_common writes; the tracer adds `threads`,
 * `modules`, `traced_instructions`, `skipped_instructions` and `blocks`. */
#define TF_MANIFEST_COMMON_KEYS 15
#define TF_MANIFEST_KEYS 20

/* Opens the manifest map and writes the keys every tracer knows the same way. */
static inline void tf_manifest_common(tf_mp *mp, const tf_manifest_run *r)
{
    tf_mp_map(mp, TF_MANIFEST_KEYS);
    tf_mp_cstr(mp, "format");
    tf_mp_cstr(mp, "tf-trace");
    tf_mp_cstr(mp, "version");
    tf_mp_uint(mp, TF_FORMAT_VERSION);
    tf_mp_cstr(mp, "tracer");
    tf_mp_cstr(mp, r->tracer);
    tf_mp_cstr(mp, "tracer_version");
    tf_mp_cstr(mp, r->tracer_version);
    tf_mp_cstr(mp, "backend");
    tf_mp_cstr(mp, r->backend);
    tf_mp_cstr(mp, "command");
    tf_mp_texts(mp, r->command, r->n_command);
    tf_mp_cstr(mp, "cwd");
    tf_mp_text(mp, r->cwd);
    tf_mp_cstr(mp, "pid");
    tf_mp_uint(mp, r->pid);
    tf_mp_cstr(mp, "start_time");
    tf_mp_uint(mp, r->start_time);
    tf_mp_cstr(mp, "only");
    tf_mp_texts(mp, r->only, r->n_only);
    tf_mp_cstr(mp, "exclude");
    tf_mp_texts(mp, r->exclude, r->n_exclude);
    tf_mp_cstr(mp, "complete");
    tf_mp_bool(mp, r->complete);
    tf_mp_cstr(mp, "exit_code");
    if (r->have_exit_code)
        tf_mp_int(mp, r->exit_code);
    else
        tf_mp_nil(mp);
    tf_mp_cstr(mp, "exit_signal");
    if (r->exit_signal)
        tf_mp_int(mp, r->exit_signal);
    else
        tf_mp_nil(mp);
    tf_mp_cstr(mp, "worksharing");
    tf_mp_bool(mp, r->worksharing);
}

/* One entry of the manifest's `threads` array. */
static inline void tf_manifest_thread(tf_mp *mp, uint64_t tid, uint64_t parent, uint64_t stack_lo,
                                      uint64_t stack_hi, uint64_t start_routine, uint64_t traced,
                                      uint64_t skipped)
{
    tf_mp_map(mp, 7);
    tf_mp_cstr(mp, "tid");
    tf_mp_uint(mp, tid);
    tf_mp_cstr(mp, "parent");
    tf_mp_uint(mp, parent);
    tf_mp_cstr(mp, "stack_lo");
    tf_mp_uint(mp, stack_lo);
    tf_mp_cstr(mp, "stack_hi");
    tf_mp_uint(mp, stack_hi);
    tf_mp_cstr(mp, "start_routine");
    tf_mp_uint(mp, start_routine);
    tf_mp_cstr(mp, "traced_instructions");
    tf_mp_uint(mp, traced);
    tf_mp_cstr(mp, "skipped_instructions");
    tf_mp_uint(mp, skipped);
}

/* The manifest's closing keys, after `threads` and `modules`. */
static inline void tf_manifest_totals(tf_mp *mp, uint64_t traced, uint64_t skipped,
                                      uint64_t blocks)
{
    tf_mp_cstr(mp, "traced_instructions");
    tf_mp_uint(mp, traced);
    tf_mp_cstr(mp, "skipped_instructions");
    tf_mp_uint(mp, skipped);
    tf_mp_cstr(mp, "blocks");
    tf_mp_uint(mp, blocks);
}

#ifdef __cplusplus
}
#endif

#endif
