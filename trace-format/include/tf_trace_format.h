/*
 * tf_trace_format.h - constants of the format (kinds, end kinds, operand
 * flags, events, limits) and its primitives: varint/svarint, CRC-32C,
 * little-endian stores, the 32-byte file header and the 16-byte chunk
 * header.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_FORMAT_H
#define TF_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------
 * 1. Constants
 * ------------------------------------------------------------------------ */

#define TF_FORMAT_VERSION 4u
#define TF_KIND_BLOCKS 1u
#define TF_KIND_THREAD 2u

#define TF_FILE_HEADER_SIZE 32
#define TF_CHUNK_HEADER_SIZE 16
#define TF_CHUNK_MAX_PAYLOAD (64u << 20)
#define TF_VARINT_MAX 10

/* Block ids are 32-bit in this header; TF_NO_BLOCK means "none". */
#define TF_NO_BLOCK 0xFFFFFFFFu
/* Address of an absent conditional operand. */
#define TF_ABSENT ((uint64_t)0)

/* Block-table record tags (section 5). */
enum { TF_REC_MODULE = 1, TF_REC_FUNCTION = 2, TF_REC_BLOCK = 3 };

/* How a block ends (section 5). */
enum tf_end {
    TF_END_FALLTHROUGH = 0,
    TF_END_JUMP = 1,
    TF_END_BRANCH = 2,
    TF_END_INDIRECT_JUMP = 3,
    TF_END_CALL = 4,
    TF_END_INDIRECT_CALL = 5,
    TF_END_RETURN = 6,
    TF_END_SYSCALL = 7,
    TF_END_OTHER = 8
};

/* Operand flags (section 5). */
#define TF_OP_WRITE 1u
#define TF_OP_COND 2u

/* Event types (section 6.4). */
enum tf_event {
    TF_EV_PARTIAL = 0,
    TF_EV_THREAD_START = 1,
    TF_EV_THREAD_EXIT = 2,
    TF_EV_LOCK_ACQUIRE = 3,
    TF_EV_LOCK_RELEASE = 4,
    TF_EV_SKIP = 5,
    TF_EV_SYSCALL = 6,
    TF_EV_SIGNAL = 7,
    TF_EV_SIGNAL_RETURN = 8,
    TF_EV_MARKER = 9,
    TF_EV_LOOP_CHUNK = 10,
    TF_EV_STATIC_LOOP = 11,
    TF_EV_REGION_ENTRY = 12
};

enum tf_lock_kind {
    TF_LOCK_MUTEX = 0,
    TF_LOCK_SPIN = 1,
    TF_LOCK_RWLOCK_READ = 2,
    TF_LOCK_RWLOCK_WRITE = 3,
    TF_LOCK_SEMAPHORE = 4,
    TF_LOCK_OMP_CRITICAL = 5,
    TF_LOCK_OMP_CRITICAL_NAMED = 6,
    TF_LOCK_OMP_ATOMIC = 7
};

enum tf_skip_reason {
    TF_SKIP_LOCK_RUNTIME = 0,
    TF_SKIP_SYNC_WAIT = 1,
    TF_SKIP_EXCLUDED = 2,
    TF_SKIP_OUTSIDE = 3,
    TF_SKIP_OTHER = 4,
    TF_SKIP_LOOP_SCHEDULE = 5
};

enum tf_thread_exit_how { TF_EXIT_ENDED = 0, TF_EXIT_PROCESS = 1 };

/* Valid ranges of the thread-stream parameters (section 4.1). */
#define TF_TABLE_BITS_MIN 8
#define TF_TABLE_BITS_MAX 16
#define TF_RET_DEPTH_MAX 255
#define TF_MAX_INSNS 4096
#define TF_MAX_INSN_LEN 15
#define TF_MAX_OPS 2048
/* Limits of a run record (section 9): at most TF_MAX_RUN executions, and it
 * ends once its executions have TF_RUN_OPS operands or more. */
#define TF_MAX_RUN 64u
#define TF_RUN_OPS 256u
/* The longest run a block record carries as its prefix (section 6.1). */
#define TF_MAX_RUN_PREFIX 3u
#define TF_MAX_OP_SIZE 4096

#if defined(__GNUC__)
#define TF__LIKELY(x) __builtin_expect(!!(x), 1)
#define TF__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TF__UNUSED __attribute__((unused))
#else
#define TF__LIKELY(x) (x)
#define TF__UNLIKELY(x) (x)
#define TF__UNUSED
#endif

/* ------------------------------------------------------------------------
 * 2. Primitives
 * ------------------------------------------------------------------------ */

/* Bytes needed by the varint of v (1..10). */
static inline size_t tf_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v as a shortest-form unsigned LEB128 at p; returns the bytes written. */
static inline size_t tf_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t tf_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline size_t tf_put_svarint(uint8_t *p, int64_t v)
{
    return tf_put_varint(p, tf_zigzag(v));
}

