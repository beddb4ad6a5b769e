/* tf: a Valgrind tool that records what every thread executes, in the tf
 * trace format (trace-format/FORMAT.md). Declarations shared by its files:
 *
 *   tf_main.c        tool registration, options, core callbacks, fini
 *   tf_options.c     reading the --tf-* options and their --help text
 *                    (tf_options.h)
 *   tf_instrument.c  VEX IR instrumentation (inline stores, no helper calls
 *                    on the common path)
 *   tf_walk.c        reading a superblock's instructions, operands and
 *                    exits, for the instrumentation (tf_walk.h)
 *   tf_raw.c         per-thread raw buffers that instrumented code fills, and
 *                    the encoder thread that drains them
 *   tf_thread.c      per-thread encoding: skip/lock state machine, events
 *   tf_blocks.c      block table: ids, functions, blocks.tfc
 *   tf_modules.c     the modules that hold blocks and functions
 *   tf_funcs.c       roles of functions (the table and the matching rules are
 *                    shared with every tracer: tf_tracer.h)
 *   tf_omp.c         OpenMP loop chunks reported by the preload library
 *   tf_omp_preload.c the preload library (runs in the client, not the tool)
 *   tf_output.c      files of the trace directory, error messages (a leaf)
 *   tf_manifest.c    the manifest
 *   tf_process.c     the processes the program starts or execs (counted,
 *                    kept for the manifest, followed with --tf-follow-exec)
 *
 * Two OS threads work on a trace. The Valgrind thread runs the client (one
 * client thread at a time) and the instrumented code appends raw records to
 * the running client thread's segment. Full segments go to the encoder
 * thread, which runs on another core and owns everything from there on:
 * the per-thread state machines, the encoders and the thread files.
 */
#ifndef TF_H
#define TF_H

#include "pub_tool_basics.h"
#include "valgrind.h" /* VG_IS_TOOL_USERREQ */
#include "pub_tool_tooliface.h"
#include "pub_tool_xarray.h"
#include "tf_trace.h"
#include "tf_tracer.h" /* roles, runtime table, skip state machine, file names */
#include "tf_worksharing.h" /* the preload library's requests -> loop events */

#define TF_TOOL_VERSION "0.1.0"

/* Limits of one superblock (VEX translates at most 100 instructions). */
#define TF_MAX_BLOCK_INSNS 255
#define TF_MAX_BLOCK_OPS 2048

#define TF_MAX_THREADS 65536

/* ------------------------------------------------------------------ */
/* tf_main.c: options and global state                                 */

extern const HChar *tf_out_dir; /* absolute path of --tf-out */
extern XArray *tf_only;         /* of const HChar*: --tf-only */
extern XArray *tf_exclude;      /* of const HChar*: --tf-exclude */
extern Bool tf_disabled;        /* in a forked child: record nothing */
extern Bool tf_verbose;         /* --tf-verbose=yes: describe roles on stderr */
extern Int tf_bench;            /* --tf-bench: skip work, to measure where time goes */
extern Int tf_hold_files;       /* --tf-hold-files: ms each trace file stays open longer */
extern Int tf_encoders;         /* --tf-encoders: encoder threads (0: one per spare core) */
extern Bool tf_worksharing;     /* --tf-worksharing: loop_chunk and static_loop events */

/* Like tf_error, then writes what was recorded and exits with status 1:
 * for what the trace format cannot hold (Valgrind thread only). */
void tf_fatal(const HChar *fmt, ...) PRINTF_CHECK(1, 2) __attribute__((noreturn));

/* ------------------------------------------------------------------ */
/* tf_funcs.c: what a function's entry means                            */

/* Roles and argument sources are shared with every tracer (tf_tracer.h). */
enum {
   ROLE_NONE = TF_ROLE_NONE,
   ROLE_ACQUIRE = TF_ROLE_ACQUIRE,
   ROLE_RELEASE = TF_ROLE_RELEASE,
   ROLE_COND_WAIT = TF_ROLE_COND_WAIT,
   ROLE_WAIT = TF_ROLE_WAIT,
   ROLE_EXCLUDE = TF_ROLE_EXCLUDE,
   ROLE_ONLY = TF_ROLE_ONLY,
   ROLE_CREATE = TF_ROLE_CREATE /* noted by a helper call (thread creation is rare) */
};
enum {
   ARG_NONE = TF_ARG_NONE,
   ARG_RDI = TF_ARG_RDI,
   ARG_RSI = TF_ARG_RSI,
   ARG_RDX = TF_ARG_RDX,
   ARG_FIXED = TF_ARG_FIXED,
   ARG_RSP = TF_ARG_RSP
};
typedef tf_function_role FnRole;

