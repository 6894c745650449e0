/* Clustering of computation bursts and their stability over time (clusters.h). */
#include "vt_config.h"
#include "analysis/clusters.h"
#include "util/codec.h"
#include "util/dpd.h"
#include "util/sort.h"

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

typedef struct bvec {
    vt_cl_burst *v;
    size_t n, cap;
} bvec;

static int bpush(bvec *b, const vt_cl_burst *x)
{
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap + b->cap / 2 : 4096;
        vt_cl_burst *nv = realloc(b->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        b->v = nv;
        b->cap = nc;
    }
    b->v[b->n++] = *x;
    return 0;
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
static int read_rank(const vt_trace *t, uint32_t rank, const vt_cl_params *p, keytab *kt, bvec *b, mvec *mk,
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
            nomem(err, "bursts");
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

/* ------------------------------------------------------------------ DBSCAN in 1-D */

typedef struct ent {
    double x;       /* log10(duration ns) */
    uint64_t group; /* key, or window * nkeys + key */
    uint32_t idx;   /* burst */
    int32_t label;  /* -1 noise, 0.. cluster of the group */
} ent;

static int ent_cmp(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->x != y->x)
        return x->x < y->x ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* log10 of the duration, clamped below at FLOOR ns: timer-resolution bursts (10, 20, 30
 * ns apart by factors of 2) would otherwise make one meaningless cluster each. */
static double feature(int64_t dur, uint32_t floor_ns)
{
    double f = floor_ns > 1 ? (double)floor_ns : 1.0;
    return log10((double)dur > f ? (double)dur : f);
}

/* Exact DBSCAN on E[0..n) sorted by x; CORE: n bytes of scratch. Returns the number of
 * clusters; labels -1 noise. */
static uint32_t dbscan(ent *e, size_t n, double eps, uint32_t minpts, uint8_t *core)
{
    size_t lo = 0, hi = 0;
    int64_t c = -1;
    double last = 0;
    for (size_t i = 0; i < n; i++) {
        while (e[i].x - e[lo].x > eps)
            lo++;
        if (hi < i + 1)
            hi = i + 1;
        while (hi < n && e[hi].x - e[i].x <= eps)
            hi++;
        core[i] = hi - lo >= minpts;
        e[i].label = -1;
        if (core[i]) {
            if (c < 0 || e[i].x - last > eps)
                c++;
            e[i].label = (int32_t)c;
            last = e[i].x;
        }
    }
    /* border points: the nearest core point within eps (the left one on a tie); the
     * non-core points between two consecutive core points L and R (or before the first,
     * after the last) are visited once */
    int64_t left = -1;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !core[i])
            continue;
        for (size_t k = (size_t)(left + 1); k < i; k++) {
            double dl = left >= 0 ? e[k].x - e[left].x : eps + 1, dr = i < n ? e[i].x - e[k].x : eps + 1;
            if (dl <= eps && dl <= dr)
                e[k].label = e[left].label;
            else if (dr <= eps)
                e[k].label = e[i].label;
        }
        left = (int64_t)i;
    }
    return (uint32_t)(c + 1);
}

/* Runs DBSCAN on every group of E (sorted by group, x); labels are numbered across the
 * groups in their order (*ncl in all). */
static void dbscan_groups(ent *e, size_t n, const vt_cl_params *p, uint8_t *core, uint32_t *ncl)
{
    uint32_t base = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && e[b].group == e[a].group)
            b++;
        uint32_t k = dbscan(e + a, b - a, p->eps, p->min_points, core + a);
        for (size_t i = a; i < b; i++)
            if (e[i].label >= 0)
                e[i].label += (int32_t)base;
        base += k;
        a = b;
    }
    *ncl = base;
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

