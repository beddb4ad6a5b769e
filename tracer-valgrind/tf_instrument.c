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
#include "tf.h"
#include "libvex_guest_offsets.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_machine.h"

/* One memory access of a statement: one or two operands. */
typedef struct {
   IRExpr *addr;
   IRExpr *guard; /* NULL: unconditional */
   Int size;
   UInt n;        /* operands: 0, 1 or 2 */
   Bool write[2];
} Access;

/* State shared by the scan and the emission passes, so that both see the
 * same instructions and operands. */
typedef struct {
   Int insn;            /* current instruction, -1 before the first */
   UInt ops;            /* operands so far */
   UInt ops_at_insn;    /* operands before the current instruction */
   IRExpr *load_addr;   /* address of the current instruction's last load */
   Addr insn_addr;
} Walk;

static Bool always(const IRExpr *guard)
{
   return guard == NULL || (guard->tag == Iex_Const && guard->Iex.Const.con->Ico.U1);
}

static Bool same_atom(const IRExpr *a, const IRExpr *b)
{
   if (a == NULL || b == NULL || a->tag != b->tag)
      return False;
   if (a->tag == Iex_RdTmp)
      return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
   return a->tag == Iex_Const && a->Iex.Const.con->tag == Ico_U64 &&
          b->Iex.Const.con->tag == Ico_U64 && a->Iex.Const.con->Ico.U64 == b->Iex.Const.con->Ico.U64;
}

/* The memory access made by `st`, in the order the instruction makes it.
 * A CAS at the address the instruction has just loaded (x86 lock-prefixed
 * read-modify-write, xchg) is only the write: the load was the read. */
static Access access_of(IRTypeEnv *env, IRStmt *st, Walk *w)
{
   Access a = {NULL, NULL, 0, 0, {False, False}};
   switch (st->tag) {
   case Ist_WrTmp:
      if (st->Ist.WrTmp.data->tag == Iex_Load) {
         a.addr = st->Ist.WrTmp.data->Iex.Load.addr;
         a.size = sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty);
         a.n = 1;
         w->load_addr = a.addr;
      }
      break;
   case Ist_Store:
      a.addr = st->Ist.Store.addr;
      a.size = sizeofIRType(typeOfIRExpr(env, st->Ist.Store.data));
      a.n = 1;
      a.write[0] = True;
      break;
   case Ist_StoreG:
      a.addr = st->Ist.StoreG.details->addr;
      a.guard = st->Ist.StoreG.details->guard;
      a.size = sizeofIRType(typeOfIRExpr(env, st->Ist.StoreG.details->data));
      a.n = 1;
      a.write[0] = True;
      break;
   case Ist_LoadG: {
      IRType ty = Ity_INVALID, wide = Ity_INVALID;
      typeOfIRLoadGOp(st->Ist.LoadG.details->cvt, &wide, &ty);
      a.addr = st->Ist.LoadG.details->addr;
      a.guard = st->Ist.LoadG.details->guard;
      a.size = sizeofIRType(ty);
      a.n = 1;
      break;
   }
   case Ist_CAS: {
      IRCAS *cas = st->Ist.CAS.details;
      a.addr = cas->addr;
      a.size = sizeofIRType(typeOfIRExpr(env, cas->dataLo)) * (cas->dataHi ? 2 : 1);
      if (same_atom(cas->addr, w->load_addr)) {
         a.n = 1;
         a.write[0] = True;
      } else {
         a.n = 2;
         a.write[1] = True;
      }
      break;
   }
   case Ist_LLSC:
      a.addr = st->Ist.LLSC.addr;
      a.n = 1;
      if (st->Ist.LLSC.storedata == NULL) {
         a.size = sizeofIRType(typeOfIRTemp(env, st->Ist.LLSC.result));
      } else {
         a.size = sizeofIRType(typeOfIRExpr(env, st->Ist.LLSC.storedata));
         a.write[0] = True;
      }
      break;
   case Ist_Dirty: {
      IRDirty *d = st->Ist.Dirty.details;
      if (d->mFx == Ifx_None)
         break;
      a.addr = d->mAddr;
      a.size = d->mSize;
      a.guard = d->guard;
      a.n = d->mFx == Ifx_Modify ? 2 : 1;
      a.write[0] = d->mFx == Ifx_Write;
      a.write[1] = True;
      break;
   }
   default:
      break;
   }
   if (always(a.guard))
      a.guard = NULL;
   if (a.size > TF_MAX_OP_SIZE)
      a.size = TF_MAX_OP_SIZE;
   if (a.size < 1)
      a.size = 1;
   return a;
}

