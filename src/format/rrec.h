/* Encoding of reduced records (doc/format.md, REDUCED blocks), shared by the run time
 * (VTRACE_MODE=reduced) and `vtrace reduce`; the reader decodes them (reader_cursor.c). */
#ifndef VT_RREC_H
#define VT_RREC_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

/* How a reduced trace's REDUCED blocks are cut and compressed, by vtrace reduce and by the
 * run time alike, so that both write the same bytes: a block holds at most this many
 * payload bytes (a single larger record gets a block of its own), and REDUCED, FUNCS and
 * RANKDEFS blocks are zstd-compressed at this level where zstd is built in. */
#define VT_RREC_BLOCK_BYTES (1u << 20)
#define VT_RREC_ZSTD_LEVEL 3

/* The REDUCED blocks of one rank file, written as records come: vtrace reduce and the run
 * time both write through it. */
typedef struct vt_rrec_out {
    int fd;
    int zstd_level;
    uint8_t *buf;
    size_t len, cap;
    uint32_t nblock;        /* records in the open block */
    uint64_t index;         /* records written */
    uint64_t prev_seq;
    int64_t prev_time;
} vt_rrec_out;

/* Returns 0, or -ENOMEM. FD is the rank file, positioned after its FUNCS block. */
int vt_rrec_out_init(vt_rrec_out *o, int fd, int zstd_level);
/* Appends REC, writing the open block first when REC does not fit. Returns 0 or -errno. */
int vt_rrec_out_put(vt_rrec_out *o, const vt_rrec *rec);
/* Writes the open block, if any. Returns 0 or -errno. */
int vt_rrec_out_flush(vt_rrec_out *o);
/* Frees the buffer (not the file). */
void vt_rrec_out_free(vt_rrec_out *o);

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
