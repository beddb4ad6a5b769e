/* The preload library's wrappers of GCC's libgomp (tf_omp_preload.c, which
 * includes this file once, after its helpers: begin, chunk, combined,
 * team, team_size, `asking` and the call macros). */
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

/* ---- libgomp's doacross loops (`ordered(n)`, whose iterations wait for
 * others with depend(sink) and post with depend(source)): the iterations
 * handed out are the outermost loop's, numbered 0 .. counts[0].
 * bool GOMP_loop_[ull_]doacross_X_start(ncounts, counts, chunk, *istart,
 * *iend), _runtime_start without the chunk, and the generic
 * GOMP_loop_[ull_]doacross_start(ncounts, counts, sched, chunk, *istart,
 * *iend, reductions, mem); later chunks come from GOMP_loop_X_next. */
#define GOMP_DOACROSS_START(X, T)                                                     \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, T c, T * lo, T * hi); \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, T c, T * lo, T * hi)  \
   {                                                                                 \
      OrigFn fn;                                                                     \
      W r;                                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                                      \
      begin(0, (W)counts[0], 1);                                                     \
      CALL_FN_W_5W(r, fn, n, counts, c, lo, hi);                                     \
      chunk(ret_bool(r), (W)*lo, (W)*hi);                                            \
      return ret_bool(r);                                                            \
   }
#define GOMP_DOACROSS_RUNTIME_START(X, T)                                        \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, T * lo, T * hi); \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, T * lo, T * hi)  \
   {                                                                            \
      OrigFn fn;                                                                \
      W r;                                                                      \
      VALGRIND_GET_ORIG_FN(fn);                                                 \
      begin(0, (W)counts[0], 1);                                                \
      CALL_FN_W_WWWW(r, fn, n, counts, lo, hi);                                 \
      chunk(ret_bool(r), (W)*lo, (W)*hi);                                       \
      return ret_bool(r);                                                       \
   }
#define GOMP_DOACROSS_GENERIC_START(X, T)                                                   \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, long sc, T c, T * lo, T * hi, \
                                    W * red, void **mem);                                 \
   bool GOMP(GOMP_loop_##X##_start)(unsigned n, T * counts, long sc, T c, T * lo, T * hi, \
                                    W * red, void **mem)                                  \
   {                                                                                       \
      OrigFn fn;                                                                           \
      W r;                                                                                 \
      VALGRIND_GET_ORIG_FN(fn);                                                            \
      if (lo)                                                                              \
         begin(0, (W)counts[0], 1);                                                        \
      CALL_FN_W_8W(r, fn, n, counts, sc, c, lo, hi, red, mem);                             \
      if (lo)                                                                              \
         chunk(ret_bool(r), (W)*lo, (W)*hi);                                               \
      return ret_bool(r);                                                                  \
   }
GOMP_DOACROSS_START(doacross_static, long)
GOMP_DOACROSS_START(doacross_dynamic, long)
GOMP_DOACROSS_START(doacross_guided, long)
GOMP_DOACROSS_RUNTIME_START(doacross_runtime, long)
GOMP_DOACROSS_GENERIC_START(doacross, long)
GOMP_DOACROSS_START(ull_doacross_static, ull)
GOMP_DOACROSS_START(ull_doacross_dynamic, ull)
GOMP_DOACROSS_START(ull_doacross_guided, ull)
GOMP_DOACROSS_RUNTIME_START(ull_doacross_runtime, ull)
GOMP_DOACROSS_GENERIC_START(ull_doacross, ull)

/* ---- libgomp's sections: a `sections` construct is a worksharing loop
 * whose iterations are its sections, which the runtime numbers from 1 and
 * hands out one at a time: GOMP_sections_start(count) and
 * GOMP_sections2_start(count, reductions, mem) join the construct and give
 * the thread's first section, GOMP_sections_next() its next one, 0 when
 * none is left. (clang lowers sections to a static loop: libomp's wrappers
 * below see them.) */
static unsigned section(W r)
{
   unsigned s = (unsigned)r;
   chunk(s != 0, s, (W)s + 1);
   return s;
}

unsigned GOMP(GOMP_sections_start)(unsigned count);
unsigned GOMP(GOMP_sections_start)(unsigned count)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   begin(1, (W)count + 1, 1);
   CALL_FN_W_W(r, fn, count);
   return section(r);
}

unsigned GOMP(GOMP_sections2_start)(unsigned count, W *reductions, void **mem);
unsigned GOMP(GOMP_sections2_start)(unsigned count, W *reductions, void **mem)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   begin(1, (W)count + 1, 1);
   CALL_FN_W_WWW(r, fn, count, reductions, mem);
   return section(r);
}

unsigned GOMP(GOMP_sections_next)(void);
unsigned GOMP(GOMP_sections_next)(void)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_v(r, fn);
   return section(r);
}

/* `parallel sections`: the team starts with the construct begun, and each
 * thread's first section comes from GOMP_sections_next. */
void GOMP(GOMP_parallel_sections)(void (*f)(void *), void *d, unsigned n, unsigned count,
                                  unsigned fl);
void GOMP(GOMP_parallel_sections)(void (*f)(void *), void *d, unsigned n, unsigned count,
                                  unsigned fl)
{
   OrigFn fn;
   W r;
   VALGRIND_GET_ORIG_FN(fn);
   combined(1, (W)count + 1, 1);
   CALL_FN_W_5W(r, fn, f, d, n, count, fl);
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
