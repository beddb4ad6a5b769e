/*
 * tf_trace_msgpack.h - tf_mp, MessagePack writers for the manifest
 * (FORMAT.md section 7).
 *
 * Part of tf_trace.h: include that.
 */
#ifndef TF_TRACE_MSGPACK_H
#define TF_TRACE_MSGPACK_H

#include "tf_trace_format.h"

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

#endif /* TF_TRACE_MSGPACK_H */
