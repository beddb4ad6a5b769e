/* Reading one superblock's IR (tf_walk.h): the pass that makes the block's
 * shape (instructions, their lengths, memory operands, how it ends) and the
 * walk over instructions and operands that the emission repeats. */
#include "tf_walk.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"

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
Access tf_access_of(IRTypeEnv *env, IRStmt *st, Walk *w)
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
Bool tf_walk_imark(Walk *w, IRStmt *st)
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


ExitKind tf_classify_exit(const Walk *w, IRStmt *st, Int last)
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
Int tf_scan_block(IRSB *sb, BlockShape *s)
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
      if (tf_walk_imark(&w, st) || w.insn > last)
         continue;
      if (st->tag == Ist_Exit) {
         if (tf_classify_exit(&w, st, last) == EXIT_COMPLETE) {
            committed = True; /* later operands of this insn are conditional */
            branch_exit |= st->Ist.Exit.jk == Ijk_Boring;
         }
         continue;
      }
      a = tf_access_of(sb->tyenv, st, &w);
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