/* The role of a function entered at its entry `entry`, by its raw name. */
FnRole tf_fn_role(const HChar *name, Addr entry);
/* The role of code without a symbol that starts at `a` in module `module`,
 * by the name the analyzer gives it (`pigz+0x11250`): what a --tf-only or
 * --tf-exclude pattern of that form asks (ROLE_NONE when none is given). */
FnRole tf_offset_role(UInt module, Addr a);
/* The address standing for an address-less lock: the entry of the runtime
 * function that takes it (FORMAT.md 6.4). */
Addr tf_fixed_lock(UInt fixed);

/* ------------------------------------------------------------------ */
/* tf_blocks.c: the block table                                         */

#define TF_NO_SLOT 0xFFFFu

typedef struct {
   tf_block_info info;  /* first: what the encoder needs */
   UInt slots;          /* raw words after the block word */
   UShort arg_slot;     /* slot of the role's register at entry, or TF_NO_SLOT */
   UShort rax_slot;     /* slot of RAX at the end (returns), or TF_NO_SLOT */
   FnRole role;         /* set when the block starts at a function's entry */
   Bool in_omp_runtime; /* in libgomp, libomp or libiomp5 (tf_wait_call_before) */
   UInt fn_id;
   UInt next_same_addr; /* the next id at the same address, or TF_NO_BLOCK */
   UChar *ident;        /* code bytes, instruction lengths, then per operand
                           its instruction's index and its flags */
} Block;                /* 64 bytes: one cache line */

/* Per operand: the index of its instruction in the block. */
static inline const UChar *tf_block_op_insn(const Block *b)
{
   return b->ident + b->info.code_len + b->info.n_insns;
}

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
 * the same address; a new block is appended to the block table. */
UInt tf_block_get(const BlockShape *shape);
UInt tf_blocks_count(void);
/* Lowest block id at address a, or TF_NO_BLOCK. Safe in the encoder thread
 * while the Valgrind thread defines new blocks. */
UInt tf_block_at(Addr a);
/* Enters the function holding `a` in the table (a new thread's start
 * routine: named even when the thread never runs before the process ends). */
void tf_function_note(Addr a);
/* Writes the open block-table chunk. The Valgrind thread calls it before it
 * hands a segment over, so the table is on disk before any thread chunk
 * that uses it. */
void tf_blocks_flush(void);

/* tf_modules.c: the module id of the object that holds `a`, defining it in
 * the block-table stream `table` if new; 0 if none. */
UInt tf_module_of(tf_stream *table, DiEpoch ep, Addr a);
/* Whether module `id` is an OpenMP runtime (libgomp, libomp, libiomp5). */
Bool tf_module_is_omp_runtime(UInt id);
/* How the analyzer names the code at `a` in module `id`, `file+0xoffset`
 * (the file name of its path, the offset from its base), written to `buf`
 * of `size` bytes; False for no module or a name that does not fit. */
Bool tf_module_offset_name(UInt id, Addr a, HChar *buf, SizeT size);
/* The modules seen so far, as the manifest's `modules` array. */
void tf_modules_manifest(tf_mp *mp);

/* ------------------------------------------------------------------ */
/* Threads (tf_thread.c), and their raw segments (tf_raw.c)             */

/* Raw records in a segment: a block word and the block's `slots` words, or
 * a marker. Block word: id + 1 in bits 0..31; a complete execution has the
 * block's `slots` in bits 32..61 (so that the encoder thread finds the next
 * record without waiting for the block's description), a partial one bit
 * 62 set, n_insns in bits 32..43 and n_ops in bits 44..61. Marker: bit 63
 * set, its kind in bits 56..62, a payload in bits 0..55, maybe followed by
 * more words. A zero word at the cursor means no block is in progress. */
