/* MD5 (md5.c, cuda/md5.cu): the compression function of RFC 1321 on one
 * 64-byte block, the inputs and the report. See twin.h. */
#ifndef TF_WORKLOAD_MD5_H
#define TF_WORKLOAD_MD5_H

#include "twin.h"

TWIN_TABLE uint32_t MD5_K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391,
};
TWIN_TABLE uint8_t MD5_R[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9,  14, 20, 5, 9,
    14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

/* n blocks of 16 words from a fixed seed. */
static inline void make_blocks(uint32_t *blocks, long n)
{
    uint64_t seed = 5;
    for (long k = 0; k < 16 * n; k++)
        blocks[k] = lcg_next(&seed);
}

/* One GPU thread's work: the digest of the block m (16 words) from the
 * standard initial state, into out (4 words). The 64 steps and the choice
 * of round function depend on the step number only. */
TWIN void md5_block(const uint32_t *m, uint32_t *out)
{
    uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
    for (int s = 0; s < 64; s++) {
        uint32_t f;
        int g;
        if (s < 16) {
            f = (b & c) | (~b & d);
            g = s;
        } else if (s < 32) {
            f = (d & b) | (~d & c);
            g = (5 * s + 1) % 16;
        } else if (s < 48) {
            f = b ^ c ^ d;
            g = (3 * s + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * s) % 16;
        }
        uint32_t rotated = a + f + MD5_K[s] + m[g];
        a = d;
        d = c;
        c = b;
        b = b + ((rotated << MD5_R[s]) | (rotated >> (32 - MD5_R[s])));
    }
    out[0] = 0x67452301 + a;
    out[1] = 0xefcdab89 + b;
    out[2] = 0x98badcfe + c;
    out[3] = 0x10325476 + d;
}

/* Prints a checksum of n digests. */
static inline void print_digests(const uint32_t *digests, long n)
{
    uint32_t x = 0;
    for (long k = 0; k < 4 * n; k++)
        x ^= digests[k] * (uint32_t)(k + 1);
    printf("%08x\n", x);
}

#endif
