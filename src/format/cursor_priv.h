/* The event cursor's state, shared by reader_cursor.c (the cursor, its blocks and the
 * full records) and reader_rcursor.c (the reduced records). src/format only. */
#ifndef VT_CURSOR_PRIV_H
#define VT_CURSOR_PRIV_H

#include "format/evcols.h"
#include "format/reader.h"
#include "format/reader_priv.h"

#include <stdlib.h>

/* Bytes readable after a block's columns in cols: vt__fast_next reads a value of up to
 * three bytes before it checks that it ends in its column (evcols_priv.h). */
#define VT_COLS_SLACK VT_FAST_SLACK

struct vt_cursor {
    /* (line 0: what a record of an EVENTS_COLS block reads, vt_cursor_next; at 16K ranks
     * and more a cursor is out of the caches when its rank's turn comes, each line a
     * miss. Cursors are allocated at a line boundary.) */
    _Alignas(64) int state; /* 0 reading, 1 end, -1 error, 2 the block was let go (hold_evict) */
    int fastblk;
    uint32_t left;   /* records left in the current block */
    uint32_t inblock;
    vt_evcols_dec *dec;
    const vt_trace *t;
    const vt_rank *rk;
    uint64_t next_index;
    uint64_t next_callno; /* call records so far */
    uint64_t prev;   /* previous exit (two's complement) */
    /* (line 1) */
    uint64_t block_off;
    uint64_t *started;
    size_t started_cap;
    vt_completion *done;
    size_t done_cap;
    src_t src;
    uint64_t pos, end;
    buf stored, raw;
    void *dctx;
    pp r;
    /* reduced records */
    uint64_t prev_seq;
    vt_rmsg *rmsgs;
    size_t rmsgs_cap;
    vt_rssend *rssends;
    size_t rssends_cap;
    vt_rgate *rgates;
    size_t rgates_cap;
    vt_error *last; /* the error, after one (errors are made in the pool's scratch) */
    fd_scratch *scratch;
    /* reduced records: what one stored record stands for (reduced_next) */
    int npend, ipend;
    uint64_t emitted;       /* records given */
    unsigned kbits;         /* VT_RREC_K_* of the stored record */
    int64_t burst_start;
    uint64_t end_seq;       /* VT_RREC_K_END: the END it holds */
    int64_t end_time;
    /* EVENTS_COLS blocks: the payload unpacked, and the rank's layouts for it */
    uint8_t *unpacked;
    const char **layouts;
    uint64_t *comm_ids; /* REDUCED_COLS blocks: the ids of the rank's communicator table */
    /* event blocks read: their bytes in the file, and their payloads decoded */
    uint64_t stored_bytes, decoded_bytes;
    /* vt_cursor_fast: EVENTS_COLS blocks decoded straight from their columns (a copy of
     * the payload in cols), the block's header kept for falling back to unpacking */
    int fast;
    uint8_t *cols; /* colcap bytes: the payload, then VT_COLS_SLACK zeros at least */
    size_t colcap;
    vt_block_header fasth; /* the header of the current EVENTS_COLS or REDUCED_COLS block */
    /* the decoded block held (cols and unpacked: the scratch's budget): its bytes, its
     * place in the scratch's holders + 1 (0: none), next_index when the clock passed
     * (read since: kept one more turn), and the address it had when let go */
    size_t unpacked_len, held_bytes, hold;
    uint64_t clock_index;
    uintptr_t evicted_base;
    size_t opened_at; /* its place in the scratch's opened + 1 (0: not there) */
    /* reduced traces only: the records of pend (4, allocated with the cursor; a trace of
     * 64K ranks has 64K cursors, and a full trace needs none) */
    vt_rrec pend[];
};

/* svar holding a world rank or one of the negative peer values -1 to -4. */
static inline int pp_peer(pp *r, int64_t *v, uint32_t nranks, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_svar(r, v, what))
        return -1;
    if (*v < VT_PEER_ROOT || *v >= (int64_t)nranks) {
        r->p = at;
        return vt__pp_err(r, "expected %s (world rank below %u, or -1 to -4), found %lld", what, nranks, (long long)*v);
    }
    return 0;
}

/* The error just made in the scratch becomes the cursor's for good (a cursor that
 * failed keeps failing with it). Returns -1. */
int vt__cursor_failed(vt_cursor *c);

/* The framing both kinds of records share: the next record's payload position, across
 * blocks. 1: a record is next (decode it, then call cursor_advance); 0: end; -1: error
 * (vt__cursor_failed). */
int vt__cursor_ready(vt_cursor *c, const char *payload);

static inline int cursor_fail(vt_cursor *c, vt_error *err)
{
    if (err)
        *err = c->last ? *c->last : c->scratch->err;
    return -1;
}

/* After a record was decoded (ok == 0) or failed to (ok != 0): the cursor's result. */
static inline int cursor_advance(vt_cursor *c, int ok, vt_error *err)
{
    if (ok != 0) {
        vt__cursor_failed(c);
        return cursor_fail(c, err);
    }
    c->left--;
    c->inblock++;
    c->next_index++;
    return 1;
}

#endif
