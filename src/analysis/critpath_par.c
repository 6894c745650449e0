/* The critical path over the parallel replay (critpath.h), distributed: each process
 * keeps the graph of its own ranks (critpath.c; an edge from another process's rank
 * names its predecessor, that rank's last event before a seq, with an absolute weight)
 * and its node count at the end of each round of the replay. A node's successors on
 * other processes are in later rounds, so the backward sweep (critpath_walk.c) runs the
 * rounds backwards, and after each one an exchange carries
 *   - per edge from another process's rank: rank, seq and L - w, which wait in the
 *     rank's heap until the sweep reaches the predecessor (L: the least of them + pend);
 *   - the path, where it crosses: rank, seq and the segment it closes there.
 * Then process 0 takes in the others' path records (sorted back into the walk's order),
 * shares and first candidates, in chunks; the counts go by pc->sum. In int64 words:
 *   CON rank seq v | PATH rank seq pathrec  (the sweep's rounds)
 *   n SEG pathrec | n SITE rank callsite ns events | n FUNC ns events len name |
 *   n CAND rank seq dur slack on_path len name   (to process 0; n: the record's words,
 *   len -1: no name) */
#include "vt_config.h"
#include "analysis/critpath_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { M_CON = 1, M_PATH, M_SEG, M_SITE, M_FUNC, M_CAND };
#define PR_WORDS ((sizeof(cp_pathrec) + sizeof(int64_t) - 1) / sizeof(int64_t))
#define CHUNK_WORDS ((size_t)1 << 16)

typedef struct obuf {
    uint8_t *b;
    size_t n, cap;
} obuf;

typedef struct dist {
    vt_critpath *cp;
    const vt_par_comm *pc;
    cp_sweep sw;
    obuf *out;              /* per process */
    uint8_t **bufs;
    size_t *lens;
    uint64_t bytes;
    int failed;
    vt_error *err;
    vt_spill raw;           /* process 0: the path's records, in any order */
    int rawopen;
    vt_critpath *c0;        /* process 0: the merged candidates */
} dist;

static void mark(void *arg)
{
    vt_critpath *cp = arg;
    if (vt__cp_grow((void **)&cp->rmark, &cp->caprmark, cp->nrmark + 1, sizeof *cp->rmark))
        cp->rmark_lost = 1;
    else
        cp->rmark[cp->nrmark++] = cp->nn;
}

static int own_event(void *arg, const vt_obs_event *ev, vt_error *err) { return vt_critpath_event(arg, ev, err); }

void vt_critpath_par_observer(vt_critpath *cp, const vt_par_comm *pc, vt_observer *obs)
{
    memset(obs, 0, sizeof *obs);
    uint32_t lo = (uint32_t)((uint64_t)pc->me * cp->nranks / (uint64_t)pc->nproc);
    uint32_t hi = (uint32_t)((uint64_t)(pc->me + 1) * cp->nranks / (uint64_t)pc->nproc);
    if (vt__cp_window(cp, lo, hi))
        cp->rmark_lost = 1;   /* (an error at the end: out of memory) */
    obs->arg = cp;
    obs->event = own_event;
    obs->round = mark;
}

/* ------------------------------------------------------------------ messages */

static int oput(obuf *o, const int64_t *w, size_t n, const void *x, size_t xbytes)
{
    size_t xw = (xbytes + sizeof(int64_t) - 1) / sizeof(int64_t), need = o->n + (n + xw) * sizeof(int64_t);
    if (vt__cp_grow((void **)&o->b, &o->cap, need, 1))
        return -1;
    memcpy(o->b + o->n, w, n * sizeof *w);
    o->n += n * sizeof *w;
    if (xw) {
        memset(o->b + o->n, 0, xw * sizeof(int64_t));
        memcpy(o->b + o->n, x, xbytes);
        o->n += xw * sizeof(int64_t);
    }
    return 0;
}

