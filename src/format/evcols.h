/* EVENTS_COLS blocks (doc/format.md, format 1.3): an EVENTS payload rearranged for a
 * general compressor. MPI traces repeat themselves: the same call sites call the same
 * functions with the same peers, tags and sizes, and request ids that grow by one. The
 * records' parts go into separate columns (codes, call sites, enter deltas, durations,
 * fields), and a record's fields are written as their differences to those of the last
 * record of the same function and call site in the block, or as "the same". zstd then
 * compresses each column by itself. The writer packs the EVENTS payload it built when it
 * flushes (the recording path is unchanged); the reader unpacks a block into the EVENTS
 * payload it was made from and decodes that as before. Each block stands alone. */
#ifndef VT_EVCOLS_H
#define VT_EVCOLS_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

/* Layout strings of function ids 0..nfn-1 (the FUNCS block's). */
typedef struct vt_evcols_funcs {
    const char *const *layout;
    size_t nfn;
} vt_evcols_funcs;

/* Packs the EVENTS payload IN[0..len) of NREC records. Returns 0 with *out (malloc'ed)
 * and *outlen, or -1 with a message in ERR: a record that does not decode (the writer
 * then writes the EVENTS block as it is). */
int vt_evcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen);

/* Unpacks the EVENTS_COLS payload IN[0..len) of NREC records into the EVENTS payload it
 * was packed from, at most MAX_OUT bytes. Returns 0 with *out (malloc'ed) and *outlen,
 * or -1 with ERR saying which column, at which byte of the payload, and what was
 * expected. */
int vt_evcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, size_t max_out,
                     uint8_t **out, size_t *outlen, char *err, size_t errlen);

/* Record by record, straight from the columns (the replay's cursors): vt__fast_next
 * (reader_fast.c) decodes a record of the payload started into the reader's event. */
typedef struct vt_evcols_dec vt_evcols_dec;
/* Values scratch, for the length of a record's decoding: decoders may share one (a
 * cursor per rank, and 64K ranks). */
typedef struct vt_evcols_vals {
    uint64_t *v;
    size_t n, cap;
} vt_evcols_vals;
/* A decoder using SHARED as its scratch (freed by the caller, after the decoder), or
 * its own (NULL); it and its tables are blocks of POOL (util/blockpool.h; NULL:
 * malloc's), which must outlive it. */
struct vt_blockpool;
vt_evcols_dec *vt_evcols_dec_new(vt_evcols_vals *shared, struct vt_blockpool *pool);
void vt_evcols_dec_free(vt_evcols_dec *d); /* NULL is fine */
/* Starts the payload IN[0..len) (which stays valid until the next start): its first
 * record index and base time. */
int vt_evcols_dec_start(vt_evcols_dec *d, const uint8_t *in, size_t len, const vt_evcols_funcs *fn, uint64_t *first,
                        int64_t *base);
/* 1 when every column was read to its end. */
int vt_evcols_dec_done(const vt_evcols_dec *d);
/* The payload started moved from FROM (freed, not read) to TO, the same bytes. */
void vt_evcols_dec_rebase(vt_evcols_dec *d, uintptr_t from, const uint8_t *to);

/* reader_fast.c: the next record of D, a rank of NRANKS ranks' RK (whose function table
 * gave D its layouts), as decode_record() takes it from the rows but for index, callno
 * and block_offset (the caller's): 0, with *PREV the record's exit and its lists in the
 * cursor's arrays (*STARTED, *DONE, grown as needed), or 1 when anything in it is not as
 * decode_record would take it (the caller then falls back to the rows, and
 * decode_record says what is wrong). vt__ev_none: a record's defaults. */
extern const vt_event vt__ev_none;
/* vt__fast_next reads up to VT_FAST_SLACK bytes past the payload's end (it checks where
 * a value ends after reading it): the payload must be followed by that many readable
 * bytes, zeros. */
#define VT_FAST_SLACK 3
int vt__fast_next(vt_evcols_dec *d, const vt_rank *rk, uint32_t nranks, vt_event *ev, uint64_t *prev,
                  uint64_t **started, size_t *started_cap, vt_completion **done, size_t *done_cap);

/* The same for REDUCED payloads (REDUCED_COLS blocks): a sequence-number column more,
 * the function and call site of a record in the call-sites column, the times of other
 * events it holds (a message's send and posting) in a times column, and its other values
 * predicted per kind, function and call site. */
/* A rank's communicator table (RANKDEFS; the entries written so far, at run time): a
 * REDUCED_COLS value names a communicator by its place there. */
typedef struct vt_rcols_comms {
    const uint64_t *id;
    size_t n;
} vt_rcols_comms;
int vt_rcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, uint8_t **out,
                  size_t *outlen, char *err, size_t errlen);
/* VERSION: the file's version, VT_VERSION(major, minor) (since 1.5 a message's times and
 * the time columns are packed otherwise; vt_rcols_pack writes that form). */
int vt_rcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, uint32_t version,
                    size_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
