/* The block table: one id per (address, code, instruction lengths), reused
 * when Valgrind retranslates the same code; functions and modules from the
 * debug info (modules: tf_modules.c); all of it written to blocks.tfc before any thread chunk that
 * uses it. */
#include "tf.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

#define MAX_BLOCK_CHUNKS (1u << 12) /* 16M blocks */
typedef char block_is_a_cache_line[sizeof(Block) == 64 ? 1 : -1];
Block *tf_block_chunks[MAX_BLOCK_CHUNKS];
static UInt n_blocks;

/* ---- open-addressing maps from an address to a 32-bit value ----
 * The encoder thread reads first_block_at while the Valgrind thread adds to
 * it: an entry's value is stored before its key, and a grown table is
 * complete before it is published (the old one is kept). */

typedef struct {
   Addr *keys; /* 0 = empty */
   UInt *vals;
   UInt cap;   /* a power of two */
} MapTab;

typedef struct {
   MapTab *volatile tab;
   UInt used;
} AddrMap;

static UInt map_slot(const MapTab *t, Addr a)
{
   UInt i = (UInt)tf_hash(a, 32) & (t->cap - 1);
   while (t->keys[i] != 0 && t->keys[i] != a)
      i = (i + 1) & (t->cap - 1);
   return i;
}

static MapTab *map_tab(UInt cap)
{
   MapTab *t = VG_(malloc)("tf.map", sizeof(MapTab));
   t->cap = cap;
   t->keys = VG_(calloc)("tf.map", cap, sizeof(Addr));
   t->vals = VG_(calloc)("tf.map", cap, sizeof(UInt));
   return t;
}

static void map_init(AddrMap *m, UInt cap)
{
   m->tab = map_tab(cap);
   m->used = 0;
}

static Bool map_get(const AddrMap *m, Addr a, UInt *val)
{
   const MapTab *t = m->tab;
   UInt i = map_slot(t, a);
   if (t->keys[i] == 0)
      return False;
   *val = t->vals[i];
   return True;
}

static void tab_put(MapTab *t, Addr a, UInt val)
{
   UInt i = map_slot(t, a);
   t->vals[i] = val;
   __sync_synchronize();
   t->keys[i] = a;
}

static void map_put(AddrMap *m, Addr a, UInt val)
{
   MapTab *t = m->tab;
   UInt j;
   if (t->keys[map_slot(t, a)] == 0 && 2 * (m->used + 1) > t->cap) {
      MapTab *bigger = map_tab(t->cap * 2);
      for (j = 0; j < t->cap; j++)
         if (t->keys[j] != 0)
            tab_put(bigger, t->keys[j], t->vals[j]);
      __sync_synchronize();
      m->tab = bigger;
      t = bigger;
   }
   if (t->keys[map_slot(t, a)] == 0)
      m->used++;
   tab_put(t, a, val);
}

static AddrMap first_block_at; /* address -> lowest block id there */
static AddrMap fn_at;          /* function entry -> index in fns */

/* ---- the block-table stream ---- */

static tf_stream table;
static Bool table_created;
static const UChar *table_header;

static int table_sink(void *ctx, const uint8_t *chunk, size_t len)
{
   (void)ctx;
   return tf_output_append("blocks.tfc", &table_created, table_header, chunk, len) ? 0 : -1;
}

void tf_blocks_flush(void)
{
   tf_stream_close(&table);
}

/* ---- functions ---- */

typedef struct {
   Addr entry;
   UInt name_hash;
   FnRole role;
} Fn;

static Fn *fns; /* index + 1 = function id */
static UInt n_fns, cap_fns;

static UInt fnv1a(const HChar *s)
{
   UInt h = 2166136261u;
   while (*s)
      h = (h ^ (UChar)*s++) * 16777619u;
   return h;
}

/* The function holding `a`: its id (0 if there is no symbol) and the role of
 * its entry. A function is its entry address and raw name. */
static UInt function_of(Addr a, FnRole *role)
{
   DiEpoch ep = VG_(current_DiEpoch)();
   const HChar *s;
   HChar *name;
   SizeT len;
   Addr entry = a;
   UInt id, h;
   role->role = ROLE_NONE;
   if (!VG_(get_fnname_w_offset)(ep, a, &s) || s[0] == 0)
      return 0;
   /* "name+123": the offset of `a` in the function */
   len = VG_(strlen)(s);
   {
      SizeT i = len;
      while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
         i--;
      if (i > 1 && i < len && s[i - 1] == '+') {
         Addr off = 0;
         SizeT k;
         for (k = i; k < len; k++)
            off = off * 10 + (Addr)(s[k] - '0');
         entry = a - off;
         len = i - 1;
      }
   }
   name = VG_(malloc)("tf.fnname", len + 1);
   VG_(memcpy)(name, s, len);
   name[len] = 0;
   h = fnv1a(name);
   if (map_get(&fn_at, entry, &id) && fns[id - 1].name_hash == h) {
      VG_(free)(name);
      *role = fns[id - 1].role;
      return id;
   }
   if (n_fns == cap_fns) {
      cap_fns = cap_fns ? 2 * cap_fns : 1024;
      fns = VG_(realloc)("tf.fns", fns, cap_fns * sizeof(Fn));
   }
   id = ++n_fns;
   fns[id - 1].entry = entry;
   fns[id - 1].name_hash = h;
   fns[id - 1].role = tf_fn_role(name, entry);
   map_put(&fn_at, entry, id);
   tf_table_function(&table, id, entry, tf_module_of(&table, ep, entry), name, len);
   if (tf_verbose && fns[id - 1].role.role != ROLE_NONE)
      VG_(printf)("tf: %s at %#lx has role %u\n", name, entry, fns[id - 1].role.role);
   VG_(free)(name);
   *role = fns[id - 1].role;
   return id;
}

