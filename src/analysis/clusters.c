/* Clustering of computation bursts and their stability over time (clusters.h). */
#include "vt_config.h"
#include "analysis/clusters.h"
#include "util/codec.h"
#include "util/dpd.h"
#include "util/sort.h"
#include "analysis/clusters_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vt_cl_defaults(vt_cl_params *p)
{
    memset(p, 0, sizeof *p);
    p->eps = 0.05;
    p->min_points = 5;
    p->windows = 20;
    p->timeline = 60;
    p->threshold = 0.9;
    p->tolerance = 0.1;
    p->min_stable = 3;
    p->floor_ns = 1000;
}

static int nomem(vt_error *err, const char *what)
{
    snprintf(err->msg, sizeof err->msg, "out of memory (%s)", what);
    return -1;
}

static int io_err(vt_error *err, const char *what)
{
    snprintf(err->msg, sizeof err->msg, "%s: a temporary file failed: %s", what, strerror(errno));
    return -1;
}

/* ------------------------------------------------------------------ call-site keys */

typedef struct keytab {
    char **str;      /* by key id */
    vt_cl_key *keys; /* by key id */
    size_t n, cap;
    uint32_t *slots; /* open addressing: key id + 1, 0 empty */
    size_t nslots;
} keytab;

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The id of the key named S (LEN bytes, may hold NULs), added with K when new. */
static int key_intern(keytab *kt, const char *s, size_t len, const vt_cl_key *k, uint32_t *id)
{
    if ((kt->n + 1) * 2 > kt->nslots) {
        size_t ns = kt->nslots ? 2 * kt->nslots : 64;
        uint32_t *sl = calloc(ns, sizeof *sl);
        if (!sl)
            return -1;
        for (size_t i = 0; i < kt->n; i++) {
            size_t l;
            memcpy(&l, kt->str[i], sizeof l);
            size_t j = hash_bytes(kt->str[i] + sizeof l, l) & (ns - 1);
            while (sl[j])
                j = (j + 1) & (ns - 1);
            sl[j] = (uint32_t)i + 1;
        }
        free(kt->slots);
        kt->slots = sl;
        kt->nslots = ns;
    }
    size_t j = hash_bytes(s, len) & (kt->nslots - 1);
    while (kt->slots[j]) {
        const char *o = kt->str[kt->slots[j] - 1];
        size_t l;
        memcpy(&l, o, sizeof l);
        if (l == len && memcmp(o + sizeof l, s, len) == 0) {
            *id = kt->slots[j] - 1;
            return 0;
        }
        j = (j + 1) & (kt->nslots - 1);
    }
    if (kt->n == kt->cap) {
        size_t nc = kt->cap ? 2 * kt->cap : 16;
        char **ns = realloc(kt->str, nc * sizeof *ns);
        if (!ns)
            return -1;
        kt->str = ns;
        vt_cl_key *nk = realloc(kt->keys, nc * sizeof *nk);
        if (!nk)
            return -1;
        kt->keys = nk;
        kt->cap = nc;
    }
    char *c = malloc(sizeof len + len);
    if (!c)
        return -1;
    memcpy(c, &len, sizeof len);
    memcpy(c + sizeof len, s, len);
    kt->str[kt->n] = c;
    kt->keys[kt->n] = *k;
    kt->slots[j] = (uint32_t)kt->n + 1;
    *id = (uint32_t)kt->n++;
    return 0;
}

static void keytab_free(keytab *kt)
{
    for (size_t i = 0; i < kt->n; i++)
        free(kt->str[i]);
    free(kt->str);
    free(kt->slots);
    free(kt->keys);
}

/* Per rank: call-site index -> key, function id -> key (UINT32_MAX: not yet). */
typedef struct rankmap {
    uint32_t *cs, *fn;
    uint32_t unknown;
} rankmap;

