/* The reduced records of the event cursor (REDUCED: vt_cursor_next_reduced): each
 * stored record decoded, and unfolded into the records it stands for (doc/format.md).
 * Calls reader_cursor.c (the framing) and reader_io.c only. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/reader_priv.h"
#include "format/cursor_priv.h"
#include "util/codec.h"

#include <stdlib.h>
#include <string.h>

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

/* A time stored as a difference from the record's enter time (an svar); one that leaves
 * int64 nanoseconds is a decoding error at the difference's offset. */
static int pp_time(pp *r, int64_t enter, int64_t *t, const char *what)
{
    const uint8_t *at = r->p;
    int64_t d;
    if (pp_svar(r, &d, what))
        return -1;
    if (__builtin_add_overflow(enter, d, t)) {
        r->p = at;
        return vt__pp_err(r, "expected a %s that keeps the time within 2^63 ns, found %lld from %lld", what,
                          (long long)d, (long long)enter);
    }
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
    if (u > (uint64_t)INT64_MAX || (int64_t)(enter + u) < (int64_t)enter) {
        r->p = at;
        return vt__pp_err(r, "expected a duration that ends before 2^63 ns, found %llu ns from %lld",
                          (unsigned long long)u, (long long)enter);
    }
    rec->enter = (int64_t)enter;
    rec->exit = (int64_t)(enter + u);
    c->prev = enter + u;
    rec->rstar = rec->enter;
    if (c->kbits & VT_RREC_K_BURST) {
        if (pp_svar(r, &sv, "start of the burst before the call"))
            return -1;
        c->burst_start = (int64_t)(prev + (uint64_t)sv);
        int64_t len;
        if (__builtin_sub_overflow(rec->enter, c->burst_start, &len) || len < 0) {
            r->p = at;
            return vt__pp_err(r, "expected the burst before the call to start at most 2^63 ns before it, found %lld "
                              "for a call entered at %lld", (long long)c->burst_start, (long long)rec->enter);
        }
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
    at = r->p;
    if (pp_uvar(r, &u, "R* - enter"))
        return -1;
    if (u > (uint64_t)INT64_MAX || __builtin_add_overflow(rec->enter, (int64_t)u, &rec->rstar)) {
        r->p = at;
        return vt__pp_err(r, "expected an R* - enter that keeps R* within 2^63 ns, found %llu from %lld",
                          (unsigned long long)u, (long long)rec->enter);
    }
    if (pp_count(r, &n, 5, "number of messages"))
        return -1;
    if (grow((void **)&c->rmsgs, &c->rmsgs_cap, n, sizeof *c->rmsgs))
        return vt__pp_nomem(r, "the messages of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rmsg *m = &c->rmsgs[i];
        memset(m, 0, sizeof *m);
        uint64_t src, sync;
        if (pp_index(r, &src, nranks, "sender rank") || pp_uvar(r, &m->send_seq, "send sequence number") ||
            pp_time(r, rec->enter, &m->S, "send time - enter") || pp_uvar(r, &m->bytes, "message bytes") ||
            pp_index(r, &sync, 2, "synchronous flag"))
            return -1;
        m->src = (uint32_t)src;
        m->sync = (int)sync;
        if (sync) {
            if (pp_uvar(r, &m->post_seq, "posting call's sequence number") ||
                pp_time(r, rec->enter, &m->P, "posting time - enter"))
                return -1;
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
            pp_time(r, rec->enter, &x->S, "send time - enter") || pp_uvar(r, &x->bytes, "message bytes"))
            return -1;
        x->dst = (uint32_t)dst;
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
        int rc = vt__cursor_ready(c, "REDUCED");
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