static int heap_push(struct cp_heap *h, uint64_t seq, int64_t v)
{
    if (vt__cp_grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v))
        return -1;
    size_t i = h->n++;
    while (i > 0 && h->v[(i - 1) / 2].seq < seq) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = (cp_pitem){seq, v};
    return 0;
}

static void heap_pop(struct cp_heap *h)
{
    cp_pitem last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1].seq > h->v[c].seq)
            c++;
        if (h->v[c].seq <= last.seq)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
}

/* The sweep's callbacks (cp_sweep). */
static int64_t pending(void *arg, uint32_t rank, uint64_t seq, int64_t pend)
{
    vt_critpath *cp = ((dist *)arg)->cp;
    if (rank < cp->lo || rank >= cp->hi)
        return INT64_MAX;
    struct cp_heap *h = &cp->pend[rank - cp->lo];
    int64_t best = INT64_MAX;
    while (h->n && h->v[0].seq > seq) {
        if (h->v[0].v + pend < best)
            best = h->v[0].v + pend;
        heap_pop(h);
    }
    return best;
}

static uint32_t owner(const dist *d, uint32_t rank) { return vt_replay_par_owner(d->pc, d->cp->nranks, rank); }

static int remote(void *arg, uint32_t rank, uint64_t seq, int64_t v)
{
    dist *d = arg;
    int64_t w[4] = {M_CON, rank, (int64_t)seq, v};
    return oput(&d->out[owner(d, rank)], w, 4, NULL, 0);
}

static int handover(void *arg, uint32_t rank, uint64_t seq, const cp_pathrec *pr)
{
    dist *d = arg;
    int64_t w[3] = {M_PATH, rank, (int64_t)seq};
    return oput(&d->out[owner(d, rank)], w, 3, pr, sizeof *pr);
}

static void bad_msg(dist *d, int from)
{
    if (!d->failed)
        vt__cp_err(d->err, "critical path: a malformed message from process %d", from);
    d->failed = 1;
}

/* A message of the sweep's round. */
static int take_sweep(void *arg, int from, const uint8_t *data, size_t len)
{
    dist *d = arg;
    vt_critpath *cp = d->cp;
    size_t off = 0;
    while (off < len) {
        int64_t w[4];
        if (len - off < 3 * sizeof(int64_t))
            goto bad;
        memcpy(w, data + off, 3 * sizeof(int64_t));
        uint32_t rank = (uint32_t)w[1];
        if (w[1] < 0 || rank < cp->lo || rank >= cp->hi)
            goto bad;
        if (w[0] == M_CON) {
            if (len - off < 4 * sizeof(int64_t))
                goto bad;
            memcpy(w, data + off, 4 * sizeof(int64_t));
            off += 4 * sizeof(int64_t);
            if (heap_push(&cp->pend[rank - cp->lo], (uint64_t)w[2], w[3])) {
                if (!d->failed)
                    vt__cp_err(d->err, "critical path: out of memory");
                d->failed = 1;
            }
        } else if (w[0] == M_PATH) {
            if (len - off < (3 + PR_WORDS) * sizeof(int64_t) || d->sw.trank != CP_NONE)
                goto bad;
            memcpy(&d->sw.tseg, data + off + 3 * sizeof(int64_t), sizeof d->sw.tseg);
            d->sw.trank = rank;
            d->sw.tseq = (uint64_t)w[2];
            d->sw.pathk = d->sw.tseg.seg.first_step;
            off += (3 + PR_WORDS) * sizeof(int64_t);
        } else {
            goto bad;
        }
    }
    return 0;
bad:
    bad_msg(d, from);
    return 0;
}

/* One exchange of what out holds (nothing once this process failed). */
static void round_trip(dist *d, int (*deliver)(void *, int, const uint8_t *, size_t))
{
    const vt_par_comm *pc = d->pc;
    for (int q = 0; q < pc->nproc; q++) {
        d->bufs[q] = d->out[q].b;
        d->lens[q] = d->failed ? 0 : d->out[q].n;
        d->bytes += d->lens[q];
    }
    if (pc->exchange(pc->arg, d->bufs, d->lens, deliver, d)) {
        if (!d->failed)
            vt__cp_err(d->err, "critical path: an exchange between the processes failed");
        d->failed = 1;
    }
    for (int q = 0; q < pc->nproc; q++)
        d->out[q].n = 0;
}