/* Writes `len` raw bytes preceded by their varint length; returns bytes written. */
static inline size_t tf_put_bytes(uint8_t *p, const void *data, size_t len)
{
    size_t n = tf_put_varint(p, len);
    const uint8_t *s = (const uint8_t *)data;
    size_t i;
    for (i = 0; i < len; i++)
        p[n + i] = s[i];
    return n + len;
}

static inline void tf_put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void tf_put_u64le(uint8_t *p, uint64_t v)
{
    tf_put_u32le(p, (uint32_t)v);
    tf_put_u32le(p + 4, (uint32_t)(v >> 32));
}

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table for the
 * portable path; the SSE4.2 path gives identical results. */
static const uint32_t tf__crc32c_table[256] TF__UNUSED = {
    0x00000000u, 0xf26b8303u, 0xe13b70f7u, 0x1350f3f4u, 0xc79a971fu, 0x35f1141cu,
    0x26a1e7e8u, 0xd4ca64ebu, 0x8ad958cfu, 0x78b2dbccu, 0x6be22838u, 0x9989ab3bu,
    0x4d43cfd0u, 0xbf284cd3u, 0xac78bf27u, 0x5e133c24u, 0x105ec76fu, 0xe235446cu,
    0xf165b798u, 0x030e349bu, 0xd7c45070u, 0x25afd373u, 0x36ff2087u, 0xc494a384u,
    0x9a879fa0u, 0x68ec1ca3u, 0x7bbcef57u, 0x89d76c54u, 0x5d1d08bfu, 0xaf768bbcu,
    0xbc267848u, 0x4e4dfb4bu, 0x20bd8edeu, 0xd2d60dddu, 0xc186fe29u, 0x33ed7d2au,
    0xe72719c1u, 0x154c9ac2u, 0x061c6936u, 0xf477ea35u, 0xaa64d611u, 0x580f5512u,
    0x4b5fa6e6u, 0xb93425e5u, 0x6dfe410eu, 0x9f95c20du, 0x8cc531f9u, 0x7eaeb2fau,
    0x30e349b1u, 0xc288cab2u, 0xd1d83946u, 0x23b3ba45u, 0xf779deaeu, 0x05125dadu,
    0x1642ae59u, 0xe4292d5au, 0xba3a117eu, 0x4851927du, 0x5b016189u, 0xa96ae28au,
    0x7da08661u, 0x8fcb0562u, 0x9c9bf696u, 0x6ef07595u, 0x417b1dbcu, 0xb3109ebfu,
    0xa0406d4bu, 0x522bee48u, 0x86e18aa3u, 0x748a09a0u, 0x67dafa54u, 0x95b17957u,
    0xcba24573u, 0x39c9c670u, 0x2a993584u, 0xd8f2b687u, 0x0c38d26cu, 0xfe53516fu,
    0xed03a29bu, 0x1f682198u, 0x5125dad3u, 0xa34e59d0u, 0xb01eaa24u, 0x42752927u,
    0x96bf4dccu, 0x64d4cecfu, 0x77843d3bu, 0x85efbe38u, 0xdbfc821cu, 0x2997011fu,
    0x3ac7f2ebu, 0xc8ac71e8u, 0x1c661503u, 0xee0d9600u, 0xfd5d65f4u, 0x0f36e6f7u,
    0x61c69362u, 0x93ad1061u, 0x80fde395u, 0x72966096u, 0xa65c047du, 0x5437877eu,
    0x4767748au, 0xb50cf789u, 0xeb1fcbadu, 0x197448aeu, 0x0a24bb5au, 0xf84f3859u,
    0x2c855cb2u, 0xdeeedfb1u, 0xcdbe2c45u, 0x3fd5af46u, 0x7198540du, 0x83f3d70eu,
    0x90a324fau, 0x62c8a7f9u, 0xb602c312u, 0x44694011u, 0x5739b3e5u, 0xa55230e6u,
    0xfb410cc2u, 0x092a8fc1u, 0x1a7a7c35u, 0xe811ff36u, 0x3cdb9bddu, 0xceb018deu,
    0xdde0eb2au, 0x2f8b6829u, 0x82f63b78u, 0x709db87bu, 0x63cd4b8fu, 0x91a6c88cu,
    0x456cac67u, 0xb7072f64u, 0xa457dc90u, 0x563c5f93u, 0x082f63b7u, 0xfa44e0b4u,
    0xe9141340u, 0x1b7f9043u, 0xcfb5f4a8u, 0x3dde77abu, 0x2e8e845fu, 0xdce5075cu,
    0x92a8fc17u, 0x60c37f14u, 0x73938ce0u, 0x81f80fe3u, 0x55326b08u, 0xa759e80bu,
    0xb4091bffu, 0x466298fcu, 0x1871a4d8u, 0xea1a27dbu, 0xf94ad42fu, 0x0b21572cu,
    0xdfeb33c7u, 0x2d80b0c4u, 0x3ed04330u, 0xccbbc033u, 0xa24bb5a6u, 0x502036a5u,
    0x4370c551u, 0xb11b4652u, 0x65d122b9u, 0x97baa1bau, 0x84ea524eu, 0x7681d14du,
    0x2892ed69u, 0xdaf96e6au, 0xc9a99d9eu, 0x3bc21e9du, 0xef087a76u, 0x1d63f975u,
    0x0e330a81u, 0xfc588982u, 0xb21572c9u, 0x407ef1cau, 0x532e023eu, 0xa145813du,
    0x758fe5d6u, 0x87e466d5u, 0x94b49521u, 0x66df1622u, 0x38cc2a06u, 0xcaa7a905u,
    0xd9f75af1u, 0x2b9cd9f2u, 0xff56bd19u, 0x0d3d3e1au, 0x1e6dcdeeu, 0xec064eedu,
    0xc38d26c4u, 0x31e6a5c7u, 0x22b65633u, 0xd0ddd530u, 0x0417b1dbu, 0xf67c32d8u,
    0xe52cc12cu, 0x1747422fu, 0x49547e0bu, 0xbb3ffd08u, 0xa86f0efcu, 0x5a048dffu,
    0x8ecee914u, 0x7ca56a17u, 0x6ff599e3u, 0x9d9e1ae0u, 0xd3d3e1abu, 0x21b862a8u,
    0x32e8915cu, 0xc083125fu, 0x144976b4u, 0xe622f5b7u, 0xf5720643u, 0x07198540u,
    0x590ab964u, 0xab613a67u, 0xb831c993u, 0x4a5a4a90u, 0x9e902e7bu, 0x6cfbad78u,
    0x7fab5e8cu, 0x8dc0dd8fu, 0xe330a81au, 0x115b2b19u, 0x020bd8edu, 0xf0605beeu,
    0x24aa3f05u, 0xd6c1bc06u, 0xc5914ff2u, 0x37faccf1u, 0x69e9f0d5u, 0x9b8273d6u,
    0x88d28022u, 0x7ab90321u, 0xae7367cau, 0x5c18e4c9u, 0x4f48173du, 0xbd23943eu,
    0xf36e6f75u, 0x0105ec76u, 0x12551f82u, 0xe03e9c81u, 0x34f4f86au, 0xc69f7b69u,
    0xd5cf889du, 0x27a40b9eu, 0x79b737bau, 0x8bdcb4b9u, 0x988c474du, 0x6ae7c44eu,
    0xbe2da0a5u, 0x4c4623a6u, 0x5f16d052u, 0xad7d5351u
};

