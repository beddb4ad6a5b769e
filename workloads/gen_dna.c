/* gen_dna ref BASES | gen_dna reads BASES BYTES [SEED]: deterministic DNA
 * for read aligners such as bwa.
 *   ref    writes a FASTA reference of BASES random bases;
 *   reads  writes about BYTES of FASTQ: 150-base reads drawn from that same
 *          reference (made again from the same generator), each with three
 *          substitutions, half of them reverse-complemented.
 * The same arguments always give the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { READ_LEN = 150, LINE = 60 };

static unsigned long long state;

static unsigned next(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(state >> 33);
}

static char *reference(long bases)
{
    char *ref = malloc((size_t)bases);
    state = 12345;
    for (long i = 0; ref && i < bases; i++)
        ref[i] = "ACGT"[next() % 4];
    return ref;
}

static char complement(char b)
{
    return b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : 'A';
}

int main(int argc, char **argv)
{
    long bases = argc > 2 ? atol(argv[2]) : 0;
    int reads = argc > 1 && strcmp(argv[1], "reads") == 0;
    if (argc < 3 || (!reads && strcmp(argv[1], "ref") != 0) || bases <= READ_LEN ||
        (reads && argc < 4)) {
        fprintf(stderr, "usage: gen_dna ref BASES | gen_dna reads BASES BYTES [SEED]\n"
                        "       (BASES above %d)\n", READ_LEN);
        return 2;
    }
    char *ref = reference(bases);
    if (!ref)
        return 1;
    if (!reads) {
        printf(">chr1\n");
        for (long i = 0; i < bases; i += LINE)
            printf("%.*s\n", (int)(bases - i < LINE ? bases - i : LINE), ref + i);
        return 0;
    }
    long long bytes = atoll(argv[3]), written = 0;
    state = argc > 4 ? strtoull(argv[4], NULL, 10) : 777;
    char read[READ_LEN + 1], quality[READ_LEN + 1];
    memset(quality, 'I', READ_LEN);
    quality[READ_LEN] = read[READ_LEN] = 0;
    for (long n = 0; written < bytes; n++) {
        long at = (long)(((unsigned long long)next() << 31 | next()) % (bases - READ_LEN));
        memcpy(read, ref + at, READ_LEN);
        for (int k = 0; k < 3; k++)
            read[next() % READ_LEN] = "ACGT"[next() % 4];
        if (next() % 2)
            for (int i = 0; i < READ_LEN / 2; i++) {
                char a = read[i];
                read[i] = complement(read[READ_LEN - 1 - i]);
                read[READ_LEN - 1 - i] = complement(a);
            }
        written += printf("@read%ld\n%s\n+\n%s\n", n, read, quality);
    }
    return 0;
}
