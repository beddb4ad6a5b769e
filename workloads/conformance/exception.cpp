// C++ exceptions: thrower(n) throws for n > 0 and the handler in main calls
// caught(); thrower(0) returns normally and calls back(). Three rounds:
// throw, return, throw.
#include "asm.h"
#include <cstdio>
extern "C" {
int caught_n, back_n;
void caught(void);
void back(void);
}
__asm__(FUNC(caught) "  incl caught_n(%rip)\n  ret\n" END(caught)
        FUNC(back) "  incl back_n(%rip)\n  ret\n" END(back));
__attribute__((noinline)) void thrower(int n) {
    if (n > 0)
        throw n;
    back();
}
int main() {
    static const int rounds[] = {1, 0, 2};
    for (int n : rounds) {
        try {
            thrower(n);
        } catch (int) {
            caught();
        }
    }
    std::printf("%d %d\n", caught_n, back_n);
    return 0;
}