/* ------------------------------------------------------------------ to process 0 */

static int intern(vt_critpath *cp, const char *name, size_t n, const char **out)
{
    for (size_t k = 0; k < cp->nnames; k++)
        if (!strncmp(cp->names[k], name, n) && !cp->names[k][n]) {
            *out = cp->names[k];
            return 0;
        }
    char *s = malloc(n + 1);
    if (!s || vt__cp_grow((void **)&cp->names, &cp->capnames, cp->nnames + 1, sizeof *cp->names)) {
        free(s);
        return -1;
    }
    memcpy(s, name, n);
    s[n] = 0;
    cp->names[cp->nnames++] = s;
    *out = s;
    return 0;
}

/* A name at w[at] (its length; -1: none) of a record of n words: 0, or -1 malformed. */
static int get_name(dist *d, const int64_t *w, size_t n, size_t at, const char **out)
{
    *out = NULL;
    if (w[at] < 0)
        return 0;
    size_t len = (size_t)w[at];
    if (len > (n - at - 1) * sizeof(int64_t))
        return -1;
    if (intern(d->cp, (const char *)(w + at + 1), len, out)) {
        if (!d->failed)
            vt__cp_err(d->err, "critical path: out of memory");
        d->failed = 1;
    }
    return 0;
}

static int take_stream(void *arg, int from, const uint8_t *data, size_t len)
{
    dist *d = arg;
    vt_critpath *cp = d->cp;
    int64_t *w = NULL;
    size_t cap = 0, off = 0;
    while (off < len && !d->failed) {
        int64_t n;
        if (len - off < sizeof n)
            goto bad;
        memcpy(&n, data + off, sizeof n);
        if (n < 2 || (uint64_t)n > (len - off) / sizeof(int64_t))
            goto bad;
        if (vt__cp_grow((void **)&w, &cap, (size_t)n, sizeof *w))
            goto bad;
        memcpy(w, data + off, (size_t)n * sizeof *w);
        off += (size_t)n * sizeof *w;
        const char *name;
        int rc = 0;
        switch (w[1]) {
        case M_SEG: {
            cp_pathrec pr;
            if ((size_t)n < 2 + PR_WORDS)
                goto bad;
            memcpy(&pr, w + 2, sizeof pr);
            rc = vt_spill_put(&d->raw, &pr);
            break;
        }
        case M_SITE:
            if (n != 6)
                goto bad;
            rc = vt__cp_agg_add(&cp->by_site, (uint64_t)w[2], (uint64_t)w[3], w[4], (uint64_t)w[5]);
            break;
        case M_FUNC:
            if (n < 5 || get_name(d, w, (size_t)n, 4, &name))
                goto bad;
            rc = vt__cp_agg_add(&cp->by_func, (uint64_t)(uintptr_t)name, 0, w[2], (uint64_t)w[3]);
            break;
        case M_CAND: {
            if (n < 8 || get_name(d, w, (size_t)n, 7, &name))
                goto bad;
            vt_cp_cand c = {(uint32_t)w[2], (uint64_t)w[3], w[4], w[5], (int)w[6], name};
            rc = vt__cp_cand_add(d->c0, &c, d->err);
            break;
        }
        default: goto bad;
        }
        if (rc && !d->failed) {
            vt__cp_err(d->err, "critical path: out of memory or temporary file: %s", strerror(errno));
            d->failed = 1;
        }
    }
    free(w);
    return 0;
bad:
    free(w);
    bad_msg(d, from);
    return 0;
}

/* What a process other than 0 sends it, word by word into st (named: then a name,
 * NULL: none). */
