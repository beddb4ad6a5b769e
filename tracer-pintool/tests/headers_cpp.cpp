// The shared headers as the Pin tool includes them (C++, -Wall -Werror):
// two threads of a team of two take chunks of one dynamic loop
// (for i = 10; i < 20; i += 2: trip 5), then the second asks its place
// before an inline static schedule. Prints each event; the test compares.
extern "C" {
#include "tf_tracer.h"
#include "tf_worksharing.h"
}
#include <cstdio>

static void request(tf_ws_state *s, tf_ws_thread *t, uint64_t code, uint64_t a1, uint64_t a2,
                    uint64_t a3, uint64_t a4, uint64_t a5)
{
    const uint64_t a[6] = {code, a1, a2, a3, a4, a5};
    tf_ws_event e;
    if (!tf_ws_request(s, t, a, &e))
        std::printf("unknown\n");
    else if (e.kind == TF_WS_LOOP_CHUNK)
        std::printf("chunk %llu %llu %llu %llu %llu\n", (unsigned long long)e.loop,
                    (unsigned long long)e.first, (unsigned long long)e.count,
                    (unsigned long long)e.stride, (unsigned long long)e.trip);
    else if (e.kind == TF_WS_STATIC_LOOP)
        std::printf("static %llu %llu %llu\n", (unsigned long long)e.loop,
                    (unsigned long long)e.first, (unsigned long long)e.count);
    else
        std::printf("none\n");
}

int main()
{
    static tf_ws_state s;
    tf_ws_thread t0 = {}, t1 = {};
    const uint64_t team = 1ull << 32;
    request(&s, &t0, TF_REQ_LOOP_BEGIN, 10, 2, tf_iterations(10, 20, 2), team, 2);
    request(&s, &t0, TF_REQ_LOOP_CHUNK, 10, 14, 0, team, 2);
    request(&s, &t1, TF_REQ_LOOP_BEGIN, 10, 2, 5, team, 2);
    request(&s, &t1, TF_REQ_LOOP_CHUNK, 14, 20, 0, team, 2);
    request(&s, &t0, TF_REQ_LOOP_CHUNK, 0, 0, 0, team, 2);
    request(&s, &t1, TF_REQ_TEAM_PLACE, 0x401234, 1, 2, team, 0);
    request(&s, &t1, 7, 0, 0, 0, 0, 0);
    return 0;
}
