/* The event cursor (doc/format.md, "Records"): streams one rank's event blocks, loading
 * each in turn, with the framing full and reduced records share, and decodes full
 * records (EVENTS: vt_cursor_next; reduced ones: reader_rcursor.c). Calls reader_io.c
 * and reader_fast.c only. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/evcols.h"
#include "format/reader_priv.h"
#include "format/cursor_priv.h"
#include "util/blockpool.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ cursor */


static int hold_account(vt_cursor *c);
static void hold_drop(vt_cursor *c);

static size_t cursor_size(const vt_rank *rk)
{
    return sizeof(vt_cursor) + (rk->reduced ? 4 * sizeof(vt_rrec) : 0);
}

/* The pool of the cursors' blocks and their decoders' (NULL: malloc's). */
static vt_blockpool *cursor_blocks(const vt_cursor *c)
{
    return c->scratch ? c->scratch->blocks : NULL;
}

static void cols_free(vt_cursor *c)
{
    vt_blockpool_free(cursor_blocks(c), c->cols, c->colcap);
    c->cols = NULL;
    c->colcap = 0;
}

static size_t layouts_size(const vt_cursor *c)
{
    return (c->rk->nfuncs ? c->rk->nfuncs : 1) * sizeof *c->layouts;
}

/* c->layouts, each function's layout: 0, or -1 without memory. */
static int layouts_make(vt_cursor *c)
{
    if (c->layouts)
        return 0;
    if (!(c->layouts = vt_blockpool_alloc(cursor_blocks(c), layouts_size(c))))
        return -1;
    for (size_t i = 0; i < c->rk->nfuncs; i++)
        c->layouts[i] = c->rk->funcs[i].layout;
    return 0;
}

/* C in the scratch's list of the cursors opened (not there without memory for it: its
 * first block is then loaded by its first read only). */
static void opened_add(vt_cursor *c)
{
    fd_scratch *S = c->scratch;
    if (!S)
        return;
    if (S->nopened == S->capopened) {
        size_t nc = S->capopened ? 2 * S->capopened : 64;
        vt_cursor **n = realloc(S->opened, nc * sizeof *n);
        if (!n)
            return;
        S->opened = n;
        S->capopened = nc;
    }
    S->opened[S->nopened++] = c;
    c->opened_at = S->nopened;
}

static void opened_remove(vt_cursor *c)
{
    fd_scratch *S = c->scratch;
    if (!c->opened_at)
        return;
    S->opened[c->opened_at - 1] = NULL;
    while (S->nopened && !S->opened[S->nopened - 1])
        S->nopened--;
}

int vt_cursor_open(const vt_trace *t, uint32_t rank, vt_cursor **out, vt_error *err)
{
    if (!out)
        return vt__seterr(err, "(cursor)", 0, "expected an output pointer, found NULL");
    *out = NULL;
    if (!t || rank >= t->nranks)
        return vt__seterr(err, t ? t->dir : "(null)", 0, "expected a rank below %u, found %u", t ? t->nranks : 0, rank);
    fd_scratch *scratch = t->pool ? vt__fd_pool_scratch(t->pool) : NULL;
    vt_cursor *c = vt_blockpool_calloc(scratch ? scratch->blocks : NULL, cursor_size(&t->ranks[rank]));
    if (!c)
        return vt__seterr(err, t->ranks[rank].path, 0, "expected a cursor, found no memory for it");
    c->t = t;
    c->rk = &t->ranks[rank];
    c->scratch = scratch;
    c->src.fd = -1;
    if (vt__trace_src_pooled(t, rank, &c->src, "the rank file", err)) {
        vt_blockpool_free(cursor_blocks(c), c, cursor_size(c->rk));
        return -1;
    }
    if (c->src.size != c->rk->file_bytes) {
        vt__seterr(err, c->rk->path, 0, "expected a file of %llu bytes (as when opened), found %llu bytes",
                   (unsigned long long)c->rk->file_bytes, (unsigned long long)c->src.size);
        vt_cursor_close(c);
        return -1;
    }
    c->pos = t->priv[rank].ev_begin;
    c->end = t->priv[rank].ev_end;
    pp_init(&c->r, (const uint8_t *)"", 0, c->rk->path, 0, 0, err);
    /* shared: a zstd context is 100 KB, and a trace may have 64K cursors */
    c->dctx = vt__fd_pool_dctx(t->pool);
    opened_add(c);
    *out = c;
    return 0;
}

