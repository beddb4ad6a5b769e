/* tf's preload library: wraps the OpenMP runtime functions that hand out
 * the iterations of worksharing loops, in GCC's libgomp and LLVM's libomp,
 * and tells the tracer what each call handed out (tf_requests.h). The
 * tracer turns that into `loop_chunk` and `static_loop` events (FORMAT.md
 * 6.6, 6.7; tf_worksharing.h), which let the analyzer number every
 * iteration as the GPU would number its threads.
 *
 * One source, two builds:
 * - for Valgrind (vgpreload_tf-amd64-linux.so, no libc): Valgrind loads it
 *   into every traced program and redirects calls of the wrapped functions
 *   here; a request is a Valgrind client request;
 * - natively, with TF_PRELOAD_NATIVE (libtf_omp.so, for the Pin tool, which
 *   has the program load it through LD_PRELOAD): the wrappers are the
 *   runtime's own names, interposed before the runtime, and find the real
 *   function with dlsym(RTLD_NEXT); a request is a call of tf_request(),
 *   which the tracer instruments.
 *
 * The tracers do not trace these wrappers, nor what they call: the
 * runtime's chunk bookkeeping is no work of the loop (tf_tracer.h skips the
 * loop-scheduling functions by name, and the wrappers have those names).
 * Runtime functions are declared weak so that programs without an OpenMP
 * runtime load the library too. */
#include "tf_requests.h"
#include <stdbool.h>

#ifdef TF_PRELOAD_NATIVE
#include <dlfcn.h>

typedef void *OrigFn;
#define GOMP(fn) fn
#define KMP(fn) fn
/* The function this wrapper stands in for: the next definition of the
 * wrapper's own name, looked up once. */
#define VALGRIND_GET_ORIG_FN(f)                             \
   do {                                                     \
      static void *real_;                                   \
      void *r_ = __atomic_load_n(&real_, __ATOMIC_RELAXED); \
      if (r_ == 0) {                                        \
         r_ = dlsym(RTLD_NEXT, __func__);                   \
         __atomic_store_n(&real_, r_, __ATOMIC_RELAXED);    \
      }                                                     \
      (f) = r_;                                             \
   } while (0)
/* Calls of the real function with word-sized arguments and result, as
 * Valgrind's CALL_FN_W_* make them (integer arguments go in the same
 * registers whatever their C type). */
typedef unsigned long W_;
#define TF_CALL(r, f, T, ...) ((r) = ((W_(*) T)(f))(__VA_ARGS__))
#define CALL_FN_W_v(r, f) TF_CALL(r, f, (void))
#define CALL_FN_W_WW(r, f, a, b) TF_CALL(r, f, (W_, W_), (W_)(a), (W_)(b))
#define CALL_FN_W_5W(r, f, a, b, c, d, e) \
   TF_CALL(r, f, (W_, W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d), (W_)(e))
#define CALL_FN_W_6W(r, f, a, b, c, d, e, g)                                            \
   TF_CALL(r, f, (W_, W_, W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d), (W_)(e), \
           (W_)(g))
#define CALL_FN_W_7W(r, f, a, b, c, d, e, g, h)                                             \
   TF_CALL(r, f, (W_, W_, W_, W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d), (W_)(e), \
           (W_)(g), (W_)(h))
#define CALL_FN_W_8W(r, f, a, b, c, d, e, g, h, i)                                              \
   TF_CALL(r, f, (W_, W_, W_, W_, W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d), (W_)(e), \
           (W_)(g), (W_)(h), (W_)(i))
#define CALL_FN_W_9W(r, f, a, b, c, d, e, g, h, i, j)                                      \
   TF_CALL(r, f, (W_, W_, W_, W_, W_, W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d), \
           (W_)(e), (W_)(g), (W_)(h), (W_)(i), (W_)(j))

/* The request the tracer instruments (its arguments at entry). Not
 * static and never inlined: its address is its name's. */
__attribute__((noinline, visibility("default"))) void tf_request(W_ code, W_ a1, W_ a2, W_ a3,
                                                                 W_ a4, W_ a5);
__attribute__((noinline, visibility("default"))) void tf_request(W_ code, W_ a1, W_ a2, W_ a3,
                                                                 W_ a4, W_ a5)
{
   __asm__ volatile("" : : "r"(code), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5) : "memory");
}
#define VALGRIND_DO_CLIENT_REQUEST_STMT(code, a1, a2, a3, a4, a5) \
   tf_request((code), (W_)(a1), (W_)(a2), (W_)(a3), (W_)(a4), (W_)(a5))