static int global_clusters(vt_cl_result *r, const vt_cl_params *p, ent *e, uint8_t *core, vt_error *err)
{
    size_t n = r->nbursts;
    for (size_t i = 0; i < n; i++)
        e[i] = (ent){feature(r->bursts[i].dur, p->floor_ns), r->bursts[i].key, (uint32_t)i, -1};
    vt_sort(e, n, sizeof *e, ent_cmp);
    uint32_t ncl;
    dbscan_groups(e, n, p, core, &ncl);
    tcl *tc = calloc(ncl ? ncl : 1, sizeof *tc);
    tcl **order = calloc(ncl ? ncl : 1, sizeof *order);
    if (!tc || !order) {
        free(tc);
        free(order);
        return nomem(err, "clusters");
    }
    for (size_t i = 0; i < n; i++) {
        const vt_cl_burst *bu = &r->bursts[e[i].idx];
        if (e[i].label < 0) {
            r->noise++;
            r->noise_time += bu->dur;
            continue;
        }
        tcl *c = &tc[e[i].label];
        if (!c->bursts || bu->dur < c->min)
            c->min = bu->dur;
        if (!c->bursts || bu->dur > c->max)
            c->max = bu->dur;
        c->key = bu->key;
        c->bursts++;
        c->time += bu->dur;
        c->sum2 += (double)bu->dur * (double)bu->dur;
    }
    for (uint32_t i = 0; i < ncl; i++)
        order[i] = &tc[i];
    vt_sort(order, ncl, sizeof *order, tcl_cmp);
    r->clusters = calloc(ncl ? ncl : 1, sizeof *r->clusters);
    uint32_t *lastrank = malloc((ncl ? ncl : 1) * sizeof *lastrank);
    if (!r->clusters || !lastrank) {
        free(tc);
        free(order);
        free(lastrank);
        return nomem(err, "clusters");
    }
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
        lastrank[i] = UINT32_MAX;
    }
    for (size_t i = 0; i < n; i++)
        r->bursts[e[i].idx].cluster = e[i].label < 0 ? 0 : (int32_t)tc[e[i].label].id;
    for (size_t i = 0; i < n; i++) {
        int32_t c = r->bursts[i].cluster;
        if (c > 0 && lastrank[c - 1] != r->bursts[i].rank) {
            lastrank[c - 1] = r->bursts[i].rank;
            r->clusters[c - 1].ranks++;
        }
    }
    free(lastrank);
    free(tc);
    free(order);
    return 0;
}

/* Per rank and timeline window, the cluster with the most computation time (a burst's
 * time split over the windows it spans). A rank's bursts follow each other, so the
 * windows they touch never go back: one accumulator per cluster, cleared as a window
 * ends (only the touched entries). */
static int timeline(vt_cl_result *r, const vt_cl_params *p, vt_error *err)
{
    uint32_t W = p->timeline, C = (uint32_t)r->nclusters + 1;
    r->ntimeline = W;
    int64_t span = r->t1 - r->t0;
    r->tl_width = span > 0 ? (span + W - 1) / W : 1;
    r->dominant = malloc((size_t)r->nranks * W * sizeof *r->dominant + 1);
    int64_t *acc = calloc(C, sizeof *acc);
    uint32_t *touched = malloc(C * sizeof *touched);
    uint8_t *in = calloc(C, 1);
    if (!r->dominant || !acc || !touched || !in) {
        free(acc);
        free(touched);
        free(in);
        return nomem(err, "timeline");
    }
    for (size_t i = 0; i < (size_t)r->nranks * W; i++)
        r->dominant[i] = -1;
    size_t ntouched = 0;
    int64_t cur = -1;
    uint32_t currank = 0;
#define FLUSH_WINDOW()                                                                                                 \
    do {                                                                                                               \
        if (cur >= 0) {                                                                                                \
            int32_t best = -1;                                                                                         \
            int64_t bt = 0;                                                                                            \
            for (size_t k = 0; k < ntouched; k++) {                                                                    \
                uint32_t c = touched[k];                                                                               \
                if (acc[c] > bt || (acc[c] == bt && bt > 0 && (int32_t)c < best))                                      \
                    best = (int32_t)c, bt = acc[c];                                                                    \
                acc[c] = 0;                                                                                            \
                in[c] = 0;                                                                                             \
            }                                                                                                          \
            r->dominant[(size_t)currank * W + (size_t)cur] = best;                                                    \
        }                                                                                                              \
        ntouched = 0;                                                                                                  \
    } while (0)
    for (size_t i = 0; i < r->nbursts; i++) {
        const vt_cl_burst *b = &r->bursts[i];
        if (b->rank != currank) {
            FLUSH_WINDOW();
            cur = -1;
            currank = b->rank;
        }
        int64_t s = b->start, e = b->start + b->dur;
        for (int64_t w = window_of(s, r->t0, r->tl_width, W);; w++) {
            int64_t ws = r->t0 + w * r->tl_width, we = ws + r->tl_width;
            if (w != cur) {
                FLUSH_WINDOW();
                cur = w;
            }
            int64_t hi = e < we || w == (int64_t)W - 1 ? e : we, ov = hi - (s > ws ? s : ws);
            uint32_t c = (uint32_t)b->cluster;
            if (!in[c]) {
                in[c] = 1;
                touched[ntouched++] = c;
            }
            if (ov > 0)
                acc[c] += ov;
            if (e <= we || w == (int64_t)W - 1)
                break;
        }
    }
    FLUSH_WINDOW();
#undef FLUSH_WINDOW
    free(acc);
    free(touched);
    free(in);
    return 0;
}