#define TF_RAW_PARTIAL (1ull << 62)
#define TF_RAW_MARKER (1ull << 63)
#define TF_RAW_MAX_PARTIAL_INSNS 0xFFFu
#define TF_RAW_MAX_PARTIAL_OPS 0x3FFFFu
enum {
   MK_START = 1,   /* + parent (Thread*), stack_lo, stack_hi */
   MK_SYSCALL = 2, /* payload: number; + nanos */
   MK_SIGNAL = 3,  /* payload: signo */
   MK_SIGRET = 4,  /* payload: signo */
   MK_EXIT = 5,    /* payload: how */
   MK_LOOP = 6,    /* + loop, first, count, stride, trip (a loop_chunk event) */
   MK_STATIC = 7   /* + loop, thread, threads (a static_loop event) */
};

static inline ULong tf_raw_block_word(UInt id, UInt slots)
{
   return (ULong)(id + 1) | ((ULong)slots << 32);
}
static inline ULong tf_raw_partial_word(UInt id, UInt n_insns, UInt n_ops)
{
   return (ULong)(id + 1) | TF_RAW_PARTIAL | ((ULong)n_insns << 32) | ((ULong)n_ops << 44);
}
/* The fields of a block word, as the two above wrote them. */
static inline UInt tf_raw_slots(ULong complete_word)
{
   return (UInt)(complete_word >> 32);
}
static inline UInt tf_raw_partial_insns(ULong partial_word)
{
   return (UInt)(partial_word >> 32) & TF_RAW_MAX_PARTIAL_INSNS;
}
static inline UInt tf_raw_partial_ops(ULong partial_word)
{
   return (UInt)(partial_word >> 44) & TF_RAW_MAX_PARTIAL_OPS;
}
static inline ULong tf_raw_marker(UInt kind, ULong payload)
{
   return TF_RAW_MARKER | ((ULong)kind << 56) | (payload & ((1ull << 56) - 1));
}

typedef struct Thread {
   /* set by the Valgrind thread before the encoder thread sees the thread */
   UInt tid, parent;
   HChar file[32];
   UChar header[TF_FILE_HEADER_SIZE];
   /* Valgrind thread only */
   ThreadId vgtid;
   Int worker;        /* the encoder thread of this thread */
   Addr created_routine; /* RDX at its last pthread_create (tf_note_create) */
   ULong *seg;        /* the segment being filled */
   ULong *cursor;     /* its cursor while the thread does not run */
   Bool running;      /* between start_client_code and stop_client_code */
   Bool started;      /* thread_start was written */
   Bool discard;      /* not traced (too many threads): its segment is overwritten */
   Bool ended_vg;     /* the stream's end was handed over */
   Bool exit_syscall; /* the thread made the exit system call */
   Bool mem_freed;
   ULong syscall_start;
   tf_ws_thread ws;   /* its part of the worksharing loops (tf_omp.c) */
   /* encoder thread only (the Valgrind thread reads them after tf_raw_drain) */
   Addr stack_lo, stack_hi, start_routine;
   Bool file_created;
   tf_wait_call wait_call;  /* a runtime's call kept aside while waiting */
   volatile Bool ended;     /* the stream is complete: mem may be freed */
   tf_skipper skip;         /* traced/skipped counts, frames, rwlocks held */
   tf_encoder enc;
   void *mem;
} Thread;

/* tf_thread.c (Valgrind thread) */
Thread *tf_thread_new(ThreadId vgtid, Thread *parent);
/* Its stack is known: the stream starts (thread_start). */
void tf_thread_started(Thread *t);
/* tf_thread.c (encoder thread) */
void tf_thread_consume(Thread *t, const ULong *p, const ULong *end);
void tf_threads_flush_encoders(UInt worker);
/* tf_thread.c (Valgrind thread, after tf_raw_drain) */
void tf_threads_manifest(tf_mp *mp, ULong *traced, ULong *skipped);
Thread *tf_thread_at(UInt index); /* every thread, by tid - 1; NULL past the end */
UInt tf_threads_count(void);
void tf_threads_free_ended(void);

