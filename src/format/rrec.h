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
/* A payload of at most VT_RREC_SMALL bytes (the FUNCS and RANKDEFS blocks, a small run's
 * one REDUCED_COLS block, the last block of a rank) is compressed harder: what makes a
 * reduced trace no larger than the full one where it keeps almost every record. It is
 * written in MPI_Finalize, so its level goes with its size, for at most about 1 ms: level
 * 19 up to VT_RREC_TINY bytes (it runs at 2-30 MB/s on these payloads), level 9 above
 * (0.3 ms for 45 KiB against 5.5 ms at level 19, for 4% more bytes of that block;
 * doc/clock-repair.md, "what they cost"). */
#define VT_RREC_SMALL (64u << 10)
#define VT_RREC_TINY (4u << 10)
static inline int vt_rrec_zstd_level(int level, size_t len)
{
    if (level <= 0 || len > VT_RREC_SMALL)
        return level;
    return len <= VT_RREC_TINY ? 19 : 9;
}

/* The REDUCED blocks of one rank file, written as records come: vtrace reduce and the run
 * time both write through it. It stores fewer records than it is given, as the full
 * trace does: START is the first block's base time, a candidate burst goes into the
 * record of the call it ends (VT_RREC_K_BURST), END into the last record (VT_RREC_K_END);
 * the reader gives them back as records of their own. */
/* Where the open blocks of a reduction of many ranks wait (vtrace reduce): an unlinked
 * temporary file of slots, shared by the ranks' writers, so that a rank holds a few KB
 * of its open block in memory and not up to VT_RREC_BLOCK_BYTES; a block is gathered in
 * `block` when it is written. Disk: the open blocks. */
typedef struct vt_rrec_pool {
    int fd;
    uint64_t end;           /* bytes of the file in use or freed */
    uint64_t *free_slots;   /* offsets of free slots of VT_RREC_SLOT_BYTES */
    size_t nfree, capfree;
    uint8_t *block;
    size_t blockcap;
} vt_rrec_pool;
#define VT_RREC_SLOT_BYTES 4096u

/* Opens POOL's file ($TMPDIR, else /tmp). 0 or -errno. */
int vt_rrec_pool_open(vt_rrec_pool *pool);
void vt_rrec_pool_close(vt_rrec_pool *pool);

typedef struct vt_rrec_out {
    int fd;
    struct vt_wbuf *mem;    /* when set (fd -1): blocks are appended to it, and the caller
                             * writes them to the file (vtrace reduce: a reduction of many
                             * ranks holds no descriptor per rank, and writes a rank file
                             * only once it knows it keeps it) */
    int zstd_level;
    uint8_t *buf;
    size_t len, cap;
    uint32_t nblock;        /* records in the open block */
    uint64_t index;         /* records written */
    uint64_t prev_seq;
    int64_t prev_time;
    int started;            /* START was given */
    int have_burst;         /* a candidate burst waits for the call it ends */
    vt_rrec burst;
    size_t last_at;         /* where the last record written begins in buf (SIZE_MAX: none) */
    uint64_t last_seq;
    int64_t last_exit;
    /* the function table: named in FUNCS blocks as records use it (doc/format.md 1.3) */
    const char *const *fname, *const *flayout;
    size_t nfn;
    uint8_t *named, *pending;
    int npending;
    /* the rank's communicator table so far (REDUCED_COLS name communicators by their
     * place in it): its ids and their count, through comm_ids(comm_arg); NULL: none */
    const uint64_t *(*comm_ids)(void *arg, size_t *n);
    void *comm_arg;
    int64_t prov_at;        /* >= 0: the file ends with provisional blocks from this offset
                             * (vt_rrec_out_provisional), cut off before anything else is written */
    /* detached writers only: when pool is set, the open block's bytes [0, base) are in
     * the pool's slots spill[0..nspill) and buf holds [base, len) */
    vt_rrec_pool *pool;
    size_t base;
    struct vt_rrec_chunk {
        uint64_t off;
        uint32_t len;
    } *spill;
    size_t nspill, capspill;
} vt_rrec_out;

/* Writes the first FUNCS block (naming no function yet) of the table NAME/LAYOUT[0..NFN)
 * and returns 0, or -errno. NAME NULL (1.5): the rank file uses the trace's table, in
 * vtrace.defs, and O writes no FUNCS block. FD is the rank file, positioned after its header; the table
 * must outlive O. */
int vt_rrec_out_init(vt_rrec_out *o, int fd, int zstd_level, const char *const *name, const char *const *layout,
                     size_t nfn);
/* For a reduction of many ranks: as vt_rrec_out_init, but the blocks (the first FUNCS
 * block too) are appended to MEM (which must outlive O), and O holds a buffer that grows
 * to a block as records come, a page from the start (64K writers do not each map a
 * block). Returns 0 or -errno. */
int vt_rrec_out_init_detached(vt_rrec_out *o, struct vt_wbuf *mem, int zstd_level, const char *const *name,
                              const char *const *layout, size_t nfn);
/* Names function FN too (the profile's functions, before the end). */
void vt_rrec_out_name(vt_rrec_out *o, int64_t fn);
/* Appends REC (a burst, until the next record shows whether it goes into it), writing
 * the open block first when REC does not fit. Returns 0 or -errno. */
int vt_rrec_out_put(vt_rrec_out *o, const vt_rrec *rec);
/* Writes what waits and the open block; at the end. Returns 0 or -errno. */
int vt_rrec_out_flush(vt_rrec_out *o);
/* In a signal handler: the functions named since the last FUNCS block (encoded in
 * SCRATCH of CAP bytes) and the open block, raw, write(2) only; a candidate burst that
 * waits is lost. Returns 0 or -errno. */
int vt_rrec_out_write_raw(vt_rrec_out *o, uint8_t *scratch, size_t cap);
/* The run time, during the run: appends what a reader needs to read the records so far
 * (a FUNCS block naming what DEFINE marks beside the functions waiting to be named, the
 * open block, raw, and RANKDEFS, the payload given), provisionally: the next write cuts
 * them off again, so that the file ends as vtrace reduce writes it, and a run killed
 * in between (SIGKILL) leaves them readable. A candidate burst that waits is not in
 * them. Replaces the previous provisional blocks. Returns 0 or -errno (no provisional
 * blocks then). */
int vt_rrec_out_provisional(vt_rrec_out *o, const uint8_t *define, const uint8_t *rankdefs, size_t len);
/* Frees the buffer (not the file). */
void vt_rrec_out_free(vt_rrec_out *o);

#endif