static int stability(vt_cl_result *r, const vt_cl_params *p, const mvec *mk, ent *e, uint8_t *core, vt_error *err)
{
    uint32_t W = p->windows;
    size_t n = r->nbursts, nk = r->nkeys ? r->nkeys : 1;
    int64_t span = r->t1 - r->t0, width = span > 0 ? (span + W - 1) / W : 1;
    r->nwindows = W;
    r->windows = calloc(W, sizeof *r->windows);
    if (!r->windows)
        return nomem(err, "windows");
    for (uint32_t w = 0; w < W; w++) {
        r->windows[w].start = r->t0 + (int64_t)w * width;
        r->windows[w].end = w + 1 == W ? r->t1 : r->t0 + (int64_t)(w + 1) * width;
    }
    for (size_t i = 0; i < n; i++) {
        const vt_cl_burst *b = &r->bursts[i];
        uint64_t w = (uint64_t)window_of(b->start, r->t0, width, W);
        e[i] = (ent){feature(b->dur, p->floor_ns), w * nk + b->key, (uint32_t)i, -1};
        r->windows[w].bursts++;
        r->windows[w].time += b->dur;
    }
    vt_sort(e, n, sizeof *e, ent_cmp);
    uint32_t ncl;
    dbscan_groups(e, n, p, core, &ncl);
    wcl *wc = calloc(ncl ? ncl : 1, sizeof *wc);
    size_t *wfirst = calloc(W + 1, sizeof *wfirst); /* clusters of window w: [wfirst[w], wfirst[w+1]) */
    if (!wc || !wfirst) {
        free(wc);
        free(wfirst);
        return nomem(err, "window clusters");
    }
    /* labels grow with (window, key, x): cluster k's window is nondecreasing in k */
    for (size_t i = 0; i < n; i++) {
        uint32_t w = (uint32_t)(e[i].group / nk);
        if (e[i].label < 0) {
            r->windows[w].noise++;
            continue;
        }
        wcl *c = &wc[e[i].label];
        if (!c->n++) {
            c->lo = c->hi = e[i].x;
            wfirst[w + 1]++;
        }
        c->key = (uint32_t)(e[i].group % nk);
        c->lo = e[i].x < c->lo ? e[i].x : c->lo;
        c->hi = e[i].x > c->hi ? e[i].x : c->hi;
        c->time += r->bursts[e[i].idx].dur;
    }
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
    free(wc);
    free(wfirst);

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
    if (!g->found)
        return 0;

    /* iterations in the region: the lowest rank with bursts there */
    size_t i0 = 0;
    while (i0 < n && (r->bursts[i0].start < g->start || r->bursts[i0].start >= g->end))
        i0++;
    if (i0 == n)
        return 0;
    g->iter_rank = r->bursts[i0].rank;
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
        return nomem(err, "period detector");
    uint64_t cnt = 0;
    uint32_t period = 0;
    for (size_t i = i0; i < n && r->bursts[i].rank == g->iter_rank; i++) {
        const vt_cl_burst *b = &r->bursts[i];
        if (b->start < g->start || b->start >= g->end)
            continue;
        uint32_t pp = vt_dpd_push(&d, b->key * 2654435761u ^ (uint32_t)b->cluster);
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

int vt_clusters_run(const vt_trace *t, const vt_cl_params *p, vt_cl_result *r, vt_error *err)
{
    memset(r, 0, sizeof *r);
    r->nranks = vt_trace_nranks(t);
    r->reduced = vt_trace_is_reduced(t);
    keytab kt = {0};
    bvec b = {0};
    mvec mk = {0};
    ent *e = NULL;
    uint8_t *core = NULL;
    int rc = -1;
    uint64_t seen = 0;
    for (uint32_t rank = 0; rank < r->nranks; rank++)
        if (read_rank(t, rank, p, &kt, &b, &mk, &seen, err))
            goto out;
    if (b.n > UINT32_MAX) {
        snprintf(err->msg, sizeof err->msg, "%zu bursts: more than 2^32 are not supported", b.n);
        goto out;
    }
    r->bursts = b.v;
    r->nbursts = b.n;
    b.v = NULL;
    r->keys = kt.keys;
    r->nkeys = kt.n;
    kt.keys = NULL;
    for (size_t i = 0; i < r->nbursts; i++) {
        const vt_cl_burst *x = &r->bursts[i];
        if (i == 0 || x->start < r->t0)
            r->t0 = x->start;
        if (i == 0 || x->start + x->dur > r->t1)
            r->t1 = x->start + x->dur;
        r->time += x->dur;
    }
    e = malloc((r->nbursts ? r->nbursts : 1) * sizeof *e);
    core = malloc(r->nbursts ? r->nbursts : 1);
    if (!e || !core) {
        nomem(err, "clustering");
        goto out;
    }
    if (global_clusters(r, p, e, core, err) || timeline(r, p, err) || stability(r, p, &mk, e, core, err))
        goto out;
    rc = 0;
out:
    free(e);
    free(core);
    free(b.v);
    free(mk.v);
    keytab_free(&kt);
    if (rc)
        vt_clusters_free(r);
    return rc;
}

void vt_clusters_free(vt_cl_result *r)
{
    free(r->bursts);
    free(r->keys);
    free(r->clusters);
    free(r->dominant);
    free(r->windows);
    memset(r, 0, sizeof *r);
}
