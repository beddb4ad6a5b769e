/* The raw buffer. Valgrind runs one thread at a time, so one buffer serves
 * all threads: it holds the records of its owner, the thread that runs, and
 * is handed to the owner's encoder when it fills up, when another thread
 * starts running, and before any event of any thread (so that every
 * thread's records stay in program order). The buffer is small enough to
 * stay in the cache between the instrumented code that fills it and the
 * encoder that reads it. */
#include "tf.h"
#include "pub_tool_libcassert.h"

ULong tf_raw_buf[TF_RAW_WORDS] __attribute__((aligned(64)));
ULong *tf_raw_cursor = tf_raw_buf;
static Thread *owner;

void tf_raw_init(void)
{
   tf_raw_cursor = tf_raw_buf;
   tf_raw_buf[0] = 0;
   owner = NULL;
}

extern Int tf_bench;
void tf_raw_flush(void)
{
   if (tf_bench == 1) { tf_raw_cursor = tf_raw_buf; tf_raw_buf[0] = 0; return; }
   if (owner && !tf_disabled && tf_raw_cursor > tf_raw_buf)
      tf_thread_consume(owner, tf_raw_buf, tf_raw_cursor);
   tf_raw_cursor = tf_raw_buf;
   tf_raw_buf[0] = 0;
}

void tf_raw_set_owner(Thread *t)
{
   if (t != owner) {
      tf_raw_flush();
      owner = t;
   }
}

Thread *tf_raw_owner(void)
{
   return owner;
}

Bool tf_raw_in_progress(void)
{
   return *tf_raw_cursor != 0;
}

ULong tf_raw_full_helper(void)
{
   tf_raw_flush();
   return (ULong)(Addr)tf_raw_cursor;
}

void tf_raw_side_exit_helper(ULong p, ULong word, ULong slots)
{
   ULong *r = (ULong *)(Addr)p;
   r[0] = word;
   tf_raw_cursor = r + 1 + slots;
   tf_raw_cursor[0] = 0;
}

void tf_raw_fault(Addr ip)
{
   ULong *r = tf_raw_cursor;
   UInt id, k = 0, n_ops = 0;
   const Block *b;
   Addr a;
   if (r[0] == 0)
      return;
   id = (UInt)r[0] - 1;
   tl_assert(id < tf_blocks_count());
   b = tf_block(id);
   /* the faulting instruction: the instructions before it ran */
   a = b->info.address;
   while (k < b->info.n_insns && a != ip)
      a += b->ident[b->info.code_len + k++];
   if (k == 0 || k == b->info.n_insns) {
      r[0] = 0; /* nothing ran, or the address is not in the block */
      return;
   }
   while (n_ops < b->info.n_ops && b->op_insn[n_ops] < k)
      n_ops++;
   tf_raw_side_exit_helper((ULong)(Addr)r, tf_raw_partial_word(id, k, n_ops), b->slots);
}
