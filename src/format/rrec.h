/* Encoding of reduced records (doc/format.md, REDUCED blocks), shared by the run time
 * (VTRACE_MODE=reduced) and `vtrace reduce`; the reader decodes them (reader_cursor.c). */
#ifndef VT_RREC_H
#define VT_RREC_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

/* REDUCED payload header: first record index, base time, base sequence number. At most
 * 3 * VT_UVAR_MAX bytes. Returns the new end. */
uint8_t *vt_rrec_block_begin(uint8_t *out, uint64_t first_index, int64_t base_time, uint64_t base_seq);

/* Bytes vt_rrec_encode may write for rec. */
size_t vt_rrec_size_max(const vt_rrec *rec);

/* Appends rec; *prev_seq and *prev_time are the previous record's sequence number and
 * exit (the block's base values before its first record) and are updated. rec->seq
 * must not be below *prev_seq. Returns the new end. */
uint8_t *vt_rrec_encode(uint8_t *out, const vt_rrec *rec, uint64_t *prev_seq, int64_t *prev_time);

#endif