/* ---- blocks ---- */

void tf_blocks_init(void)
{
   static UChar header[TF_FILE_HEADER_SIZE];
   SizeT cap = TF_CHUNK_TARGET + (256u << 10);
   tf_file_header(header, TF_KIND_BLOCKS, 0, 0, 0, 0);
   table_header = header;
   tf_stream_init(&table, VG_(malloc)("tf.table", cap), cap, TF_CHUNK_TARGET, table_sink, NULL);
   map_init(&first_block_at, 1u << 16);
   map_init(&fn_at, 1u << 12);
}

UInt tf_blocks_count(void)
{
   return n_blocks;
}

void tf_function_note(Addr a)
{
   FnRole role;
   (void)function_of(a, &role);
}

UInt tf_block_at(Addr a)
{
   UInt id;
   return map_get(&first_block_at, a, &id) ? id : TF_NO_BLOCK;
}

static Bool same_ident(const Block *b, const BlockShape *s, const UChar *code)
{
   return b->info.code_len == s->code_len && b->info.n_insns == s->n_insns &&
          VG_(memcmp)(b->ident, code, s->code_len) == 0 &&
          VG_(memcmp)(b->ident + s->code_len, s->lens, s->n_insns) == 0;
}

UInt tf_block_get(const BlockShape *s)
{
   const UChar *code = (const UChar *)s->addr;
   UInt id, first, i, last_id = TF_NO_BLOCK;
   Block *b;
   FnRole role;
   UInt module;
   tf_block_rec rec;
   UChar *flags;

   /* a retranslation of code already seen */
   if (map_get(&first_block_at, s->addr, &first)) {
      for (id = first; id != TF_NO_BLOCK; id = tf_block(id)->next_same_addr) {
         if (same_ident(tf_block(id), s, code))
            return id;
         last_id = id;
      }
   }

   id = n_blocks;
   tl_assert(id < MAX_BLOCK_CHUNKS << TF_BLOCK_CHUNK_BITS);
   if ((id & ((1u << TF_BLOCK_CHUNK_BITS) - 1)) == 0) {
      /* cache-line aligned: the encoder threads read a block per execution */
      Addr a = (Addr)VG_(calloc)("tf.blocks", (1u << TF_BLOCK_CHUNK_BITS) + 1, sizeof(Block));
      tf_block_chunks[id >> TF_BLOCK_CHUNK_BITS] = (Block *)((a + 63) & ~(Addr)63);
   }
   b = tf_block(id);
   b->fn_id = function_of(s->addr, &role);
   /* Code without a symbol (a stripped program) still names its module, so
    * that the analyzer can call it module+offset. */
   module = tf_module_of(&table, VG_(current_DiEpoch)(), s->addr);
   b->in_omp_runtime = tf_module_is_omp_runtime(module);
   /* a role applies only where the function is entered; code without a
    * symbol is entered where the user's module+offset says */
   if (b->fn_id == 0)
      role = tf_offset_role(module, s->addr);
   else if (fns[b->fn_id - 1].entry != s->addr)
      role.role = ROLE_NONE;
   b->role = role;
   b->ident = VG_(malloc)("tf.ident", s->code_len + s->n_insns + 2 * s->n_ops + 1);
   VG_(memcpy)(b->ident, code, s->code_len);
   VG_(memcpy)(b->ident + s->code_len, s->lens, s->n_insns);
   flags = b->ident + s->code_len + s->n_insns + s->n_ops;
   for (i = 0; i < s->n_ops; i++) {
      b->ident[s->code_len + s->n_insns + i] = (UChar)s->ops[i].insn;
      flags[i] = s->ops[i].flags;
   }
   b->info.address = s->addr;
   b->info.code_len = s->code_len;
   b->info.n_insns = s->n_insns;
   b->info.n_ops = s->n_ops;
   b->info.end = s->end;
   b->info.op_flags = flags;
   b->slots = s->n_ops;
   b->arg_slot = TF_NO_SLOT;
   b->rax_slot = TF_NO_SLOT;
   if (role.role != ROLE_NONE && role.role != ROLE_CREATE && role.arg != ARG_NONE &&
       role.arg != ARG_FIXED)
      b->arg_slot = (UShort)b->slots++;
   if (s->end == TF_END_RETURN)
      b->rax_slot = (UShort)b->slots++;
   b->next_same_addr = TF_NO_BLOCK;
   if (last_id != TF_NO_BLOCK)
      tf_block(last_id)->next_same_addr = id;
   else
      map_put(&first_block_at, s->addr, id);
   n_blocks++;

   rec.id = id;
   rec.address = s->addr;
   rec.function = b->fn_id;
   rec.end = s->end;
   rec.code = code;
   rec.code_len = s->code_len;
   rec.n_insns = s->n_insns;
   rec.lengths = s->lens;
   rec.n_ops = s->n_ops;
   rec.ops = s->ops;
   /* never written unchecked: a record the reader would reject */
   if (!tf_block_rec_valid(&rec))
      tf_fatal("cannot record the block at %#lx (%u instructions, %u bytes, %u operands) "
               "in blocks.tfc",
               (unsigned long)s->addr, s->n_insns, s->code_len, s->n_ops);
   tf_table_block(&table, &rec);
   return id;
}