#else
#include "valgrind.h"
#define GOMP(fn) I_WRAP_SONAME_FNNAME_ZU(libgompZdsoZa, fn)
#define KMP(fn) I_WRAP_SONAME_FNNAME_ZU(libompZdsoZa, fn)
#endif

typedef unsigned long long ull;
typedef unsigned long W;

extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_ancestor_thread_num(int) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));

/* A function's bool result: only its low byte is defined (the x86-64 ABI),
 * whatever the rest of RAX holds. */
static inline bool ret_bool(W r)
{
   return (unsigned char)r != 0;
}

/* Nonzero while this library asks the runtime itself: the wrappers of
 * omp_get_num_threads and omp_get_thread_num report only the program's
 * calls. */
static __thread int asking;

/* The calling thread's team (tf_requests.h). */
static W team(void)
{
   int level = omp_get_level ? omp_get_level() : 0;
   int master = level > 0 && omp_get_ancestor_thread_num ? omp_get_ancestor_thread_num(level - 1) : 0;
   return ((W)level << 32) | (unsigned)master;
}

/* The team a master is about to start. */
static W next_team(void)
{
   int level = omp_get_level ? omp_get_level() : 0;
   int me;
   asking++;
   me = omp_get_thread_num ? omp_get_thread_num() : 0;
   asking--;
   return ((W)(level + 1) << 32) | (unsigned)me;
}

static W team_size(void)
{
   W n;
   asking++;
   n = omp_get_num_threads ? (W)omp_get_num_threads() : 1;
   asking--;
   return n;
}

static void begin(W start, W end, W incr)
{
   VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_LOOP_BEGIN, start, incr, tf_iterations(start, end, incr), team(),
                                   team_size());
}

static void chunk(bool got, W lo, W hi)
{
   if (!got)
      lo = hi = 0;
   VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_LOOP_CHUNK, lo, hi, 0, team(), team_size());
}

static void combined(W start, W end, W incr)
{
   VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_LOOP_COMBINED, start, incr, tf_iterations(start, end, incr),
                                   next_team(), 0);
}

