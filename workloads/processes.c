/* processes N [PROG ARGS...]: a program that starts processes of its own.
 * It first tries to execve a program that does not exist (the call fails,
 * and the program goes on), then starts N children with fork, each of which
 * loops a while and exits, and one more with posix_spawn (/bin/true; glibc
 * makes it with clone(CLONE_VM | CLONE_VFORK)); it waits for them all. With
 * PROG, it then replaces itself with PROG ARGS (execve).
 *
 * Under tf trace: the trace is the first program's alone. Its manifest says
 * that it started N + 1 processes (`forked`), and, with PROG, that it ran
 * execve(PROG, ARGS) (`exec`: PROG then ARGS), where the trace ends; the
 * failed execve leaves no trace of itself there. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile long sink;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    char *missing[] = {"/nonexistent/tf-no-such-program", NULL};
    char *truth[] = {"true", NULL};
    pid_t pid;
    execve(missing[0], missing, environ); /* fails: ENOENT */
    for (int i = 0; i < n; i++) {
        if (fork() == 0) {
            for (long k = 0; k < 100000; k++)
                sink += k;
            _exit(0);
        }
    }
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, truth, environ) != 0)
        return 2;
    while (wait(NULL) > 0)
        ;
    printf("%d children done\n", n + 1);
    fflush(stdout);
    if (argc > 2) {
        execv(argv[2], argv + 2);
        perror("execv");
        return 1;
    }
    return 0;
}
