/* tf_tracer.h: what every tf tracer knows, whatever instruments the program
 * (the Valgrind tool in tracer-valgrind/, the Pin tool in tracer-pintool/).
 * Freestanding C99 that also compiles as C++: no library calls, so that a
 * Valgrind tool (no libc) and a Pin tool (PinCRT) can both include it.
 *
 *   1. file names of the trace directory and the encoder parameters
 *   2. roles of functions (tf_roles.h): the lock and synchronization
 *      runtime table (which functions take or release which lock, from
 *      which argument) and the --only/--exclude name matching
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

#include "tf_roles.h" /* 2. roles of functions */
#include "tf_skip.h" /* 3. the skip state machine */
#include "tf_wait_call.h" /* 3. and the runtime's calls of the program in waits */

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
    uint64_t forked;  /* processes the program started (fork, vfork), untraced */
    /* The command of the execve that replaced the program (the trace ends
     * there); n_exec 0: none. */
    const char *const *exec;
    size_t n_exec;
} tf_manifest_run;

/* Number of keys tf_manifest_common writes; the tracer adds `threads`,
 * `modules`, `traced_instructions`, `skipped_instructions` and `blocks`. */
#define TF_MANIFEST_COMMON_KEYS 17
#define TF_MANIFEST_KEYS 22

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
    tf_mp_cstr(mp, "forked");
    tf_mp_uint(mp, r->forked);
    tf_mp_cstr(mp, "exec");
    tf_mp_texts(mp, r->exec, r->n_exec);
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
