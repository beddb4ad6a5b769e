/* Modules: the mapped object that holds a block or a function, with its
 * image's range and build id, defined in the block table when first seen
 * and listed in the manifest. */
#include "tf.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

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

/* The module id of the object that holds `a`, defining it if new (in the
 * block-table stream `table`); 0 if none. */
UInt tf_module_of(tf_stream *table, DiEpoch ep, Addr a)
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
   tf_table_module(table, n_modules, m->base, m->size, m->path, VG_(strlen)(m->path),
                   m->build_id, m->build_id_len);
   return last = n_modules;
}

Bool tf_module_offset_name(UInt id, Addr a, HChar *buf, SizeT size)
{
   const HChar *path, *file;
   if (id == 0 || id > n_modules)
      return False;
   path = modules[id - 1].path;
   file = VG_(strrchr)(path, '/');
   file = file ? file + 1 : path;
   return (SizeT)VG_(snprintf)(buf, size, "%s+%#lx", file, a - modules[id - 1].base) < size;
}

Bool tf_module_is_omp_runtime(UInt id)
{
   return id > 0 && id <= n_modules && tf_is_omp_runtime(modules[id - 1].path);
}

void tf_modules_manifest(tf_mp *mp)
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
