/*
 * tf_trace.h - the encoding side of the tf trace format, version 4
 * (trace-format/FORMAT.md), as one freestanding C header.
 *
 * No libc is used: only <stdint.h> and <stddef.h>, which are freestanding.
 * Everything is `static` or `static inline`, so the header can be included in
 * several translation units (a Valgrind tool, a Pin tool, a test program).
 * The caller provides all memory and does all I/O through a sink callback.
 *
 * Contents
 *   1. constants of the format (kinds, end kinds, operand flags, events, ...)
 *   2. primitives: varint/svarint, CRC-32C, little-endian stores, the 32-byte
 *      file header and the 16-byte chunk header
 *   3. tf_stream: a chunk writer. Records are appended to a caller-provided
 *      buffer; when the payload reaches the target size the chunk is framed
 *      (header + CRC) and handed to the sink in one piece.
 *   4. block-table records (module, function, block), written to a tf_stream
 *   5. tf_encoder: a thread-stream encoder implementing FORMAT.md section 6
 *      exactly, including the canonical writer procedure of section 6.5
 *   6. tf_mp: MessagePack writers for the manifest (section 7)
 *
 * Sinks
 *   int sink(void *ctx, const uint8_t *chunk, size_t len) receives one whole
 *   chunk (16-byte header followed by the payload) and returns 0, or nonzero
 *   on error. Errors are sticky: `stream.error` is set and later chunks are
 *   still handed to the sink. The file header (tf_file_header) is the
 *   caller's business: write it before the first chunk of a file.
 *
 * Usage (errors unchecked for brevity)
 *
 *   // block table
 *   static uint8_t tbuf[(1 << 20) + (64 << 10)];
 *   tf_stream table;
 *   uint8_t hdr[TF_FILE_HEADER_SIZE];
 *   tf_file_header(hdr, TF_KIND_BLOCKS, 0, 0, 0, 0);   // write hdr to blocks.tfc
 *   tf_stream_init(&table, tbuf, sizeof tbuf, 1 << 20, my_sink, blocks_fd);
 *   tf_table_function(&table, 1, 0x401000, 0, "main", 4);
 *   tf_block_rec b = { .id = 0, .address = 0x401000, .function = 1,
 *                      .end = TF_END_BRANCH, .code = code, .code_len = 9,
 *                      .n_insns = 2, .lengths = lens, .n_ops = 1, .ops = ops };
 *   tf_table_block(&table, &b);
 *   tf_stream_close(&table);            // before any thread chunk that uses it
 *
 *   // one thread
 *   tf_enc_params p = { .succ_table_bits = 12, .addr_table_bits = 14,
 *                       .ret_stack_depth = 32, .chunk_target = 1 << 20,
 *                       .max_ops = 1024 };
 *   void *mem = my_alloc(tf_enc_mem_size(&p));      // 8-byte aligned
 *   tf_encoder e;
 *   tf_enc_init(&e, &p, mem, my_info, my_block_at, my_sink, thread_ctx);
 *   tf_file_header(hdr, TF_KIND_THREAD, tid, 14, 12, 32); // or tf_enc_file_header
 *   tf_enc_thread_start(&e, 0, stack_lo, stack_hi, 0);
 *   uint64_t addrs[1] = { 0x7ffd1000 };
 *   tf_enc_exec(&e, 0, addrs);                       // a complete execution
 *   tf_enc_exec_partial(&e, 0, 1, 0, addrs);         // ran 1 insn, 0 operands
 *   tf_enc_thread_exit(&e, 0);
 *   tf_enc_flush(&e);                                // end of stream
 *
 * Memory operands of an execution are passed as an array of addresses, one per
 * operand (the first n_ops for a partial execution); an absent conditional
 * operand is TF_ABSENT (0: address 0 is never a valid user address on Linux).
 *
 * API in brief
 *   tf_varint_len, tf_put_varint, tf_zigzag, tf_put_svarint, tf_put_bytes,
 *   tf_put_u32le, tf_put_u64le, tf_crc32c (tf_crc32c_portable: table only),
 *   tf_file_header, tf_chunk_header, tf_hash (the hash of section 6.2)
 *   tf_stream_init, tf_stream_tail, tf_stream_close
 *   tf_table_module, tf_table_function, tf_table_block (tf_table_block_size)
 *   tf_enc_mem_size, tf_enc_init, tf_enc_file_header
 *   tf_enc_exec (complete, info by callback), tf_enc_exec_partial,
 *   tf_enc_exec_info (info given, checked), tf_enc_exec_fast (unchecked)
 *   tf_enc_event and one writer per event: tf_enc_thread_start,
 *   tf_enc_thread_exit, tf_enc_lock_acquire, tf_enc_lock_release, tf_enc_skip,
 *   tf_enc_loop_chunk, tf_enc_static_loop, tf_enc_region_entry,
 *   tf_enc_syscall, tf_enc_signal, tf_enc_signal_return, tf_enc_marker
 *   tf_enc_flush (end of stream, or before exec / death)
 *   tf_mp_init, tf_mp_len, tf_mp_map, tf_mp_array, tf_mp_str, tf_mp_cstr,
 *   tf_mp_bin, tf_mp_uint, tf_mp_int, tf_mp_bool, tf_mp_nil, tf_utf8_valid
 * Functions return 0 on success and -1 on error (a sink failed, a record did
 * not fit, an invalid execution); errors also set the stream's `error`.
 * Encoders share nothing: each may run in its own thread. The block_at
 * callback returns the lowest id at an address among the blocks defined so
 * far; the encoder applies the max_exec bound of section 6.2 itself.
 */
#ifndef TF_TRACE_H
#define TF_TRACE_H

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

/* ------------------------------------------------------------------------
 * 3. tf_stream: chunk writer
 * ------------------------------------------------------------------------ */

typedef int (*tf_sink_fn)(void *ctx, const uint8_t *chunk, size_t len);

