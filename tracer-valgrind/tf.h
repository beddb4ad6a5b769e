/* tf: a Valgrind tool that records what every thread executes, in the tf
 * trace format (trace-format/FORMAT.md). Declarations shared by its files:
 *
 *   tf_main.c        tool registration, options, core callbacks, fini
 *   tf_instrument.c  VEX IR instrumentation (inline stores, no dirty calls
 *                    on the common path)
 *   tf_raw.c         the raw buffer that instrumented code fills, and its flush
 *   tf_thread.c      per-thread state: encoder, skip/lock state machine, events
 *   tf_blocks.c      block table: ids, functions, modules, blocks.tfc
 *   tf_funcs.c       lock/runtime function table, --tf-only/--tf-exclude matching
 *   tf_output.c      files of the trace directory and the manifest
 */
#ifndef TF_H
#define TF_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_xarray.h"
#include "tf_trace.h"

#define TF_TOOL_VERSION "0.1.0"

/* Limits of one superblock (VEX translates at most 100 instructions). */
#define TF_MAX_BLOCK_INSNS 255
#define TF_MAX_BLOCK_OPS 2048

/* Encoder parameters of every thread stream. */
#define TF_SUCC_BITS 12
#define TF_ADDR_BITS 14
#define TF_RET_DEPTH 64
#define TF_CHUNK_TARGET (1u << 20)

/* ------------------------------------------------------------------ */
/* tf_main.c: options and global state                                 */

extern const HChar *tf_out_dir; /* absolute path of --tf-out */
extern XArray *tf_only;         /* of const HChar*: --tf-only */
extern XArray *tf_exclude;      /* of const HChar*: --tf-exclude */
extern Bool tf_disabled;        /* in a forked child: record nothing */
extern Bool tf_verbose;         /* --tf-verbose=yes: describe roles on stderr */

/* Prints "tf: <message>" on stderr. */
void tf_error(const HChar *fmt, ...) PRINTF_CHECK(1, 2);

/* ------------------------------------------------------------------ */
/* tf_funcs.c: what a function's entry means                            */

typedef enum {
   ROLE_NONE = 0,
   ROLE_ACQUIRE,   /* lock runtime: skip (reason 0), acquire at its return */
   ROLE_RELEASE,   /* lock runtime: release at entry, then skip (reason 0) */
   ROLE_COND_WAIT, /* release the mutex (RSI), skip (reason 1), re-acquire */
   ROLE_WAIT,      /* barrier or join: skip (reason 1) */
   ROLE_EXCLUDE,   /* --tf-exclude: skip (reason 2) */
   ROLE_ONLY,      /* --tf-only: trace while it is on the call stack */
   ROLE_CREATE     /* pthread_create: RDX is the new thread's start routine */
} Role;

/* Where the lock address (or start routine) comes from. */
typedef enum { ARG_NONE = 0, ARG_RDI, ARG_RSI, ARG_RDX, ARG_FIXED } ArgSource;

typedef struct {
   UChar role;       /* Role */
   UChar lock_kind;  /* enum tf_lock_kind */
   UChar arg;        /* ArgSource */
   UChar check_ret;  /* the lock is taken only if the function returns 0 */
   UChar fixed;      /* ARG_FIXED: which address-less lock (tf_fixed_lock) */
} FnRole;

/* The role of a function entered at its entry `entry`, by its raw name. */
FnRole tf_fn_role(const HChar *name, Addr entry);
/* The address standing for an address-less lock: the entry of the runtime
 * function that takes it (FORMAT.md 6.4). */
Addr tf_fixed_lock(UInt fixed);
/* Whether a --tf-only/--tf-exclude pattern names this raw symbol. */
Bool tf_pattern_matches(const HChar *pattern, const HChar *name);

/* ------------------------------------------------------------------ */
/* tf_blocks.c: the block table                                         */

#define TF_NO_SLOT 0xFFFFu

typedef struct {
   tf_block_info info;  /* first: what the encoder needs */
   UInt slots;          /* raw words after the block word */
   UShort arg_slot;     /* slot of the role's register at entry, or TF_NO_SLOT */
   UShort rax_slot;     /* slot of RAX at the end (returns), or TF_NO_SLOT */
   FnRole role;         /* set when the block starts at a function's entry */
   UInt fn_id;
   UInt next_same_addr; /* the next id at the same address, or TF_NO_BLOCK */
   UChar *ident;        /* code bytes then instruction lengths */
   UChar *op_insn;      /* per operand: its instruction's index */
} Block;

/* A superblock as the instrumenter sees it, before it has an id. */
typedef struct {
   Addr addr;
   UInt n_insns, n_ops, code_len;
   UChar end; /* enum tf_end */
   UChar lens[TF_MAX_BLOCK_INSNS];
   tf_block_op ops[TF_MAX_BLOCK_OPS];
} BlockShape;

