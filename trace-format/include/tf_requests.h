/* tf_requests.h: what tf's preload library (tracer-valgrind/tf_omp_preload.c)
 * tells a tracer about the worksharing loops of an OpenMP program: what the
 * runtime handed each thread. Shared by the library and both tracers; the
 * meaning of the arguments is theirs to agree on (tf_worksharing.h turns
 * the requests into loop_chunk and static_loop events).
 *
 * Under Valgrind a request is a client request with these codes; natively
 * (the Pin tool) it is a call of the library's `tf_request(code, a1, ...,
 * a5)`, which the tracer instruments.
 *
 * Every request carries the calling thread's team: `team` = (nesting level
 * << 32) | the thread number of the team's master in its enclosing team, and
 * `size` = the number of threads of the team (omp_get_num_threads()). Loop
 * bounds travel in the user's iteration space as 64-bit words; the tracer
 * turns them into logical iteration numbers.
 *
 * Freestanding C99 that also compiles as C++. */
#ifndef TF_REQUESTS_H
#define TF_REQUESTS_H

/* Valgrind's VG_USERREQ_TOOL_BASE('T', 'F'), without needing valgrind.h. */
#define TF_REQ_BASE (((unsigned)'T' << 24) | ((unsigned)'F' << 16))

enum {
    /* A thread begins a worksharing loop: a1 start, a2 incr, a3 trip count,
     * a4 team, a5 size. */
    TF_REQ_LOOP_BEGIN = TF_REQ_BASE,
    /* The master of a combined `parallel for` is about to start its team:
     * the loop the team's threads will take chunks of (a1 start, a2 incr,
     * a3 trip count, a4 the new team). */
    TF_REQ_LOOP_COMBINED,
    /* The runtime handed the thread the chunk [a1, a2) (a1 == a2: none left,
     * the thread's part of the loop is over); a4 team, a5 size. */
    TF_REQ_LOOP_CHUNK,
    /* A static schedule gave the thread [a1, a2) and, when a3 != 0, every
     * chunk of the same length a3 further on (user-space units) while it
     * stays inside the loop; a4 team, a5 size. */
    TF_REQ_LOOP_STATIC,
    /* The thread's part of a static loop is over (a4 team). */
    TF_REQ_LOOP_END,
    /* The thread learnt its place in its team from the omp_get_num_threads,
     * omp_get_thread_num pair a compiler emits before an inline static
     * schedule: a1 the call site of omp_get_thread_num, a2 the thread's
     * number, a3 the team's size, a4 team. */
    TF_REQ_TEAM_PLACE
};

/* Iterations of the loop from lo (included) to hi (excluded) by incr, in
 * 64-bit words read as signed (the runtimes' long and unsigned long long
 * loops alike): the preload library counts a loop's trip, the tracer a
 * chunk's iterations, with this one rule. */
static inline unsigned long tf_iterations(unsigned long lo, unsigned long hi, unsigned long incr)
{
    long d = (long)(hi - lo), s = (long)incr;
    if (s == 0 || (s > 0 ? d <= 0 : d >= 0))
        return 0;
    return s > 0 ? (unsigned long)((d + s - 1) / s) : (unsigned long)((-d - s - 1) / -s);
}

#endif
