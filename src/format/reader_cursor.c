/* The event cursor (doc/format.md, "Records"): streams one rank's event blocks, loading
 * each in turn, and decodes their records, full (EVENTS: vt_cursor_next) or reduced
 * (REDUCED: vt_cursor_next_reduced), with the framing both share. Calls reader_io.c
 * only. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/evcols.h"
#include "format/reader_priv.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

/* svar holding a world rank or one of the negative peer values -1 to -4. */
static int pp_peer(pp *r, int64_t *v, uint32_t nranks, const char *what)
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

/* ------------------------------------------------------------------ cursor */

struct vt_cursor {
    const vt_trace *t;
    const vt_rank *rk;
    src_t src;
    uint64_t pos, end;
    buf stored, raw;
    void *dctx;
    pp r;
    uint64_t block_off;
    uint32_t left;   /* records left in the current block */
    uint32_t inblock;
    uint64_t next_index;
    uint64_t next_callno; /* call records so far */
    uint64_t prev;   /* previous exit (two's complement) */
    uint64_t *started;
    size_t started_cap;
    vt_completion *done;
    size_t done_cap;
    /* reduced records */
    uint64_t prev_seq;
    vt_rmsg *rmsgs;
    size_t rmsgs_cap;
    vt_rssend *rssends;
    size_t rssends_cap;
    vt_rgate *rgates;
    size_t rgates_cap;
    int state; /* 0 reading, 1 end, -1 error, 2 the block was let go (hold_evict) */
    vt_error *last; /* the error, after one (errors are made in the pool's scratch) */
    fd_scratch *scratch;
    /* reduced records: what one stored record stands for (reduced_next) */
    vt_rrec pend[4];
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
    int fast, fastblk;
    vt_evcols_dec *dec;
    uint8_t *cols;
    size_t colcap;
    vt_block_header fasth; /* the header of the current EVENTS_COLS or REDUCED_COLS block */
    /* the decoded block held (cols and unpacked: the scratch's budget): its bytes, its
     * place in the scratch's holders + 1 (0: none), next_index when the clock passed
     * (read since: kept one more turn), and the address it had when let go */
    size_t unpacked_len, held_bytes, hold;
    uint64_t clock_index;
    uintptr_t evicted_base;
};

static int hold_account(vt_cursor *c);
static void hold_drop(vt_cursor *c);
static int cursor_advance(vt_cursor *c, int ok, vt_error *err);

int vt_cursor_open(const vt_trace *t, uint32_t rank, vt_cursor **out, vt_error *err)
{
    if (!out)
        return vt__seterr(err, "(cursor)", 0, "expected an output pointer, found NULL");
    *out = NULL;
    if (!t || rank >= t->nranks)
        return vt__seterr(err, t ? t->dir : "(null)", 0, "expected a rank below %u, found %u", t ? t->nranks : 0, rank);
    vt_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return vt__seterr(err, t->ranks[rank].path, 0, "expected a cursor, found no memory for it");
    c->t = t;
    c->rk = &t->ranks[rank];
    c->src.fd = -1;
    char name[32];
    vt__rank_file_name(name, rank);
    if (vt__trace_src_open(t, c->rk->path, name, &c->src, "the rank file", err)) {
        free(c);
        return -1;
    }
    if (c->src.size != c->rk->file_bytes) {
        vt__seterr(err, c->rk->path, 0, "expected a file of %llu bytes (as when opened), found %llu bytes",
                   (unsigned long long)c->rk->file_bytes, (unsigned long long)c->src.size);
        vt_cursor_close(c);
        return -1;
    }
    vt__src_pool(&c->src, t->pool);
    c->pos = t->priv[rank].ev_begin;
    c->end = t->priv[rank].ev_end;
    pp_init(&c->r, (const uint8_t *)"", 0, c->rk->path, 0, 0, err);
    /* shared: a zstd context is 100 KB, and a trace may have 64K cursors */
    c->dctx = vt__fd_pool_dctx(t->pool);
    c->scratch = vt__fd_pool_scratch(t->pool);
    *out = c;
    return 0;
}

void vt_cursor_close(vt_cursor *c)
{
    if (!c)
        return;
    hold_drop(c);
    vt__src_close(&c->src);
    free(c->last);
    free(c->stored.p);
    free(c->raw.p);
    free(c->unpacked);
    free(c->layouts);
    free(c->comm_ids);
    free(c->started);
    free(c->done);
    free(c->rmsgs);
    free(c->rssends);
    free(c->rgates);
    free(c->cols);
    vt_evcols_dec_free(c->dec);
    free(c);
}

void vt_cursor_fast(vt_cursor *c)
{
    if (c)
        c->fast = 1;
}

/* An EVENTS_COLS or REDUCED_COLS block's payload DATA unpacked into c->unpacked
 * (evcols.h). */
