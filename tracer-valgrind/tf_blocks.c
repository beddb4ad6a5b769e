/* The block table: one id per (address, code, instruction lengths), reused
 * when Valgrind retranslates the same code; functions and modules from the
 * debug info; all of it written to blocks.tfc before any thread chunk that
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

/* ---- modules ---- */

typedef struct {
   const DebugInfo *di;
   HChar *path;
   Addr base;
   SizeT size;
   UChar build_id[64];
   UInt build_id_len;
} Module;

static Module *modules; /* index + 1 = module id */
static UInt n_modules, cap_modules;

/* The lowest and highest addresses the client has mapped from `path` (the
 * image's end comes from the program headers: see image_end). */
static void mapped_range(const HChar *path, Addr *lo, Addr *hi)
{
   Int cap = 256, n, i;
   Addr *starts;
   for (;;) {
      starts = VG_(malloc)("tf.segs", cap * sizeof(Addr));
      n = VG_(am_get_segment_starts)(SkFileC, starts, cap);
      if (n >= 0)
         break;
      VG_(free)(starts);
      cap = -n + 16;
   }
   for (i = 0; i < n; i++) {
      NSegment const *seg = VG_(am_find_nsegment)(starts[i]);
      const HChar *name = seg ? VG_(am_get_filename)(seg) : NULL;
      if (name && VG_(strcmp)(name, path) == 0) {
         if (seg->start < *lo)
            *lo = seg->start;
         if (seg->end + 1 > *hi)
            *hi = seg->end + 1;
      }
   }
   VG_(free)(starts);
}

static Bool readable(Addr a, SizeT n)
{
   return a != 0 && a + n > a && VG_(am_is_valid_for_client)(a, n, VKI_PROT_READ);
}

/* A module's program headers, read in client memory: the ELF header is
 * mapped at the module's base. `bias` relocates their addresses. */
typedef struct {
   const UChar *ph;
   UInt phentsize, phnum;
   Addr bias;
} Phdrs;

static Bool phdrs_of(Addr base, Phdrs *h)
{
   const UChar *eh = (const UChar *)base;
   ULong phoff;
   UInt i;
   Addr lowest = (Addr)-1;
   if (!readable(base, 64) || VG_(memcmp)(eh, "\177ELF\2\1", 6) != 0)
      return False;
   phoff = *(const ULong *)(eh + 32);
   h->phentsize = *(const UShort *)(eh + 54);
   h->phnum = *(const UShort *)(eh + 56);
   h->ph = eh + phoff;
   if (h->phentsize < 56 || !readable(base + phoff, (SizeT)h->phentsize * h->phnum))
      return False;
   for (i = 0; i < h->phnum; i++) {
      const UChar *ph = h->ph + (SizeT)i * h->phentsize;
      if (*(const UInt *)ph == 1 /* PT_LOAD */ && *(const ULong *)(ph + 16) < lowest)
         lowest = *(const ULong *)(ph + 16);
   }
   if (lowest == (Addr)-1)
      return False;
   h->bias = *(const UShort *)(eh + 16) == 3 /* ET_DYN */ ? base - (lowest & ~(Addr)0xFFF) : 0;
   return True;
}

/* The end of the module's loaded image: of its last PT_LOAD segment in
 * memory (p_vaddr + p_memsz), so .data and all of .bss, including the part
 * beyond the file that is mapped anonymously. */
static Addr image_end(const Phdrs *h)
{
   Addr end = 0;
   UInt i;
   for (i = 0; i < h->phnum; i++) {
      const UChar *ph = h->ph + (SizeT)i * h->phentsize;
      Addr e = h->bias + *(const ULong *)(ph + 16) + *(const ULong *)(ph + 40);
      if (*(const UInt *)ph == 1 /* PT_LOAD */ && e > end)
         end = e;
   }
   return end;
}

