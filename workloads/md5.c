/* md5 N T: the MD5 compression function (RFC 1321) applied to one 64-byte
 * block per item, N items (default 512, as the paper's MD5), on T threads
 * (default 256) of N/T = 2 consecutive items each (items.h). Item i's block
 * is 16 words generated from a fixed seed at 64·i of a 128-byte aligned
 * array; its 16-byte digest goes to 16·i of another. One unit = one item:
 *
 *     tf analyze TRACE --unit call:md5_item --warp 8,16,32
 *
 * Expected for md5_item() at width W, at every -O level:
 *   SIMT efficiency  100%: 64 steps in every lane, and which of the four
 *                    round functions a step uses depends on the step
 *                    number only; no branch depends on the data.
 *   heap loads       W = 8, 16, 32: every load reads within the lane's own
 *                    64-byte block (a 4-byte word, or 16 bytes where GCC
 *                    vectorizes, aligned, so within one sector), and the
 *                    blocks of a warp's lanes are 64 bytes apart: one
 *                    sector per lane.
 *   heap stores      W/2 = 4, 8, 16: the lanes' digests are 16·W
 *                    contiguous bytes, written in 4-byte or wider operands
 *                    within each lane's 16 bytes.
 *   stack            ceil(W/k), k = 2: 4, 8, 16.
 * The stack holds 4-byte state words at -O0 and spills of several sizes at
 * -O1 and above, so the interleaved stack figure is not derived here.
 */
#include "items.h"

static const uint32_t K[64] = {
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
static const uint8_t R[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9,  14, 20, 5, 9,
    14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static uint32_t *blocks; /* 16 words per item */
static uint32_t *digests; /* 4 words per item */

__attribute__((noipa)) void md5_item(long i)
{
    const uint32_t *m = blocks + 16 * i;
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
        uint32_t rotated = a + f + K[s] + m[g];
        a = d;
        d = c;
        c = b;
        b = b + ((rotated << R[s]) | (rotated >> (32 - R[s])));
    }
    uint32_t *out = digests + 4 * i;
    out[0] = 0x67452301 + a;
    out[1] = 0xefcdab89 + b;
    out[2] = 0x98badcfe + c;
    out[3] = 0x10325476 + d;
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 512);
    long t = arg_long(argc, argv, 2, 256);
    blocks = alloc128(16 * n * sizeof *blocks);
    digests = alloc128(4 * n * sizeof *digests);
    uint64_t seed = 5;
    for (long k = 0; k < 16 * n; k++)
        blocks[k] = lcg_next(&seed);
    run_items(n, t, md5_item);
    uint32_t x = 0;
    for (long k = 0; k < 4 * n; k++)
        x ^= digests[k] * (uint32_t)(k + 1);
    printf("%08x\n", x);
    return 0;
}