static int sput(vt_spill *st, const int64_t *w, size_t n, int named, const char *name)
{
    size_t len = name ? strlen(name) : 0, xw = (len + sizeof(int64_t) - 1) / sizeof(int64_t);
    int64_t hd = (int64_t)(n + 1 + (named ? 1 + xw : 0)), l = name ? (int64_t)len : -1;
    if (vt_spill_put(st, &hd))
        return -1;
    for (size_t k = 0; k < n; k++)
        if (vt_spill_put(st, &w[k]))
            return -1;
    if (!named)
        return 0;
    if (vt_spill_put(st, &l))
        return -1;
    for (size_t k = 0; k < xw; k++) {
        int64_t x = 0;
        memcpy(&x, name + k * sizeof x, len - k * sizeof x < sizeof x ? len - k * sizeof x : sizeof x);
        if (vt_spill_put(st, &x))
            return -1;
    }
    return 0;
}

static int put_cand(void *arg, const vt_cp_cand *c)
{
    int64_t w[6] = {M_CAND, c->rank, (int64_t)c->seq, c->dur, c->slack, c->on_path};
    return sput(arg, w, 6, 1, c->func);
}

static int add_c0(void *arg, const vt_cp_cand *c)
{
    dist *d = arg;
    return vt__cp_cand_add(d->c0, c, d->err);
}

/* This process's part for process 0 (not 0): its path records, shares, first max
 * candidates. */
static int fill_stream(dist *d, vt_spill *st, size_t max)
{
    vt_critpath *cp = d->cp;
    int64_t w[1 + PR_WORDS];
    for (uint64_t k = 0; k < cp->path.n; k++) {
        cp_pathrec pr;
        memset(w, 0, sizeof w);
        w[0] = M_SEG;
        if (vt_spill_get(&cp->path, k, &pr, 0))
            return -1;
        memcpy(w + 1, &pr, sizeof pr);
        if (sput(st, w, 1 + PR_WORDS, 0, NULL))
            return -1;
    }
    for (size_t i = 0; i < cp->by_site.cap; i++) {
        const cp_agg *a = &cp->by_site.v[i];
        int64_t x[5] = {M_SITE, (int64_t)a->a, (int64_t)a->b, a->ns, (int64_t)a->events};
        if (a->events && sput(st, x, 5, 0, NULL))
            return -1;
    }
    for (size_t i = 0; i < cp->by_func.cap; i++) {
        const cp_agg *a = &cp->by_func.v[i];
        int64_t x[3] = {M_FUNC, a->ns, (int64_t)a->events};
        if (a->events && sput(st, x, 3, 1, (const char *)(uintptr_t)a->a))
            return -1;
    }
    return vt_critpath_cands(cp, max, put_cand, st, d->err);
}

static int cmp_k(const void *a, const void *b)
{
    const cp_pathrec *x = a, *y = b;
    return (x->seg.first_step > y->seg.first_step) - (x->seg.first_step < y->seg.first_step);
}

