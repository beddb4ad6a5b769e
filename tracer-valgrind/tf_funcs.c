/* What a function's entry means to the tracer: the lock and synchronization
 * runtime functions (matched by name, robust to glibc's alias names), and
 * the user's --tf-only / --tf-exclude patterns. */
#include "tf.h"
#include "pub_tool_libcbase.h"

typedef struct {
   const HChar *name;
   FnRole role;
} RuntimeFn;

/* Address-less locks: the entry of the runtime function that takes them. */
enum { FIXED_OMP_CRITICAL = 0, FIXED_OMP_ATOMIC = 1, N_FIXED = 2 };
static Addr fixed_lock[N_FIXED];

#define ACQ(kind, arg, chk) {ROLE_ACQUIRE, kind, arg, chk, 0}
#define REL(kind, arg) {ROLE_RELEASE, kind, arg, 0, 0}
#define WAIT {ROLE_WAIT, 0, ARG_NONE, 0, 0}

/* Names without leading underscores or a symbol version: glibc >= 2.34 has
 * these in libc.so.6, often reported under a `__`-prefixed alias. */
static const RuntimeFn runtime_fns[] = {
   {"pthread_mutex_lock", ACQ(TF_LOCK_MUTEX, ARG_RDI, 1)},
   {"pthread_mutex_trylock", ACQ(TF_LOCK_MUTEX, ARG_RDI, 1)},
   {"pthread_mutex_timedlock", ACQ(TF_LOCK_MUTEX, ARG_RDI, 1)},
   {"pthread_mutex_clocklock", ACQ(TF_LOCK_MUTEX, ARG_RDI, 1)},
   {"pthread_mutex_unlock", REL(TF_LOCK_MUTEX, ARG_RDI)},
   {"pthread_spin_lock", ACQ(TF_LOCK_SPIN, ARG_RDI, 1)},
   {"pthread_spin_trylock", ACQ(TF_LOCK_SPIN, ARG_RDI, 1)},
   {"pthread_spin_unlock", REL(TF_LOCK_SPIN, ARG_RDI)},
   /* glibc's pthread_spin_unlock is the same function as pthread_spin_init
    * (both store 0), and the debug info names it after the latter */
   {"pthread_spin_init", REL(TF_LOCK_SPIN, ARG_RDI)},
   {"pthread_rwlock_rdlock", ACQ(TF_LOCK_RWLOCK_READ, ARG_RDI, 1)},
   {"pthread_rwlock_tryrdlock", ACQ(TF_LOCK_RWLOCK_READ, ARG_RDI, 1)},
   {"pthread_rwlock_timedrdlock", ACQ(TF_LOCK_RWLOCK_READ, ARG_RDI, 1)},
   {"pthread_rwlock_clockrdlock", ACQ(TF_LOCK_RWLOCK_READ, ARG_RDI, 1)},
   {"pthread_rwlock_wrlock", ACQ(TF_LOCK_RWLOCK_WRITE, ARG_RDI, 1)},
   {"pthread_rwlock_trywrlock", ACQ(TF_LOCK_RWLOCK_WRITE, ARG_RDI, 1)},
   {"pthread_rwlock_timedwrlock", ACQ(TF_LOCK_RWLOCK_WRITE, ARG_RDI, 1)},
   {"pthread_rwlock_clockwrlock", ACQ(TF_LOCK_RWLOCK_WRITE, ARG_RDI, 1)},
   /* the kind (read or write) is the one the thread acquired */
   {"pthread_rwlock_unlock", REL(TF_LOCK_RWLOCK_WRITE, ARG_RDI)},
   {"sem_wait", ACQ(TF_LOCK_SEMAPHORE, ARG_RDI, 1)},
   {"sem_trywait", ACQ(TF_LOCK_SEMAPHORE, ARG_RDI, 1)},
   {"sem_timedwait", ACQ(TF_LOCK_SEMAPHORE, ARG_RDI, 1)},
   {"sem_clockwait", ACQ(TF_LOCK_SEMAPHORE, ARG_RDI, 1)},
   {"sem_post", REL(TF_LOCK_SEMAPHORE, ARG_RDI)},
   {"GOMP_critical_start", {ROLE_ACQUIRE, TF_LOCK_OMP_CRITICAL, ARG_FIXED, 0, FIXED_OMP_CRITICAL}},
   {"GOMP_critical_end", {ROLE_RELEASE, TF_LOCK_OMP_CRITICAL, ARG_FIXED, 0, FIXED_OMP_CRITICAL}},
   {"GOMP_critical_name_start", ACQ(TF_LOCK_OMP_CRITICAL_NAMED, ARG_RDI, 0)},
   {"GOMP_critical_name_end", REL(TF_LOCK_OMP_CRITICAL_NAMED, ARG_RDI)},
   {"GOMP_atomic_start", {ROLE_ACQUIRE, TF_LOCK_OMP_ATOMIC, ARG_FIXED, 0, FIXED_OMP_ATOMIC}},
   {"GOMP_atomic_end", {ROLE_RELEASE, TF_LOCK_OMP_ATOMIC, ARG_FIXED, 0, FIXED_OMP_ATOMIC}},
   /* condition waits release the mutex (second argument) and re-take it,
    * also when they time out */
   {"pthread_cond_wait", {ROLE_COND_WAIT, TF_LOCK_MUTEX, ARG_RSI, 0, 0}},
   {"pthread_cond_timedwait", {ROLE_COND_WAIT, TF_LOCK_MUTEX, ARG_RSI, 0, 0}},
   {"pthread_cond_clockwait", {ROLE_COND_WAIT, TF_LOCK_MUTEX, ARG_RSI, 0, 0}},
   {"pthread_barrier_wait", WAIT},
   {"pthread_join", WAIT},
   {"pthread_timedjoin_np", WAIT},
   {"pthread_clockjoin_np", WAIT},
   {"GOMP_barrier", WAIT},
   {"GOMP_barrier_cancel", WAIT},
   {"pthread_create", {ROLE_CREATE, 0, ARG_RDX, 0, 0}},
};