static int unpack_block(vt_cursor *c, uint64_t off, const uint8_t *data, const vt_block_header *h, size_t *len,
                        vt_error *err)
{
    const vt_rank *rk = c->rk;
    char msg[512];
    free(c->unpacked);
    c->unpacked = NULL;
    if (h->type == VT_BLOCK_REDUCED_COLS) {
        if (!c->comm_ids) {
            c->comm_ids = malloc((rk->ncomms ? rk->ncomms : 1) * sizeof *c->comm_ids);
            if (!c->comm_ids)
                return vt__seterr(err, c->src.path, off, "expected memory for the communicator table, found none");
            for (size_t i = 0; i < rk->ncomms; i++)
                c->comm_ids[i] = rk->comms[i].id;
        }
        vt_rcols_comms comms = {c->comm_ids, rk->ncomms};
        if (vt_rcols_unpack(data, h->raw_len, h->nrecords, &comms, rk->minor, VT_READER_MAX_RAW, &c->unpacked, len,
                            msg, sizeof msg))
            return vt__seterr(err, c->src.path, off, "%s (in the %spayload of the REDUCED_COLS block at this offset)",
                              msg, h->codec != VT_CODEC_RAW ? "decoded " : "");
        return 0;
    }
    if (!c->layouts) {
        c->layouts = malloc((rk->nfuncs ? rk->nfuncs : 1) * sizeof *c->layouts);
        if (!c->layouts)
            return vt__seterr(err, c->src.path, off, "expected memory for the function table, found none");
        for (size_t i = 0; i < rk->nfuncs; i++)
            c->layouts[i] = rk->funcs[i].layout;
    }
    vt_evcols_funcs fn = {c->layouts, rk->nfuncs};
    if (vt_evcols_unpack(data, h->raw_len, h->nrecords, &fn, VT_READER_MAX_RAW, &c->unpacked, len, msg, sizeof msg))
        return vt__seterr(err, c->src.path, off, "%s (in the %spayload of the EVENTS_COLS block at this offset)",
                          msg, h->codec != VT_CODEC_RAW ? "decoded " : "");
    return 0;
}

/* An EVENTS_COLS or REDUCED_COLS block at OFF unpacked into rows, c->r on them. */
static int rows_start(vt_cursor *c, uint64_t off, const uint8_t *data, const vt_block_header *h, vt_error *err)
{
    size_t len;
    if (unpack_block(c, off, data, h, &len, err))
        return -1;
    uint8_t *fit = realloc(c->unpacked, len ? len : 1); /* it was grown by doubling */
    if (fit)
        c->unpacked = fit;
    c->unpacked_len = len ? len : 1;
    pp_init(&c->r, c->unpacked, len, c->src.path, off, PP_UNPACKED, err);
    return hold_account(c);
}

/* The block payload's header in c->r: its first record index (EXPECT), base time and,
 * reduced, base sequence number. */
static int block_head(vt_cursor *c, uint64_t expect)
{
    uint64_t first;
    int64_t base;
    const uint8_t *at = c->r.p;
    if (pp_uvar(&c->r, &first, "first record index"))
        return -1;
    if (first != expect) {
        c->r.p = at;
        return vt__pp_err(&c->r, "expected first record index %llu, found %llu", (unsigned long long)expect,
                          (unsigned long long)first);
    }
    if (pp_svar(&c->r, &base, "base time"))
        return -1;
    c->prev = (uint64_t)base;
    if (c->rk->reduced && pp_uvar(&c->r, &c->prev_seq, "base sequence number"))
        return -1;
    return 0;
}

/* vt_cursor_fast: the EVENTS_COLS payload DATA copied to c->cols and read from its
 * columns; 0 when that cannot start (the block is then unpacked, as without). */
static int fast_start(vt_cursor *c, const uint8_t *data, const vt_block_header *h)
{
    if (!c->layouts) {
        c->layouts = malloc((c->rk->nfuncs ? c->rk->nfuncs : 1) * sizeof *c->layouts);
        if (!c->layouts)
            return 0;
        for (size_t i = 0; i < c->rk->nfuncs; i++)
            c->layouts[i] = c->rk->funcs[i].layout;
    }
    if (!c->dec && !(c->dec = vt_evcols_dec_new()))
        return 0;
    if (h->raw_len > c->colcap) {
        uint8_t *p = realloc(c->cols, h->raw_len);
        if (!p)
            return 0;
        c->cols = p;
        c->colcap = h->raw_len;
    }
    memcpy(c->cols, data, h->raw_len);
    vt_evcols_funcs fn = {c->layouts, c->rk->nfuncs};
    uint64_t first;
    int64_t base;
    if (vt_evcols_dec_start(c->dec, c->cols, h->raw_len, &fn, &first, &base) || first != c->next_index)
        return 0;
    free(c->unpacked); /* the rows of the block before */
    c->unpacked = NULL;
    c->unpacked_len = 0;
    c->prev = (uint64_t)base;
    c->fasth = *h;
    c->fastblk = 1;
    pp_init(&c->r, c->cols, 0, c->src.path, c->pos, PP_UNPACKED, &c->scratch->err);
    return hold_account(c) ? 0 : 1;
}