/* Process 0 takes in the others' parts, chunk by chunk. */
static void stream(dist *d, size_t max)
{
    vt_critpath *cp = d->cp;
    const vt_par_comm *pc = d->pc;
    vt_spill st;
    int stopen = 0;
    uint64_t at = 0;
    int64_t *chunk = NULL;
    if (pc->me == 0) {
        if (vt_spill_open(&d->raw, sizeof(cp_pathrec)) || !(d->c0 = vt_critpath_new(0, 0)))
            goto io;
        d->rawopen = 1;
        d->c0->finished = 1;
        d->c0->crun = cp->crun;
        for (uint64_t k = 0; k < cp->path.n; k++) {
            cp_pathrec pr;
            if (vt_spill_get(&cp->path, k, &pr, 0) || vt_spill_put(&d->raw, &pr))
                goto io;
        }
        if (vt_critpath_cands(cp, max, add_c0, d, d->err))
            d->failed = 1;
    } else {
        if (vt_spill_open(&st, sizeof(int64_t)))
            goto io;
        stopen = 1;
        if (!(chunk = malloc(CHUNK_WORDS * sizeof *chunk)) || fill_stream(d, &st, max))
            goto io;
    }
    goto go;
io:
    if (!d->failed)
        vt__cp_err(d->err, "critical path: out of memory or temporary file: %s", strerror(errno));
    d->failed = 1;
go:
    for (;;) {
        size_t n = 0;
        while (!d->failed && stopen && at < st.n) {
            int64_t hd;
            if (vt_spill_get(&st, at, &hd, 0) || hd < 1 || (size_t)hd > CHUNK_WORDS) {
                vt__cp_err(d->err, "critical path: temporary file: %s", strerror(errno));
                d->failed = 1;
                break;
            }
            if (n + (size_t)hd > CHUNK_WORDS)
                break;
            if (vt_spill_read(&st, at, (size_t)hd, chunk + n)) {
                vt__cp_err(d->err, "critical path: temporary file: %s", strerror(errno));
                d->failed = 1;
                break;
            }
            n += (size_t)hd;
            at += (uint64_t)hd;
        }
        if (n && oput(&d->out[0], chunk, n, NULL, 0)) {
            vt__cp_err(d->err, "critical path: out of memory");
            d->failed = 1;
        }
        round_trip(d, take_stream);
        int64_t more = !d->failed && stopen && at < st.n;
        if (pc->sum(pc->arg, &more, 1) || !more)
            break;
    }
    free(chunk);
    if (stopen)
        vt_spill_close(&st);
}

/* Process 0: the path in the walk's order, the merged candidates in place of its own. */
static int settle0(dist *d)
{
    vt_critpath *cp = d->cp;
    vt_spill sorted;
    d->rawopen = 0;
    if (vt_spill_sort(&d->raw, &sorted, cmp_k, 0))
        return vt__cp_err(d->err, "critical path: temporary file: %s", strerror(errno));
    vt_spill_close(&cp->path);
    cp->path = sorted;
    if (vt__cp_cand_end(d->c0, d->err))
        return -1;
    vt_critpath *c0 = d->c0;
#define SWAP(f)                                                                                                        \
    do {                                                                                                               \
        __typeof__(cp->f) t_ = cp->f;                                                                                  \
        cp->f = c0->f;                                                                                                 \
        c0->f = t_;                                                                                                    \
    } while (0)
    SWAP(cbuf);
    SWAP(ncbuf);
    SWAP(capcbuf);
    SWAP(copen);
    SWAP(cands);
#undef SWAP
    return 0;
}