#define TF_BLOCK_CHUNK_BITS 12
extern Block *tf_block_chunks[];
static inline Block *tf_block(UInt id)
{
   return &tf_block_chunks[id >> TF_BLOCK_CHUNK_BITS][id & ((1u << TF_BLOCK_CHUNK_BITS) - 1)];
}

void tf_blocks_init(void);
/* The id of the block of this shape, reusing the id of identical code at
 * the same address; a new block is appended to blocks.tfc. */
UInt tf_block_get(const BlockShape *shape);
UInt tf_blocks_count(void);
/* Lowest block id at address a, or TF_NO_BLOCK. */
UInt tf_block_at(Addr a);
/* Writes the open block-table chunk: called before any thread chunk. */
void tf_blocks_flush(void);
/* The modules seen so far, as the manifest's `modules` array. */
void tf_blocks_manifest_modules(tf_mp *mp);

/* ------------------------------------------------------------------ */
/* tf_raw.c: the raw buffer filled by instrumented code                  */

/* Raw records: a block word followed by the block's `slots` words.
 * Block word: id + 1 (bits 0..31); a partial execution also has bit 62 set,
 * n_insns in bits 32..43 and n_ops in bits 44..61. A zero word at the cursor
 * means no block is in progress. */
#define TF_RAW_WORDS (1u << 15)
#define TF_RAW_PARTIAL (1ull << 62)
#define TF_RAW_MAX_PARTIAL_INSNS 0xFFFu
#define TF_RAW_MAX_PARTIAL_OPS 0x3FFFFu

extern ULong tf_raw_buf[];
extern ULong *tf_raw_cursor;

static inline ULong tf_raw_partial_word(UInt id, UInt n_insns, UInt n_ops)
{
   return (ULong)(id + 1) | TF_RAW_PARTIAL | ((ULong)n_insns << 32) | ((ULong)n_ops << 44);
}
/* The highest cursor value at which a block of `slots` slots may start. */
static inline ULong *tf_raw_limit(UInt slots)
{
   return &tf_raw_buf[TF_RAW_WORDS - slots - 2];
}

void tf_raw_init(void);
/* Which thread's blocks the buffer holds: switching flushes it first. */
struct Thread;
void tf_raw_set_owner(struct Thread *t);
struct Thread *tf_raw_owner(void);
/* Hands everything in the buffer to its owner's encoder. */
void tf_raw_flush(void);
/* A synchronous fault at guest address `ip` interrupted the block in
 * progress, if any: record the instructions before `ip` as partial. */
void tf_raw_fault(Addr ip);
Bool tf_raw_in_progress(void);
/* Called from instrumented code (dirty helpers). */
ULong tf_raw_full_helper(void);
void tf_raw_side_exit_helper(ULong p, ULong word, ULong slots);

/* ------------------------------------------------------------------ */
/* tf_thread.c: per-thread state                                         */

typedef struct Thread Thread;

/* The thread state of Valgrind thread `vgtid`, created on first use. */
Thread *tf_thread_of(ThreadId vgtid);
Thread *tf_thread_if_any(ThreadId vgtid);
/* Notes that `child` was created by `parent` (before it runs). */
void tf_thread_created(ThreadId parent, ThreadId child);
/* The raw records [p, end) of thread t, into its encoder. */
void tf_thread_consume(Thread *t, const ULong *p, const ULong *end);
void tf_thread_syscall(Thread *t, UInt number, ULong nanos);
void tf_thread_signal(Thread *t, Int signo);
void tf_thread_signal_return(Thread *t, Int signo);
/* The thread's stream ends: `how` as in FORMAT.md thread_exit. */
void tf_thread_end(Thread *t, UInt how);
/* Valgrind thread `vgtid` made the exit syscall (it ends normally). */
void tf_thread_note_exit(ThreadId vgtid);
/* Ends every live thread's stream (process exit or death). */
void tf_threads_end_all(void);
/* Writes out every thread's open chunk (before exec, or a crash). */
void tf_threads_flush_all(void);
/* Syscall timing. */
void tf_thread_syscall_start(ThreadId vgtid);
ULong tf_thread_syscall_nanos(ThreadId vgtid);
/* Manifest: the `threads` array and the totals. */
void tf_threads_manifest(tf_mp *mp, ULong *traced, ULong *skipped);
UInt tf_threads_count(void);

/* ------------------------------------------------------------------ */
/* tf_output.c: files                                                    */

/* Creates the trace files that exist from the start; False on error. */
Bool tf_output_init(void);
/* Appends `len` bytes to file `name` of the trace directory; `header`
 * (32 bytes, or NULL) is written first when the file is created. */
Bool tf_output_append(const HChar *name, Bool *created, const UChar *header,
                      const UChar *data, SizeT len);
/* Writes the manifest (atomically, by rename). */
typedef struct {
   Bool complete;
   Bool have_exit_code;
   Long exit_code;
   Int exit_signal; /* 0 = none */
} TfOutcome;
void tf_manifest_write(const TfOutcome *o);

#endif