/* The GNU build id from the module's PT_NOTE segments. */
static void find_build_id(Module *m, const Phdrs *h)
{
   UInt i;
   for (i = 0; i < h->phnum; i++) {
      const UChar *ph = h->ph + (SizeT)i * h->phentsize;
      Addr p = h->bias + *(const ULong *)(ph + 16);
      SizeT left = *(const ULong *)(ph + 32);
      if (*(const UInt *)ph != 4 /* PT_NOTE */ || !readable(p, left))
         continue;
      while (left >= 12) {
         UInt namesz = *(const UInt *)p, descsz = *(const UInt *)(p + 4);
         UInt type = *(const UInt *)(p + 8);
         SizeT nsz = (namesz + 3) & ~3u, dsz = (descsz + 3) & ~3u;
         if (12 + nsz + dsz > left)
            break;
         if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
             VG_(memcmp)((const void *)(p + 12), "GNU", 4) == 0 && descsz <= sizeof m->build_id) {
            VG_(memcpy)(m->build_id, (const void *)(p + 12 + nsz), descsz);
            m->build_id_len = descsz;
            return;
         }
         p += 12 + nsz + dsz;
         left -= 12 + nsz + dsz;
      }
   }
}

/* The module id of the object that holds `a`, defining it if new; 0 if none. */
static UInt module_of(DiEpoch ep, Addr a)
{
   static UInt last; /* a one-entry cache: most lookups repeat */
   const DebugInfo *di = VG_(find_DebugInfo)(ep, a);
   const HChar *path;
   Module *m;
   UInt i;
   Addr lo = (Addr)-1, hi = 0;
   Phdrs h;
   if (di == NULL)
      return 0;
   path = VG_(DebugInfo_get_filename)(di);
   if (path == NULL)
      return 0;
   if (last && modules[last - 1].di == di && VG_(strcmp)(modules[last - 1].path, path) == 0)
      return last;
   for (i = 0; i < n_modules; i++)
      if (modules[i].di == di && VG_(strcmp)(modules[i].path, path) == 0)
         return last = i + 1;
   if (n_modules == cap_modules) {
      cap_modules = cap_modules ? 2 * cap_modules : 64;
      modules = VG_(realloc)("tf.modules", modules, cap_modules * sizeof(Module));
   }
   m = &modules[n_modules++];
   VG_(memset)(m, 0, sizeof *m);
   m->di = di;
   m->path = VG_(strdup)("tf.modules", path);
   mapped_range(path, &lo, &hi);
   if (hi <= lo) {
      lo = VG_(DebugInfo_get_text_avma)(di);
      hi = lo + VG_(DebugInfo_get_text_size)(di);
   }
   /* The image, not what the file maps: the tail of .bss is anonymous. */
   if (phdrs_of(lo, &h)) {
      if (image_end(&h) > lo)
         hi = image_end(&h);
      find_build_id(m, &h);
   }
   m->base = lo;
   m->size = hi - lo;
   tf_table_module(&table, n_modules, m->base, m->size, m->path, VG_(strlen)(m->path),
                   m->build_id, m->build_id_len);
   return last = n_modules;
}

void tf_blocks_manifest_modules(tf_mp *mp)
{
   UInt i;
   tf_mp_array(mp, n_modules);
   for (i = 0; i < n_modules; i++) {
      const Module *m = &modules[i];
      tf_mp_map(mp, 5);
      tf_mp_cstr(mp, "id");
      tf_mp_uint(mp, i + 1);
      tf_mp_cstr(mp, "path");
      if (tf_utf8_valid(m->path, VG_(strlen)(m->path)))
         tf_mp_cstr(mp, m->path);
      else
         tf_mp_bin(mp, m->path, VG_(strlen)(m->path));
      tf_mp_cstr(mp, "base");
      tf_mp_uint(mp, m->base);
      tf_mp_cstr(mp, "size");
      tf_mp_uint(mp, m->size);
      tf_mp_cstr(mp, "build_id");
      tf_mp_bin(mp, m->build_id, m->build_id_len);
   }
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
   tf_table_function(&table, id, entry, module_of(ep, entry), name, len);
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
   if (b->fn_id == 0)
      (void)module_of(VG_(current_DiEpoch)(), s->addr);
   /* a role applies only where the function is entered */
   if (b->fn_id == 0 || fns[b->fn_id - 1].entry != s->addr)
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

