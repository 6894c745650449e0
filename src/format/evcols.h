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
int vt_rcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, size_t max_out,
                    uint8_t **out, size_t *outlen, char *err, size_t errlen);

#endif