/* Loads the next EVENTS block. 1: loaded, 0: no more blocks, -1: error. */
static int cursor_block(vt_cursor *c, vt_error *err)
{
    vt_block_header h;
    const uint8_t *data;
    if (c->pos >= c->end)
        return 0;
    if (vt__read_block_header(&c->src, c->pos, &h, err))
        return -1;
    while ((h.type == VT_BLOCK_FUNCS && c->rk->minor >= 3) || (h.type == VT_BLOCK_RANKDEFS && c->rk->minor >= 4)) {
        /* more of the function table, or a snapshot of the definitions (1.4): read
         * when the trace was opened */
        c->pos += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
        if (c->pos >= c->end)
            return 0;
        if (vt__read_block_header(&c->src, c->pos, &h, err))
            return -1;
    }
    unsigned want = c->rk->reduced ? VT_BLOCK_REDUCED : VT_BLOCK_EVENTS;
    if (h.type != want && h.type != (c->rk->reduced ? VT_BLOCK_REDUCED_COLS : VT_BLOCK_EVENTS_COLS))
        return vt__seterr(err, c->src.path, c->pos + 4, "expected an %s block, found a %s block (type %u)",
                          vt__block_type_name(want), vt__block_type_name(h.type), h.type);
    uint64_t next = c->pos + VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (next > c->end)
        return vt__seterr(err, c->src.path, c->pos,
                          "expected EVENTS blocks ending at offset %llu, found a block ending at %llu",
                          (unsigned long long)c->end, (unsigned long long)next);
    /* a block in columns is unpacked into c->unpacked at once: its stored and decoded
     * bytes go to the scratch all cursors share, not to buffers of each rank's */
    int cols = h.type == VT_BLOCK_EVENTS_COLS || h.type == VT_BLOCK_REDUCED_COLS;
    if (vt__load_payload(&c->src, c->pos, &h, cols ? &c->scratch->stored : &c->stored,
                         cols ? &c->scratch->raw : &c->raw, c->dctx, &data, err))
        return -1;
    c->fastblk = 0;
    c->fasth = h;
    c->stored_bytes += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (c->fast && h.type == VT_BLOCK_EVENTS_COLS && h.nrecords && fast_start(c, data, &h)) {
        c->decoded_bytes += h.raw_len;
        c->block_off = c->pos;
        c->pos = next;
        c->left = h.nrecords;
        c->inblock = 0;
        return 1;
    }
    if (cols) {
        if (rows_start(c, c->pos, data, &h, err))
            return -1;
    } else {
        pp_init(&c->r, data, h.raw_len, c->src.path, c->pos, h.codec != VT_CODEC_RAW, err);
    }
    c->decoded_bytes += (uint64_t)(c->r.end - c->r.begin);
    c->block_off = c->pos;
    c->pos = next;
    if (block_head(c, c->next_index))
        return -1;
    c->left = h.nrecords;
    c->inblock = 0;
    return 1;
}