/* tf_raw.c (Valgrind thread) */
#define TF_SEG_WORDS (1u << 15)
void tf_raw_init(Int shadow_base);
/* IR offsets of the cursor and the limit (shadow area 1). */
Int tf_raw_cursor_offset(void);
Int tf_raw_limit_offset(void);
/* Gives a thread a fresh segment. */
void tf_raw_attach(Thread *t);
/* The thread starts / stops running client code (start_client_code and
 * stop_client_code): the cursor moves into / out of its guest state, and a
 * nearly full segment is handed over. */
void tf_raw_start(Thread *t);
void tf_raw_stop(Thread *t);
/* Room for a marker of `words` words; write it there, then tf_raw_wrote. */
ULong *tf_raw_marker_room(Thread *t, UInt words);
void tf_raw_wrote(Thread *t, ULong *end);
/* Hands the thread's segment over; `more`: give it a new one. */
void tf_raw_handoff(Thread *t, Bool more);
/* A block of thread t is in progress (a fault interrupted it). */
Bool tf_raw_in_progress(Thread *t);
/* The block in progress faulted at guest address ip: the instructions
 * before ip ran. */
void tf_raw_fault(Thread *t, Addr ip);
/* Hands every segment over and waits until the encoder thread has
 * processed them; `flush`: it also writes every open chunk. */
void tf_raw_drain(Bool flush);
/* In a forked child: there is no encoder thread. */
void tf_raw_forget(void);

/* tf_omp.c (Valgrind thread): handles a client request of the preload
 * library (tf_requests.h) made by thread t; False if it is not one. */
Bool tf_omp_request(Thread *t, const UWord *args);
/* Chunks of loops whose bounds were never announced (not recorded). */
ULong tf_omp_lost_chunks(void);

/* tf_main.c: called by instrumented code at pthread_create's entry. */
void tf_note_create(ULong start_routine);

/* ------------------------------------------------------------------ */
/* tf_output.c: files and messages                                      */

/* Prints "tf: <message>" on stderr (Valgrind thread only). */
void tf_error(const HChar *fmt, ...) PRINTF_CHECK(1, 2);
/* Appends `len` bytes to file `name` of the trace directory; `header`
 * (32 bytes) is written first when the file is created. Safe in both
 * threads: it only makes system calls. */
Bool tf_output_append(const HChar *name, Bool *created, const UChar *header,
                      const UChar *data, SizeT len);
/* Replaces file `name` atomically (through a temporary file and a rename). */
Bool tf_output_replace(const HChar *name, const UChar *data, SizeT len);
/* The first write error (a path), or NULL; reported by the Valgrind thread. */
const HChar *tf_output_error(void);

/* ------------------------------------------------------------------ */
/* tf_manifest.c: the manifest                                          */

/* Writes the first manifest; False on error. */
Bool tf_manifest_init(void);
typedef struct {
   Bool complete;
   Bool have_exit_code;
   Long exit_code;
   Int exit_signal; /* 0 = none */
} TfOutcome;
/* tf_process.c: the processes the program starts (fork, vfork) and the
 * execve that replaces it, which the trace does not follow. */
void tf_process_forked(ThreadId tid); /* a VG_(atfork) parent callback */
ULong tf_process_forks(void);
/* Before an execve of the client's `path` with arguments `argv`. */
void tf_process_exec(Addr path, Addr argv);
/* After an execve that failed: the program goes on (the manifest is
 * written again, without the command). */
void tf_process_exec_failed(void);
/* The command of the execve under way (n 0: none). */
const HChar *const *tf_process_exec_command(SizeT *n);
/* --tf-follow-exec: programs that an execve of the run starts are traced
 * too, each into DIR/execs/PID (tf_process_trace_dir). */
extern Bool tf_follow_exec;
/* The directory this program's trace goes into, given --tf-out's `dir`:
 * `dir` for the run's first program, a new DIR/execs/PID for a program an
 * execve started when following them (which it makes; it ends the process
 * with an error if it cannot). */
const HChar *tf_process_trace_dir(const HChar *dir);

/* Writes the manifest (atomically, by rename); call after tf_raw_drain. */
void tf_manifest_write(const TfOutcome *o);

#endif
