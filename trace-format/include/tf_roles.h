/* tf_roles.h: the roles of functions, part 2 of tf_tracer.h (which
 * includes it): the lock and synchronization runtime table (which functions
 * take or release which lock, from which argument) and the --only/--exclude
 * name matching. Freestanding C99 that also compiles as C++. */
#ifndef TF_ROLES_H
#define TF_ROLES_H

#include "tf_trace_format.h"

enum tf_role {
    TF_ROLE_NONE = 0,
    TF_ROLE_ACQUIRE,   /* lock runtime: skip (reason 0), acquire at its return */
    TF_ROLE_RELEASE,   /* lock runtime: release at entry, then skip (reason 0) */
    TF_ROLE_COND_WAIT, /* release the mutex (2nd argument), skip (reason 1), re-acquire */
    TF_ROLE_WAIT,      /* barrier or join: skip (reason 1) */
    TF_ROLE_EXCLUDE,   /* --exclude: skip (reason 2) */
    TF_ROLE_ONLY,      /* --only: trace while it is on the call stack */
    TF_ROLE_CREATE,    /* pthread_create: the 3rd argument is the start routine */
    TF_ROLE_SCHEDULE,  /* hands out a worksharing loop's iterations: skip (reason 5) */
    TF_ROLE_BIND       /* the dynamic linker's lazy binding: skip (reason 4) until it jumps
                        * on to the function it bound */
};

/* Where the lock address (or start routine) comes from: an integer argument
 * register at the function's entry, or a fixed address; for an --only
 * function, the stack pointer at its entry (its region_entry event). */
enum tf_arg { TF_ARG_NONE = 0, TF_ARG_RDI, TF_ARG_RSI, TF_ARG_RDX, TF_ARG_FIXED, TF_ARG_RSP };

/* When an acquire function has taken its lock, by its return value: trylocks
 * return 0 when they took it, omp_test_lock and omp_test_nest_lock nonzero. */
enum tf_taken { TF_TAKEN_ALWAYS = 0, TF_TAKEN_IF_ZERO = 1, TF_TAKEN_IF_NONZERO = 2 };

/* Address-less locks: the entry of the runtime function that takes them. */
enum {
    TF_FIXED_OMP_CRITICAL = 0,
    TF_FIXED_OMP_ATOMIC = 1,
    TF_FIXED_OMP_ORDERED = 2,
    TF_FIXED_OMP_DOACROSS = 3,
    TF_N_FIXED = 4
};

typedef struct tf_function_role {
    uint8_t role;      /* enum tf_role */
    uint8_t lock_kind; /* enum tf_lock_kind */
    uint8_t arg;       /* enum tf_arg */
    uint8_t taken;     /* enum tf_taken: when the lock is taken */
    uint8_t fixed;     /* TF_ARG_FIXED: which address-less lock */
} tf_function_role;

typedef struct tf_runtime_fn {
    const char *name;
    tf_function_role role;
} tf_runtime_fn;

#define TF__ACQ(kind, arg, taken) {TF_ROLE_ACQUIRE, kind, arg, taken, 0}
#define TF__REL(kind, arg) {TF_ROLE_RELEASE, kind, arg, 0, 0}
#define TF__WAIT {TF_ROLE_WAIT, 0, TF_ARG_NONE, 0, 0}
/* a lock without an address of its own (TF_FIXED_*) */
#define TF__FIXED_ACQ(kind, fixed) {TF_ROLE_ACQUIRE, kind, TF_ARG_FIXED, TF_TAKEN_ALWAYS, fixed}
#define TF__FIXED_REL(kind, fixed) {TF_ROLE_RELEASE, kind, TF_ARG_FIXED, 0, fixed}

/* Names without leading underscores or a symbol version: glibc >= 2.34 has
 * these in libc.so.6, often reported under a `__`-prefixed alias. */