static int key_of(const vt_trace *t, uint32_t rank, keytab *kt, rankmap *rm, int64_t cs, int64_t fn, uint32_t *id)
{
    const vt_rank *rk = vt_trace_rank(t, rank);
    vt_cl_key k = {rank, -1, -1};
    if (cs >= 0 && (size_t)cs < rk->ncallsites) {
        if (rm->cs[cs] != UINT32_MAX) {
            *id = rm->cs[cs];
            return 0;
        }
        const vt_callsite *c = &rk->callsites[cs];
        /* the same instruction on every rank: module and offset (addresses differ
         * with address-space randomisation), the address when the module is unknown */
        size_t ml = *c->module ? strlen(c->module) : 0, len = 1 + ml + 1 + 16;
        char *s = malloc(len + 1);
        if (!s)
            return -1;
        if (ml)
            len = (size_t)snprintf(s, len + 1, "s%s%c%016llx", c->module, 0, (unsigned long long)c->offset);
        else
            len = (size_t)snprintf(s, len + 1, "a%016llx", (unsigned long long)c->address);
        k.callsite = cs;
        k.fn = fn;
        int rc = key_intern(kt, s, len, &k, id);
        free(s);
        if (rc)
            return -1;
        rm->cs[cs] = *id;
        return 0;
    }
    if (fn >= 0 && (size_t)fn < rk->nfuncs) {
        if (rm->fn[fn] != UINT32_MAX) {
            *id = rm->fn[fn];
            return 0;
        }
        const char *name = rk->funcs[fn].name;
        size_t len = 1 + strlen(name);
        char *s = malloc(len + 1);
        if (!s)
            return -1;
        snprintf(s, len + 1, "f%s", name);
        k.fn = fn;
        int rc = key_intern(kt, s, len, &k, id);
        free(s);
        if (rc)
            return -1;
        rm->fn[fn] = *id;
        return 0;
    }
    if (rm->unknown == UINT32_MAX && key_intern(kt, "?", 1, &k, &rm->unknown))
        return -1;
    *id = rm->unknown;
    return 0;
}

/* ------------------------------------------------------------------ reading */

/* MARKER kinds (doc/format.md): an iteration starts; detail suspended from here (a
 * scaled trace: the gap to the next record holds unrecorded calls, it is no burst). */
#define MARK_ITERATION 1
#define MARK_SUSPEND 3

/* log10 of the duration, clamped below at FLOOR ns: timer-resolution bursts (10, 20, 30
 * ns apart by factors of 2) would otherwise make one meaningless cluster each. */
static double feature(int64_t dur, uint32_t floor_ns)
{
    double f = floor_ns > 1 ? (double)floor_ns : 1.0;
    return log10((double)dur > f ? (double)dur : f);
}

/* Where the bursts go as they are read: a temporary file in rank and time order (their
 * index), and their points keyed by call site for the clustering; the totals. */
typedef struct sink {
    vt_spill B, E;
    uint32_t floor_ns;
    vt_cl_result *r;
} sink;

static int bpush(sink *s, const vt_cl_burst *x)
{
    vt_cl_result *r = s->r;
    vt__cl_ent e = {feature(x->dur, s->floor_ns), x->key, x->dur, (uint32_t)s->B.n, -1};
    if (!s->B.n || x->start < r->t0)
        r->t0 = x->start;
    if (!s->B.n || x->start + x->dur > r->t1)
        r->t1 = x->start + x->dur;
    r->time += x->dur;
    return vt_spill_put(&s->B, x) || vt_spill_put(&s->E, &e) ? -1 : 0;
}

typedef struct marker {
    uint32_t rank;
    int64_t time;
} marker;

typedef struct mvec {
    marker *v;
    size_t n, cap;
} mvec;

static int mpush(mvec *m, uint32_t rank, int64_t time)
{
    if (m->n == m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 256;
        marker *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        m->v = nv;
        m->cap = nc;
    }
    m->v[m->n++] = (marker){rank, time};
    return 0;
}

/* Every burst of RANK: in a full trace the gap between consecutive call records (buffer
 * flushes inside it subtracted), in a reduced trace the CAND records of bursts. The
 * burst before a rank's first call (sequence number 0) has no start and is left out. */
