/* The per-rank event buffer: records are encoded straight into it (doc/format.md,
 * EVENTS payload) and it is written as one block when full and at finalisation. */
#ifndef VT_BUFFER_H
#define VT_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "util/codec.h"
#include "tracing/state.h"

/* A function's profile. The calls written as records are calls - unrecorded (the
 * profile's `records`, vt_profile_records): a recorded call, the common one, adds to
 * three counters, not four (issue 18). */
typedef struct vt_profile_entry {
    uint64_t calls, time_ns, bytes, unrecorded;
} vt_profile_entry;

static inline uint64_t vt_profile_records(const vt_profile_entry *e)
{
    /* unrecorded is added after calls (vt_count, which takes no lock): a reader under
     * the lock sees at most one call too many as recorded, never one too few */
    return e->calls > e->unrecorded ? e->calls - e->unrecorded : 0;
}

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
    uint64_t lost;             /* calls not recorded after stopping */
    uint64_t fail_after;       /* test hook: fail writes after this many bytes (0: never) */
    uint64_t written;          /* bytes given to the file (payloads before compression: the test hook's measure) */
    uint64_t file_at;          /* the file's size after its last whole block */
    const char *path;
    int rank;
    int lazy;                  /* the file is not open yet (vt_buffer_open's keep_file 0) */
    int dropped;               /* ... and was given up at the first block: blocks go nowhere */
    size_t dropped_bytes;      /* dropped: records of this block that went through the window,
                                * and those not encoded (skip_est bytes each) */
    size_t skip_est;           /* dropped: bytes a record not encoded counts (the first block's mean) */
    uint64_t skipped;          /* records not encoded (vt_rec_skip_begin) */
    int pack_warned;           /* packing an EVENTS_COLS block failed once */
    int fail_errno;            /* the write that failed: its errno ... */
    uint64_t fail_at;          /* ... and the bytes in the file before it */
    volatile int writing;      /* a block is being written: a signal handler must not write */
} vt_buffer;

extern VT_HIDDEN vt_buffer vt__buf;
/* Records written in all: those of the blocks before this one and this block's (no
 * counter of its own for the records to move, issue 18). */
static inline uint64_t vt_buffer_records(void)
{
    return vt__buf.first_index + vt__buf.nrec;
}
extern VT_HIDDEN vt_profile_entry vt__profile[VT_NFN];
extern VT_HIDDEN int vt__mt;   /* MPI_THREAD_MULTIPLE: take the lock */

/* Opens the trace file at path and starts recording. keep_file 0 (VTRACE_MODE=reduced,
 * whose run-time reduction makes the trace): the file is opened only when
 * vt_buffer_need_file asks for it before the first block is full; a first block nobody
 * asked for is dropped, and so is every later one (the records are counted, the profile
 * kept). */
VT_HIDDEN int vt_buffer_open(const char *path, int rank, size_t cap, int zstd_level, uint64_t fail_after,
                             int keep_file);
/* A hash of the compiled function table (names and layouts), the same on every rank of
 * one build. */
VT_HIDDEN uint64_t vt_buffer_functions_hash(void);
/* Before vt_buffer_open, when every rank's table is the same: the trace's table goes
 * into vtrace.defs (vt_buffer_write_functions, format 1.5) and the rank file writes no
 * FUNCS block. */
VT_HIDDEN void vt_buffer_share_functions(void);
VT_HIDDEN int vt_buffer_functions_shared(void);
/* RANKDEFS blocks written from here on are compressed against DICT (kept by the
 * caller; vtrace.defs' DICT block, codec 2 of format 1.5); LEN 0: none. */
VT_HIDDEN void vt_buffer_set_dict(const uint8_t *dict, size_t len);
/* The compiled table as a FUNCS block into FD (vtrace.defs): every function, or after
 * vt_buffer_functions_used those of USED only (the others as empty entries). 0 or -errno. */
VT_HIDDEN int vt_buffer_write_functions(int fd);
/* This rank's functions: USED[i] = 1 where function i was called or recorded. */
VT_HIDDEN void vt_buffer_functions_mine(uint8_t used[]);
/* From here on vtrace.defs' table names only the functions of USED (VT_NFN entries: what
 * some rank's records or profile use, at MPI_Finalize, when no more are recorded). */
VT_HIDDEN void vt_buffer_functions_used(const uint8_t used[]);
/* The full trace is needed after all (the run-time reduction stopped): 0 when the file
 * holds, or will hold, every record; -errno when it cannot be written; -EPIPE when its
 * first blocks were dropped already. */
VT_HIDDEN int vt_buffer_need_file(void);
VT_HIDDEN void vt_lock(void);
VT_HIDDEN void vt_unlock(void);
VT_HIDDEN uint8_t *vt__rec_begin_slow(size_t need);

/* Room for `need` bytes, flushing first when the block is full; NULL when recording has
 * stopped. Without the lock: vt_rec_begin's, or a caller that knows there is one thread
 * (VT_REC_MT clear). */
static inline uint8_t *vt_rec_room(size_t need)
{
    vt_buffer *b = &vt__buf;
    /* relaxed: vt_buffer_request_flush lowers it from the flush timer's thread */
    if (VT_LIKELY(b->pos + need <= __atomic_load_n(&b->limit, __ATOMIC_RELAXED))) {
        if (!b->pos)
            __builtin_unreachable();   /* pos is NULL only where limit is: no test of it */
        return b->pos;
    }
    return vt__rec_begin_slow(need);
}

