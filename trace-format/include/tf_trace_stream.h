/*
 * tf_trace_stream.h - tf_stream, the chunk writer: records are appended to a
 * caller-provided buffer; when the payload reaches the target size the chunk
 * is framed (header + CRC) and handed to the sink in one piece.
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_STREAM_H
#define TF_TRACE_STREAM_H

#include "tf_trace_format.h"

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

#endif /* TF_TRACE_STREAM_H */
