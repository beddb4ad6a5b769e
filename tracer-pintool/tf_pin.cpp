/* Knobs, instrumentation and Pin callbacks of the tf Pin tool.
 *
 *   pin -t obj-intel64/tf_pin.so -o DIR [-only FN]... [-exclude FN]... -- PROGRAM ARGS
 *
 * Per basic block (Pin's BBL): one R_BLOCK record at its head, an R_OP
 * record per memory operand (predicated: a rep iteration that does not run
 * has none), the argument register at the entry of a runtime function,
 * RAX at a ret, RCX at a rep instruction. Gathers and scatters go through
 * an analysis call (the fill-buffer API cannot pass their element list). */
#include "tf_pin.h"
#include <stddef.h>

std::vector<std::string> opt_only, opt_exclude;
bool process_exiting, disabled;
UINT64 forks;
static BUFFER_ID buf_id;
static int fatal_signal;

static KNOB<std::string> knob_out(KNOB_MODE_WRITEONCE, "pintool", "o", "", "trace directory (must exist)");
static KNOB<std::string> knob_only(KNOB_MODE_APPEND, "pintool", "only", "",
                                   "record only while FN is on the call stack (repeatable)");
static KNOB<std::string> knob_exclude(KNOB_MODE_APPEND, "pintool", "exclude", "",
                                      "skip FN and its callees (repeatable)");

static const Rec *buffer_at(const CONTEXT *ctxt)
{
    return (const Rec *)PIN_GetBufferPointer(const_cast<CONTEXT *>(ctxt), buf_id);
}

/* ---- instrumentation ---- */

static unsigned end_of(INS tail)
{
    if (INS_IsSyscall(tail))
        return TF_END_SYSCALL;
    if (INS_IsCall(tail))
        return INS_IsDirectControlFlow(tail) ? TF_END_CALL : TF_END_INDIRECT_CALL;
    if (INS_IsRet(tail))
        return TF_END_RETURN;
    if (INS_IsBranch(tail)) {
        if (INS_HasFallThrough(tail))
            return TF_END_BRANCH;
        return INS_IsDirectControlFlow(tail) ? TF_END_JUMP : TF_END_INDIRECT_JUMP;
    }
    if (INS_HasRealRep(tail))
        return TF_END_BRANCH; /* a rep instruction loops back to itself */
    if (INS_IsHalt(tail) || !INS_HasFallThrough(tail))
        return TF_END_OTHER;
    return TF_END_FALLTHROUGH;
}

/* The memory operands of `ins` (instruction `i` of its block), appended to
 * ops; returns false when the block has too many. Read before write. */
static bool operands_of(INS ins, UINT16 i, std::vector<tf_block_op> &ops)
{
    UINT8 cond = INS_HasRealRep(ins) ? TF_OP_COND : 0;
    if (INS_IsVgather(ins) || INS_IsVscatter(ins)) {
        UINT32 n = INS_MemoryOperandElementCount(ins, 0);
        UINT16 size = (UINT16)INS_MemoryOperandElementSize(ins, 0);
        for (UINT32 k = 0; k < n; k++) {
            tf_block_op op = {i, (UINT8)(TF_OP_COND | (INS_IsVscatter(ins) ? TF_OP_WRITE : 0)), size};
            ops.push_back(op);
        }
        return ops.size() <= TF_PIN_MAX_OPS;
    }
    for (UINT32 m = 0; m < INS_MemoryOperandCount(ins); m++) {
        UINT16 size = (UINT16)INS_MemoryOperandSize(ins, m);
        if (size == 0 || size > TF_MAX_OP_SIZE)
            continue;
        if (INS_MemoryOperandIsRead(ins, m)) {
            tf_block_op op = {i, cond, size};
            ops.push_back(op);
        }
        if (INS_MemoryOperandIsWritten(ins, m)) {
            tf_block_op op = {i, (UINT8)(cond | TF_OP_WRITE), size};
            ops.push_back(op);
        }
    }
    return ops.size() <= TF_PIN_MAX_OPS;
}

static void fill(INS ins, UINT64 kind, UINT64 low, IARG_TYPE what, REG reg)
{
    INS_InsertFillBuffer(ins, IPOINT_BEFORE, buf_id, IARG_ADDRINT, (ADDRINT)rec_word(kind, low),
                         offsetof(Rec, word), what, reg, offsetof(Rec, value), IARG_END);
}

static VOID on_gather(THREADID tid, CONTEXT *ctxt, UINT32 first_op, PIN_MULTI_MEM_ACCESS_INFO *m)
{
    Thread *t = thread_of(tid);
    if (t) {
        thread_drain(t, buffer_at(ctxt));
        thread_gather(t, first_op, m);
    }
}