void vt_cursor_close(vt_cursor *c)
{
    if (!c)
        return;
    hold_drop(c);
    opened_remove(c);
    vt__src_close(&c->src);
    free(c->last);
    free(c->stored.p);
    free(c->raw.p);
    free(c->unpacked);
    vt_blockpool_free(cursor_blocks(c), c->layouts, layouts_size(c));
    free(c->comm_ids);
    free(c->started);
    free(c->done);
    free(c->rmsgs);
    free(c->rssends);
    free(c->rgates);
    cols_free(c);
    vt_evcols_dec_free(c->dec);
    vt_blockpool_free(cursor_blocks(c), c, cursor_size(c->rk));
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
        if (vt_rcols_unpack(data, h->raw_len, h->nrecords, &comms, rk->version, VT_READER_MAX_RAW, &c->unpacked, len,
                            msg, sizeof msg))
            return vt__seterr(err, c->src.path, off, "%s (in the %spayload of the REDUCED_COLS block at this offset)",
                              msg, h->codec != VT_CODEC_RAW ? "decoded " : "");
        return 0;
    }
    if (layouts_make(c))
        return vt__seterr(err, c->src.path, off, "expected memory for the function table, found none");
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

/* c->cols made N bytes at least, and VT_COLS_SLACK more (never more than the largest
 * block's payload and those): 1, or 0 without memory. */
static int cols_room(vt_cursor *c, size_t n)
{
    if (n + VT_COLS_SLACK > c->colcap) {
        uint8_t *p = vt_blockpool_alloc(cursor_blocks(c), n + VT_COLS_SLACK); /* (the bytes are replaced) */
        if (!p)
            return 0;
        cols_free(c);
        c->cols = p;
        c->colcap = n + VT_COLS_SLACK;
    }
    return 1;
}

/* vt_cursor_fast: the EVENTS_COLS payload DATA (decoded into c->cols, or copied there)
 * read from its columns; 0 when that cannot start (the block is then unpacked, as
 * without). */