typedef struct tf_stream {
    uint8_t *buf;      /* buf[0..16): room for the chunk header; payload follows */
    size_t cap;        /* payload capacity: buffer size - 16 */
    size_t len;        /* payload bytes in the open chunk */
    size_t target;     /* close the chunk once len >= target */
    uint32_t seq;      /* seq of the open chunk */
    int error;         /* a sink failed, or a record did not fit */
    tf_sink_fn sink;
    void *sink_ctx;
    uint64_t bytes_out; /* bytes handed to the sink (chunk headers included) */
} tf_stream;

/* `buf` of `size` bytes holds one chunk: header and payload. It must be at
 * least 16 + target + the largest record, or chunks close early (still a valid
 * stream, but not the canonical one). target is 1..=64 MiB. */
static inline void tf_stream_init(tf_stream *s, void *buf, size_t size, size_t target,
                                  tf_sink_fn sink, void *sink_ctx)
{
    s->buf = (uint8_t *)buf;
    s->cap = size > TF_CHUNK_HEADER_SIZE ? size - TF_CHUNK_HEADER_SIZE : 0;
    if (s->cap > TF_CHUNK_MAX_PAYLOAD)
        s->cap = TF_CHUNK_MAX_PAYLOAD;
    s->len = 0;
    s->target = target == 0 ? 1 : target;
    s->seq = 0;
    s->error = 0;
    s->sink = sink;
    s->sink_ctx = sink_ctx;
    s->bytes_out = 0;
}

/* Where the next payload byte goes. */
static inline uint8_t *tf_stream_tail(tf_stream *s)
{
    return s->buf + TF_CHUNK_HEADER_SIZE + s->len;
}

/* Frames the open chunk and hands it to the sink, if it is not empty.
 * Returns 0, or -1 if the sink failed. */
static inline int tf_stream_close(tf_stream *s)
{
    size_t total;
    if (s->len == 0)
        return 0;
    tf_chunk_header(s->buf, s->seq, s->buf + TF_CHUNK_HEADER_SIZE, (uint32_t)s->len);
    total = TF_CHUNK_HEADER_SIZE + s->len;
    s->seq++;
    s->len = 0;
    s->bytes_out += total;
    if (s->sink(s->sink_ctx, s->buf, total) != 0) {
        s->error = 1;
        return -1;
    }
    return 0;
}

/* Makes room for a record of at most n bytes, closing the chunk early if it
 * must. Returns 0, or -1 if n can never fit. */
static inline int tf__stream_room(tf_stream *s, size_t n)
{
    if (TF__LIKELY(s->len + n <= s->cap))
        return 0;
    if (n > s->cap) {
        s->error = 1;
        return -1;
    }
    tf_stream_close(s); /* a sink error is sticky in s->error */
    return 0;
}

/* Closes the chunk if it reached its target (after each whole record). */
static inline int tf__stream_end_record(tf_stream *s)
{
    if (s->len >= s->target)
        return tf_stream_close(s);
    return 0;
}

/* ------------------------------------------------------------------------
 * 4. Block-table records (section 5), written to a tf_stream
 * ------------------------------------------------------------------------ */

typedef struct tf_block_op {
    uint16_t insn;  /* index of the instruction in the block */
    uint8_t flags;  /* TF_OP_WRITE | TF_OP_COND */
    uint16_t size;  /* bytes accessed, 1..=4096 */
} tf_block_op;

typedef struct tf_block_rec {
    uint64_t id;
    uint64_t address;
    uint64_t function;        /* function id, 0 = unknown */
    unsigned end;             /* enum tf_end */
    const uint8_t *code;      /* code_len bytes */
    uint32_t code_len;        /* = sum of lengths */
    uint32_t n_insns;         /* 1..=4096 */
    const uint8_t *lengths;   /* n_insns bytes, each 1..=15 */
    uint32_t n_ops;           /* 0..=2048 */
    const tf_block_op *ops;   /* n_ops operands, insn non-decreasing */
} tf_block_rec;

/* Upper bound of the encoded size of a block record. */
static inline size_t tf_table_block_size(const tf_block_rec *b)
{
    return 5 * TF_VARINT_MAX + TF_VARINT_MAX + b->code_len + TF_VARINT_MAX + b->n_insns +
           TF_VARINT_MAX + (size_t)b->n_ops * (3 + 1 + 2);
}

static inline int tf_table_module(tf_stream *s, uint64_t id, uint64_t base, uint64_t size,
                                  const void *path, size_t path_len, const void *build_id,
                                  size_t build_id_len)
{
    uint8_t *p, *q;
    if (tf__stream_room(s, 4 * TF_VARINT_MAX + 2 * TF_VARINT_MAX + path_len + build_id_len))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_MODULE);
    q += tf_put_varint(q, id);
    q += tf_put_varint(q, base);
    q += tf_put_varint(q, size);
    q += tf_put_bytes(q, path, path_len);
    q += tf_put_bytes(q, build_id, build_id_len);
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

static inline int tf_table_function(tf_stream *s, uint64_t id, uint64_t entry, uint64_t module,
                                    const void *name, size_t name_len)
{
    uint8_t *p, *q;
    if (tf__stream_room(s, 5 * TF_VARINT_MAX + name_len))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_FUNCTION);
    q += tf_put_varint(q, id);
    q += tf_put_varint(q, entry);
    q += tf_put_varint(q, module);
    q += tf_put_bytes(q, name, name_len);
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

/* Whether section 5 can hold the block record: 1..=65535 instructions of
 * 1..=15 bytes adding up to code_len, at most 65535 operands of 1..=4096
 * bytes, each naming an instruction of the block, in non-decreasing order. */
