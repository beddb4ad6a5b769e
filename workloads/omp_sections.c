/* omp_sections [separate|combined] ROUNDS: ROUNDS `sections` constructs of
 * eight sections each, on 4 threads. Section k calls its own function,
 * part_k, a loop of WORK iterations that differs from the others' only in
 * the element of `sink` it adds to. separate (the default): one parallel
 * region that runs the construct ROUNDS times (GCC: GOMP_sections_start,
 * then GOMP_sections_next; each construct ends with the team's wait);
 * combined: ROUNDS `parallel sections` regions (GCC: GOMP_parallel_sections,
 * each thread's first section from GOMP_sections_next). clang lowers
 * sections to a static worksharing loop over their numbers, under both.
 * Prints sink[7].
 *
 * Hand-derived, for the tf figures: each section of each construct is a
 * unit, as an iteration of a worksharing loop is (8 x ROUNDS units, one
 * loop instance per construct, numbered by section). Every part_k runs
 * ROUNDS times, once per construct, by the unit of section k alone: the
 * eight functions count the same instructions, and each runs at 1/W SIMT
 * efficiency at every width W (a warp's lanes are different sections, in
 * different functions). No instruction of the runtime is in a unit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORK 64
static volatile long sink[8];

#define PART(k)                                   \
    __attribute__((noinline)) void part_##k(void) \
    {                                             \
        for (long i = 0; i < WORK; i++)           \
            sink[k] += i;                         \
    }
PART(0)
PART(1)
PART(2)
PART(3)
PART(4)
PART(5)
PART(6)
PART(7)

/* The eight sections, as the body of a `sections` construct. */
#define EIGHT_SECTIONS   \
    {                    \
        _Pragma("omp section") part_0(); \
        _Pragma("omp section") part_1(); \
        _Pragma("omp section") part_2(); \
        _Pragma("omp section") part_3(); \
        _Pragma("omp section") part_4(); \
        _Pragma("omp section") part_5(); \
        _Pragma("omp section") part_6(); \
        _Pragma("omp section") part_7(); \
    }

int main(int argc, char **argv)
{
    int combined = argc > 1 && strcmp(argv[1], "combined") == 0;
    long rounds = argc > 2 ? atol(argv[2]) : 1;
    if (combined) {
        for (long r = 0; r < rounds; r++) {
#pragma omp parallel sections num_threads(4)
            EIGHT_SECTIONS
        }
    } else {
#pragma omp parallel num_threads(4)
        for (long r = 0; r < rounds; r++) {
#pragma omp sections
            EIGHT_SECTIONS
        }
    }
    printf("%ld\n", (long)sink[7]);
    return 0;
}