/* Valgrind's "special instruction" preamble (valgrind.h): four rotations
 * of RDI by 3, 13, 61 and 51 bits, 4 bytes each, a no-op in total. */
static const UChar special_preamble[16] = {0x48, 0xC1, 0xC7, 0x03, 0x48, 0xC1, 0xC7, 0x0D,
                                           0x48, 0xC1, 0xC7, 0x3D, 0x48, 0xC1, 0xC7, 0x33};

/* The real x86 instructions behind an IMark of `len` bytes at `addr`:
 * their count, and their lengths in `lens` (when not NULL). VEX presents a
 * client request (the preamble and `xchg %rbx,%rbx`, or another of the
 * `xchg %reg,%reg` of valgrind.h) as one 19-byte instruction; natively the
 * CPU runs five, which is what the trace records (FORMAT.md, section 5).
 * 0: a length the trace format cannot hold (1..15), which nothing else
 * should produce. Instrumentation time only. */
static UInt real_insns(Addr addr, UInt len, UChar *lens)
{
   const UChar *code = (const UChar *)addr;
   UInt i;
   if (len >= 1 && len <= TF_MAX_INSN_LEN) {
      if (lens)
         lens[0] = (UChar)len;
      return 1;
   }
   if (len != sizeof special_preamble + 3 ||
       VG_(memcmp)(code, special_preamble, sizeof special_preamble) != 0 || code[16] != 0x48 ||
       code[17] != 0x87)
      return 0;
   for (i = 0; lens && i < 4; i++)
      lens[i] = 4;
   if (lens)
      lens[4] = 3; /* 48 87 /r: xchg %reg,%reg */
   return 5;
}

/* Advances the walk over an IMark; False for other statements. What follows
 * an undecodable instruction (length 0) belongs to no instruction. An IMark
 * that stands for several real instructions (real_insns) advances to the
 * last of them, which gets its operands and side exits. */
static Bool walk_imark(Walk *w, IRStmt *st)
{
   if (st->tag != Ist_IMark)
      return False;
   if (st->Ist.IMark.len == 0) {
      w->insn = TF_MAX_BLOCK_INSNS;
      return True;
   }
   w->insn += (Int)real_insns(st->Ist.IMark.addr, st->Ist.IMark.len, NULL);
   w->ops_at_insn = w->ops;
   w->load_addr = NULL;
   w->insn_addr = st->Ist.IMark.addr;
   return True;
}

/* How a taken side exit ends the block's execution. */
typedef enum {
   EXIT_COMPLETE, /* in the last instruction, which completed: commit */
   EXIT_AFTER,    /* instruction `insn` completed, later ones did not run */
   EXIT_BEFORE    /* instruction `insn` did not complete (fault, retry) */
} ExitKind;

static ExitKind classify_exit(const Walk *w, IRStmt *st, Int last)
{
   const IRConst *dst = st->Ist.Exit.dst;
   switch (st->Ist.Exit.jk) {
   case Ijk_SigILL: case Ijk_SigTRAP: case Ijk_SigSEGV: case Ijk_SigBUS:
   case Ijk_SigFPE: case Ijk_SigFPE_IntDiv: case Ijk_SigFPE_IntOvf:
   case Ijk_NoDecode: case Ijk_EmFail: case Ijk_MapFail:
      return EXIT_BEFORE;
   default:
      break;
   }
   /* a restart of the same instruction (failed CAS of a locked insn) */
   if (dst->tag == Ico_U64 && dst->Ico.U64 == w->insn_addr)
      return EXIT_BEFORE;
   return w->insn == last ? EXIT_COMPLETE : EXIT_AFTER;
}