/* ---- libgomp: bool GOMP_loop_X_start(start, end, incr, chunk, *istart, *iend) */
#define GOMP_START(X)                                                                    \
   bool GOMP(GOMP_loop_##X##_start)(long s, long e, long i, long c, long *lo, long *hi); \
   bool GOMP(GOMP_loop_##X##_start)(long s, long e, long i, long c, long *lo, long *hi)  \
   {                                                                                     \
      OrigFn fn;                                                                         \
      W r;                                                                               \
      VALGRIND_GET_ORIG_FN(fn);                                                          \
      begin(s, e, i);                                                                    \
      CALL_FN_W_6W(r, fn, s, e, i, c, lo, hi);                                           \
      chunk(ret_bool(r), *lo, *hi);                                                      \
      return ret_bool(r);                                                                \
   }
#define GOMP_RUNTIME_START(X)                                                    \
   bool GOMP(GOMP_loop_##X##_start)(long s, long e, long i, long *lo, long *hi); \
   bool GOMP(GOMP_loop_##X##_start)(long s, long e, long i, long *lo, long *hi)  \
   {                                                                             \
      OrigFn fn;                                                                 \
      W r;                                                                       \
      VALGRIND_GET_ORIG_FN(fn);                                                  \
      begin(s, e, i);                                                            \
      CALL_FN_W_5W(r, fn, s, e, i, lo, hi);                                      \
      chunk(ret_bool(r), *lo, *hi);                                              \
      return ret_bool(r);                                                        \
   }
/* bool GOMP_loop_X_next(*istart, *iend), and the ull twins */
#define GOMP_NEXT(X, T)                             \
   bool GOMP(GOMP_loop_##X##_next)(T * lo, T * hi); \
   bool GOMP(GOMP_loop_##X##_next)(T * lo, T * hi)  \
   {                                                \
      OrigFn fn;                                    \
      W r;                                          \
      VALGRIND_GET_ORIG_FN(fn);                     \
      CALL_FN_W_WW(r, fn, lo, hi);                  \
      chunk(ret_bool(r), (W)*lo, (W)*hi);           \
      return ret_bool(r);                           \
   }
/* void GOMP_parallel_loop_X(fn, data, nthreads, start, end, incr, chunk, flags) */
#define GOMP_PARALLEL(X)                                                                     \
   void GOMP(GOMP_parallel_loop_##X)(void (*f)(void *), void *d, unsigned n, long s, long e, \
                                     long i, long c, unsigned fl);                           \
   void GOMP(GOMP_parallel_loop_##X)(void (*f)(void *), void *d, unsigned n, long s, long e, \
                                     long i, long c, unsigned fl)                            \
   {                                                                                         \
      OrigFn fn;                                                                             \
      W r;                                                                                   \
      VALGRIND_GET_ORIG_FN(fn);                                                              \
      combined(s, e, i);                                                                     \
      CALL_FN_W_8W(r, fn, f, d, n, s, e, i, c, fl);                                          \
      (void)r;                                                                               \
   }
#define GOMP_PARALLEL_RUNTIME(X)                                                             \
   void GOMP(GOMP_parallel_loop_##X)(void (*f)(void *), void *d, unsigned n, long s, long e, \
                                     long i, unsigned fl);                                   \
   void GOMP(GOMP_parallel_loop_##X)(void (*f)(void *), void *d, unsigned n, long s, long e, \
                                     long i, unsigned fl)                                    \
   {                                                                                         \
      OrigFn fn;                                                                             \
      W r;                                                                                   \
      VALGRIND_GET_ORIG_FN(fn);                                                              \
      combined(s, e, i);                                                                     \
      CALL_FN_W_7W(r, fn, f, d, n, s, e, i, fl);                                             \
      (void)r;                                                                               \
   }
/* bool GOMP_loop_ull_X_start(up, start, end, incr, chunk, *istart, *iend) */
#define GOMP_ULL_START(X)                                                             \
   bool GOMP(GOMP_loop_ull_##X##_start)(bool up, ull s, ull e, ull i, ull c, ull *lo, \
                                        ull *hi);                                     \
   bool GOMP(GOMP_loop_ull_##X##_start)(bool up, ull s, ull e, ull i, ull c, ull *lo, \
                                        ull *hi)                                      \
   {                                                                                  \
      OrigFn fn;                                                                      \
      W r;                                                                            \
      VALGRIND_GET_ORIG_FN(fn);                                                       \
      begin(s, e, i);                                                                 \
      CALL_FN_W_7W(r, fn, up, s, e, i, c, lo, hi);                                    \
      chunk(ret_bool(r), *lo, *hi);                                                   \
      return ret_bool(r);                                                             \
   }
#define GOMP_ULL_RUNTIME_START(X)                                                        \
   bool GOMP(GOMP_loop_ull_##X##_start)(bool up, ull s, ull e, ull i, ull *lo, ull *hi); \
   bool GOMP(GOMP_loop_ull_##X##_start)(bool up, ull s, ull e, ull i, ull *lo, ull *hi)  \
   {                                                                                     \
      OrigFn fn;                                                                         \
      W r;                                                                               \
      VALGRIND_GET_ORIG_FN(fn);                                                          \
      begin(s, e, i);                                                                    \
      CALL_FN_W_6W(r, fn, up, s, e, i, lo, hi);                                          \
      chunk(ret_bool(r), *lo, *hi);                                                      \
      return ret_bool(r);                                                                \
   }

GOMP_START(static)
GOMP_START(dynamic)
GOMP_START(guided)
GOMP_START(nonmonotonic_dynamic)
GOMP_START(nonmonotonic_guided)
GOMP_RUNTIME_START(runtime)
GOMP_RUNTIME_START(nonmonotonic_runtime)
GOMP_RUNTIME_START(maybe_nonmonotonic_runtime)
GOMP_NEXT(static, long)
GOMP_NEXT(dynamic, long)
GOMP_NEXT(guided, long)
GOMP_NEXT(nonmonotonic_dynamic, long)
GOMP_NEXT(nonmonotonic_guided, long)
GOMP_NEXT(runtime, long)
GOMP_NEXT(nonmonotonic_runtime, long)
GOMP_NEXT(maybe_nonmonotonic_runtime, long)
/* ordered loops hand out iterations as the others do */
GOMP_START(ordered_static)
GOMP_START(ordered_dynamic)
GOMP_START(ordered_guided)
GOMP_RUNTIME_START(ordered_runtime)
GOMP_NEXT(ordered_static, long)
GOMP_NEXT(ordered_dynamic, long)
GOMP_NEXT(ordered_guided, long)
GOMP_NEXT(ordered_runtime, long)
GOMP_PARALLEL(static)
GOMP_PARALLEL(dynamic)
GOMP_PARALLEL(guided)
GOMP_PARALLEL(nonmonotonic_dynamic)
GOMP_PARALLEL(nonmonotonic_guided)
GOMP_PARALLEL_RUNTIME(runtime)
GOMP_PARALLEL_RUNTIME(nonmonotonic_runtime)
GOMP_PARALLEL_RUNTIME(maybe_nonmonotonic_runtime)
GOMP_ULL_START(static)
GOMP_ULL_START(dynamic)
GOMP_ULL_START(guided)
GOMP_ULL_START(nonmonotonic_dynamic)
GOMP_ULL_START(nonmonotonic_guided)
GOMP_ULL_RUNTIME_START(runtime)
GOMP_ULL_RUNTIME_START(nonmonotonic_runtime)
GOMP_ULL_RUNTIME_START(maybe_nonmonotonic_runtime)
GOMP_NEXT(ull_static, ull)
GOMP_NEXT(ull_dynamic, ull)
GOMP_NEXT(ull_guided, ull)
GOMP_NEXT(ull_nonmonotonic_dynamic, ull)
GOMP_NEXT(ull_nonmonotonic_guided, ull)
GOMP_NEXT(ull_runtime, ull)
GOMP_NEXT(ull_nonmonotonic_runtime, ull)
GOMP_NEXT(ull_maybe_nonmonotonic_runtime, ull)
GOMP_ULL_START(ordered_static)
GOMP_ULL_START(ordered_dynamic)
GOMP_ULL_START(ordered_guided)
GOMP_ULL_RUNTIME_START(ordered_runtime)
GOMP_NEXT(ull_ordered_static, ull)
GOMP_NEXT(ull_ordered_dynamic, ull)
GOMP_NEXT(ull_ordered_guided, ull)
GOMP_NEXT(ull_ordered_runtime, ull)

/* bool GOMP_loop_X(start, end, incr, sched, chunk, *istart, *iend,
 * reductions, mem): the entries GCC uses for loops (GOMP_loop_start, and
 * GOMP_loop_ordered_start for ordered ones) with task reductions or
 * allocated private memory; istart is NULL when the loop is not taken here. */
#define GOMP_GENERIC_START(X)                                                                 \
   bool GOMP(GOMP_loop_##X)(long s, long e, long i, long sc, long c, long *lo, long *hi, W *red, \
                            void **mem);                                                     \
   bool GOMP(GOMP_loop_##X)(long s, long e, long i, long sc, long c, long *lo, long *hi, W *red, \
                            void **mem)                                                      \
   {                                                                                         \
      OrigFn fn;                                                                             \
      W r;                                                                                   \
      VALGRIND_GET_ORIG_FN(fn);                                                              \
      if (lo)                                                                                \
         begin(s, e, i);                                                                     \
      CALL_FN_W_9W(r, fn, s, e, i, sc, c, lo, hi, red, mem);                                 \
      if (lo)                                                                                \
         chunk(ret_bool(r), *lo, *hi);                                                       \
      return ret_bool(r);                                                                    \
   }
GOMP_GENERIC_START(start)
GOMP_GENERIC_START(ordered_start)

/* ---- libomp. Bounds are inclusive; types of 4 and 8 bytes, signed and not. */
#define KMP_SIGNED(T) ((T)-1 < (T)0)
/* A bound of T widened to a 64-bit word, sign-extended for signed T. */
#define KMP_W(T, v) (KMP_SIGNED(T) ? (W)(long)(v) : (W)(v))

/* void __kmpc_dispatch_init_X(loc, gtid, schedule, lb, ub, st, chunk) */
#define KMP_DISPATCH(X, T)                                                                 \
   void KMP(__kmpc_dispatch_init_##X)(void *loc, int gtid, int sch, T lb, T ub, T st,      \
                                      T c);                                                \
   void KMP(__kmpc_dispatch_init_##X)(void *loc, int gtid, int sch, T lb, T ub, T st, T c) \
   {                                                                                       \
      OrigFn fn;                                                                           \
      W r;                                                                                 \
      VALGRIND_GET_ORIG_FN(fn);                                                            \
      begin(KMP_W(T, lb), KMP_W(T, ub) + KMP_W(T, st), KMP_W(T, st));                      \
      CALL_FN_W_7W(r, fn, loc, gtid, sch, KMP_W(T, lb), KMP_W(T, ub), KMP_W(T, st),        \
                   KMP_W(T, c));                                                           \
      (void)r;                                                                             \
   }                                                                                       \
   int KMP(__kmpc_dispatch_next_##X)(void *loc, int gtid, int *last, T *lb, T *ub, T *st); \
   int KMP(__kmpc_dispatch_next_##X)(void *loc, int gtid, int *last, T *lb, T *ub, T *st)  \
   {                                                                                       \
      OrigFn fn;                                                                           \
      W r;                                                                                 \
      VALGRIND_GET_ORIG_FN(fn);                                                            \
      CALL_FN_W_6W(r, fn, loc, gtid, last, lb, ub, st);                                    \
      W step = st ? KMP_W(T, *st) : 1;                                                     \
      chunk((int)r != 0, KMP_W(T, *lb), KMP_W(T, *ub) + step);                             \
      return (int)r;                                                                       \
   }

/* void __kmpc_for_static_init_X(loc, gtid, schedtype, *plastiter, *plower,
 * *pupper, *pstride, incr, chunk): on return [*plower, *pupper] is the
 * thread's first chunk and, for a chunked schedule (33), *pstride the
 * distance to its next one. A `distribute` loop (schedules 91 and 92) hands
 * each team a range that the team's own worksharing loop divides: that inner
 * loop's iterations are the units, so the distribute loop is not reported. */
#define KMP_STATIC(X, T)                                                                       \
   void KMP(__kmpc_for_static_init_##X)(void *loc, int gtid, int sch, int *last, T *lower,     \
                                        T *upper, T *stride, T incr, T c);                     \
   void KMP(__kmpc_for_static_init_##X)(void *loc, int gtid, int sch, int *last, T *lower,     \
                                        T *upper, T *stride, T incr, T c)                      \
   {                                                                                           \
      OrigFn fn;                                                                               \
      W r;                                                                                     \
      VALGRIND_GET_ORIG_FN(fn);                                                                \
      if (sch == 91 || sch == 92) { /* distribute: its teams' parallel loops are the units */  \
         CALL_FN_W_9W(r, fn, loc, gtid, sch, last, lower, upper, stride, KMP_W(T, incr),       \
                      KMP_W(T, c));                                                            \
         return;                                                                               \
      }                                                                                        \
      W s = KMP_W(T, *lower), i = KMP_W(T, incr);                                              \
      begin(s, KMP_W(T, *upper) + i, i);                                                       \
      CALL_FN_W_9W(r, fn, loc, gtid, sch, last, lower, upper, stride, KMP_W(T, incr),          \
                   KMP_W(T, c));                                                               \
      (void)r;                                                                                 \
      W lo = KMP_W(T, *lower), hi = KMP_W(T, *upper) + i;                                      \
      if (tf_iterations(lo, hi, i) == 0)                                                       \
         lo = hi = 0;                                                                          \
      VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_LOOP_STATIC, lo, hi,                              \
                                      sch == 33 ? KMP_W(T, *stride) : 0, team(), team_size()); \
   }

KMP_DISPATCH(4, int)
KMP_DISPATCH(4u, unsigned)
KMP_DISPATCH(8, long)
KMP_DISPATCH(8u, unsigned long)
KMP_STATIC(4, int)
KMP_STATIC(4u, unsigned)
KMP_STATIC(8, long)
KMP_STATIC(8u, unsigned long)

void KMP(__kmpc_for_static_fini)(void *loc, int gtid);
void KMP(__kmpc_for_static_fini)(void *loc, int gtid)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_LOOP_END, 0, 0, 0, team(), 0);
   CALL_FN_W_WW(r, fn, loc, gtid);
   (void)r;
}

/* ---- libgomp: GCC's inline static schedules (FORMAT.md 6.7). The compiler
 * calls omp_get_num_threads and then omp_get_thread_num, a few bytes apart,
 * and computes the thread's iterations from the two answers. */
#define TF_PAIR_GAP 32 /* bytes between the two calls' return addresses */

static __thread W size_site, size_answer;

int GOMP(omp_get_num_threads)(void);
int GOMP(omp_get_num_threads)(void)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_v(r, fn);
   if (!asking) {
      size_site = (W)__builtin_return_address(0);
      size_answer = r;
   }
   return (int)r;
}

int GOMP(omp_get_thread_num)(void);
int GOMP(omp_get_thread_num)(void)
{
   OrigFn fn;
   W r, site = (W)__builtin_return_address(0);
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_v(r, fn);
   if (!asking && size_site != 0 && site > size_site && site - size_site <= TF_PAIR_GAP)
      VALGRIND_DO_CLIENT_REQUEST_STMT(TF_REQ_TEAM_PLACE, site, (W)(unsigned)r, size_answer, team(), 0);
   if (!asking)
      size_site = 0;
   return (int)r;
}