static int read_rank(const vt_trace *t, uint32_t rank, const vt_cl_params *p, keytab *kt, sink *b, mvec *mk,
                     uint64_t *seen, vt_error *err)
{
    const vt_rank *rk = vt_trace_rank(t, rank);
    rankmap rm = {calloc(rk->ncallsites ? rk->ncallsites : 1, sizeof(uint32_t)),
                  calloc(rk->nfuncs ? rk->nfuncs : 1, sizeof(uint32_t)), UINT32_MAX};
    vt_cursor *c = NULL;
    int rc = -1, got;
    if (!rm.cs || !rm.fn) {
        nomem(err, "call-site map");
        goto out;
    }
    memset(rm.cs, 0xff, (rk->ncallsites ? rk->ncallsites : 1) * sizeof(uint32_t));
    memset(rm.fn, 0xff, (rk->nfuncs ? rk->nfuncs : 1) * sizeof(uint32_t));
    if (vt_cursor_open(t, rank, &c, err))
        goto out;
    int reduced = rk->reduced;
    int64_t prev_exit = 0, flush = 0;
    int have_prev = 0;
    for (;;) {
        vt_cl_burst x = {0, 0, rank, 0, 0, 0};
        if (reduced) {
            vt_rrec rr;
            got = vt_cursor_next_reduced(c, &rr, err);
            if (got <= 0)
                break;
            if (++*seen % 65536 == 0 && p->progress)
                p->progress(p->progress_arg, *seen);
            if (rr.kind != VT_RREC_CAND || rr.fn >= 0 || rr.seq == 0)
                continue;
            x.start = vt_global_time(t, rank, rr.enter);
            x.dur = rr.exit - rr.enter;
            if (key_of(t, rank, kt, &rm, rr.callsite, -1, &x.key)) {
                nomem(err, "call-site keys");
                goto out;
            }
        } else {
            vt_event ev;
            got = vt_cursor_next(c, &ev, err);
            if (got <= 0)
                break;
            if (++*seen % 65536 == 0 && p->progress)
                p->progress(p->progress_arg, *seen);
            if (ev.fn < 0) {
                if (ev.code == VT_CODE_FLUSH && have_prev)
                    flush += ev.exit - ev.enter;
                else if (ev.code == VT_CODE_MARKER && ev.marker_kind == MARK_ITERATION &&
                         mpush(mk, rank, vt_global_time(t, rank, ev.enter))) {
                    nomem(err, "markers");
                    goto out;
                } else if (ev.code == VT_CODE_MARKER && ev.marker_kind == MARK_SUSPEND) {
                    have_prev = 0; /* the calls up to the next record were not recorded */
                }
                continue;
            }
            int had = have_prev;
            int64_t start = prev_exit, fl = flush;
            prev_exit = ev.exit;
            have_prev = 1;
            flush = 0;
            if (!had)
                continue;
            x.start = vt_global_time(t, rank, start);
            x.dur = ev.enter - start - fl;
            if (key_of(t, rank, kt, &rm, ev.callsite, ev.fn, &x.key)) {
                nomem(err, "call-site keys");
                goto out;
            }
        }
        if (x.dur < 0)
            x.dur = 0;
        if (bpush(b, &x)) {
            io_err(err, "bursts");
            goto out;
        }
    }
    if (got == 0)
        rc = 0;
out:
    vt_cursor_close(c);
    free(rm.cs);
    free(rm.fn);
    return rc;
}

/* ------------------------------------------------------------------ the analysis */

typedef struct tcl { /* a cluster while building */
    uint32_t key;
    uint64_t bursts;
    int64_t time, min, max;
    double sum2;
    uint32_t id;
} tcl;

static int tcl_cmp(const void *a, const void *b)
{
    const tcl *x = *(const tcl *const *)a, *y = *(const tcl *const *)b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->min < y->min ? -1 : x->min > y->min;
}

typedef struct wcl { /* a cluster of a stability window */
    uint32_t key, n;
    double lo, hi;
    int64_t time;
} wcl;

static int64_t window_of(int64_t t, int64_t t0, int64_t width, uint32_t n)
{
    if (t <= t0)
        return 0;
    int64_t w = (t - t0) / width;
    return w >= (int64_t)n ? (int64_t)n - 1 : w;
}

/* A burst's label, by burst index. */
typedef struct lab {
    uint32_t idx;
    int32_t label;
} lab;

