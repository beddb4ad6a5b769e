/* nbody N T: one step of an all-pairs n-body force computation (after the
 * n-body code of Parapoly) for N bodies (default 1024), on T threads
 * (default 128) of N/T = 8 consecutive bodies each (items.h). Item i sums
 * the acceleration that all N bodies exert on body i (softened, so that the
 * body itself adds nothing and no pair needs a branch):
 *
 *     tf analyze TRACE --unit call:accelerate --warp 8,16,32
 *
 * The item's work is accumulate() of nbody.h (the CUDA twin:
 * cuda/nbody.cu).
 *
 * Bodies are 16-byte {x, y, z, mass} in a 128-byte aligned array;
 * body_at(i) reads body i (a function of its own, so that accelerate()'s
 * own heap loads are the interaction loop's only).
 *
 * Expected at width W, at every -O level:
 *   accelerate()  SIMT efficiency 100%: the loop runs N times in every lane
 *                 and its body is straight-line (GCC's check after an
 *                 inlined sqrtf for a negative argument is never taken:
 *                 the argument is a sum of squares plus a positive
 *                 softening term).
 *                 heap loads 1: at step j of the loop every lane reads body
 *                 j, the same 16 bytes (a broadcast), one sector whatever
 *                 the operand size.
 *                 heap stores W/2 = 4, 8, 16: lane l writes the 16-byte
 *                 acceleration of body i at 16·i of a 128-byte aligned
 *                 array (in one or several operands): W·16 contiguous bytes.
 *                 stack ceil(W/k), k = 8: 1, 2, 4.
 *   body_at()     SIMT efficiency 100%; heap loads W/2 = 4, 8, 16 (each
 *                 operand reads within body i's 16 bytes, 16·W contiguous
 *                 bytes per warp).
 * accelerate()'s stack operands include 4-byte floats at -O0 and spills of
 * any size above, so its interleaved stack figure is not derived here.
 */
#include "items.h"
#include "nbody.h"

static struct body *bodies;
static struct body *accel;
static long n_bodies;

__attribute__((noipa)) struct body body_at(long i)
{
    return bodies[i];
}

__attribute__((noipa)) void accelerate(long i)
{
    accumulate(body_at(i), bodies, n_bodies, &accel[i]);
}

int main(int argc, char **argv)
{
    n_bodies = arg_long(argc, argv, 1, 1024);
    long t = arg_long(argc, argv, 2, 128);
    bodies = alloc128(n_bodies * sizeof *bodies);
    accel = alloc128(n_bodies * sizeof *accel);
    make_bodies(bodies, n_bodies);
    run_items(n_bodies, t, accelerate);
    print_accelerations(accel, n_bodies);
    return 0;
}
