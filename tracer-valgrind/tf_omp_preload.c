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
#define CALL_FN_W_W(r, f, a) TF_CALL(r, f, (W_), (W_)(a))
#define CALL_FN_W_WW(r, f, a, b) TF_CALL(r, f, (W_, W_), (W_)(a), (W_)(b))
#define CALL_FN_W_WWW(r, f, a, b, c) TF_CALL(r, f, (W_, W_, W_), (W_)(a), (W_)(b), (W_)(c))
#define CALL_FN_W_WWWW(r, f, a, b, c, d) \
   TF_CALL(r, f, (W_, W_, W_, W_), (W_)(a), (W_)(b), (W_)(c), (W_)(d))
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

#include "tf_omp_preload_gomp.h"
#include "tf_omp_preload_kmp.h"
