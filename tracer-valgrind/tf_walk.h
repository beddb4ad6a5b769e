/* Reading one superblock's IR for tf_instrument.c: its instructions, memory
 * operands and side exits, walked the same way by the scan (tf_walk.c),
 * which makes the block's shape, and by the emission, which instruments it,
 * so that both see the same instructions and operands. */
#ifndef TF_WALK_H
#define TF_WALK_H
#include "tf.h"

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

/* How a taken side exit ends the block's execution. */
typedef enum {
   EXIT_COMPLETE, /* in the last instruction, which completed: commit */
   EXIT_AFTER,    /* instruction `insn` completed, later ones did not run */
   EXIT_BEFORE    /* instruction `insn` did not complete (fault, retry) */
} ExitKind;

/* The memory access of statement `st` (operands 0, 1 or 2), noting a
 * load's address in the walk. */
Access tf_access_of(IRTypeEnv *env, IRStmt *st, Walk *w);
/* Advances the walk over an IMark; False for other statements. */
Bool tf_walk_imark(Walk *w, IRStmt *st);
/* How the taken side exit `st` ends the block, whose last instruction is
 * `last`. */
ExitKind tf_classify_exit(const Walk *w, IRStmt *st, Int last);
/* Pass 1: the block's instructions, operands and end kind. Returns the
 * index of the first IMark, or -1 when there is no instruction to trace. */
Int tf_scan_block(IRSB *sb, BlockShape *s);

#endif
