/* only: main calls f(10), g(5), f(20); f calls g. With --tf-only=f only f
 * and g run under f are traced; with --tf-exclude=g, g is skipped with reason
 * 2 and its instruction counts (65, 35, 125 here at -O1) are in the skips. */
#include <stdio.h>
volatile long s;
__attribute__((noinline)) void g(int n) { for (int i = 0; i < n; i++) s += i; }
__attribute__((noinline)) void f(int n) { for (int i = 0; i < n; i++) s ^= i; g(n); }
int main(void) { f(10); g(5); f(20); printf("%ld\n", s); return 0; }
