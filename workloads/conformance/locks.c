/* Spin lock, rwlock (read, then write) and semaphore events, in program
 * order. glibc's pthread_spin_init is the same function as
 * pthread_spin_unlock, so the init shows as a release. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
pthread_spinlock_t sp;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
sem_t sem;
int shared;
int main(void) {
    sem_init(&sem, 0, 1);
    pthread_spin_init(&sp, 0);
    pthread_spin_lock(&sp);
    shared++;
    pthread_spin_unlock(&sp);
    pthread_rwlock_rdlock(&rw);
    int r = shared;
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_wrlock(&rw);
    shared += r;
    pthread_rwlock_unlock(&rw);
    sem_wait(&sem);
    shared++;
    sem_post(&sem);
    printf("%d\n", shared);
    return 0;
}
