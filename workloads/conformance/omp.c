/* OpenMP critical sections and atomics, with 2 threads (OMP_NUM_THREADS=2):
 * each thread enters the unnamed critical once, the named one once and does
 * one atomic update through libgomp's lock (a long double sum). */
#include <stdio.h>
int count;
long double total;
int main(void) {
#pragma omp parallel num_threads(2)
    {
#pragma omp critical
        count++;
#pragma omp critical(named)
        count++;
#pragma omp atomic
        total += 1.0L;
    }
    printf("%d %Lf\n", count, total);
    return 0;
}
