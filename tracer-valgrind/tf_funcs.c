/* What a function's entry means to the tracer: the roles of the lock and
 * synchronization runtime functions and the user's --tf-only / --tf-exclude
 * patterns. The table and the matching rules are shared with every tracer
 * (tf_tracer.h); this file feeds them Valgrind's option arrays. */
#include "tf.h"
#include "pub_tool_libcbase.h"

/* Address-less locks: the entry of the runtime function that takes them. */
static Addr fixed_lock[TF_N_FIXED];

/* The strings of an XArray of const HChar* (its storage is contiguous). */
static const char *const *strings(XArray *xs, size_t *n)
{
   *n = xs ? (size_t)VG_(sizeXA)(xs) : 0;
   return *n ? (const char *const *)VG_(indexXA)(xs, 0) : NULL;
}

FnRole tf_fn_role(const HChar *name, Addr entry)
{
   size_t n_only, n_exclude;
   const char *const *only = strings(tf_only, &n_only);
   const char *const *exclude = strings(tf_exclude, &n_exclude);
   FnRole r = tf_fn_role_of(name, only, n_only, exclude, n_exclude);
   if (r.arg == ARG_FIXED && r.role == ROLE_ACQUIRE)
      fixed_lock[r.fixed] = entry;
   return r;
}

/* Whether a pattern names code by module and offset (`file+0x…`). */
static Bool names_offsets(XArray *xs)
{
   size_t n, i;
   const char *const *p = strings(xs, &n);
   for (i = 0; i < n; i++)
      if (VG_(strstr)(p[i], "+0x") != NULL)
         return True;
   return False;
}

FnRole tf_offset_role(UInt module, Addr a)
{
   static Int asked = -1; /* whether any pattern names an offset; -1: not known yet */
   HChar name[512];
   FnRole none = {ROLE_NONE, 0, ARG_NONE, 0, 0};
   if (asked < 0)
      asked = names_offsets(tf_only) || names_offsets(tf_exclude);
   if (!asked || !tf_module_offset_name(module, a, name, sizeof name))
      return none;
   return tf_fn_role(name, a);
}

Addr tf_fixed_lock(UInt fixed)
{
   return fixed < TF_N_FIXED ? fixed_lock[fixed] : 0;
}