/* CRC-32C of `n` bytes at `data`, continuing from `crc`, the value returned
 * for the bytes before them (0 to start): tf_crc32c(tf_crc32c(0, a), b) is the
 * CRC of a followed by b. Initial value and final XOR 0xFFFFFFFF are applied
 * here, as FORMAT.md 4.2 requires. */
static inline uint32_t tf_crc32c(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t c = ~crc;
#if defined(__SSE4_2__) && defined(__x86_64__)
    typedef uint64_t tf__u64_unaligned __attribute__((aligned(1), may_alias));
    uint64_t c64 = c;
    while (n >= 8) {
        c64 = __builtin_ia32_crc32di(c64, *(const tf__u64_unaligned *)p);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n > 0) {
        c = __builtin_ia32_crc32qi(c, *p++);
        n--;
    }
#else
    while (n > 0) {
        c = tf__crc32c_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
        n--;
    }
#endif
    return ~c;
}

/* The same, always with the table: for tests that compare the two paths. */
static inline TF__UNUSED uint32_t tf_crc32c_portable(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t c = ~crc;
    while (n > 0) {
        c = tf__crc32c_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
        n--;
    }
    return ~c;
}

/* The 32-byte file header (section 4.1). For the block table (kind 1) pass
 * tid 0 and table parameters 0. */
static inline void tf_file_header(uint8_t out[TF_FILE_HEADER_SIZE], uint32_t kind, uint64_t tid,
                                  unsigned addr_table_bits, unsigned succ_table_bits,
                                  unsigned ret_stack_depth)
{
    static const char magic[8] = {'T', 'F', 'S', 'T', 'R', 'E', 'A', 'M'};
    int i;
    for (i = 0; i < 8; i++)
        out[i] = (uint8_t)magic[i];
    tf_put_u32le(out + 8, TF_FORMAT_VERSION);
    tf_put_u32le(out + 12, kind);
    tf_put_u64le(out + 16, tid);
    out[24] = (uint8_t)addr_table_bits;
    out[25] = (uint8_t)succ_table_bits;
    out[26] = (uint8_t)ret_stack_depth;
    out[27] = 0;
    tf_put_u32le(out + 28, tf_crc32c(0, out, 28));
}

/* The 16-byte chunk header (section 4.2) for `len` payload bytes at `payload`. */
static inline void tf_chunk_header(uint8_t out[TF_CHUNK_HEADER_SIZE], uint32_t seq,
                                   const void *payload, uint32_t len)
{
    out[0] = 'T';
    out[1] = 'F';
    out[2] = 'C';
    out[3] = 'K';
    tf_put_u32le(out + 4, len);
    tf_put_u32le(out + 8, seq);
    tf_put_u32le(out + 12, tf_crc32c(tf_crc32c(0, out + 4, 8), payload, len));
}

#endif /* TF_TRACE_FORMAT_H */