static int decode_record(vt_cursor *c, vt_event *ev)
{
    pp *r = &c->r;
    const vt_rank *rk = c->rk;
    uint32_t nranks = c->t->nranks;
    uint64_t code, u;
    int64_t s;
    const uint8_t *at;

    *ev = vt__ev_none;
    ev->index = c->next_index;
    ev->callno = c->next_callno;
    ev->block_offset = c->block_off;

    at = r->p;
    if (pp_uvar(r, &code, "record code"))
        return -1;
    ev->code = code;
    if (code < VT_CODE_FIRST_FN) {
        if (code != VT_CODE_FLUSH && code != VT_CODE_MARKER && code != VT_CODE_STOPPED) {
            r->p = at;
            return vt__pp_err(r, "expected record code 1, 2, 3 or 16 and above, found %llu", (unsigned long long)code);
        }
    } else if (code - VT_CODE_FIRST_FN >= rk->nfuncs) {
        r->p = at;
        return vt__pp_err(r, "expected a function id below %zu (record code below %llu), found code %llu", rk->nfuncs,
                          (unsigned long long)rk->nfuncs + VT_CODE_FIRST_FN, (unsigned long long)code);
    } else if (!rk->funcs[code - VT_CODE_FIRST_FN].name[0]) {
        r->p = at;
        return vt__pp_err(r, "expected a function a FUNCS block names, found function id %llu, which none names",
                          (unsigned long long)(code - VT_CODE_FIRST_FN));
    } else {
        ev->fn = (int64_t)(code - VT_CODE_FIRST_FN);
    }
    if (pp_svar(r, &s, "enter time delta") || pp_uvar(r, &u, "duration"))
        return -1;
    uint64_t enter = c->prev + (uint64_t)s;
    uint64_t exit_ = enter + u;
    ev->enter = (int64_t)enter;
    ev->exit = (int64_t)exit_;
    c->prev = exit_;

    if (ev->fn < 0) {
        if (code == VT_CODE_MARKER) {
            if (pp_uvar(r, &ev->marker_kind, "marker kind") || pp_svar(r, &ev->marker_value, "marker value"))
                return -1;
        } else if (code == VT_CODE_STOPPED) {
            if (pp_uvar(r, &ev->stop_reason, "stop reason"))
                return -1;
        }
        return 0;
    }

    const vt_function *f = &rk->funcs[ev->fn];
    if (rk->ncallsites == 0) {
        at = r->p;
        if (pp_uvar(r, &u, "call-site index"))
            return -1;
        if (u != 0) {
            r->p = at;
            return vt__pp_err(r, "expected call-site index 0 (the rank has no call sites), found %llu",
                              (unsigned long long)u);
        }
    } else {
        if (pp_index(r, &u, rk->ncallsites, "call-site index"))
            return -1;
        ev->callsite = (int64_t)u;
    }
    ev->fields = f->fields | VT_F_CALLSITE;

    for (const char *l = f->layout; *l; l++) {
        switch (*l) {
        case 'c':
            if (pp_index(r, &u, rk->ncomms, "communicator index"))
                return -1;
            ev->comm = (int64_t)u;
            break;
        case 'n':
            at = r->p;
            if (pp_svar(r, &s, "created communicator index"))
                return -1;
            if (s < -1 || s >= (int64_t)rk->ncomms) {
                r->p = at;
                return vt__pp_err(r, "expected created communicator index -1 to %lld, found %lld",
                                  (long long)rk->ncomms - 1, (long long)s);
            }
            ev->newcomm = s;
            break;
        case 'p':
            if (pp_peer(r, &ev->peer, nranks, "send peer"))
                return -1;
            break;
        case 't':
            if (pp_svar(r, &ev->tag, "send tag"))
                return -1;
            break;
        case 'b':
            if (pp_uvar(r, &ev->bytes, "send bytes"))
                return -1;
            break;
        case 'P':
            if (pp_peer(r, &ev->rpeer, nranks, "receive peer"))
                return -1;
            break;
        case 'T':
            if (pp_svar(r, &ev->rtag, "receive tag"))
                return -1;
            break;
        case 'B':
            if (pp_uvar(r, &ev->rbytes, "receive bytes"))
                return -1;
            break;
        case 'o':
            if (pp_peer(r, &ev->root, nranks, "root"))
                return -1;
            break;
        case 'q':
            if (pp_uvar(r, &ev->collseq, "collective sequence number"))
                return -1;
            break;
        case 'r':
            if (pp_uvar(r, &ev->request, "request id"))
                return -1;
            break;
        case 'R': {
            uint64_t n;
            if (pp_count(r, &n, 1, "number of started requests"))
                return -1;
            if (n > c->started_cap) {
                uint64_t *p = realloc(c->started, (size_t)n * sizeof *p);
                if (!p)
                    return vt__pp_nomem(r, "the started requests");
                c->started = p;
                c->started_cap = (size_t)n;
            }
            for (uint64_t i = 0; i < n; i++)
                if (pp_uvar(r, &c->started[i], "started request id"))
                    return -1;
            ev->nstarted = (size_t)n;
            ev->started = n ? c->started : NULL;
            break;
        }
        case 'k': {
            uint64_t n;
            if (pp_count(r, &n, 5, "number of completions"))
                return -1;
            if (n > c->done_cap) {
                vt_completion *p = realloc(c->done, (size_t)n * sizeof *p);
                if (!p)
                    return vt__pp_nomem(r, "the completions");
                c->done = p;
                c->done_cap = (size_t)n;
            }
            for (uint64_t i = 0; i < n; i++) {
                vt_completion *d = &c->done[i];
                if (pp_uvar(r, &d->request, "completed request id") || pp_uvar(r, &d->flags, "completion flags"))
                    return -1;
                if (pp_peer(r, &d->peer, nranks, "completion peer") || pp_svar(r, &d->tag, "completion tag") ||
                    pp_uvar(r, &d->bytes, "completion bytes"))
                    return -1;
            }
            ev->ndone = (size_t)n;
            ev->done = n ? c->done : NULL;
            break;
        }
        case 'm':
            if (pp_uvar(r, &ev->msg, "matched-message id"))
                return -1;
            break;
        case 'f':
            if (pp_index(r, &u, rk->nfiles, "file index"))
                return -1;
            ev->file = (int64_t)u;
            break;
        case 'O':
            if (pp_svar(r, &ev->offset, "file offset"))
                return -1;
            break;
        default:
            return vt__pp_err(r, "expected a known layout letter, found '%c'", *l);
        }
    }
    return 0;
}

/* A block read from its columns whose current record the columns did not give: unpacked
 * into rows (from then on), decode_record then decodes the record or says what is
 * wrong, as without vt_cursor_fast. */