static const tf_runtime_fn tf_runtime_fns[] = {
    {"pthread_mutex_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_mutex_trylock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_mutex_timedlock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_mutex_clocklock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_mutex_unlock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    {"pthread_spin_lock", TF__ACQ(TF_LOCK_SPIN, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_spin_trylock", TF__ACQ(TF_LOCK_SPIN, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_spin_unlock", TF__REL(TF_LOCK_SPIN, TF_ARG_RDI)},
    /* glibc's pthread_spin_unlock is the same function as pthread_spin_init
     * (both store 0), and the debug info names it after the latter */
    {"pthread_spin_init", TF__REL(TF_LOCK_SPIN, TF_ARG_RDI)},
    {"pthread_rwlock_rdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_tryrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_timedrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_clockrdlock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_wrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_trywrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_timedwrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"pthread_rwlock_clockwrlock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    /* the kind (read or write) is the one the thread acquired */
    {"pthread_rwlock_unlock", TF__REL(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI)},
    {"sem_wait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"sem_trywait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"sem_timedwait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"sem_clockwait", TF__ACQ(TF_LOCK_SEMAPHORE, TF_ARG_RDI, TF_TAKEN_IF_ZERO)},
    {"sem_post", TF__REL(TF_LOCK_SEMAPHORE, TF_ARG_RDI)},
    /* GLib: GMutex is built on futexes, not pthread mutexes; GRecMutex and
     * GRWLock on pthread's (inside them, which the skip hides) */
    {"g_mutex_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"g_mutex_trylock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    {"g_mutex_unlock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    {"g_rec_mutex_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"g_rec_mutex_trylock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    {"g_rec_mutex_unlock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    {"g_rw_lock_writer_lock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"g_rw_lock_writer_trylock", TF__ACQ(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    {"g_rw_lock_reader_lock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"g_rw_lock_reader_trylock", TF__ACQ(TF_LOCK_RWLOCK_READ, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    /* the kind (read or write) is the one the thread acquired */
    {"g_rw_lock_writer_unlock", TF__REL(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI)},
    {"g_rw_lock_reader_unlock", TF__REL(TF_LOCK_RWLOCK_WRITE, TF_ARG_RDI)},
    {"g_cond_wait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"g_cond_wait_until", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"g_cond_timed_wait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"g_thread_join", TF__WAIT},
    {"GOMP_critical_start", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_CRITICAL)},
    {"GOMP_critical_end", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_CRITICAL)},
    {"GOMP_critical_name_start", TF__ACQ(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"GOMP_critical_name_end", TF__REL(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDI)},
    /* LLVM's libomp: every critical section, the unnamed one too, has a lock
     * variable of its own (the third argument) */
    {"kmpc_critical", TF__ACQ(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDX, TF_TAKEN_ALWAYS)},
    {"kmpc_critical_with_hint", TF__ACQ(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDX, TF_TAKEN_ALWAYS)},
    {"kmpc_end_critical", TF__REL(TF_LOCK_OMP_CRITICAL_NAMED, TF_ARG_RDX)},
    /* the OpenMP lock API (libgomp and libomp alike): mutexes, nestable or
     * not, which neither runtime builds on pthread mutexes */
    {"omp_set_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"omp_set_nest_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_ALWAYS)},
    {"omp_test_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    {"omp_test_nest_lock", TF__ACQ(TF_LOCK_MUTEX, TF_ARG_RDI, TF_TAKEN_IF_NONZERO)},
    {"omp_unset_lock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    {"omp_unset_nest_lock", TF__REL(TF_LOCK_MUTEX, TF_ARG_RDI)},
    /* ordered regions run one iteration at a time, in order: a lock without
     * an address of its own, which the thread waits for inside the runtime */
    {"GOMP_ordered_start", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_ORDERED)},
    {"GOMP_ordered_end", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_ORDERED)},
    {"kmpc_ordered", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_ORDERED)},
    {"kmpc_end_ordered", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_ORDERED)},
    /* so do the parts of a doacross loop's iterations that wait for others
     * (ordered depend(sink)) until they say they are done (depend(source)) */
    {"GOMP_doacross_wait", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"GOMP_doacross_ull_wait", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"GOMP_doacross_post", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"GOMP_doacross_ull_post", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"kmpc_doacross_wait", TF__FIXED_ACQ(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"kmpc_doacross_post", TF__FIXED_REL(TF_LOCK_OMP_CRITICAL, TF_FIXED_OMP_DOACROSS)},
    {"GOMP_atomic_start", TF__FIXED_ACQ(TF_LOCK_OMP_ATOMIC, TF_FIXED_OMP_ATOMIC)},
    {"GOMP_atomic_end", TF__FIXED_REL(TF_LOCK_OMP_ATOMIC, TF_FIXED_OMP_ATOMIC)},
    /* condition waits release the mutex (second argument) and re-take it,
     * also when they time out */
    {"pthread_cond_wait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_cond_timedwait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_cond_clockwait", {TF_ROLE_COND_WAIT, TF_LOCK_MUTEX, TF_ARG_RSI, 0, 0}},
    {"pthread_barrier_wait", TF__WAIT},
    {"pthread_join", TF__WAIT},
    {"pthread_timedjoin_np", TF__WAIT},
    {"pthread_clockjoin_np", TF__WAIT},
    /* barriers, and the ends of worksharing constructs and task waits, which
     * wait for the team or the tasks: the tasks a thread runs while it
     * waits there are traced (tf_skip_callback) */
    {"GOMP_barrier", TF__WAIT},
    {"GOMP_barrier_cancel", TF__WAIT},
    {"GOMP_loop_end", TF__WAIT},
    {"GOMP_loop_end_cancel", TF__WAIT},
    {"GOMP_sections_end", TF__WAIT},
    {"GOMP_sections_end_cancel", TF__WAIT},
    {"GOMP_taskwait", TF__WAIT},
    {"GOMP_taskgroup_end", TF__WAIT},
    {"kmpc_barrier", TF__WAIT},
    {"kmpc_omp_taskwait", TF__WAIT},
    {"kmpc_end_taskgroup", TF__WAIT},
    /* a single's copyprivate: the team waits for the thread that ran it */
    {"GOMP_single_copy_start", TF__WAIT},
    {"GOMP_single_copy_end", TF__WAIT},
    {"kmpc_copyprivate", TF__WAIT},
    {"pthread_create", {TF_ROLE_CREATE, 0, TF_ARG_RDX, 0, 0}},
    /* glibc's lazy binding: a library function's first call goes from its
     * PLT entry to one of these trampolines, which calls _dl_fixup to look
     * the function up and jumps on to it. Not _dl_runtime_profile_*, the
     * trampolines of LD_AUDIT, which call the function themselves. */
    {"dl_runtime_resolve_xsavec", {TF_ROLE_BIND, 0, TF_ARG_NONE, 0, 0}},
    {"dl_runtime_resolve_xsave", {TF_ROLE_BIND, 0, TF_ARG_NONE, 0, 0}},
    {"dl_runtime_resolve_fxsave", {TF_ROLE_BIND, 0, TF_ARG_NONE, 0, 0}},
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

/* Whether a module's path names an OpenMP runtime: GCC's libgomp, LLVM's
 * libomp or Intel's libiomp5 (tf_wait_call_before); the analyzer knows them
 * by the same names (openmp_runtime in analyzer/src/analysis.rs). */
static inline int tf_is_omp_runtime(const char *path)
{
    static const char *const runtimes[] = {"libgomp.", "libomp.", "libiomp5."};
    const char *file = path;
    size_t i;
    for (i = 0; path[i]; i++)
        if (path[i] == '/')
            file = path + i + 1;
    for (i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
        if (tf__strneq(file, runtimes[i], tf__strlen(runtimes[i])))
            return 1;
    return 0;
}

/* The OpenMP runtime functions that hand a thread the iterations of a
 * worksharing loop (libgomp's GOMP_loop_*_start / _next, and the sections of
 * a `sections` construct, GOMP_sections_start, GOMP_sections2_start and
 * GOMP_sections_next; libomp's __kmpc_dispatch_* and __kmpc_for_static_*,
 * through which clang runs sections too; __kmpc_dispatch_fini_* ends an
 * ordered loop's chunk), and those from whose answers
 * inline static schedules compute them (omp_get_num_threads,
 * omp_get_thread_num). Not GOMP_parallel_loop_* nor GOMP_parallel_sections:
 * the team, the caller included, runs inside them. */
static inline int tf_is_loop_schedule(const char *name)
{
    static const char *const shapes[][2] = {
        {"GOMP_loop_", "_start"},        {"GOMP_loop_", "_next"},
        {"GOMP_sections", "_start"},     {"GOMP_sections_next", ""},
        {"kmpc_dispatch_init_", ""},     {"kmpc_dispatch_next_", ""},
        {"kmpc_dispatch_fini_", ""},
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
    if (name[0] != '_' && name[0] != 'p' && name[0] != 's' && name[0] != 'G' && name[0] != 'o' &&
        name[0] != 'g')
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

#endif
