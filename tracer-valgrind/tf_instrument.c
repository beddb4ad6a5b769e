/* Instrumentation: each superblock (chase and unrolling disabled, so it ends
 * at the first control transfer apart from side exits) becomes one block of
 * the table, and its IR gains inline code that appends a raw record to the
 * running thread's segment (tf_raw.c). The cursor and the segment's limit
 * are in the thread's shadow guest state:
 *
 *   p = cursor; if (p + slots + 2 > limit) exit to the scheduler;
 *   p[0] = block word; p[1 + slots] = 0;  [p[1 + arg_slot] = RDI/RSI/RDX]
 *   ... p[1 + j] = address of operand j, right before its access
 *       (guarded accesses store ITE(guard, addr, 0)) ...
 *   [p[1 + rax_slot] = RAX at a return]
 *   cursor = p + 1 + slots
 *
 * A non-zero word at the cursor therefore means "a block is in progress";
 * a fault inside the block leaves it so (tf_raw_fault). Side exits:
 *  - a taken exit in the last instruction (a branch, the count-zero exit of
 *    a rep instruction) advances the cursor: cursor = ITE(guard, end, p);
 *    operands of that instruction after the exit are conditional (zeroed
 *    beforehand);
 *  - any other taken exit turns the record into a partial execution with a
 *    guarded store (or cancels it when no instruction completed).
 * No helper is called: everything is inline.
 */
#include "tf_walk.h"
#include "libvex_guest_offsets.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_machine.h"

/* ---- emission helpers ---- */

static IRExpr *u64(ULong v)
{
   return IRExpr_Const(IRConst_U64(v));
}

static IRTemp tmp_of(IRSB *sb, IRType ty, IRExpr *e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return t;
}

static IRExpr *slot_addr(IRSB *sb, IRTemp p, UInt slot)
{
   return IRExpr_RdTmp(
      tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(p), u64(8 * (1 + (ULong)slot)))));
}

static Int arg_offset(UChar arg);

static void store_slot(IRSB *sb, IRTemp p, UInt slot, IRExpr *value)
{
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot_addr(sb, p, slot), value));
}

static void store_reg_slot(IRSB *sb, IRTemp p, UInt slot, Int offset)
{
   store_slot(sb, p, slot, IRExpr_RdTmp(tmp_of(sb, Ity_I64, IRExpr_Get(offset, Ity_I64))));
}

static Int arg_offset(UChar arg)
{
   return arg == ARG_RSI   ? OFFSET_amd64_RSI
          : arg == ARG_RDX ? OFFSET_amd64_RDX
          : arg == ARG_RSP ? OFFSET_amd64_RSP
                           : OFFSET_amd64_RDI;
}

static IRExpr *rdtmp(IRTemp t)
{
   return IRExpr_RdTmp(t);
}

/* The start of the record: p, room for it, the block word, the zero after
 * the record, the entry register. */
static void emit_header(IRSB *sb, const Block *b, UInt id, IRTemp p, IRTemp end)
{
   IRTemp need, lim, full;
   addStmtToIRSB(sb, IRStmt_WrTmp(p, IRExpr_Get(tf_raw_cursor_offset(), Ity_I64)));
   need = tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rdtmp(p), u64(8 * (2 + (ULong)b->slots))));
   lim = tmp_of(sb, Ity_I64, IRExpr_Get(tf_raw_limit_offset(), Ity_I64));
   full = tmp_of(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, rdtmp(lim), rdtmp(need)));
   /* No room: back to the scheduler, which hands the segment over in
    * start_client_code; the block then starts again. The core handles an
    * emulation-warning exit silently. */
   addStmtToIRSB(sb, IRStmt_Exit(rdtmp(full), Ijk_EmWarn, IRConst_U64(b->info.address),
                                 OFFSET_amd64_RIP));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, rdtmp(p), u64(tf_raw_block_word(id, b->slots))));
   addStmtToIRSB(sb, IRStmt_WrTmp(end, IRExpr_Binop(Iop_Add64, rdtmp(p),
                                                    u64(8 * (1 + (ULong)b->slots)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, rdtmp(end), u64(0)));
   if (b->arg_slot != TF_NO_SLOT)
      store_reg_slot(sb, p, b->arg_slot, arg_offset(b->role.arg));
   if (b->role.role == ROLE_CREATE) {
      IRTemp rdx = tmp_of(sb, Ity_I64, IRExpr_Get(OFFSET_amd64_RDX, Ity_I64));
      addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
                           0, "tf_note_create", VG_(fnptr_to_fnentry)(tf_note_create),
                           mkIRExprVec_1(rdtmp(rdx)))));
   }
}