/* Returns room for `need` bytes, flushing first when the block is full; NULL when
 * recording has stopped. Takes the lock (MPI_THREAD_MULTIPLE) until vt_rec_end. */
static inline uint8_t *vt_rec_begin(size_t need)
{
    if (VT_UNLIKELY(vt__mt))
        vt_lock();
    return vt_rec_room(need);
}

/* The record ends at END: vt_rec_end without the unlock. */
static inline void vt_rec_put(uint8_t *end, int64_t exit)
{
    vt_buffer *b = &vt__buf;
    b->pos = end;
    b->prev_exit = exit;
    b->nrec++;
}

static inline void vt_rec_end(uint8_t *end, int64_t exit)
{
    vt_rec_put(end, exit);
    if (VT_UNLIKELY(vt__mt))
        vt_unlock();
}
/* vt__rec_special and its bits: state.h. */

/* VT_REC_SKIP: the file was dropped (VTRACE_MODE=reduced past its first block), so a
 * handler that keeps its bookkeeping apart from its encoding need not encode at all
 * (issue 18). vt_rec_skip_begin returns VT_REC_SKIPPED (not a pointer to write to: the
 * record is counted but not encoded, vt_rec_skip_end), or, where the block ends (its
 * byte clock: dropped_bytes, which counts skip_est per record not encoded) or recording
 * stopped, what vt_rec_begin returns: room to encode the record into, or NULL. The
 * snapshots of the reduced trace stay paced by blocks of about the bytes of the full
 * trace's. Takes the lock as vt_rec_begin does. */
#define VT_REC_SKIPPED ((uint8_t *)(uintptr_t)1)
/* Set on the thread (under the lock) whose record was not encoded, until vt_rec_skip_end:
 * rec_open (handlers_priv.h) then returns NULL, so that the path of an encoded record
 * tests nothing more than before. */
extern VT_HIDDEN __thread int vt__rec_skipped __attribute__((tls_model("initial-exec")));
/* vt_rec_skip_begin without the lock (as vt_rec_room is vt_rec_begin's). */
static inline uint8_t *vt_rec_skip_room(size_t need)
{
    vt_buffer *b = &vt__buf;
    if (VT_LIKELY(__atomic_load_n(&b->limit, __ATOMIC_RELAXED) != b->base &&
                  b->dropped_bytes + (size_t)(b->pos - b->base) + need <= b->cap))
        return VT_REC_SKIPPED;
    return vt__rec_begin_slow(need);
}

static inline uint8_t *vt_rec_skip_begin(size_t need)
{
    if (VT_UNLIKELY(vt__mt))
        vt_lock();
    return vt_rec_skip_room(need);
}

/* The record not encoded is counted: vt_rec_skip_end without the unlock, for a caller
 * that did not set vt__rec_skipped (as vt_rec_put is vt_rec_end's). */
static inline void vt_rec_skip_put(int64_t exit)
{
    vt_buffer *b = &vt__buf;
    b->dropped_bytes += b->skip_est;
    b->prev_exit = exit;
    b->nrec++;
    b->skipped++;
}

static inline void vt_rec_skip_end(int64_t exit)
{
    vt_rec_skip_put(exit);
    vt__rec_skipped = 0;
    if (VT_UNLIKELY(vt__mt))
        vt_unlock();
}

/* Writes a block of another type (flushing events first). Returns 0 or -errno. */
VT_HIDDEN int vt_buffer_write_block(uint8_t type, const void *payload, size_t len);
VT_HIDDEN int vt_buffer_flush(void);
/* At the end: the records in the buffer as a block (a failure is then known to the
 * definitions written next). Returns 0 or -errno. */
VT_HIDDEN int vt_buffer_write_pending(void);
/* The next record flushes the block (VTRACE_FLUSH_INTERVAL): callable from any thread. */
VT_HIDDEN void vt_buffer_request_flush(void);
/* Called after each block flushed during the run (its records are on disk): the layer
 * writes a snapshot of the rank's definitions there. The caller holds the lock. */
extern VT_HIDDEN void (*vt__buffer_flushed)(void);
/* Writes a block of another type as it is (no events first, no compression): for the
 * snapshots of vt__buffer_flushed and the crash paths. Returns 0 or -errno. */
VT_HIDDEN int vt_buffer_put_block(uint8_t type, const void *payload, size_t len, int zstd_level, int in_signal);
/* Whether a FUNCS block of the file names function fn already. */
VT_HIDDEN int vt_buffer_fn_named(unsigned fn);
/* In a signal handler: a FUNCS block naming the profiled functions none names yet,
 * encoded in SCRATCH (CAP bytes). Returns 0 or -1. */
VT_HIDDEN int vt_buffer_name_profiled_in_signal(uint8_t *scratch, size_t cap);
/* The crash paths (crash.h), in a signal handler: the records in the buffer as a raw
 * EVENTS block, write(2) only. Returns 0, or -1 when nothing may be written (a block
 * was being written, the file is not open). */
VT_HIDDEN int vt_buffer_write_raw_events(void);
VT_HIDDEN void vt_buffer_close(void);
/* A write failed: warn once, stop recording, keep the application going. */
VT_HIDDEN void vt_buffer_fail(int err);

#endif