/* `name` without leading underscores and without a trailing "@VERSION"
 * equals `want`. */
static Bool runtime_name_is(const HChar *name, const HChar *want)
{
   SizeT n = VG_(strlen)(want);
   while (*name == '_')
      name++;
   return VG_(strncmp)(name, want, n) == 0 && (name[n] == 0 || name[n] == '@');
}

/* Appends the source names of an Itanium-mangled name as "a::b::c" (without
 * template arguments or parameters) to out; False if it is not of the simple
 * form _Z<name> or _ZN<qualifiers><name>...E. */
static Bool simple_demangle(const HChar *m, HChar *out, SizeT cap)
{
   SizeT o = 0;
   Bool nested;
   if (m[0] != '_' || m[1] != 'Z')
      return False;
   m += 2;
   nested = *m == 'N';
   if (nested) {
      m++;
      while (*m == 'r' || *m == 'V' || *m == 'K' || *m == 'R' || *m == 'O')
         m++;
   }
   if (m[0] == 'S' && m[1] == 't') { /* std:: */
      if (o + 5 >= cap)
         return False;
      VG_(memcpy)(out + o, "std::", 5);
      o += 5;
      m += 2;
   }
   for (;;) {
      SizeT len = 0;
      if (*m < '0' || *m > '9')
         break;
      while (*m >= '0' && *m <= '9')
         len = len * 10 + (SizeT)(*m++ - '0');
      if (VG_(strlen)(m) < len || o + len + 3 >= cap)
         return False;
      if (o > 0 && !(o == 5 && VG_(strncmp)(out, "std::", 5) == 0)) {
         out[o++] = ':';
         out[o++] = ':';
      }
      VG_(memcpy)(out + o, m, len);
      o += len;
      m += len;
      if (!nested)
         break;
   }
   /* a nested name must end here: no templates, constructors, ... */
   if (nested && *m != 'E')
      return False;
   out[o] = 0;
   return o > 0;
}

/* The matching rule of --tf-only / --tf-exclude (see README.md): the raw
 * symbol, the symbol without its "@VERSION", or for a C++ symbol its
 * qualified name without parameters ("ns::Class::method"). */
Bool tf_pattern_matches(const HChar *pattern, const HChar *name)
{
   HChar buf[512];
   const HChar *at;
   if (VG_(strcmp)(pattern, name) == 0)
      return True;
   at = VG_(strchr)(name, '@');
   if (at && at != name && VG_(strlen)(pattern) == (SizeT)(at - name) &&
       VG_(strncmp)(pattern, name, at - name) == 0)
      return True;
   return simple_demangle(name, buf, sizeof buf) && VG_(strcmp)(pattern, buf) == 0;
}

static Bool in_patterns(XArray *pats, const HChar *name)
{
   Word i, n = pats ? VG_(sizeXA)(pats) : 0;
   for (i = 0; i < n; i++)
      if (tf_pattern_matches(*(const HChar **)VG_(indexXA)(pats, i), name))
         return True;
   return False;
}

FnRole tf_fn_role(const HChar *name, Addr entry)
{
   FnRole none = {ROLE_NONE, 0, ARG_NONE, 0, 0};
   UInt i;
   /* the user's request comes first */
   if (in_patterns(tf_exclude, name)) {
      FnRole r = {ROLE_EXCLUDE, 0, ARG_NONE, 0, 0};
      return r;
   }
   if (in_patterns(tf_only, name)) {
      FnRole r = {ROLE_ONLY, 0, ARG_NONE, 0, 0};
      return r;
   }
   if (name[0] != '_' && name[0] != 'p' && name[0] != 's' && name[0] != 'G')
      return none;
   for (i = 0; i < sizeof runtime_fns / sizeof runtime_fns[0]; i++) {
      const RuntimeFn *f = &runtime_fns[i];
      if (!runtime_name_is(name, f->name))
         continue;
      if (f->role.arg == ARG_FIXED && f->role.role == ROLE_ACQUIRE)
         fixed_lock[f->role.fixed] = entry;
      return f->role;
   }
   return none;
}

Addr tf_fixed_lock(UInt fixed)
{
   return fixed < N_FIXED ? fixed_lock[fixed] : 0;
}
