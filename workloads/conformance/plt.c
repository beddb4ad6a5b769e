/* A call into a shared library goes through the program's PLT: main's call
 * lands on a PLT stub, whose indirect jump enters lib_add (in plt_lib.c). */
#include <stdio.h>
int lib_add(int a, int b);
int main(int argc, char **argv) {
    (void)argv;
    int x = lib_add(argc, 2);
    int y = lib_add(x, 3);
    printf("%d\n", y);
    return 0;
}
