/* tf: a Pin tool that records what every thread executes, in the tf trace
 * format (trace-format/FORMAT.md), with the same tables and skip rules as
 * the Valgrind tool (trace-format/include/tf_tracer.h).
 *
 *   tf_pin.cpp          knobs, instrumentation, Pin callbacks
 *   tf_pin_blocks.cpp   block table: ids, functions, modules, blocks.tfc
 *   tf_pin_threads.cpp  per-thread records -> skip state machine -> encoder;
 *                       files and the manifest
 *
 * Instrumented code fills a per-thread Pin trace buffer with fixed-size
 * records (a block's head, each memory operand, registers a role needs).
 * The buffer's owner thread turns them into its stream when the buffer is
 * full and whenever an event (system call, signal, gather, a request of
 * the preload library) needs the records before it decoded first, so
 * threads never wait for each other. */
#ifndef TF_PIN_H
#define TF_PIN_H

#include "pin.H"
extern "C" {
#include "tf_tracer.h"
#include "tf_worksharing.h"
}

#define TF_PIN_VERSION "0.1.0"
#define TF_PIN_MAX_OPS 2048
#define TF_PIN_MAX_THREADS 65536

/* A raw record: kind in bits 56..63 of `word`, an index or id below. */
struct Rec {
    UINT64 word;
    UINT64 value;
};
enum {
    R_BLOCK = 1, /* word: block id; a block execution starts */
    R_OP = 2,    /* word: operand index; value: its address */
    R_ARG = 3,   /* value: the register the block's role names (lock, start routine) */
    R_RAX = 4,   /* value: RAX at a ret (the return value) */
    R_REP = 5    /* word: id of the rep-only block; value: RCX before an iteration */
};
static inline UINT64 rec_word(UINT64 kind, UINT64 low) { return (kind << 56) | low; }

/* A block as the tool knows it. */
struct Block {
    tf_block_info info;       /* what the encoder needs */
    tf_function_role role;          /* set when the block starts at a function's entry */
    bool in_omp_runtime;      /* in libgomp, libomp or libiomp5 (tf_wait_call_before) */
    UINT32 fn_id;
    UINT8 *op_flags;          /* per operand: TF_OP_* */
    UINT16 *op_insn;          /* per operand: its instruction's index */
    UINT32 *insn_offset;      /* per instruction: its offset in the block */
};

/* tf_pin_blocks.cpp */
void blocks_init();
/* The id of this block (address, code, lengths), defining it if new. */
UINT32 block_get(ADDRINT addr, const UINT8 *code, const UINT8 *lens, UINT32 n_insns,
                 const tf_block_op *ops, UINT32 n_ops, unsigned end, RTN rtn);
const Block *block(UINT32 id);
UINT32 block_at(ADDRINT addr);
/* Enters the function holding `addr` in the table (a new thread's start
 * routine: named even when the thread never runs before the process ends).
 * Called from analysis code: takes Pin's client lock. */
void function_note(ADDRINT addr);
UINT32 blocks_count();
/* Writes the open block-table chunk (before any thread chunk that may use it). */
void blocks_flush();
void module_add(IMG img);
void blocks_manifest_modules(tf_mp *mp);
ADDRINT fixed_lock(UINT32 fixed);

/* tf_pin_threads.cpp */
struct Thread;
Thread *thread_new(THREADID tid, OS_THREAD_ID parent_os, ADDRINT sp);
Thread *thread_of(THREADID tid);
/* Turns the records in [t->next, upto) into the stream. */
void thread_drain(Thread *t, const Rec *upto);
/* The buffer Pin fills was handed to the tool: drained, refilled from `buf`. */
void thread_buffer_done(Thread *t, const Rec *buf, UINT64 n);
/* The thread's buffer starts at `buf` (at thread start). */
void thread_buffer_start(Thread *t, const Rec *buf);
/* A system call starts (its number), or returns (~0). */
void thread_syscall(Thread *t, UINT64 number);
/* A fatal signal stopped the thread at `ip`. */
void thread_fault(Thread *t, ADDRINT ip);
void thread_signal(Thread *t, int signo, ADDRINT ip);
void thread_signal_return(Thread *t);
void thread_gather(Thread *t, UINT32 first_op, const PIN_MULTI_MEM_ACCESS_INFO *m);
void thread_end(Thread *t, unsigned how);
void thread_note_create(Thread *t, ADDRINT start_routine);
/* A request of tf's preload library (tf_requests.h): a1..a5 in a[1..5]. */
void thread_request(Thread *t, const uint64_t a[6]);
/* The preload library is loaded: worksharing loops are recorded. */
void worksharing_found();
/* At the end: says so if chunks of loops never announced were lost. */
void worksharing_report();
bool output_init(const std::string &dir, int argc, char **argv);
bool output_append(const char *name, bool *created, const UINT8 *header, const UINT8 *data,
                   size_t len);
void manifest_write(bool complete, bool have_code, INT64 code, int signo);

/* tf_pin.cpp: options */
extern std::vector<std::string> opt_only, opt_exclude;
extern bool process_exiting, disabled;
/* Processes the program started (fork, vfork, posix_spawn), untraced. */
extern UINT64 forks;

#endif