static int fast_start(vt_cursor *c, const uint8_t *data, const vt_block_header *h)
{
    if (layouts_make(c))
        return 0;
    if (!c->dec && !(c->dec = vt_evcols_dec_new(c->scratch ? &c->scratch->decvals : NULL, cursor_blocks(c))))
        return 0;
    if (data != c->cols) {
        if (!cols_room(c, h->raw_len))
            return 0;
        memcpy(c->cols, data, h->raw_len);
    }
    memset(c->cols + h->raw_len, 0, VT_COLS_SLACK);
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

/* The header of the next event block at c->pos (FUNCS and RANKDEFS blocks skipped,
 * c->pos past them) and the offset where the block ends. 1: found, 0: no more blocks,
 * -1: error. */
static int block_find(vt_cursor *c, vt_block_header *h, uint64_t *next, vt_error *err)
{
    if (c->pos >= c->end)
        return 0;
    if (vt__read_block_header(&c->src, c->pos, h, err))
        return -1;
    while ((h->type == VT_BLOCK_FUNCS && c->rk->version >= VT_VERSION(1, 3)) ||
           (h->type == VT_BLOCK_RANKDEFS && c->rk->version >= VT_VERSION(1, 4))) {
        /* more of the function table, or a snapshot of the definitions (1.4): read
         * when the trace was opened */
        c->pos += VT_BLOCK_HEADER_SIZE + (uint64_t)h->stored_len;
        if (c->pos >= c->end)
            return 0;
        if (vt__read_block_header(&c->src, c->pos, h, err))
            return -1;
    }
    unsigned want = c->rk->reduced ? VT_BLOCK_REDUCED : VT_BLOCK_EVENTS;
    if (h->type != want && h->type != (c->rk->reduced ? VT_BLOCK_REDUCED_COLS : VT_BLOCK_EVENTS_COLS))
        return vt__seterr(err, c->src.path, c->pos + 4, "expected an %s block, found a %s block (type %u)",
                          vt__block_type_name(want), vt__block_type_name(h->type), h->type);
    *next = c->pos + VT_BLOCK_HEADER_SIZE + (uint64_t)h->stored_len;
    if (*next > c->end)
        return vt__seterr(err, c->src.path, c->pos,
                          "expected EVENTS blocks ending at offset %llu, found a block ending at %llu",
                          (unsigned long long)c->end, (unsigned long long)*next);
    return 1;
}

/* Whether the block of header H is decoded straight into c->cols, the payload it is read
 * from, rather than copied there (vt_cursor_fast: a compressed EVENTS_COLS block). */
static int direct_block(const vt_cursor *c, const vt_block_header *h)
{
    return c->fast && h->type == VT_BLOCK_EVENTS_COLS && h->nrecords && h->codec != VT_CODEC_RAW;
}

/* The payload of a direct_block into c->cols (cols_room made it large enough, so
 * vt__load_payload never reallocates that pool block); *DATA: c->cols. */
static int load_direct(vt_cursor *c, const vt_block_header *h, const uint8_t **data, vt_error *err)
{
    buf own = {c->cols, c->colcap};
    int rc = vt__load_payload(&c->src, c->pos, h, &c->scratch->stored, &own, c->dctx, data, err);
    c->cols = own.p;
    c->colcap = own.cap;
    return rc;
}

/* The block of header H, ending at NEXT, read from its columns from now on. */
static void fast_loaded(vt_cursor *c, const vt_block_header *h, uint64_t next)
{
    c->stored_bytes += VT_BLOCK_HEADER_SIZE + (uint64_t)h->stored_len;
    c->decoded_bytes += h->raw_len;
    c->block_off = c->pos;
    c->pos = next;
    c->left = h->nrecords;
    c->inblock = 0;
}

/* The first block of a cursor opened after the one whose first block was just loaded
 * (load_ahead), read and decoded now: only a compressed EVENTS_COLS block read from its
 * columns, and only within the scratch's budget (so that no cursor's block is let go
 * for it). Anything else, a damaged block too, is left to the cursor's own first read,
 * which loads it or says what is wrong as it would have. */
static void first_block_ahead(vt_cursor *c)
{
    vt_error err;
    vt_block_header h;
    uint64_t next;
    const uint8_t *data;
    if (block_find(c, &h, &next, &err) != 1 || !direct_block(c, &h) || c->cols ||
        c->scratch->held + h.raw_len + VT_COLS_SLACK > c->scratch->budget || !cols_room(c, h.raw_len))
        return;
    if (load_direct(c, &h, &data, &err) || !fast_start(c, data, &h)) {
        c->fastblk = 0;
        return;
    }
    fast_loaded(c, &h, next);
}

/* At 16K ranks and more each rank's first block is loaded in its first turn, and between
 * two such loads the checksum's and zstd's tables (and the dictionary's) have left the
 * caches: a cursor's first block is loaded with those of the LOAD_AHEAD cursors opened
 * after it, while the tables are still there. */
enum { LOAD_AHEAD = 32 };
static void load_ahead(vt_cursor *c)
{
    fd_scratch *S = c->scratch;
    for (size_t i = c->opened_at, n = 0; c->opened_at && i < S->nopened && n < LOAD_AHEAD; i++, n++) {
        vt_cursor *x = S->opened[i];
        if (x && x->t == c->t && x->fast && x->state == 0 && !x->left && !x->stored_bytes && !x->next_index)
            first_block_ahead(x);
    }
}

/* Loads the next EVENTS block. 1: loaded, 0: no more blocks, -1: error. */
static int cursor_block(vt_cursor *c, vt_error *err)
{
    vt_block_header h;
    uint64_t next;
    const uint8_t *data;
    int found = block_find(c, &h, &next, err);
    if (found <= 0)
        return found;
    /* a block in columns is unpacked into c->unpacked at once: its stored and decoded
     * bytes go to the scratch all cursors share, not to buffers of each rank's */
    int cols = h.type == VT_BLOCK_EVENTS_COLS || h.type == VT_BLOCK_REDUCED_COLS;
    int rc = direct_block(c, &h) && cols_room(c, h.raw_len)
                 ? load_direct(c, &h, &data, err)
                 : vt__load_payload(&c->src, c->pos, &h, cols ? &c->scratch->stored : &c->stored,
                                    cols ? &c->scratch->raw : &c->raw, c->dctx, &data, err);
    if (rc)
        return -1;
    c->fastblk = 0;
    c->fasth = h;
    if (c->fast && h.type == VT_BLOCK_EVENTS_COLS && h.nrecords && fast_start(c, data, &h)) {
        int first = !c->stored_bytes;
        fast_loaded(c, &h, next);
        if (first)
            load_ahead(c);
        return 1;
    }
    c->stored_bytes += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
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
    c->inblock = c->fasth.nrecords - c->left; /* (fast_record does not count them) */
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
        c->left--; /* (inblock: fasth.nrecords - left, made so when the block is unpacked) */
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
            cols_free(c);
            return;
        }
    }
    cols_free(c);
    free(c->unpacked);
    c->unpacked = NULL;
    c->unpacked_len = 0;
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
        if (!(c->cols = vt_blockpool_alloc(cursor_blocks(c), h->raw_len + VT_COLS_SLACK)))
            return vt__seterr(err, c->src.path, c->block_off, "expected memory for a block, found none");
        memcpy(c->cols, data, h->raw_len);
        memset(c->cols + h->raw_len, 0, VT_COLS_SLACK);
        c->colcap = h->raw_len + VT_COLS_SLACK;
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