int vt_critpath_par_finish(vt_critpath *cp, int64_t start, size_t max, const vt_par_comm *pc, uint64_t *bytes,
                           vt_error *err)
{
    const size_t P = (size_t)pc->nproc, n = cp->nranks;
    vt_critpath_result *r = &cp->res;
    dist d = {.cp = cp, .pc = pc, .err = err};
    int64_t *v = NULL;
    int rc = -1;
    err->msg[0] = 0;
    *bytes = 0;
    d.sw.remote = remote;
    d.sw.handover = handover;
    d.sw.pending = pending;
    d.sw.rarg = &d;
    d.out = calloc(P, sizeof *d.out);
    d.bufs = calloc(P, sizeof *d.bufs);
    d.lens = calloc(P, sizeof *d.lens);
    cp->pend = calloc(cp->hi > cp->lo ? cp->hi - cp->lo : 1, sizeof *cp->pend);
    cp->first = calloc(n ? n : 1, sizeof *cp->first);
    size_t nv = 2 * P + n;
    v = calloc(nv, sizeof *v);
    if (!d.out || !d.bufs || !d.lens || !cp->pend || !cp->first || !v || cp->rmark_lost) {
        vt__cp_err(err, "critical path: out of memory");
        d.failed = 1;
    }
    if (!d.failed && !cp->open) {   /* (no event of this process's ranks) */
        if (vt_spill_open(&cp->nodes, sizeof(cp_node)) || vt_spill_open(&cp->edges, sizeof(cp_edge)) ||
            vt_spill_open(&cp->path, sizeof(cp_pathrec))) {
            vt__cp_err(err, "critical path: cannot create a temporary file: %s", strerror(errno));
            d.failed = 1;   /* (a leak of the ones that opened: the command ends) */
        } else {
            cp->open = 1;
        }
    }
    if (!d.failed && vt__cp_sweep_begin(cp, &d.sw, start, err))
        d.failed = 1;
    int64_t bad = d.failed;
    if (pc->sum(pc->arg, &bad, 1) || bad)
        goto fail;
    /* The end (the rank that ends last, the lowest on a tie) and every rank's first node. */
    if (d.sw.cur != CP_NONE) {
        v[2 * pc->me] = r->end;
        v[2 * pc->me + 1] = (int64_t)r->end_rank + 1;
    }
    for (uint32_t k = cp->lo; k < cp->hi; k++)
        v[2 * P + k] = (int64_t)cp->ranks[k].first;
    if (pc->sum(pc->arg, v, nv))
        goto fail;
    int have = 0;
    for (size_t q = 0; q < P; q++)
        if (v[2 * q + 1] && (!have || v[2 * q] > r->end)) {
            r->end = v[2 * q];
            r->end_rank = (uint32_t)(v[2 * q + 1] - 1);
            have = 1;
        }
    if (!have) {
        if (pc->me == 0)
            vt__cp_err(err, "critical path: the trace has no events");
        goto fail;
    }
    r->length = r->end - start;
    if (owner(&d, r->end_rank) != (uint32_t)pc->me)
        d.sw.cur = CP_NONE;
    for (size_t k = 0; k < n; k++)
        cp->first[k] = (uint64_t)v[2 * P + k];
    /* The rounds backwards. */
    size_t R = cp->nrmark ? cp->nrmark : 1;
    for (size_t k = R; k-- > 0;) {
        uint64_t lo = k && cp->nrmark ? cp->rmark[k - 1] : 0;
        if (!d.failed && vt__cp_sweep(cp, &d.sw, lo, err))
            d.failed = 1;
        round_trip(&d, take_sweep);
    }
    vt__cp_sweep_free(&d.sw);
    if (!d.failed && d.sw.trank != CP_NONE) {
        vt__cp_err(err, "critical path: internal error: the path goes to rank %u before %llu, not found", d.sw.trank,
                   (unsigned long long)d.sw.tseq);
        d.failed = 1;
    }
    if (!d.failed && vt__cp_cand_end(cp, err))
        d.failed = 1;
    /* The sums; process 0's parts. */
    int64_t c[9] = {(int64_t)r->nsteps, (int64_t)r->nsegments, (int64_t)r->nedges, r->seg_ns, r->edge_ns,
                    r->startup, !d.sw.ok, (int64_t)r->ncands, d.failed};
    if (pc->sum(pc->arg, c, 9) || c[8])
        goto fail;
    if (pc->sum(pc->arg, r->per_rank, n))
        goto fail;
    stream(&d, max);
    if (pc->me == 0 && !d.failed && settle0(&d))
        d.failed = 1;
    int64_t e[2] = {d.failed, (int64_t)d.bytes};
    if (pc->sum(pc->arg, e, 2) || e[0])
        goto fail;
    *bytes = (uint64_t)e[1];
    r->nsteps = (size_t)c[0];
    r->nsegments = (size_t)c[1];
    r->nedges = (size_t)c[2];
    r->seg_ns = c[3];
    r->edge_ns = c[4];
    r->startup = c[5];
    r->ncands = (size_t)c[7];
    r->consistent = !c[6] && r->startup + r->seg_ns + r->edge_ns == r->length;
    rc = 0;
fail:
    vt__cp_sweep_free(&d.sw);
    for (size_t q = 0; d.out && q < P; q++)
        free(d.out[q].b);
    free(d.out);
    free(d.bufs);
    free(d.lens);
    free(v);
    if (d.rawopen)
        vt_spill_close(&d.raw);
    vt_critpath_free(d.c0);
    return rc;
}
