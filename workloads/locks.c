/* locks T ITERS: every lock kind the tracer knows, with known counts.
 *
 * Each of the T workers does ITERS rounds of: mutex lock/unlock, spin
 * lock/unlock, rwlock rdlock/unlock, rwlock wrlock/unlock, sem_wait/sem_post,
 * and one successful trylock/unlock of the mutex at the end.
 * The main thread holds `held` while one extra thread tries it once with
 * pthread_mutex_trylock (which fails: no acquire may be recorded), and one
 * thread waits on a condition variable once (release + re-acquire of `cv_mutex`).
 * The addresses are printed so that a test can match them. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static long iters;
static volatile long counter;
static int cv_ready, cv_waiting;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&mutex);
        counter++;
        pthread_mutex_unlock(&mutex);
        pthread_spin_lock(&spin);
        counter++;
        pthread_spin_unlock(&spin);
        pthread_rwlock_rdlock(&rwlock);
        (void)counter;
        pthread_rwlock_unlock(&rwlock);
        pthread_rwlock_wrlock(&rwlock);
        counter++;
        pthread_rwlock_unlock(&rwlock);
        sem_wait(&sem);
        counter++;
        sem_post(&sem);
    }
    if (pthread_mutex_trylock(&mutex) == 0)
        pthread_mutex_unlock(&mutex);
    return NULL;
}

static void *try_held(void *arg)
{
    (void)arg;
    if (pthread_mutex_trylock(&held) == 0) { /* cannot happen: main holds it */
        pthread_mutex_unlock(&held);
        abort();
    }
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&cv_mutex);
    cv_waiting = 1;
    while (!cv_ready)
        pthread_cond_wait(&cv, &cv_mutex);
    pthread_mutex_unlock(&cv_mutex);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = argc > 1 ? atol(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 100;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    sem_init(&sem, 0, 1);

    pthread_t t[threads + 2];
    pthread_mutex_lock(&held);
    pthread_create(&t[0], NULL, try_held, NULL);
    pthread_join(t[0], NULL);
    pthread_mutex_unlock(&held);

    pthread_create(&t[1], NULL, waiter, NULL);
    for (;;) { /* wait until the waiter is inside pthread_cond_wait */
        pthread_mutex_lock(&cv_mutex);
        int waiting = cv_waiting;
        if (waiting) {
            cv_ready = 1;
            pthread_cond_signal(&cv);
        }
        pthread_mutex_unlock(&cv_mutex);
        if (waiting)
            break;
        sched_yield();
    }
    pthread_join(t[1], NULL);

    for (long i = 0; i < threads; i++)
        pthread_create(&t[i + 2], NULL, worker, NULL);
    for (long i = 0; i < threads; i++)
        pthread_join(t[i + 2], NULL);
    printf("mutex=%p held=%p cv_mutex=%p spin=%p rwlock=%p sem=%p counter=%ld\n",
           (void *)&mutex, (void *)&held, (void *)&cv_mutex, (void *)&spin,
           (void *)&rwlock, (void *)&sem, (long)counter);
    return 0;
}