/* cursor = end, or under `guard`: cursor = guard ? end : p */
static void emit_commit(IRSB *sb, IRTemp p, IRTemp end, IRExpr *guard)
{
   IRExpr *v = rdtmp(end);
   if (guard)
      v = rdtmp(tmp_of(sb, Ity_I64, IRExpr_ITE(deepCopyIRExpr(guard), rdtmp(end), rdtmp(p))));
   addStmtToIRSB(sb, IRStmt_Put(tf_raw_cursor_offset(), v));
}

/* Before a side exit: what its being taken means for the record. */
static void emit_exit(IRSB *sb, const Block *b, UInt id, IRTemp p, IRTemp end, const Walk *w,
                      ExitKind kind, IRExpr *guard)
{
   UInt n_insns, n_ops, k;
   if (kind == EXIT_COMPLETE) {
      for (k = w->ops; k < b->info.n_ops; k++)
         store_slot(sb, p, k, u64(0));
      emit_commit(sb, p, end, guard);
      return;
   }
   n_insns = kind == EXIT_AFTER ? (UInt)w->insn + 1 : (UInt)w->insn;
   n_ops = kind == EXIT_AFTER ? w->ops : w->ops_at_insn;
   /* a partial execution, or none at all when no instruction completed */
   addStmtToIRSB(sb, IRStmt_StoreG(Iend_LE, rdtmp(p),
                                   u64(n_insns ? tf_raw_partial_word(id, n_insns, n_ops) : 0),
                                   deepCopyIRExpr(guard)));
   if (n_insns)
      emit_commit(sb, p, end, guard);
}

static void emit_access(IRSB *sb, IRTemp p, const Walk *w, const Access *a)
{
   UInt k;
   IRExpr *value = a->addr;
   if (a->guard)
      value = IRExpr_RdTmp(tmp_of(
         sb, Ity_I64, IRExpr_ITE(deepCopyIRExpr(a->guard), deepCopyIRExpr(a->addr), u64(0))));
   for (k = 0; k < a->n; k++)
      store_slot(sb, p, w->ops + k, deepCopyIRExpr(value));
}

IRSB *tf_instrument(VgCallbackClosure *closure, IRSB *sbIn, const VexGuestLayout *layout,
                    const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                    IRType gWordTy, IRType hWordTy)
{
   static BlockShape shape; /* large: not on Valgrind's small stack */
   IRSB *sb;
   Int i, first, last;
   UInt id;
   const Block *b;
   IRTemp p, end;
   Walk w = {-1, 0, 0, NULL, 0};

   if (tf_disabled || gWordTy != Ity_I64)
      return sbIn;
   tf_raw_init(layout->total_sizeB); /* where shadow area 1 starts */
   first = tf_scan_block(sbIn, &shape);
   if (first < 0)
      return sbIn;
   id = tf_block_get(&shape);
   b = tf_block(id);
   last = (Int)b->info.n_insns - 1;

   sb = deepCopyIRSBExceptStmts(sbIn);
   for (i = 0; i < first; i++) /* e.g. the self-check of self-modifying code */
      addStmtToIRSB(sb, sbIn->stmts[i]);
   p = newIRTemp(sb->tyenv, Ity_I64);
   end = newIRTemp(sb->tyenv, Ity_I64);
   emit_header(sb, b, id, p, end);

   for (i = first; i < sbIn->stmts_used; i++) {
      IRStmt *st = sbIn->stmts[i];
      if (!tf_walk_imark(&w, st) && w.insn <= last) {
         if (st->tag == Ist_Exit) {
            emit_exit(sb, b, id, p, end, &w, tf_classify_exit(&w, st, last), st->Ist.Exit.guard);
         } else {
            Access a = tf_access_of(sb->tyenv, st, &w);
            if (a.n > 0) {
               emit_access(sb, p, &w, &a);
               w.ops += a.n;
            }
         }
      }
      addStmtToIRSB(sb, st);
   }
   tl_assert(w.ops == b->info.n_ops);
   if (b->rax_slot != TF_NO_SLOT)
      store_reg_slot(sb, p, b->rax_slot, OFFSET_amd64_RAX);
   emit_commit(sb, p, end, NULL);
   return sb;
}
