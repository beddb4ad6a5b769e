/* gen_text BYTES [SEED]: writes BYTES of deterministic pseudo-English text to
 * stdout (words drawn from a fixed vocabulary by a linear congruential
 * generator), as input for compressors such as pigz. The same arguments
 * always give the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *words[] = {
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had",
    "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if",
    "more", "when", "will", "would", "who", "so", "no", "warp", "thread", "lane", "memory", "sector",
    "branch", "stack", "compress", "deflate", "window", "match", "literal", "length", "distance",
    "huffman", "block", "table", "symbol", "parallel", "divergence", "reconvergence", "kernel",
};

int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : 1 << 20;
    unsigned long long x = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
    long long written = 0;
    int col = 0;
    const int nwords = sizeof words / sizeof *words;
    while (written < n) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        /* Skewed choice: frequent words come first. */
        unsigned r = (unsigned)(x >> 33) % (nwords * nwords);
        const char *w = words[(unsigned)(nwords - 1) - (unsigned)(nwords - 1) * (r / nwords) / nwords * (r % nwords) / nwords];
        int len = (int)strlen(w);
        if (written + len + 1 > n)
            len = (int)(n - written - 1);
        if (len > 0)
            fwrite(w, 1, len, stdout);
        written += len;
        if (written < n) {
            col += len + 1;
            putchar(col > 72 ? '\n' : ' ');
            if (col > 72)
                col = 0;
            written++;
        }
    }
    return 0;
}