int vt__cursor_failed(vt_cursor *c)
{
    c->state = -1;
    if (!c->last && (c->last = malloc(sizeof *c->last)))
        *c->last = c->scratch->err;
    return -1;
}

int vt__cursor_ready(vt_cursor *c, const char *payload)
{
    if (c->state) {
        if (c->state < 0)
            return -1;
        if (c->state == 1)
            return 0;
        if (hold_reload(c))
            return vt__cursor_failed(c);
    }
    c->r.err = &c->scratch->err;
    while (c->left == 0) {
        if (c->r.p != c->r.end) {
            vt__pp_err(&c->r, "expected end of the %s payload after %u records (block header), found %zu more bytes",
                       payload, c->inblock, pp_left(&c->r));
            return vt__cursor_failed(c);
        }
        int rc = cursor_block(c, &c->scratch->err);
        if (rc < 0)
            return vt__cursor_failed(c);
        if (rc == 0) {
            c->state = 1;
            return 0;
        }
        c->r.err = &c->scratch->err;
    }
    if (c->r.p == c->r.end && !c->fastblk) {
        vt__pp_err(&c->r, "expected %u more records (block header), found end of payload", c->left);
        return vt__cursor_failed(c);
    }
    return 1;
}

static __attribute__((noinline)) int cursor_next_slow(vt_cursor *c, vt_event *ev, vt_error *err)
{
    if (!c || !ev)
        return vt__seterr(err, "(cursor)", 0, "expected a cursor and an event, found NULL");
    if (c->rk->reduced)
        return vt__seterr(err, c->rk->path, 0, "expected a full trace (EVENTS blocks), found a reduced trace: "
                          "this tool needs every event");
    int rc = vt__cursor_ready(c, "EVENTS");
    if (rc <= 0)
        return rc < 0 ? cursor_fail(c, err) : 0;
    if (c->fastblk)
        return fast_record(c, ev, err);
    if (cursor_advance(c, decode_record(c, ev), err) < 0)
        return -1;
    c->next_callno += ev->fn >= 0;
    return 1;
}

/* Whether C reads (state 0) a block from its columns (fastblk 1): the two ints as one word. */
static inline int reading_cols(const vt_cursor *c)
{
    _Static_assert(offsetof(vt_cursor, fastblk) == offsetof(vt_cursor, state) + sizeof(int), "state, fastblk");
    static const int want[2] = {0, 1};
    uint64_t w, x;
    memcpy(&w, &c->state, sizeof w);
    memcpy(&x, want, sizeof x);
    return w == x;
}

int vt_cursor_next(vt_cursor *c, vt_event *ev, vt_error *err)
{
    /* the common case first: one more record of the column block loaded (what
     * vt__cursor_ready() then finds, without its checks and call; a reduced rank's cursor
     * never has one: it refuses EVENTS_COLS blocks) */
    if (__builtin_expect(c && ev && reading_cols(c) && c->left, 1))
        return fast_record(c, ev, err);
    return cursor_next_slow(c, ev, err);
}

void vt_cursor_take_lists(vt_cursor *c, uint64_t **st, size_t *capst, vt_completion **dn, size_t *capdn)
{
    uint64_t *s = c->started;
    size_t cs = c->started_cap;
    vt_completion *d = c->done;
    size_t cd = c->done_cap;
    c->started = *st;
    c->started_cap = *capst;
    c->done = *dn;
    c->done_cap = *capdn;
    *st = s;
    *capst = cs;
    *dn = d;
    *capdn = cd;
}

void vt_cursor_bytes(const vt_cursor *c, uint64_t *stored, uint64_t *decoded)
{
    *stored = c ? c->stored_bytes : 0;
    *decoded = c ? c->decoded_bytes : 0;
}
