/* locks: three threads use a mutex (lock/unlock), a spin lock, an rwlock
 * (read, then write), a semaphore and a condition wait; main does a
 * successful and a failing trylock. The program prints the lock addresses. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
pthread_spinlock_t sp;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
sem_t sem;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
int ready = 0;
long counter = 0;

void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    pthread_spin_lock(&sp); counter++; pthread_spin_unlock(&sp);
    pthread_rwlock_rdlock(&rw); long c = counter; pthread_rwlock_unlock(&rw);
    pthread_rwlock_wrlock(&rw); counter += c & 1; pthread_rwlock_unlock(&rw);
    sem_wait(&sem); counter++; sem_post(&sem);
    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    return (void *)id;
}

int main(void) {
    pthread_t t[3];
    pthread_spin_init(&sp, 0);
    sem_init(&sem, 0, 1);
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    /* trylock: success, then failure while held by m2's owner (us) */
    if (pthread_mutex_trylock(&m2) == 0) {
        if (pthread_mutex_trylock(&m2) != 0) counter += 100; /* fails: EBUSY */
        pthread_mutex_unlock(&m2);
    }
    usleep(100000);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    printf("counter %ld worker %p m %p m2 %p sp %p rw %p sem %p\n", counter, (void *)worker, (void *)&m, (void *)&m2, (void *)&sp, (void *)&rw, (void *)&sem);
    return 0;
}
