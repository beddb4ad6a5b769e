/* Library B of remap_libraries.c: 3^n mod 1000, plus 7n + 1. */
int scale(int x)
{
    return x * 7 + 1;
}

int compute(int n)
{
    int s = 1;
    for (int i = 1; i <= n; i++)
        s = s * 3 % 1000;
    return s + scale(n);
}
