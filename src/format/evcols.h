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

/* Record by record, straight from the columns (the replay's cursors): a record's parts
 * as vt_evcols_unpack would write them, the fields each as the uvar it is stored as
 * (signed ones in their zigzag form). Any failure returns -1 without saying why: the
 * caller then unpacks the block with vt_evcols_unpack, whose error names the fault. */
typedef struct vt_evcols_rec {
    uint64_t code, enter, dur, site; /* enter: the delta's zigzag form; site: 0 for specials */
    const char *letters;             /* the layout of the code */
    const uint64_t *v;               /* the fields' values, n of them */
    size_t n;
} vt_evcols_rec;
typedef struct vt_evcols_dec vt_evcols_dec;
vt_evcols_dec *vt_evcols_dec_new(void);
void vt_evcols_dec_free(vt_evcols_dec *d); /* NULL is fine */
/* Starts the payload IN[0..len) (which stays valid until the next start): its first
 * record index and base time. */
int vt_evcols_dec_start(vt_evcols_dec *d, const uint8_t *in, size_t len, const vt_evcols_funcs *fn, uint64_t *first,
                        int64_t *base);
int vt_evcols_dec_next(vt_evcols_dec *d, vt_evcols_rec *r);
/* 1 when every column was read to its end. */
int vt_evcols_dec_done(const vt_evcols_dec *d);
/* The payload started moved from FROM (freed, not read) to TO, the same bytes. */
void vt_evcols_dec_rebase(vt_evcols_dec *d, uintptr_t from, const uint8_t *to);

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
/* MINOR: the file's minor version (since 1.5 a message's times and the time columns are
 * packed otherwise; vt_rcols_pack writes that form). */
int vt_rcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, unsigned minor,
                    size_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