static void instrument_bbl(BBL bbl)
{
    std::vector<UINT8> code(BBL_Size(bbl)), lens;
    std::vector<tf_block_op> ops;
    ADDRINT addr = BBL_Address(bbl);
    if (PIN_SafeCopy(code.data(), (const VOID *)addr, code.size()) != code.size())
        return;
    UINT16 i = 0;
    for (INS ins = BBL_InsHead(bbl); INS_Valid(ins); ins = INS_Next(ins), i++) {
        lens.push_back((UINT8)INS_Size(ins));
        if (!operands_of(ins, i, ops))
            return; /* more operands than a block may have: not recorded (README) */
    }
    PIN_LockClient();
    RTN rtn = RTN_FindByAddress(addr);
    UINT32 id = block_get(addr, code.data(), lens.data(), (UINT32)lens.size(), ops.data(),
                          (UINT32)ops.size(), end_of(BBL_InsTail(bbl)), rtn);
    PIN_UnlockClient();
    const Block *b = block(id);

    INS head = BBL_InsHead(bbl);
    INS_InsertFillBuffer(head, IPOINT_BEFORE, buf_id, IARG_ADDRINT, (ADDRINT)rec_word(R_BLOCK, id),
                         offsetof(Rec, word), IARG_ADDRINT, (ADDRINT)0, offsetof(Rec, value),
                         IARG_END);
    static const REG arg_regs[] = {REG_INVALID_, REG_RDI, REG_RSI, REG_RDX, REG_INVALID_, REG_RSP};
    if (b->role.role != TF_ROLE_NONE && b->role.arg != TF_ARG_NONE && b->role.arg != TF_ARG_FIXED)
        fill(head, R_ARG, 0, IARG_REG_VALUE, arg_regs[b->role.arg]);

    UINT32 j = 0;
    i = 0;
    for (INS ins = head; INS_Valid(ins); ins = INS_Next(ins), i++) {
        if (INS_IsVgather(ins) || INS_IsVscatter(ins)) {
            INS_InsertCall(ins, IPOINT_BEFORE, (AFUNPTR)on_gather, IARG_THREAD_ID, IARG_CONTEXT,
                           IARG_UINT32, j, IARG_MULTI_MEMORYACCESS_EA, IARG_END);
            while (j < ops.size() && ops[j].insn == i)
                j++;
            continue;
        }
        for (UINT32 m = 0; m < INS_MemoryOperandCount(ins); m++) {
            UINT32 size = INS_MemoryOperandSize(ins, m);
            if (size == 0 || size > TF_MAX_OP_SIZE)
                continue;
            UINT32 n = (INS_MemoryOperandIsRead(ins, m) ? 1 : 0) + (INS_MemoryOperandIsWritten(ins, m) ? 1 : 0);
            for (UINT32 k = 0; k < n; k++, j++)
                INS_InsertFillBufferPredicated(ins, IPOINT_BEFORE, buf_id, IARG_ADDRINT,
                                               (ADDRINT)rec_word(R_OP, j), offsetof(Rec, word),
                                               IARG_MEMORYOP_EA, m, offsetof(Rec, value), IARG_END);
        }
        if (INS_IsRet(ins))
            fill(ins, R_RAX, 0, IARG_REG_VALUE, REG_RAX);
        if (INS_HasRealRep(ins)) {
            /* the block of the rep instruction alone: its later iterations,
             * and the count test that ends the loop (FORMAT.md section 10) */
            std::vector<tf_block_op> rep_ops;
            UINT8 len = (UINT8)INS_Size(ins);
            operands_of(ins, 0, rep_ops);
            PIN_LockClient();
            UINT32 rep = block_get(INS_Address(ins), code.data() + (INS_Address(ins) - addr), &len, 1,
                                   rep_ops.data(), (UINT32)rep_ops.size(), TF_END_BRANCH, rtn);
            PIN_UnlockClient();
            fill(ins, R_REP, rep, IARG_REG_VALUE, REG_RCX);
        }
    }
}

static VOID instrument_trace(TRACE trace, VOID *)
{
    for (BBL bbl = TRACE_BblHead(trace); BBL_Valid(bbl); bbl = BBL_Next(bbl))
        instrument_bbl(bbl);
}

/* A request of tf's preload library (libtf_omp.so, which tf has the
 * program load): what the OpenMP runtime handed the thread. */
static VOID on_request(THREADID tid, CONTEXT *ctxt, ADDRINT code, ADDRINT a1, ADDRINT a2,
                       ADDRINT a3, ADDRINT a4, ADDRINT a5)
{
    Thread *t = thread_of(tid);
    if (t) {
        const uint64_t a[6] = {code, a1, a2, a3, a4, a5};
        thread_drain(t, buffer_at(ctxt));
        thread_request(t, a);
    }
}

static VOID image_loaded(IMG img, VOID *)
{
    module_add(img);
    RTN rtn = RTN_FindByName(img, "tf_request");
    if (!RTN_Valid(rtn))
        return;
    RTN_Open(rtn);
    RTN_InsertCall(rtn, IPOINT_BEFORE, (AFUNPTR)on_request, IARG_THREAD_ID, IARG_CONTEXT,
                   IARG_FUNCARG_ENTRYPOINT_VALUE, 0, IARG_FUNCARG_ENTRYPOINT_VALUE, 1,
                   IARG_FUNCARG_ENTRYPOINT_VALUE, 2, IARG_FUNCARG_ENTRYPOINT_VALUE, 3,
                   IARG_FUNCARG_ENTRYPOINT_VALUE, 4, IARG_FUNCARG_ENTRYPOINT_VALUE, 5, IARG_END);
    RTN_Close(rtn);
    worksharing_found();
}