static __attribute__((noinline)) int fast_fallback(vt_cursor *c, vt_event *ev)
{
    c->r.err = &c->scratch->err;
    c->fastblk = 0;
    if (rows_start(c, c->block_off, c->cols, &c->fasth, &c->scratch->err) || block_head(c, c->next_index - c->inblock))
        return -1;
    vt_event skip;
    for (uint32_t i = 0; i < c->inblock; i++)
        if (decode_record(c, &skip))
            return -1;
    return decode_record(c, ev);
}

/* The current record of a block read from its columns (the block's last one only when
 * every column ends with it), and the cursor moved past it: vt_cursor_next's result.
 * Out of line, the only caller of vt__fast_next, which is inlined here (LTO). */
static __attribute__((noinline)) int fast_record(vt_cursor *c, vt_event *ev, vt_error *err)
{
    if (__builtin_expect(vt__fast_next(c->dec, c->rk, c->t->nranks, ev, &c->prev, &c->started, &c->started_cap,
                                       &c->done, &c->done_cap) ||
                             (c->left == 1 && !vt_evcols_dec_done(c->dec)),
                         0)) {
        if (cursor_advance(c, fast_fallback(c, ev), err) < 0)
            return -1;
    } else {
        ev->index = c->next_index;
        ev->block_offset = c->block_off;
        c->left--;
        c->inblock++;
        c->next_index++;
    }
    ev->callno = c->next_callno;
    c->next_callno += ev->fn >= 0;
    return 1;
}

/* ------------------------------------------------------------------ held blocks */

/* The decoded block of cursor C let go: its bytes freed, read again by hold_reload. */
static void hold_evict(vt_cursor *c)
{
    hold_drop(c);
    if (c->fastblk) {
        c->evicted_base = (uintptr_t)c->cols;
    } else {
        c->evicted_base = (uintptr_t)c->unpacked;
        if (!c->unpacked) { /* rows of a raw block: not held */
            free(c->cols);
            c->cols = NULL;
            c->colcap = 0;
            return;
        }
    }
    free(c->cols);
    free(c->unpacked);
    c->cols = c->unpacked = NULL;
    c->colcap = c->unpacked_len = 0;
    if (c->state == 0 && c->left) /* else the next block replaces it */
        c->state = 2;
}

/* C's bytes in the scratch's total; over the budget, other cursors' blocks are let go,
 * the least recently read first (a clock: one read since the hand passed keeps a block
 * one more turn). 0, or -1 (no memory for the list) with the scratch's error. */
static int hold_account(vt_cursor *c)
{
    fd_scratch *S = c->scratch;
    size_t bytes = (c->cols ? c->colcap : 0) + (c->unpacked ? c->unpacked_len : 0);
    S->held += bytes - c->held_bytes;
    c->held_bytes = bytes;
    if (bytes && !c->hold) {
        if (S->nholders == S->capholders) {
            size_t nc = S->capholders ? 2 * S->capholders : 64;
            vt_cursor **n = realloc(S->holders, nc * sizeof *n);
            if (!n)
                return vt__seterr(&S->err, c->src.path, c->pos, "expected memory for the list of cursors, found none");
            S->holders = n;
            S->capholders = nc;
        }
        S->holders[S->nholders++] = c;
        c->hold = S->nholders;
    }
    while (S->held > S->budget && S->nholders > 1) {
        if (S->hand >= S->nholders)
            S->hand = 0;
        vt_cursor *x = S->holders[S->hand];
        if (x == c || x->clock_index != x->next_index) {
            x->clock_index = x->next_index;
            S->hand++;
        } else {
            hold_evict(x); /* the last holder takes its place */
        }
    }
    return 0;
}

static void hold_drop(vt_cursor *c)
{
    if (!c->hold)
        return;
    fd_scratch *S = c->scratch;
    S->held -= c->held_bytes;
    c->held_bytes = 0;
    vt_cursor *last = S->holders[--S->nholders];
    S->holders[c->hold - 1] = last;
    last->hold = c->hold;
    c->hold = 0;
}

/* The block let go read and decoded again, the cursor's place in it kept. */
static int hold_reload(vt_cursor *c)
{
    const vt_block_header *h = &c->fasth;
    const uint8_t *data;
    vt_error *err = &c->scratch->err;
    if (vt__load_payload(&c->src, c->block_off, h, &c->scratch->stored, &c->scratch->raw, c->dctx, &data, err))
        return -1;
    c->state = 0;
    if (c->fastblk) {
        if (!(c->cols = malloc(h->raw_len ? h->raw_len : 1)))
            return vt__seterr(err, c->src.path, c->block_off, "expected memory for a block, found none");
        memcpy(c->cols, data, h->raw_len);
        c->colcap = h->raw_len;
        vt_evcols_dec_rebase(c->dec, c->evicted_base, c->cols);
        pp_init(&c->r, c->cols, 0, c->src.path, c->block_off, PP_UNPACKED, err);
        return hold_account(c);
    }
    size_t len;
    if (unpack_block(c, c->block_off, data, h, &len, err))
        return -1;
    uint8_t *fit = realloc(c->unpacked, len ? len : 1);
    if (fit)
        c->unpacked = fit;
    c->unpacked_len = len ? len : 1;
    const uint8_t *at = c->unpacked + ((uintptr_t)c->r.p - c->evicted_base);
    pp_init(&c->r, c->unpacked, len, c->src.path, c->block_off, PP_UNPACKED, err);
    c->r.p = at;
    return hold_account(c);
}