static inline int tf_block_rec_valid(const tf_block_rec *b)
{
    uint32_t i;
    uint64_t total = 0;
    if (b->n_insns < 1 || b->n_insns > TF_MAX_INSNS || b->n_ops > TF_MAX_OPS || b->end > TF_END_OTHER)
        return 0;
    for (i = 0; i < b->n_insns; i++) {
        if (b->lengths[i] < 1 || b->lengths[i] > TF_MAX_INSN_LEN)
            return 0;
        total += b->lengths[i];
    }
    if (total != b->code_len)
        return 0;
    for (i = 0; i < b->n_ops; i++)
        if (b->ops[i].insn >= b->n_insns || (i > 0 && b->ops[i].insn < b->ops[i - 1].insn) ||
            b->ops[i].size < 1 || b->ops[i].size > TF_MAX_OP_SIZE ||
            (b->ops[i].flags & ~(TF_OP_WRITE | TF_OP_COND)) != 0)
            return 0;
    return 1;
}

/* Writes a block record; -1 (and the stream's error) when the record is not
 * one the format can hold (tf_block_rec_valid) or does not fit. */
static inline int tf_table_block(tf_stream *s, const tf_block_rec *b)
{
    uint8_t *p, *q;
    uint32_t i;
    if (!tf_block_rec_valid(b)) {
        s->error = 1;
        return -1;
    }
    if (tf__stream_room(s, tf_table_block_size(b)))
        return -1;
    p = q = tf_stream_tail(s);
    q += tf_put_varint(q, TF_REC_BLOCK);
    q += tf_put_varint(q, b->id);
    q += tf_put_varint(q, b->address);
    q += tf_put_varint(q, b->function);
    q += tf_put_varint(q, b->end);
    q += tf_put_bytes(q, b->code, b->code_len);
    q += tf_put_varint(q, b->n_insns);
    for (i = 0; i < b->n_insns; i++)
        *q++ = b->lengths[i];
    q += tf_put_varint(q, b->n_ops);
    for (i = 0; i < b->n_ops; i++) {
        q += tf_put_varint(q, b->ops[i].insn);
        *q++ = b->ops[i].flags;
        q += tf_put_varint(q, b->ops[i].size);
    }
    s->len += (size_t)(q - p);
    return tf__stream_end_record(s);
}

/* ------------------------------------------------------------------------
 * 5. tf_encoder: thread streams (section 6)
 * ------------------------------------------------------------------------ */

/* What the encoder needs to know of a block. The caller keeps one per block
 * id, alive as long as the encoder may refer to it. */
typedef struct tf_block_info {
    uint64_t address;
    uint32_t code_len;
    uint32_t n_insns;
    uint32_t n_ops;
    uint32_t end;             /* enum tf_end */
    const uint8_t *op_flags;  /* n_ops entries; only TF_OP_COND matters here */
} tf_block_info;

/* Block info by id (ids the caller has defined). */
typedef const tf_block_info *(*tf_info_fn)(void *ctx, uint32_t id);
/* The lowest block id whose address is `address`, or TF_NO_BLOCK. The encoder
 * applies the max_exec bound of section 6.2 itself. */
typedef uint32_t (*tf_block_at_fn)(void *ctx, uint64_t address);

typedef struct tf_enc_params {
    unsigned succ_table_bits; /* 8..=16 */
    unsigned addr_table_bits; /* 8..=16 */
    unsigned ret_stack_depth; /* 1..=255 */
    size_t chunk_target;      /* payload bytes that close a chunk (tracers: 1 MiB) */
    uint32_t max_ops;         /* the most operands any block passed to this encoder has */
} tf_enc_params;

typedef struct tf__succ_entry {
    uint32_t key; /* block id, TF_NO_BLOCK when empty */
    uint32_t s0, s1;
} tf__succ_entry;

#define TF__ADDR_MODE_OFFSET ((uint64_t)1 << 63)

typedef struct tf__addr_entry {
    uint64_t key; /* B.id * 65536 + j, bit 63 = mode offset; all ones when empty */
    uint64_t last;
    uint64_t stride;
    uint64_t offset;
} tf__addr_entry;

typedef struct tf_encoder {
    tf_stream s;
    tf_info_fn info;
    tf_block_at_fn block_at;
    void *ctx;
    unsigned succ_bits, addr_bits, ret_cap;
    unsigned succ_shift, addr_shift; /* 64 - bits */
    tf__succ_entry *succ;
    tf__addr_entry *addr;
    uint64_t *ret;     /* the return stack, bottom first: ret[0..ret_len) */
    uint64_t *scratch; /* operand values of the record being written */
    uint32_t max_ops;
    /* prediction state, reset per chunk */
    unsigned ret_len;
    uint64_t ret_top;      /* ret[ret_len - 1], or all ones when empty */
    uint32_t prev;         /* TF_NO_BLOCK = none */
    uint32_t prev_end;     /* prev's end kind if it was complete, else TF_END_OTHER */
    uint64_t prev_next;    /* prev.address + len(prev.code) */
    int64_t max_exec;      /* -1 = none */
    uint64_t last_any;
    uint64_t pending;      /* run being gathered */
    uint64_t pending_ops;  /* its executions' operands */
    /* The open chunk has room for any record while s.len is below this
     * (0 if never; else cap less the largest record of max_ops operands,
     * plus one): one comparison per record instead of working out that
     * record's largest size. */
    size_t roomy_below;
} tf_encoder;

