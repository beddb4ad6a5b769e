/* The preload library's wrappers of LLVM's libomp (tf_omp_preload.c, which
 * includes this file once, after its helpers: begin, chunk, team,
 * team_size and the call macros). */
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