/* The error just made in the scratch becomes the cursor's for good (a cursor that
 * failed keeps failing with it). Returns -1. */
static int cursor_failed(vt_cursor *c)
{
    c->state = -1;
    if (!c->last && (c->last = malloc(sizeof *c->last)))
        *c->last = c->scratch->err;
    return -1;
}

/* The framing both kinds of records share: the next record's payload position, across
 * blocks. 1: a record is next (decode it, then call cursor_advance); 0: end; -1: error
 * (cursor_failed). */
static int cursor_ready(vt_cursor *c, const char *payload)
{
    if (c->state) {
        if (c->state < 0)
            return -1;
        if (c->state == 1)
            return 0;
        if (hold_reload(c))
            return cursor_failed(c);
    }
    c->r.err = &c->scratch->err;
    while (c->left == 0) {
        if (c->r.p != c->r.end) {
            vt__pp_err(&c->r, "expected end of the %s payload after %u records (block header), found %zu more bytes",
                       payload, c->inblock, pp_left(&c->r));
            return cursor_failed(c);
        }
        int rc = cursor_block(c, &c->scratch->err);
        if (rc < 0)
            return cursor_failed(c);
        if (rc == 0) {
            c->state = 1;
            return 0;
        }
        c->r.err = &c->scratch->err;
    }
    if (c->r.p == c->r.end && !c->fastblk) {
        vt__pp_err(&c->r, "expected %u more records (block header), found end of payload", c->left);
        return cursor_failed(c);
    }
    return 1;
}

static int cursor_fail(vt_cursor *c, vt_error *err)
{
    if (err)
        *err = c->last ? *c->last : c->scratch->err;
    return -1;
}

/* After a record was decoded (ok == 0) or failed to (ok != 0): the cursor's result. */
static int cursor_advance(vt_cursor *c, int ok, vt_error *err)
{
    if (ok != 0) {
        cursor_failed(c);
        return cursor_fail(c, err);
    }
    c->left--;
    c->inblock++;
    c->next_index++;
    return 1;
}

static __attribute__((noinline)) int cursor_next_slow(vt_cursor *c, vt_event *ev, vt_error *err)
{
    if (!c || !ev)
        return vt__seterr(err, "(cursor)", 0, "expected a cursor and an event, found NULL");
    if (c->rk->reduced)
        return vt__seterr(err, c->rk->path, 0, "expected a full trace (EVENTS blocks), found a reduced trace: "
                          "this tool needs every event");
    int rc = cursor_ready(c, "EVENTS");
    if (rc <= 0)
        return rc < 0 ? cursor_fail(c, err) : 0;
    if (c->fastblk)
        return fast_record(c, ev, err);
    if (cursor_advance(c, decode_record(c, ev), err) < 0)
        return -1;
    c->next_callno += ev->fn >= 0;
    return 1;
}

int vt_cursor_next(vt_cursor *c, vt_event *ev, vt_error *err)
{
    /* the common case first: one more record of the column block loaded (what
     * cursor_ready() then finds, without its checks and call; a reduced rank's cursor
     * never has one: it refuses EVENTS_COLS blocks) */
    if (__builtin_expect(c && ev && c->state == 0 && c->left && c->fastblk, 1))
        return fast_record(c, ev, err);
    return cursor_next_slow(c, ev, err);
}

/* ------------------------------------------------------------------ reduced records */