static inline uint64_t tf_hash(uint64_t x, unsigned bits)
{
    return (x * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

/* Room kept past the chunk target for one more record: the largest block
 * record (a partial event, a block header, max_ops values) or the largest
 * standard event (a thread_start: header, length and four varints). */
static inline size_t tf__enc_record_max(uint32_t max_ops)
{
    size_t block = 2 + 2 * TF_VARINT_MAX + TF_VARINT_MAX + (size_t)max_ops * TF_VARINT_MAX;
    size_t event = 2 * TF_VARINT_MAX + 4 * TF_VARINT_MAX;
    return block > event ? block : event;
}

static inline size_t tf__align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Bytes of memory tf_enc_init needs for these parameters. */
static inline size_t tf_enc_mem_size(const tf_enc_params *p)
{
    return tf__align8(sizeof(tf__succ_entry) << p->succ_table_bits) +
           (sizeof(tf__addr_entry) << p->addr_table_bits) + 8 * (size_t)p->ret_stack_depth +
           8 * (size_t)p->max_ops +
           tf__align8(TF_CHUNK_HEADER_SIZE + p->chunk_target + tf__enc_record_max(p->max_ops));
}

static inline void tf__enc_reset(tf_encoder *e)
{
    size_t i, n;
    n = (size_t)1 << e->succ_bits;
    for (i = 0; i < n; i++) {
        e->succ[i].key = TF_NO_BLOCK;
        e->succ[i].s0 = TF_NO_BLOCK;
        e->succ[i].s1 = TF_NO_BLOCK;
    }
    n = (size_t)1 << e->addr_bits;
    for (i = 0; i < n; i++)
        e->addr[i].key = ~(uint64_t)0;
    e->ret_len = 0;
    e->ret_top = ~(uint64_t)0;
    e->prev = TF_NO_BLOCK;
    e->prev_end = TF_END_OTHER;
    e->prev_next = 0;
    e->max_exec = -1;
    e->last_any = 0;
}

/* Sets up an encoder in `mem` (tf_enc_mem_size bytes, 8-byte aligned).
 * Returns 0, or -1 if a parameter is out of range. */
static inline int tf_enc_init(tf_encoder *e, const tf_enc_params *p, void *mem,
                              tf_info_fn info, tf_block_at_fn block_at, tf_sink_fn sink,
                              void *ctx)
{
    uint8_t *m = (uint8_t *)mem;
    if (p->succ_table_bits < TF_TABLE_BITS_MIN || p->succ_table_bits > TF_TABLE_BITS_MAX ||
        p->addr_table_bits < TF_TABLE_BITS_MIN || p->addr_table_bits > TF_TABLE_BITS_MAX ||
        p->ret_stack_depth < 1 || p->ret_stack_depth > TF_RET_DEPTH_MAX ||
        p->chunk_target < 1 || p->chunk_target > TF_CHUNK_MAX_PAYLOAD ||
        p->max_ops > TF_MAX_OPS)
        return -1;
    e->info = info;
    e->block_at = block_at;
    e->ctx = ctx;
    e->succ_bits = p->succ_table_bits;
    e->addr_bits = p->addr_table_bits;
    e->succ_shift = 64 - p->succ_table_bits;
    e->addr_shift = 64 - p->addr_table_bits;
    e->ret_cap = p->ret_stack_depth;
    e->max_ops = p->max_ops;
    e->succ = (tf__succ_entry *)m;
    m += tf__align8(sizeof(tf__succ_entry) << p->succ_table_bits);
    e->addr = (tf__addr_entry *)m;
    m += sizeof(tf__addr_entry) << p->addr_table_bits;
    e->ret = (uint64_t *)m;
    m += 8 * (size_t)p->ret_stack_depth;
    e->scratch = (uint64_t *)m;
    m += 8 * (size_t)p->max_ops;
    tf_stream_init(&e->s, m, TF_CHUNK_HEADER_SIZE + p->chunk_target + tf__enc_record_max(p->max_ops),
                   p->chunk_target, sink, ctx);
    e->pending = 0;
    e->pending_ops = 0;
    e->roomy_below = e->s.cap >= tf__enc_record_max(p->max_ops)
                         ? e->s.cap - tf__enc_record_max(p->max_ops) + 1
                         : 0;
    tf__enc_reset(e);
    return 0;
}

/* The file header of this encoder's stream. */
static inline void tf_enc_file_header(const tf_encoder *e, uint64_t tid,
                                      uint8_t out[TF_FILE_HEADER_SIZE])
{
    tf_file_header(out, TF_KIND_THREAD, tid, e->addr_bits, e->succ_bits, e->ret_cap);
}

#if defined(__GNUC__)
#define TF__INLINE static inline __attribute__((always_inline))
#define TF__NOINLINE static __attribute__((noinline))
#else
#define TF__INLINE static inline
#define TF__NOINLINE static
#endif

/* Closes the open chunk (if any) and resets the prediction state. Once a
 * chunk: kept out of the encoding loop. */
TF__NOINLINE int tf__enc_close(tf_encoder *e)
{
    int r;
    if (e->s.len == 0)
        return 0;
    r = tf_stream_close(&e->s);
    tf__enc_reset(e);
    return r;
}

/* Makes room for an event of at most n bytes. An event that does not fit
 * in what is left (only a raw event larger than the room kept past the
 * target) closes the chunk first, through tf__enc_close so that the
 * prediction state is reset with it. */
static inline int tf__enc_room(tf_encoder *e, size_t n)
{
    if (TF__LIKELY(e->s.len + n <= e->s.cap))
        return 0;
    if (n > e->s.cap) {
        e->s.error = 1;
        return -1;
    }
    tf__enc_close(e);
    return 0;
}

TF__INLINE int tf__enc_end_record(tf_encoder *e)
{
    if (e->s.len >= e->s.target)
        return tf__enc_close(e);
    return 0;
}

/* write_pending_run() of section 6.5. Returns 1 if it closed the chunk (the
 * prediction state was reset), else 0. */
static inline int tf__enc_write_run(tf_encoder *e)
{
    uint8_t *q;
    if (e->pending == 0)
        return 0;
    /* Never closes: a record starts below the target, and the room kept past
     * it (tf__enc_record_max) holds a run header. */
    tf__stream_room(&e->s, TF_VARINT_MAX);
    q = tf_stream_tail(&e->s);
    e->s.len += tf_put_varint(q, ((e->pending - 1) << 1) | 1);
    e->pending = 0;
    e->pending_ops = 0;
    if (e->s.len >= e->s.target) {
        tf__enc_close(e);
        return 1;
    }
    return 0;
}

static inline void tf__ret_push(tf_encoder *e, uint64_t a)
{
    unsigned i;
    if (e->ret_len == e->ret_cap) { /* full: discard the bottom */
        for (i = 1; i < e->ret_cap; i++)
            e->ret[i - 1] = e->ret[i];
        e->ret_len--;
    }
    e->ret[e->ret_len++] = a;
    e->ret_top = a;
}

static inline void tf__ret_pop(tf_encoder *e)
{
    e->ret_len--;
    e->ret_top = e->ret_len > 0 ? e->ret[e->ret_len - 1] : ~(uint64_t)0;
}

/* Steps 1-4 of section 6.2 for the execution of block `id` that follows
 * `prev`: returns its successor code, makes it the new `prev` and raises
 * max_exec. */
TF__INLINE uint64_t tf__enc_successor(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                      int partial)
{
    uint64_t s = (uint64_t)id + 2;
    uint32_t prev = e->prev;
    if (TF__LIKELY(prev != TF_NO_BLOCK)) {
        tf__succ_entry *pe = &e->succ[(prev * 0x9E3779B97F4A7C15ull) >> e->succ_shift];
        uint32_t s0 = TF_NO_BLOCK, s1 = TF_NO_BLOCK, c0, c1;
        int hit = pe->key == prev;
        if (TF__LIKELY(hit)) {
            s0 = pe->s0;
            s1 = pe->s1;
        }
        c0 = s0;
        c1 = s1;
        if (e->prev_end == TF_END_RETURN) {
            if (e->ret_len > 0) {
                uint32_t r = e->block_at(e->ctx, e->ret_top);
                if (r != TF_NO_BLOCK && (int64_t)r <= e->max_exec) {
                    c0 = r;
                    c1 = s0 == r ? s1 : s0;
                }
            }
        } else if (e->prev_end == TF_END_CALL || e->prev_end == TF_END_INDIRECT_CALL) {
            tf__ret_push(e, e->prev_next);
        }
        /* step 4, learn (the pop of step 3 does not touch this table) */
        if (TF__UNLIKELY(!hit)) {
            pe->key = prev;
            pe->s0 = id;
            pe->s1 = TF_NO_BLOCK;
        } else if (s0 != id) {
            pe->s1 = s0;
            pe->s0 = id;
        }
        s = c0 == id ? 0 : c1 == id ? 1 : s;
    }
    /* step 3, pop on arrival */
    if (e->ret_top == b->address)
        tf__ret_pop(e);
    e->prev = id;
    e->prev_end = partial ? (uint32_t)TF_END_OTHER : b->end;
    e->prev_next = b->address + b->code_len;
    if ((int64_t)id > e->max_exec)
        e->max_exec = id;
    return s;
}

/* Section 6.3 for one operand that is conditional or has no entry (the
 * general case): returns its record value, or 0 with *absent for an absent
 * operand. */
TF__INLINE uint64_t tf__enc_operand_general(tf_encoder *e, tf__addr_entry *E, uint64_t key,
                                            uint64_t a, uint64_t cond, int have_prev,
                                            uint64_t prev_addr, int *all_pred, int *bad)
{
    uint64_t ekey = E->key, mode = ekey & TF__ADDR_MODE_OFFSET, pred, d, v;
    int hit = (ekey ^ mode) == key;
    if (!hit)
        pred = have_prev ? prev_addr : e->last_any;
    else if (mode && have_prev)
        pred = prev_addr + E->offset;
    else
        pred = E->last + E->stride;
    d = a - pred;
    v = tf_zigzag((int64_t)d) + cond;
    *bad |= cond && v == 0;
    *all_pred &= d == 0;
    if (hit) {
        int stride_ok = E->last + E->stride == a;
        int offset_ok = have_prev && prev_addr + E->offset == a;
        if (mode ? !offset_ok && stride_ok : !stride_ok && offset_ok)
            E->key = ekey ^ TF__ADDR_MODE_OFFSET;
        E->stride = a - E->last;
        if (have_prev)
            E->offset = a - prev_addr;
    } else {
        E->key = key | (have_prev ? TF__ADDR_MODE_OFFSET : 0);
        E->stride = 0;
        E->offset = have_prev ? a - prev_addr : 0;
    }
    E->last = a;
    return v;
}

/* An operand that is conditional or has no entry: its record value, and
 * whether it is present (an absent operand changes nothing). */
TF__INLINE uint64_t tf__enc_operand_other(tf_encoder *e, tf__addr_entry *E, uint64_t key,
                                          uint64_t a, uint8_t flags, int have_prev,
                                          uint64_t prev_addr, int *all_pred, int *bad,
                                          int *present)
{
    *present = !(flags & TF_OP_COND) || a != TF_ABSENT;
    if (!*present) {
        *all_pred = 0;
        return 0;
    }
    return tf__enc_operand_general(e, E, key, a, (flags >> 1) & 1, have_prev, prev_addr, all_pred,
                                   bad);
}

/* Section 6.3 for the operands of one execution: predicts, stores each
 * value of the record in e->scratch and updates the state. Returns 1 if every
 * operand is present and predicted, 0 if not, -1 for an inexpressible value.
 * Two loops: up to the first present operand (no previous operand: offset
 * mode predicts by the stride), and after it. */
TF__INLINE int tf__enc_operands(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                uint32_t n_ops, const uint64_t *addrs)
{
    const uint8_t *flags = b->op_flags;
    uint64_t *vals = e->scratch;
    tf__addr_entry *table = e->addr;
    unsigned shift = e->addr_shift;
    uint64_t key = (uint64_t)id << 16, prev_addr = 0;
    uint64_t h = key * 0x9E3779B97F4A7C15ull; /* hash(key) before the shift */
    int all_pred = 1, bad = 0;
    uint32_t j = 0;
    for (;; j++, key++, h += 0x9E3779B97F4A7C15ull) {
        uint64_t a, ekey;
        tf__addr_entry *E;
        if (j == n_ops)
            return all_pred; /* no operand present: nothing else changes */
        a = addrs[j];
        E = &table[h >> shift];
        ekey = E->key;
        if (TF__LIKELY((ekey & ~TF__ADDR_MODE_OFFSET) == key && !(flags[j] & TF_OP_COND))) {
            /* the stride predicts; offset mode, right or wrong, switches
             * to stride mode when the stride was right */
            uint64_t last = E->last;
            uint64_t d = a - (last + E->stride);
            vals[j] = tf_zigzag((int64_t)d);
            if (d == 0)
                E->key = key;
            else
                all_pred = 0;
            E->stride = a - last;
            E->last = a;
        } else {
            int present;
            vals[j] = tf__enc_operand_other(e, E, key, a, flags[j], 0, 0, &all_pred, &bad,
                                            &present);
            if (!present)
                continue;
        }
        prev_addr = a;
        break;
    }
    for (j++, key++, h += 0x9E3779B97F4A7C15ull; j < n_ops;
         j++, key++, h += 0x9E3779B97F4A7C15ull) {
        uint64_t a = addrs[j];
        tf__addr_entry *E = &table[h >> shift];
        uint64_t ekey = E->key, mode = ekey & TF__ADDR_MODE_OFFSET;
        if (TF__LIKELY((ekey ^ mode) == key && !(flags[j] & TF_OP_COND))) {
            uint64_t last = E->last;
            uint64_t by_stride = last + E->stride;
            uint64_t by_offset = prev_addr + E->offset;
            uint64_t d = a - (mode ? by_offset : by_stride);
            vals[j] = tf_zigzag((int64_t)d);
            if (TF__UNLIKELY(d != 0)) {
                /* the mode switches when only the other prediction was right */
                int stride_ok = by_stride == a;
                int offset_ok = by_offset == a;
                all_pred = 0;
                if (mode ? !offset_ok && stride_ok : !stride_ok && offset_ok)
                    E->key = ekey ^ TF__ADDR_MODE_OFFSET;
            }
            E->stride = a - last;
            E->offset = a - prev_addr;
            E->last = a;
        } else {
            int present;
            vals[j] = tf__enc_operand_other(e, E, key, a, flags[j], 1, prev_addr, &all_pred, &bad,
                                            &present);
            if (!present)
                continue;
        }
        prev_addr = a;
    }
    e->last_any = prev_addr;
    return TF__UNLIKELY(bad) ? -1 : all_pred; /* bad: a difference of -2^63 */
}

/* Writes the record of an execution whose successor code is `s` and whose
 * operand values are in e->scratch, with the pending run as its prefix
 * (at most TF_MAX_RUN_PREFIX; 0 for a partial execution, whose run was
 * written before it). The caller has made room for it. */
TF__INLINE int tf__enc_put_record(tf_encoder *e, int partial, uint32_t n_insns, uint32_t n_ops,
                                  uint64_t s, int all_pred)
{
    uint8_t *p, *q;
    uint32_t j;
    uint64_t prefix = e->pending;
    e->pending = 0;
    e->pending_ops = 0;
    p = q = tf_stream_tail(&e->s);
    if (partial) {
        uint8_t ev[2 * TF_VARINT_MAX];
        size_t n = tf_put_varint(ev, n_insns);
        n += tf_put_varint(ev + n, n_ops);
        q += tf_put_varint(q, (TF_EV_PARTIAL << 2) | 2);
        q += tf_put_bytes(q, ev, n);
    }
    q += tf_put_varint(q, (s << 5) | (prefix << 3) | (all_pred ? 0 : 4));
    if (!all_pred)
        for (j = 0; j < n_ops; j++)
            q += tf_put_varint(q, e->scratch[j]);
    e->s.len += (size_t)(q - p);
    return tf__enc_end_record(e) == 0 && !e->s.error ? 0 : -1;
}

/* An execution that is not part of a run: the pending run, then its record.
 * If writing the run closes the chunk, the state was reset and the
 * execution is encoded afresh. */
TF__NOINLINE int tf__enc_record(tf_encoder *e, uint32_t id, const tf_block_info *b, int partial,
                                uint32_t n_insns, uint32_t n_ops, const uint64_t *addrs,
                                uint64_t s, int all_pred)
{
    for (;;) {
        int closed;
        if (all_pred < 0) {
            e->s.error = 1;
            return -1;
        }
        /* a complete execution carries a short pending run as its prefix
         * (section 6.1); otherwise the run is a record of its own */
        closed = (partial || e->pending > TF_MAX_RUN_PREFIX) && tf__enc_write_run(e);
        if (!closed) {
            if (TF__LIKELY(e->s.len + tf__enc_record_max(n_ops) <= e->s.cap))
                break;
            /* only with a buffer smaller than tf_enc_mem_size asks for */
            if (e->s.len == 0) {
                e->s.error = 1;
                return -1;
            }
            if (!tf__enc_write_run(e))
                tf__enc_close(e);
        }
        s = tf__enc_successor(e, id, b, partial);
        all_pred = tf__enc_operands(e, id, b, n_ops, addrs);
    }
    return tf__enc_put_record(e, partial, n_insns, n_ops, s, all_pred);
}

/* tf_enc_exec_info without the argument checks, for callers that know
 * their executions are valid. */
TF__INLINE int tf_enc_exec_fast(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                int partial, uint32_t n_insns, uint32_t n_ops,
                                const uint64_t *addrs)
{
    uint64_t s = tf__enc_successor(e, id, b, partial);
    int all_pred = tf__enc_operands(e, id, b, n_ops, addrs);
    if (TF__LIKELY(s == 0 && all_pred > 0 && !partial)) {
        e->pending++;
        e->pending_ops += n_ops;
        if (TF__UNLIKELY(e->pending == TF_MAX_RUN || e->pending_ops >= TF_RUN_OPS)) {
            tf__enc_write_run(e);
            return e->s.error ? -1 : 0;
        }
        return 0;
    }
    /* the common record: complete, a short run before it, room for it */
    if (TF__LIKELY(!partial && all_pred >= 0 && e->pending <= TF_MAX_RUN_PREFIX &&
                   e->s.len < e->roomy_below))
        return tf__enc_put_record(e, 0, n_insns, n_ops, s, all_pred);
    return tf__enc_record(e, id, b, partial, n_insns, n_ops, addrs, s, all_pred);
}

/*
 * One block execution of block `id` (described by `b`): the first `n_insns`
 * instructions ran and `addrs` holds the first `n_ops` operand addresses.
 * `partial` says whether a partial event precedes the record (section 6.4);
 * a complete execution has n_insns = b->n_insns and n_ops = b->n_ops.
 * Returns 0, or -1 if a sink failed or the execution is invalid.
 */
static inline int tf_enc_exec_info(tf_encoder *e, uint32_t id, const tf_block_info *b,
                                   int partial, uint32_t n_insns, uint32_t n_ops,
                                   const uint64_t *addrs)
{
    if (TF__UNLIKELY(n_ops > e->max_ops || n_ops > b->n_ops || n_insns > b->n_insns ||
                     (partial ? n_insns == 0 : n_ops != b->n_ops || n_insns != b->n_insns))) {
        e->s.error = 1;
        return -1;
    }
    return tf_enc_exec_fast(e, id, b, partial, n_insns, n_ops, addrs);
}

/* A complete execution of block `id`; `addrs` holds all its operands. */
static inline int tf_enc_exec(tf_encoder *e, uint32_t id, const uint64_t *addrs)
{
    const tf_block_info *b = e->info(e->ctx, id);
    return tf_enc_exec_info(e, id, b, 0, b->n_insns, b->n_ops, addrs);
}

/* A partial execution: a partial event, then the block record. */
static inline int tf_enc_exec_partial(tf_encoder *e, uint32_t id, uint32_t n_insns,
                                      uint32_t n_ops, const uint64_t *addrs)
{
    return tf_enc_exec_info(e, id, e->info(e->ctx, id), 1, n_insns, n_ops, addrs);
}

/* Any event: `payload` is the event's field bytes (section 6.4). */
static inline int tf_enc_event(tf_encoder *e, unsigned type, const uint8_t *payload, size_t len)
{
    uint8_t *p, *q;
    tf__enc_write_run(e);
    if (tf__enc_room(e, 2 * TF_VARINT_MAX + len))
        return -1;
    p = q = tf_stream_tail(&e->s);
    q += tf_put_varint(q, ((uint64_t)type << 2) | 2);
    q += tf_put_bytes(q, payload, len);
    e->s.len += (size_t)(q - p);
    return tf__enc_end_record(e) == 0 && !e->s.error ? 0 : -1;
}

/* An event whose payload is the `n` varints of `f`. */
static inline int tf__enc_event_fields(tf_encoder *e, unsigned type, unsigned n,
                                       const uint64_t *f)
{
    uint8_t buf[5 * TF_VARINT_MAX];
    size_t len = 0;
    for (unsigned i = 0; i < n && i < 5; i++)
        len += tf_put_varint(buf + len, f[i]);
    return tf_enc_event(e, type, buf, len);
}

/* An event whose payload is `n` (at most 4) varints. */
static inline int tf__enc_event_varints(tf_encoder *e, unsigned type, unsigned n,
                                        uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    const uint64_t f[4] = {a, b, c, d};
    return tf__enc_event_fields(e, type, n, f);
}

static inline int tf_enc_thread_start(tf_encoder *e, uint64_t parent, uint64_t stack_lo,
                                      uint64_t stack_hi, uint64_t start_routine)
{
    return tf__enc_event_varints(e, TF_EV_THREAD_START, 4, parent, stack_lo, stack_hi,
                                 start_routine);
}

static inline int tf_enc_thread_exit(tf_encoder *e, unsigned how)
{
    return tf__enc_event_varints(e, TF_EV_THREAD_EXIT, 1, how, 0, 0, 0);
}

static inline int tf_enc_lock_acquire(tf_encoder *e, unsigned kind, uint64_t lock)
{
    return tf__enc_event_varints(e, TF_EV_LOCK_ACQUIRE, 2, kind, lock, 0, 0);
}

static inline int tf_enc_lock_release(tf_encoder *e, unsigned kind, uint64_t lock)
{
    return tf__enc_event_varints(e, TF_EV_LOCK_RELEASE, 2, kind, lock, 0, 0);
}

static inline int tf_enc_skip(tf_encoder *e, unsigned reason, uint64_t count)
{
    return tf__enc_event_varints(e, TF_EV_SKIP, 2, reason, count, 0, 0);
}

static inline int tf_enc_syscall(tf_encoder *e, uint64_t number, uint64_t nanos)
{
    return tf__enc_event_varints(e, TF_EV_SYSCALL, 2, number, nanos, 0, 0);
}

static inline int tf_enc_signal(tf_encoder *e, uint64_t signo)
{
    return tf__enc_event_varints(e, TF_EV_SIGNAL, 1, signo, 0, 0, 0);
}

static inline int tf_enc_signal_return(tf_encoder *e, uint64_t signo)
{
    return tf__enc_event_varints(e, TF_EV_SIGNAL_RETURN, 1, signo, 0, 0, 0);
}

static inline int tf_enc_marker(tf_encoder *e, uint64_t kind, uint64_t value)
{
    return tf__enc_event_varints(e, TF_EV_MARKER, 2, kind, value, 0, 0);
}

/* loop_chunk (FORMAT.md 6.6): `count` iterations from logical iteration
 * `first` of loop instance `loop`; count 0 = no more for this thread. */
static inline int tf_enc_loop_chunk(tf_encoder *e, uint64_t loop, uint64_t first,
                                    uint64_t count, uint64_t stride, uint64_t trip)
{
    const uint64_t f[5] = {loop, first, count, stride, trip};
    return tf__enc_event_fields(e, TF_EV_LOOP_CHUNK, 5, f);
}

/* static_loop (FORMAT.md 6.7): the thread, number `thread` of a team of
 * `threads`, begins its part of loop instance `loop`, whose static schedule
 * the compiler expanded inline. */
static inline int tf_enc_static_loop(tf_encoder *e, uint64_t loop, uint64_t thread,
                                     uint64_t threads)
{
    const uint64_t f[3] = {loop, thread, threads};
    return tf__enc_event_fields(e, TF_EV_STATIC_LOOP, 3, f);
}

/* region_entry (FORMAT.md 6.4): the thread enters the --only region; the
 * next block is the first of a call whose return address lies at `sp`. */
static inline int tf_enc_region_entry(tf_encoder *e, uint64_t sp)
{
    return tf__enc_event_varints(e, TF_EV_REGION_ENTRY, 1, sp, 0, 0, 0);
}

/* End of stream, or a flush before the process dies or execs: writes the
 * pending run and closes the chunk if it is not empty. */
static inline int tf_enc_flush(tf_encoder *e)
{
    tf__enc_write_run(e);
    tf__enc_close(e);
    return e->s.error ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * 6. MessagePack writers (for the manifest, section 7)
 * ------------------------------------------------------------------------ */

typedef struct tf_mp {
    uint8_t *start, *p, *end;
    int overflow; /* set when something did not fit; the output is then unusable */
} tf_mp;

static inline void tf_mp_init(tf_mp *m, void *buf, size_t cap)
{
    m->start = m->p = (uint8_t *)buf;
    m->end = m->start + cap;
    m->overflow = 0;
}

static inline size_t tf_mp_len(const tf_mp *m)
{
    return (size_t)(m->p - m->start);
}

static inline uint8_t *tf__mp_take(tf_mp *m, size_t n)
{
    uint8_t *p = m->p;
    if (m->overflow || (size_t)(m->end - m->p) < n) {
        m->overflow = 1;
        return 0;
    }
    m->p += n;
    return p;
}

static inline void tf__mp_be(uint8_t *p, uint64_t v, int bytes)
{
    int i;
    for (i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* A type byte followed by `bytes` big-endian bytes of v. */
static inline void tf__mp_head(tf_mp *m, uint8_t type, uint64_t v, int bytes)
{
    uint8_t *p = tf__mp_take(m, 1 + (size_t)bytes);
    if (p) {
        p[0] = type;
        tf__mp_be(p + 1, v, bytes);
    }
}

static inline void tf_mp_nil(tf_mp *m)
{
    tf__mp_head(m, 0xc0, 0, 0);
}

static inline void tf_mp_bool(tf_mp *m, int v)
{
    tf__mp_head(m, v ? 0xc3 : 0xc2, 0, 0);
}

static inline void tf_mp_uint(tf_mp *m, uint64_t v)
{
    if (v < 0x80)
        tf__mp_head(m, (uint8_t)v, 0, 0);
    else if (v <= 0xff)
        tf__mp_head(m, 0xcc, v, 1);
    else if (v <= 0xffff)
        tf__mp_head(m, 0xcd, v, 2);
    else if (v <= 0xffffffffu)
        tf__mp_head(m, 0xce, v, 4);
    else
        tf__mp_head(m, 0xcf, v, 8);
}

static inline void tf_mp_int(tf_mp *m, int64_t v)
{
    if (v >= 0)
        tf_mp_uint(m, (uint64_t)v);
    else if (v >= -32)
        tf__mp_head(m, (uint8_t)(int8_t)v, 0, 0);
    else if (v >= -128)
        tf__mp_head(m, 0xd0, (uint64_t)v, 1);
    else if (v >= -32768)
        tf__mp_head(m, 0xd1, (uint64_t)v, 2);
    else if (v >= -2147483647 - 1)
        tf__mp_head(m, 0xd2, (uint64_t)v, 4);
    else
        tf__mp_head(m, 0xd3, (uint64_t)v, 8);
}

/* A map or array header: fix type, then the 16- and 32-bit forms. */
static inline void tf__mp_container(tf_mp *m, uint8_t fix, uint8_t type16, uint32_t n)
{
    if (n < 16)
        tf__mp_head(m, (uint8_t)(fix | n), 0, 0);
    else if (n <= 0xffff)
        tf__mp_head(m, type16, n, 2);
    else
        tf__mp_head(m, (uint8_t)(type16 + 1), n, 4);
}

/* A map of n key/value pairs follows (write key, value, key, value, ...). */
static inline void tf_mp_map(tf_mp *m, uint32_t n)
{
    tf__mp_container(m, 0x80, 0xde, n);
}

static inline void tf_mp_array(tf_mp *m, uint32_t n)
{
    tf__mp_container(m, 0x90, 0xdc, n);
}

static inline void tf__mp_raw(tf_mp *m, const void *data, size_t len)
{
    uint8_t *p = tf__mp_take(m, len);
    const uint8_t *s = (const uint8_t *)data;
    size_t i;
    if (p)
        for (i = 0; i < len; i++)
            p[i] = s[i];
}

static inline void tf_mp_str(tf_mp *m, const void *s, size_t len)
{
    if (len < 32)
        tf__mp_head(m, (uint8_t)(0xa0 | len), 0, 0);
    else if (len <= 0xff)
        tf__mp_head(m, 0xd9, len, 1);
    else if (len <= 0xffff)
        tf__mp_head(m, 0xda, len, 2);
    else
        tf__mp_head(m, 0xdb, len, 4);
    tf__mp_raw(m, s, len);
}

/* A NUL-terminated string. */
static inline void tf_mp_cstr(tf_mp *m, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    tf_mp_str(m, s, n);
}

static inline void tf_mp_bin(tf_mp *m, const void *data, size_t len)
{
    if (len <= 0xff)
        tf__mp_head(m, 0xc4, len, 1);
    else if (len <= 0xffff)
        tf__mp_head(m, 0xc5, len, 2);
    else
        tf__mp_head(m, 0xc6, len, 4);
    tf__mp_raw(m, data, len);
}

/* Whether `len` bytes at `s` are valid UTF-8 (so that they may be written as
 * str rather than bin). */
static inline int tf_utf8_valid(const void *data, size_t len)
{
    const uint8_t *s = (const uint8_t *)data;
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t n, k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + n >= len)
            return 0;
        for (k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += n + 1;
    }
    return 1;
}

#endif /* TF_TRACE_H */