/* ---- callbacks ---- */

static VOID *buffer_full(BUFFER_ID, THREADID tid, const CONTEXT *, VOID *buf, UINT64 n, VOID *)
{
    Thread *t = thread_of(tid);
    if (t)
        thread_buffer_done(t, (const Rec *)buf, n);
    return buf;
}

static VOID thread_start(THREADID tid, CONTEXT *ctxt, INT32, VOID *)
{
    Thread *t = thread_new(tid, PIN_GetParentTid(), PIN_GetContextReg(ctxt, REG_STACK_PTR));
    if (t)
        thread_buffer_start(t, buffer_at(ctxt));
}

static VOID thread_fini(THREADID tid, const CONTEXT *ctxt, INT32, VOID *)
{
    Thread *t = thread_of(tid);
    if (!t)
        return;
    if (ctxt)
        thread_drain(t, buffer_at(ctxt));
    thread_end(t, process_exiting ? TF_EXIT_PROCESS : TF_EXIT_ENDED);
}

static VOID syscall_entry(THREADID tid, CONTEXT *ctxt, SYSCALL_STANDARD std, VOID *)
{
    Thread *t = thread_of(tid);
    if (t) {
        thread_drain(t, buffer_at(ctxt));
        thread_syscall(t, PIN_GetSyscallNumber(ctxt, std));
    }
}

static VOID syscall_exit(THREADID tid, CONTEXT *, SYSCALL_STANDARD, VOID *)
{
    Thread *t = thread_of(tid);
    if (t)
        thread_syscall(t, ~0ull);
}

static VOID context_change(THREADID tid, CONTEXT_CHANGE_REASON reason, const CONTEXT *from,
                           CONTEXT *, INT32 info, VOID *)
{
    Thread *t = thread_of(tid);
    if (!t || !from)
        return;
    thread_drain(t, buffer_at(from));
    ADDRINT ip = PIN_GetContextReg(from, REG_INST_PTR);
    switch (reason) {
    case CONTEXT_CHANGE_REASON_SIGNAL:
        thread_signal(t, info, ip);
        break;
    case CONTEXT_CHANGE_REASON_SIGRETURN:
        thread_signal_return(t);
        break;
    case CONTEXT_CHANGE_REASON_FATALSIGNAL:
        fatal_signal = info;
        thread_fault(t, ip);
        break;
    default:
        break;
    }
}

static VOID fork_child(THREADID, const CONTEXT *, VOID *) { disabled = true; }
static VOID fork_parent(THREADID, const CONTEXT *, VOID *) { forks++; }
static VOID prepare_fini(VOID *) { process_exiting = true; }
static VOID fini(INT32 code, VOID *)
{
    manifest_write(true, fatal_signal == 0, code, fatal_signal);
    worksharing_report();
}

static INT32 usage()
{
    fprintf(stderr, "tf: usage: pin -t tf_pin.so -o DIR [-only FN]... [-exclude FN]... -- PROGRAM ARGS\n");
    return 1;
}

int main(int argc, char *argv[])
{
    PIN_InitSymbols();
    if (PIN_Init(argc, argv) || knob_out.Value().empty())
        return usage();
    for (UINT32 i = 0; i < knob_only.NumberOfValues(); i++)
        if (!knob_only.Value(i).empty())
            opt_only.push_back(knob_only.Value(i));
    for (UINT32 i = 0; i < knob_exclude.NumberOfValues(); i++)
        if (!knob_exclude.Value(i).empty())
            opt_exclude.push_back(knob_exclude.Value(i));
    int app = 0;
    while (app < argc && std::string(argv[app]) != "--")
        app++;
    blocks_init();
    if (!output_init(knob_out.Value(), argc - app - 1, argv + app + 1)) {
        fprintf(stderr, "tf: cannot write into %s\n", knob_out.Value().c_str());
        return 1;
    }
    buf_id = PIN_DefineTraceBuffer(sizeof(Rec), 256, buffer_full, NULL);
    if (buf_id == BUFFER_ID_INVALID) {
        fprintf(stderr, "tf: cannot allocate trace buffers\n");
        return 1;
    }
    IMG_AddInstrumentFunction(image_loaded, NULL);
    TRACE_AddInstrumentFunction(instrument_trace, NULL);
    PIN_AddThreadStartFunction(thread_start, NULL);
    PIN_AddThreadFiniFunction(thread_fini, NULL);
    PIN_AddSyscallEntryFunction(syscall_entry, NULL);
    PIN_AddSyscallExitFunction(syscall_exit, NULL);
    PIN_AddContextChangeFunction(context_change, NULL);
    PIN_AddForkFunction(FPOINT_AFTER_IN_CHILD, fork_child, NULL);
    PIN_AddForkFunction(FPOINT_AFTER_IN_PARENT, fork_parent, NULL);
    PIN_AddPrepareForFiniFunction(prepare_fini, NULL);
    PIN_AddFiniFunction(fini, NULL);
    PIN_StartProgram();
    return 0;
}
