/* Mutex events: lock; trylock while held (fails: no acquire); unlock;
 * trylock (succeeds); unlock. */
#include <pthread.h>
#include <stdio.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void) {
    pthread_mutex_lock(&m);
    int busy = pthread_mutex_trylock(&m);
    pthread_mutex_unlock(&m);
    int ok = pthread_mutex_trylock(&m);
    pthread_mutex_unlock(&m);
    printf("%d %d\n", busy != 0, ok);
    return 0;
}
