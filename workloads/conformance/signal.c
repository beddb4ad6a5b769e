/* Signal delivery: on_usr (the SIGUSR1 handler) runs twice, once per raise;
 * each run is framed by a signal and a signal_return event.
 *   on_usr: +0 incl hits(%rip)   +6 ret */
#include "asm.h"
#include <signal.h>
#include <stdio.h>
int hits;
void on_usr(int);
__asm__(FUNC(on_usr) "  incl hits(%rip)\n  ret\n" END(on_usr));
int main(void) {
    signal(SIGUSR1, on_usr);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("%d\n", hits);
    return 0;
}
