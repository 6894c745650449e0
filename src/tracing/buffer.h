/* The per-rank event buffer: records are encoded straight into it (doc/format.md,
 * EVENTS payload) and it is written as one block when full and at finalisation. */
#ifndef VT_BUFFER_H
#define VT_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "util/codec.h"
#include "tracing/state.h"

typedef struct vt_profile_entry {
    uint64_t calls, time_ns, bytes, records;
} vt_profile_entry;

typedef struct vt_buffer {
    uint8_t *base, *pos;
    uint8_t *limit;            /* base + cap while recording; base once stopped */
    size_t cap;
    uint32_t nrec;             /* records in the current block */
    uint64_t first_index;      /* stream index of the block's first record */
    int64_t base_time, prev_exit;
    int fd;
    int zstd_level;
    int stopped;               /* recording stopped (write failed): nothing more is written */
    int warned;
    uint64_t records;          /* records written in all */
    uint64_t lost;             /* calls not recorded after stopping */
    uint64_t fail_after;       /* test hook: fail writes after this many bytes (0: never) */
    uint64_t written;          /* bytes written to the file */
    const char *path;
    int rank;
    int lazy;                  /* the file is not open yet (vt_buffer_open's keep_file 0) */
    int dropped;               /* ... and was given up at the first block: blocks go nowhere */
    int pack_warned;           /* packing an EVENTS_COLS block failed once */
} vt_buffer;

extern VT_HIDDEN vt_buffer vt__buf;
extern VT_HIDDEN vt_profile_entry vt__profile[VT_NFN];
extern VT_HIDDEN int vt__mt;   /* MPI_THREAD_MULTIPLE: take the lock */

/* Opens the trace file at path and starts recording. keep_file 0 (VTRACE_MODE=reduced,
 * whose run-time reduction makes the trace): the file is opened only when
 * vt_buffer_need_file asks for it before the first block is full; a first block nobody
 * asked for is dropped, and so is every later one (the records are counted, the profile
 * kept). */
VT_HIDDEN int vt_buffer_open(const char *path, int rank, size_t cap, int zstd_level, uint64_t fail_after,
                             int keep_file);
/* The full trace is needed after all (the run-time reduction stopped): 0 when the file
 * holds, or will hold, every record; -errno when it cannot be written; -EPIPE when its
 * first blocks were dropped already. */
VT_HIDDEN int vt_buffer_need_file(void);
VT_HIDDEN void vt_lock(void);
VT_HIDDEN void vt_unlock(void);
VT_HIDDEN uint8_t *vt__rec_begin_slow(size_t need);

/* Returns room for `need` bytes, flushing first when the block is full; NULL when
 * recording has stopped. Takes the lock (MPI_THREAD_MULTIPLE) until vt_rec_end. */
static inline uint8_t *vt_rec_begin(size_t need)
{
    if (VT_UNLIKELY(vt__mt))
        vt_lock();
    vt_buffer *b = &vt__buf;
    if (VT_LIKELY(b->pos + need <= b->limit))
        return b->pos;
    return vt__rec_begin_slow(need);
}

static inline void vt_rec_end(uint8_t *end, int64_t exit)
{
    vt_buffer *b = &vt__buf;
    b->pos = end;
    b->prev_exit = exit;
    b->nrec++;
    b->records++;
    if (VT_UNLIKELY(vt__mt))
        vt_unlock();
}
/* Writes a block of another type (flushing events first). Returns 0 or -errno. */
VT_HIDDEN int vt_buffer_write_block(uint8_t type, const void *payload, size_t len);
VT_HIDDEN int vt_buffer_flush(void);
VT_HIDDEN void vt_buffer_close(void);
/* A write failed: warn once, stop recording, keep the application going. */
VT_HIDDEN void vt_buffer_fail(int err);

#endif