/* Grows an array of the cursor to hold n elements of size sz. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < n)
        nc *= 2;
    void *q = realloc(*p, nc * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int decode_rrec_body(vt_cursor *c, vt_rrec *rec)
{
    pp *r = &c->r;
    const vt_rank *rk = c->rk;
    uint32_t nranks = c->t->nranks;
    uint64_t u, kind, n;
    int64_t sv;
    const uint8_t *at;

    memset(rec, 0, sizeof *rec);
    rec->index = c->next_index;
    rec->fn = -1;
    rec->callsite = -1;
    rec->block_offset = c->block_off;
    at = r->p;
    if (pp_uvar(r, &kind, "reduced record kind"))
        return -1;
    c->kbits = (unsigned)(kind & (VT_RREC_K_BURST | VT_RREC_K_END));
    if (kind > (VT_RREC_K_MASK | VT_RREC_K_BURST | VT_RREC_K_END) || (kind & VT_RREC_K_MASK) < VT_RREC_START ||
        (kind & VT_RREC_K_MASK) > VT_RREC_END ||
        (c->kbits && ((kind & VT_RREC_K_MASK) == VT_RREC_START || (kind & VT_RREC_K_MASK) == VT_RREC_END))) {
        r->p = at;
        return vt__pp_err(r, "expected reduced record kind 1 to 5 (2 to 4 with bits 8 and 16), found %llu",
                          (unsigned long long)kind);
    }
    kind &= VT_RREC_K_MASK;
    rec->kind = (unsigned)kind;
    if (pp_uvar(r, &u, "sequence number delta"))
        return -1;
    if (u > UINT64_MAX - c->prev_seq) {
        r->p = at;
        return vt__pp_err(r, "expected a sequence number below 2^64, found an overflow");
    }
    rec->seq = c->prev_seq + u;
    c->prev_seq = rec->seq;
    if (pp_svar(r, &sv, "enter time delta") || pp_uvar(r, &u, "duration"))
        return -1;
    uint64_t prev = c->prev, enter = c->prev + (uint64_t)sv;
    rec->enter = (int64_t)enter;
    rec->exit = (int64_t)(enter + u);
    c->prev = enter + u;
    rec->rstar = rec->enter;
    if (c->kbits & VT_RREC_K_BURST) {
        if (pp_svar(r, &sv, "start of the burst before the call"))
            return -1;
        c->burst_start = (int64_t)(prev + (uint64_t)sv);
    }
    if (kind == VT_RREC_START || kind == VT_RREC_END)
        return 0;
    at = r->p;
    if (pp_uvar(r, &u, "function id + 1"))
        return -1;
    if (u > rk->nfuncs) {
        r->p = at;
        return vt__pp_err(r, "expected a function id + 1 of at most %zu, found %llu", rk->nfuncs,
                          (unsigned long long)u);
    }
    rec->fn = (int64_t)u - 1;
    if (rec->fn >= 0 && !rk->funcs[rec->fn].name[0]) {
        r->p = at;
        return vt__pp_err(r, "expected a function a FUNCS block names, found function id %lld, which none names",
                          (long long)rec->fn);
    }
    if ((c->kbits & VT_RREC_K_BURST) && (rec->fn < 0 || rec->seq == 0)) {
        r->p = at;
        return vt__pp_err(r, "expected the call ending the burst before it, found %s",
                          rec->fn < 0 ? "a burst" : "sequence number 0");
    }
    at = r->p;
    if (pp_uvar(r, &u, "call-site index + 1"))
        return -1;
    if (u > rk->ncallsites) {
        r->p = at;
        return vt__pp_err(r, "expected a call-site index + 1 of at most %zu, found %llu", rk->ncallsites,
                          (unsigned long long)u);
    }
    rec->callsite = (int64_t)u - 1;
    if (kind == VT_RREC_CAND)
        return 0;
    if (kind == VT_RREC_NBCINIT) {
        if (grow((void **)&c->rgates, &c->rgates_cap, 1, sizeof *c->rgates))
            return vt__pp_nomem(r, "a gate");
        vt_rgate *g = &c->rgates[0];
        memset(g, 0, sizeof *g);
        at = r->p;
        if (pp_uvar(r, &u, "initiation flags"))
            return -1;
        if (u > VT_RREC_F_CAND) {
            r->p = at;
            return vt__pp_err(r, "expected initiation flags 0 or 1, found %llu", (unsigned long long)u);
        }
        rec->flags = (unsigned)u;
        if (pp_uvar(r, &g->comm, "communicator id") || pp_uvar(r, &g->collseq, "collective sequence number") ||
            pp_index(r, &u, (uint64_t)nranks + 1, "number of members"))
            return -1;
        g->nmembers = (uint32_t)u;
        g->nonblocking = 1;
        rec->gates = g;
        rec->ngates = 1;
        return 0;
    }
    /* COMP */
    at = r->p;
    if (pp_uvar(r, &u, "completion flags"))
        return -1;
    if (u > 7) {
        r->p = at;
        return vt__pp_err(r, "expected completion flags 0 to 7, found %llu", (unsigned long long)u);
    }
    rec->flags = (unsigned)u;
    if (pp_uvar(r, &u, "R* - enter"))
        return -1;
    rec->rstar = rec->enter + (int64_t)u;
    if (pp_count(r, &n, 5, "number of messages"))
        return -1;
    if (grow((void **)&c->rmsgs, &c->rmsgs_cap, n, sizeof *c->rmsgs))
        return vt__pp_nomem(r, "the messages of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rmsg *m = &c->rmsgs[i];
        memset(m, 0, sizeof *m);
        uint64_t src, sync;
        if (pp_index(r, &src, nranks, "sender rank") || pp_uvar(r, &m->send_seq, "send sequence number") ||
            pp_svar(r, &sv, "send time - enter") || pp_uvar(r, &m->bytes, "message bytes") ||
            pp_index(r, &sync, 2, "synchronous flag"))
            return -1;
        m->src = (uint32_t)src;
        m->S = rec->enter + sv;
        m->sync = (int)sync;
        if (sync) {
            if (pp_uvar(r, &m->post_seq, "posting call's sequence number") || pp_svar(r, &sv, "posting time - enter"))
                return -1;
            m->P = rec->enter + sv;
        }
    }
    rec->msgs = c->rmsgs;
    rec->nmsgs = (size_t)n;
    if (pp_count(r, &n, 4, "number of synchronous sends"))
        return -1;
    if (grow((void **)&c->rssends, &c->rssends_cap, n, sizeof *c->rssends))
        return vt__pp_nomem(r, "the synchronous sends of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rssend *x = &c->rssends[i];
        uint64_t dst;
        if (pp_index(r, &dst, nranks, "receiver rank") || pp_uvar(r, &x->send_seq, "send sequence number") ||
            pp_svar(r, &sv, "send time - enter") || pp_uvar(r, &x->bytes, "message bytes"))
            return -1;
        x->dst = (uint32_t)dst;
        x->S = rec->enter + sv;
    }
    rec->ssends = c->rssends;
    rec->nssends = (size_t)n;
    if (pp_count(r, &n, 4, "number of gates"))
        return -1;
    if (grow((void **)&c->rgates, &c->rgates_cap, n, sizeof *c->rgates))
        return vt__pp_nomem(r, "the gates of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rgate *g = &c->rgates[i];
        uint64_t nb;
        if (pp_uvar(r, &g->comm, "communicator id") || pp_uvar(r, &g->collseq, "collective sequence number") ||
            pp_index(r, &u, (uint64_t)nranks + 1, "number of members") || pp_index(r, &nb, 2, "non-blocking flag"))
            return -1;
        g->nmembers = (uint32_t)u;
        g->nonblocking = (int)nb;
    }
    rec->gates = c->rgates;
    rec->ngates = (size_t)n;
    return 0;
}

