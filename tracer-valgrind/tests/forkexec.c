/* forkexec: the forked child's loop is not traced and writes nothing (the
 * manifest counts it: forked 1); with an argument the program execs /bin/echo
 * and the trace up to execve is on disk (manifest complete: true, exec:
 * /bin/echo exec'd). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
volatile long s;
int main(int argc, char **argv) {
    for (int i = 0; i < 1000; i++) s += i;
    pid_t p = fork();
    if (p == 0) {
        for (int i = 0; i < 100000; i++) s += i;   /* the child's work: not traced */
        _exit(3);
    }
    int st; waitpid(p, &st, 0);
    printf("child %d\n", WEXITSTATUS(st));
    fflush(stdout);
    if (argc > 1) execl("/bin/echo", "echo", "exec'd", (char *)0);
    return 0;
}
