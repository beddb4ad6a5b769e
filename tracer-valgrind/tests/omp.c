/* omp: OpenMP critical (unnamed: the lock is GOMP_critical_start's entry),
 * critical(mylock) (the lock is the name's pointer variable), atomic on a
 * long double (GOMP_atomic_start's entry) and a barrier (skip, reason 1). */
#include <omp.h>
#include <stdio.h>
long total = 0, atom = 0, named = 0;
int main(void) {
    #pragma omp parallel num_threads(3)
    {
        for (int i = 0; i < 2; i++) {
            #pragma omp critical
            total += omp_get_thread_num();
            #pragma omp critical(mylock)
            named++;
            #pragma omp atomic
            atom += 3;
            long double x = 1.5L;      /* long double atomic: GOMP_atomic_start/end */
            #pragma omp atomic
            ((long double *)&x)[0] += 1.0L;
        }
        #pragma omp barrier
    }
    printf("%ld %ld %ld\n", total, atom, named);
    return 0;
}