static UChar end_kind(IRSB *sb, const BlockShape *s, Bool branch_exit)
{
   Bool next_const = sb->next->tag == Iex_Const;
   Addr fall = s->addr + s->code_len;
   Bool to_fall = next_const && sb->next->Iex.Const.con->Ico.U64 == fall;
   switch (sb->jumpkind) {
   case Ijk_Boring:
      if (branch_exit)
         return TF_END_BRANCH;
      if (!next_const)
         return TF_END_INDIRECT_JUMP;
      return to_fall ? TF_END_FALLTHROUGH : TF_END_JUMP;
   case Ijk_Call:
      return next_const ? TF_END_CALL : TF_END_INDIRECT_CALL;
   case Ijk_Ret:
      return TF_END_RETURN;
   case Ijk_NoRedir: /* Valgrind's call-noredir (a wrapper calling the function it wraps) */
      return TF_END_INDIRECT_CALL;
   case Ijk_Sys_syscall: case Ijk_Sys_int32: case Ijk_Sys_int128: case Ijk_Sys_int129:
   case Ijk_Sys_int130: case Ijk_Sys_int145: case Ijk_Sys_int210: case Ijk_Sys_sysenter:
      return TF_END_SYSCALL;
   case Ijk_Yield: case Ijk_EmWarn: case Ijk_ClientReq: case Ijk_InvalICache:
   case Ijk_FlushDCache:
      return to_fall ? TF_END_FALLTHROUGH : TF_END_OTHER;
   default:
      return TF_END_OTHER;
   }
}

/* Pass 1: the block's instructions, operands and end kind. Returns the
 * index of the first IMark, or -1 when there is no instruction to trace. */
static Int scan(IRSB *sb, BlockShape *s)
{
   Int i, first = -1, last;
   Walk w = {-1, 0, 0, NULL, 0};
   Bool committed = False, branch_exit = False;
   s->n_insns = s->n_ops = s->code_len = 0;
   for (i = 0; i < sb->stmts_used; i++) {
      IRStmt *st = sb->stmts[i];
      UInt n;
      if (st->tag != Ist_IMark)
         continue;
      if (first < 0)
         first = i;
      if (st->Ist.IMark.len == 0)
         break; /* undecodable: not part of the block */
      if (s->n_insns == 0)
         s->addr = st->Ist.IMark.addr;
      /* chase and unrolling are off: one straight run of code */
      tl_assert(st->Ist.IMark.addr == s->addr + s->code_len);
      tl_assert(s->n_insns + 5 <= TF_MAX_BLOCK_INSNS);
      n = real_insns(st->Ist.IMark.addr, st->Ist.IMark.len, s->lens + s->n_insns);
      if (n == 0)
         tf_fatal("the instruction at %#lx is %u bytes long, which the trace format "
                  "cannot record (1 to 15 bytes)",
                  (unsigned long)st->Ist.IMark.addr, (UInt)st->Ist.IMark.len);
      s->n_insns += n;
      s->code_len += st->Ist.IMark.len;
   }
   if (s->n_insns == 0)
      return -1;
   last = (Int)s->n_insns - 1;
   for (i = first; i < sb->stmts_used; i++) {
      IRStmt *st = sb->stmts[i];
      Access a;
      UInt k;
      if (walk_imark(&w, st) || w.insn > last)
         continue;
      if (st->tag == Ist_Exit) {
         if (classify_exit(&w, st, last) == EXIT_COMPLETE) {
            committed = True; /* later operands of this insn are conditional */
            branch_exit |= st->Ist.Exit.jk == Ijk_Boring;
         }
         continue;
      }
      a = access_of(sb->tyenv, st, &w);
      for (k = 0; k < a.n; k++) {
         tf_block_op *op = &s->ops[w.ops++];
         tl_assert(w.ops <= TF_MAX_BLOCK_OPS);
         op->insn = (UShort)w.insn;
         op->size = (UShort)a.size;
         op->flags = (a.write[k] ? TF_OP_WRITE : 0) | (a.guard || committed ? TF_OP_COND : 0);
      }
   }
   s->n_ops = w.ops;
   s->end = end_kind(sb, s, branch_exit);
   return first;
}

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
   first = scan(sbIn, &shape);
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
      if (!walk_imark(&w, st) && w.insn <= last) {
         if (st->tag == Ist_Exit) {
            emit_exit(sb, b, id, p, end, &w, classify_exit(&w, st, last), st->Ist.Exit.guard);
         } else {
            Access a = access_of(sb->tyenv, st, &w);
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