void vt_cursor_bytes(const vt_cursor *c, uint64_t *stored, uint64_t *decoded)
{
    *stored = c ? c->stored_bytes : 0;
    *decoded = c ? c->decoded_bytes : 0;
}

/* A stored reduced record, and the END it holds (bit 16: uvar seq - the record's seq,
 * uvar time - its exit, after its fields). */
static int decode_rrec(vt_cursor *c, vt_rrec *rec)
{
    if (decode_rrec_body(c, rec))
        return -1;
    if (c->kbits & VT_RREC_K_END) {
        uint64_t ds, dt;
        if (pp_uvar(&c->r, &ds, "END's sequence number - the record's") ||
            pp_uvar(&c->r, &dt, "END's time - the record's exit"))
            return -1;
        c->end_seq = rec->seq + ds;
        c->end_time = (int64_t)((uint64_t)rec->exit + dt);
        c->prev_seq = c->end_seq;
        c->prev = (uint64_t)c->end_time;
    }
    return 0;
}

/* The records one stored record stands for (rrec.h, vt_rrec_out): the rank's START
 * before its first record when it was not stored, the candidate burst the call ends, the
 * record, END at it. */
static void unfold(vt_cursor *c, const vt_rrec *stored, uint64_t base)
{
    c->npend = c->ipend = 0;
    vt_rrec plain = {.fn = -1, .callsite = -1, .block_offset = stored->block_offset};
    if (c->emitted == 0 && stored->kind != VT_RREC_START) {
        vt_rrec *s = &c->pend[c->npend++];
        *s = plain;
        s->kind = VT_RREC_START;
        s->enter = s->exit = s->rstar = (int64_t)base;
    }
    if (c->kbits & VT_RREC_K_BURST) {
        vt_rrec *b = &c->pend[c->npend++];
        *b = plain;
        b->kind = VT_RREC_CAND;
        b->seq = stored->seq - 1;
        b->exit = stored->enter;
        b->enter = b->rstar = c->burst_start;
        b->callsite = stored->callsite;
    }
    c->pend[c->npend++] = *stored;
    if (c->kbits & VT_RREC_K_END) {
        vt_rrec *e = &c->pend[c->npend++];
        *e = plain;
        e->kind = VT_RREC_END;
        e->seq = c->end_seq;
        e->enter = e->exit = e->rstar = c->end_time;
    }
}

int vt_cursor_next_reduced(vt_cursor *c, vt_rrec *rec, vt_error *err)
{
    if (!c || !rec)
        return vt__seterr(err, "(cursor)", 0, "expected a cursor and a record, found NULL");
    if (!c->rk->reduced)
        return vt__seterr(err, c->rk->path, 0, "expected a reduced trace (REDUCED blocks), found a full trace");
    if (c->ipend == c->npend) {
        int rc = cursor_ready(c, "REDUCED");
        if (rc <= 0)
            return rc < 0 ? cursor_fail(c, err) : 0;
        uint64_t base = c->prev; /* before the rank's first record: its first enter */
        vt_rrec stored;
        if (cursor_advance(c, decode_rrec(c, &stored), err) < 0)
            return -1;
        unfold(c, &stored, base);
    }
    *rec = c->pend[c->ipend++];
    rec->index = c->emitted++;
    return 1;
}

