/* Library A of remap_libraries.c: the sum 0 + 1 + ... + n-1. */
int compute(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}
