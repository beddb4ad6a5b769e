/*
 * tf_trace.h - the encoding side of the tf trace format, version 4
 * (trace-format/FORMAT.md), as freestanding C headers.
 *
 * No libc is used: only <stdint.h> and <stddef.h>, which are freestanding.
 * Everything is `static` or `static inline`, so the headers can be included in
 * several translation units (a Valgrind tool, a Pin tool, a test program).
 * The caller provides all memory and does all I/O through a sink callback.
 *
 * Contents, one header each, in the order this one includes them (each
 * includes what it needs; include this one)
 *   1.-2. tf_trace_format.h: constants of the format (kinds, end kinds,
 *      operand flags, events, limits) and primitives: varint/svarint,
 *      CRC-32C, little-endian stores, the 32-byte file header and the
 *      16-byte chunk header
 *   3. tf_trace_stream.h: tf_stream, a chunk writer. Records are appended to
 *      a caller-provided buffer; when the payload reaches the target size the
 *      chunk is framed (header + CRC) and handed to the sink in one piece.
 *   4. tf_trace_table.h: block-table records (module, function, block),
 *      written to a tf_stream
 *   5. tf_encoder, a thread-stream encoder implementing FORMAT.md section 6
 *      exactly, including the canonical writer procedure of section 6.5:
 *      tf_trace_encoder.h (its state, chunks and pending runs),
 *      tf_trace_predict.h (the prediction state of sections 6.2 and 6.3),
 *      tf_trace_records.h (block executions, events, the end of a stream)
 *   6. tf_trace_msgpack.h: tf_mp, MessagePack writers for the manifest
 *      (section 7)
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

#include "tf_trace_format.h"
#include "tf_trace_stream.h"
#include "tf_trace_table.h"
#include "tf_trace_encoder.h"
#include "tf_trace_predict.h"
#include "tf_trace_records.h"
#include "tf_trace_msgpack.h"

#endif /* TF_TRACE_H */