static int lab_cmp(const void *a, const void *b)
{
    const lab *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The state of the whole analysis: the bursts (B), their labels of the clustering by
 * call site (Ls, in burst order), the clusters. */
typedef struct run {
    vt_cl_result *r;
    const vt_cl_params *p;
    vt_error *err;
    sink in;
    vt_spill L, Ls, E2;
    tcl *tc;
    uint32_t ncl;
    uint32_t *lid; /* label -> cluster id */
    wcl *wc;
    size_t *wfirst;
    size_t nk;
} run;

static int g_start(void *arg, uint32_t ncl)
{
    run *R = arg;
    R->ncl = ncl;
    R->tc = calloc(ncl ? ncl : 1, sizeof *R->tc);
    return R->tc ? 0 : nomem(R->err, "clusters");
}

static int g_point(void *arg, const vt__cl_ent *e)
{
    run *R = arg;
    vt_cl_result *r = R->r;
    lab l = {e->idx, e->label};
    if (vt_spill_put(&R->L, &l))
        return io_err(R->err, "cluster labels");
    if (e->label < 0) {
        r->noise++;
        r->noise_time += e->dur;
        return 0;
    }
    tcl *c = &R->tc[e->label];
    if (!c->bursts || e->dur < c->min)
        c->min = e->dur;
    if (!c->bursts || e->dur > c->max)
        c->max = e->dur;
    c->key = (uint32_t)e->group;
    c->bursts++;
    c->time += e->dur;
    c->sum2 += (double)e->dur * (double)e->dur;
    return 0;
}

/* The clusters by call site, numbered by computation time; then the labels in burst
 * order. */
static int global_clusters(run *R)
{
    vt_cl_result *r = R->r;
    const vt_cl_params *p = R->p;
    if (vt_spill_open(&R->L, sizeof(lab)))
        return io_err(R->err, "cluster labels");
    vt__cl_visit v = {R, g_start, g_point};
    int rc = vt__cl_dbscan(&R->in.E, p->eps, p->min_points, &v);
    if (rc)
        return rc > 0 || !*R->err->msg ? io_err(R->err, "clustering") : -1;
    if (vt_spill_sort(&R->L, &R->Ls, lab_cmp, 0))
        return io_err(R->err, "cluster labels");
    uint32_t ncl = R->ncl;
    tcl **order = calloc(ncl ? ncl : 1, sizeof *order);
    r->clusters = calloc(ncl ? ncl : 1, sizeof *r->clusters);
    R->lid = malloc((ncl ? ncl : 1) * sizeof *R->lid);
    if (!order || !r->clusters || !R->lid) {
        free(order);
        return nomem(R->err, "clusters");
    }
    for (uint32_t i = 0; i < ncl; i++)
        order[i] = &R->tc[i];
    vt_sort(order, ncl, sizeof *order, tcl_cmp);
    r->nclusters = ncl;
    for (uint32_t i = 0; i < ncl; i++) {
        tcl *c = order[i];
        c->id = i + 1;
        vt_cl_cluster *o = &r->clusters[i];
        o->id = i + 1;
        o->key = c->key;
        o->bursts = c->bursts;
        o->time = c->time;
        o->min = c->min;
        o->max = c->max;
        o->mean = (double)c->time / (double)c->bursts;
        double var = c->sum2 / (double)c->bursts - o->mean * o->mean;
        o->stddev = var > 0 ? sqrt(var) : 0;
    }
    for (uint32_t i = 0; i < ncl; i++)
        R->lid[i] = R->tc[i].id;
    free(order);
    return 0;
}

/* Burst I with its cluster. */
static int burst_at(run *R, uint64_t i, vt_cl_burst *b)
{
    lab l;
    if (vt_spill_get(&R->in.B, i, b, 0) || vt_spill_get(&R->Ls, i, &l, 0))
        return io_err(R->err, "bursts");
    b->cluster = l.label < 0 ? 0 : (int32_t)R->lid[l.label];
    return 0;
}

/* Per rank and timeline window, the cluster with the most computation time (a burst's
 * time split over the windows it spans). A rank's bursts follow each other, so the
 * windows they touch never go back: one accumulator per cluster, cleared as a window
 * ends (only the touched entries). */
typedef struct tline {
    vt_cl_result *r;
    uint32_t W;
    int64_t *acc;
    uint32_t *touched;
    uint8_t *in;
    size_t ntouched;
    int64_t cur;
    uint32_t currank;
} tline;

static int tl_init(tline *s, vt_cl_result *r, const vt_cl_params *p, vt_error *err)
{
    uint32_t W = p->timeline, C = (uint32_t)r->nclusters + 1;
    *s = (tline){.r = r, .W = W, .cur = -1};
    r->ntimeline = W;
    int64_t span = r->t1 - r->t0;
    r->tl_width = span > 0 ? (span + W - 1) / W : 1;
    r->dominant = malloc((size_t)r->nranks * W * sizeof *r->dominant + 1);
    s->acc = calloc(C, sizeof *s->acc);
    s->touched = malloc(C * sizeof *s->touched);
    s->in = calloc(C, 1);
    if (!r->dominant || !s->acc || !s->touched || !s->in)
        return nomem(err, "timeline");
    for (size_t i = 0; i < (size_t)r->nranks * W; i++)
        r->dominant[i] = -1;
    return 0;
}

static void tl_flush(tline *s)
{
    if (s->cur >= 0) {
        int32_t best = -1;
        int64_t bt = 0;
        for (size_t k = 0; k < s->ntouched; k++) {
            uint32_t c = s->touched[k];
            if (s->acc[c] > bt || (s->acc[c] == bt && bt > 0 && (int32_t)c < best))
                best = (int32_t)c, bt = s->acc[c];
            s->acc[c] = 0;
            s->in[c] = 0;
        }
        s->r->dominant[(size_t)s->currank * s->W + (size_t)s->cur] = best;
    }
    s->ntouched = 0;
}

static void tl_burst(tline *s, const vt_cl_burst *b)
{
    const vt_cl_result *r = s->r;
    uint32_t W = s->W;
    if (b->rank != s->currank) {
        tl_flush(s);
        s->cur = -1;
        s->currank = b->rank;
    }
    int64_t st = b->start, e = b->start + b->dur;
    for (int64_t w = window_of(st, r->t0, r->tl_width, W);; w++) {
        int64_t ws = r->t0 + w * r->tl_width, we = ws + r->tl_width;
        if (w != s->cur) {
            tl_flush(s);
            s->cur = w;
        }
        int64_t hi = e < we || w == (int64_t)W - 1 ? e : we, ov = hi - (st > ws ? st : ws);
        uint32_t c = (uint32_t)b->cluster;
        if (!s->in[c]) {
            s->in[c] = 1;
            s->touched[s->ntouched++] = c;
        }
        if (ov > 0)
            s->acc[c] += ov;
        if (e <= we || w == (int64_t)W - 1)
            break;
    }
}

static void tl_free(tline *s)
{
    free(s->acc);
    free(s->touched);
    free(s->in);
}

/* One pass over the bursts with their clusters: the ranks of each cluster, the
 * timeline, and the points of the stability windows (E2). */
static int by_burst(run *R)
{
    vt_cl_result *r = R->r;
    const vt_cl_params *p = R->p;
    uint32_t W = p->windows;
    int64_t span = r->t1 - r->t0, width = span > 0 ? (span + W - 1) / W : 1;
    r->nwindows = W;
    r->windows = calloc(W, sizeof *r->windows);
    uint32_t *lastrank = malloc((r->nclusters ? r->nclusters : 1) * sizeof *lastrank);
    tline tl;
    int rc = -1;
    if (tl_init(&tl, r, p, R->err))
        goto out;
    if (!r->windows || !lastrank) {
        nomem(R->err, "windows");
        goto out;
    }
    if (vt_spill_open(&R->E2, sizeof(vt__cl_ent))) {
        io_err(R->err, "windows");
        goto out;
    }
    for (uint32_t w = 0; w < W; w++) {
        r->windows[w].start = r->t0 + (int64_t)w * width;
        r->windows[w].end = w + 1 == W ? r->t1 : r->t0 + (int64_t)(w + 1) * width;
    }
    for (size_t c = 0; c < r->nclusters; c++)
        lastrank[c] = UINT32_MAX;
    for (size_t i = 0; i < r->nbursts; i++) {
        vt_cl_burst b;
        if (burst_at(R, i, &b))
            goto out;
        if (b.cluster > 0 && lastrank[b.cluster - 1] != b.rank) {
            lastrank[b.cluster - 1] = b.rank;
            r->clusters[b.cluster - 1].ranks++;
        }
        tl_burst(&tl, &b);
        uint64_t w = (uint64_t)window_of(b.start, r->t0, width, W);
        vt__cl_ent e = {feature(b.dur, p->floor_ns), w * R->nk + b.key, b.dur, (uint32_t)i, -1};
        if (vt_spill_put(&R->E2, &e)) {
            io_err(R->err, "windows");
            goto out;
        }
        r->windows[w].bursts++;
        r->windows[w].time += b.dur;
    }
    tl_flush(&tl);
    rc = 0;
out:
    tl_free(&tl);
    free(lastrank);
    return rc;
}

static int s_start(void *arg, uint32_t ncl)
{
    run *R = arg;
    R->wc = calloc(ncl ? ncl : 1, sizeof *R->wc);
    R->wfirst = calloc(R->p->windows + 1, sizeof *R->wfirst); /* clusters of window w: [wfirst[w], wfirst[w+1]) */
    return R->wc && R->wfirst ? 0 : nomem(R->err, "window clusters");
}

/* labels grow with (window, key, x): cluster k's window is nondecreasing in k */
static int s_point(void *arg, const vt__cl_ent *e)
{
    run *R = arg;
    uint32_t w = (uint32_t)(e->group / R->nk);
    if (e->label < 0) {
        R->r->windows[w].noise++;
        return 0;
    }
    wcl *c = &R->wc[e->label];
    if (!c->n++) {
        c->lo = c->hi = e->x;
        R->wfirst[w + 1]++;
    }
    c->key = (uint32_t)(e->group % R->nk);
    c->lo = e->x < c->lo ? e->x : c->lo;
    c->hi = e->x > c->hi ? e->x : c->hi;
    c->time += e->dur;
    return 0;
}

/* Iterations in the region: the lowest rank with bursts there, from its markers or the
 * period of its bursts' (call site, cluster) sequence. */
static int iterations(run *R, const mvec *mk)
{
    vt_cl_result *r = R->r;
    vt_cl_region *g = &r->region;
    size_t n = r->nbursts, i0 = 0;
    vt_cl_burst b;
    for (; i0 < n; i0++) {
        if (burst_at(R, i0, &b))
            return -1;
        if (b.start >= g->start && b.start < g->end)
            break;
    }
    if (i0 == n)
        return 0;
    g->iter_rank = b.rank;
    uint64_t nm = 0;
    for (size_t m = 0; m < mk->n; m++)
        if (mk->v[m].rank == g->iter_rank && mk->v[m].time >= g->start && mk->v[m].time < g->end)
            nm++;
    if (nm) {
        g->iter_source = 1;
        g->iterations = nm;
        return 0;
    }
    vt_dpd d;
    if (vt_dpd_init(&d, 16, 256))
        return nomem(R->err, "period detector");
    uint64_t cnt = 0;
    uint32_t period = 0;
    for (size_t i = i0; i < n; i++) {
        if (burst_at(R, i, &b)) {
            vt_dpd_free(&d);
            return -1;
        }
        if (b.rank != g->iter_rank)
            break;
        if (b.start < g->start || b.start >= g->end)
            continue;
        uint32_t pp = vt_dpd_push(&d, b.key * 2654435761u ^ (uint32_t)b.cluster);
        cnt++;
        if (pp)
            period = pp;
    }
    vt_dpd_free(&d);
    if (period && cnt / period >= 2) {
        g->iter_source = 2;
        g->period = period;
        g->iterations = cnt / period;
    }
    return 0;
}

static int stability(run *R, const mvec *mk)
{
    vt_cl_result *r = R->r;
    const vt_cl_params *p = R->p;
    uint32_t W = p->windows;
    vt__cl_visit v = {R, s_start, s_point};
    int rc = vt__cl_dbscan(&R->E2, p->eps, p->min_points, &v);
    if (rc)
        return rc > 0 || !*R->err->msg ? io_err(R->err, "window clusters") : -1;
    wcl *wc = R->wc;
    size_t *wfirst = R->wfirst;
    for (uint32_t w = 0; w < W; w++) {
        r->windows[w].clusters = (uint32_t)wfirst[w + 1];
        wfirst[w + 1] += wfirst[w];
    }
    double tol = log10(1 + p->tolerance);
    for (uint32_t w = 1; w < W; w++) {
        vt_cl_window *win = &r->windows[w];
        size_t j = wfirst[w - 1];
        for (size_t a = wfirst[w]; a < wfirst[w + 1]; a++) {
            while (j < wfirst[w] && wc[j].key < wc[a].key)
                j++;
            for (size_t b = j; b < wfirst[w] && wc[b].key == wc[a].key; b++) {
                if (wc[a].lo - tol <= wc[b].hi && wc[b].lo <= wc[a].hi + tol) {
                    win->matched += wc[a].time;
                    break;
                }
            }
        }
        win->stable = win->time > 0 && (double)win->matched > p->threshold * (double)win->time;
    }

    /* the representative region: the first run of min_stable stable windows */
    vt_cl_region *g = &r->region;
    for (uint32_t w = 0; w < W;) {
        if (!r->windows[w].stable) {
            w++;
            continue;
        }
        uint32_t a = w;
        while (w < W && r->windows[w].stable)
            w++;
        uint32_t len = w - a;
        if (len > g->longest)
            g->longest = len, g->longest_first = a;
        if (!g->found && len >= p->min_stable) {
            g->found = 1;
            g->first = a;
            g->last = a + p->min_stable - 1;
            g->stretch_last = w - 1;
            g->start = r->windows[a].start;
            g->end = r->windows[g->last].end;
        }
    }
    return g->found ? iterations(R, mk) : 0;
}

int vt_clusters_run(const vt_trace *t, const vt_cl_params *p, vt_cl_result *r, vt_error *err)
{
    memset(r, 0, sizeof *r);
    r->nranks = vt_trace_nranks(t);
    r->reduced = vt_trace_is_reduced(t);
    keytab kt = {0};
    mvec mk = {0};
    run R = {.r = r, .p = p, .err = err, .in = {.floor_ns = p->floor_ns, .r = r}};
    R.in.B.fd = R.in.E.fd = R.L.fd = R.Ls.fd = R.E2.fd = -1;
    int rc = -1;
    uint64_t seen = 0;
    *err->msg = 0;
    if (vt_spill_open(&R.in.B, sizeof(vt_cl_burst)) || vt_spill_open(&R.in.E, sizeof(vt__cl_ent))) {
        io_err(err, "bursts");
        goto out;
    }
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        if (read_rank(t, rank, p, &kt, &R.in, &mk, &seen, err))
            goto out;
    if (R.in.B.n > UINT32_MAX) {
        snprintf(err->msg, sizeof err->msg, "%llu bursts: more than 2^32 are not supported",
                 (unsigned long long)R.in.B.n);
        goto out;
    }
    r->nbursts = (size_t)R.in.B.n;
    r->keys = kt.keys;
    r->nkeys = kt.n;
    kt.keys = NULL;
    R.nk = r->nkeys ? r->nkeys : 1;
    if (global_clusters(&R) || by_burst(&R) || stability(&R, &mk))
        goto out;
    rc = 0;
out:
    vt_spill_close(&R.in.B);
    vt_spill_close(&R.in.E);
    vt_spill_close(&R.L);
    vt_spill_close(&R.Ls);
    vt_spill_close(&R.E2);
    free(R.tc);
    free(R.lid);
    free(R.wc);
    free(R.wfirst);
    free(mk.v);
    keytab_free(&kt);
    if (rc)
        vt_clusters_free(r);
    return rc;
}

void vt_clusters_free(vt_cl_result *r)
{
    free(r->keys);
    free(r->clusters);
    free(r->dominant);
    free(r->windows);
    memset(r, 0, sizeof *r);
}
