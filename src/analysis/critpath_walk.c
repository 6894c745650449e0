/* Critical path and slack of one scenario (critpath.h): after the replay, one backward
 * sweep over the spilled nodes (critpath_priv.h) walks the path back from the rank that
 * ends last, computes every node's latest end that keeps T' (its slack), and sums the
 * path's time per rank, function and call site. The path's segments go to a third
 * temporary file, last first, and are read back in chronological order. */
#include "vt_config.h"
#include "analysis/critpath_priv.h"
#include "util/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ latest ends in flight */

typedef struct cp_lslot {
    uint32_t key;           /* CP_NONE: empty */
    int64_t v;
} lslot;

typedef cp_lmap lmap;

static size_t lhome(uint32_t k, size_t cap) { return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1); }

static int lmap_grow(lmap *m)
{
    if (2 * (m->n + 1) <= m->cap)
        return 0;
    size_t nc = m->cap ? 2 * m->cap : 1024;
    lslot *ns = malloc(nc * sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < nc; i++)
        ns[i].key = CP_NONE;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->s[i].key == CP_NONE)
            continue;
        size_t j = lhome(m->s[i].key, nc);
        while (ns[j].key != CP_NONE)
            j = (j + 1) & (nc - 1);
        ns[j] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = nc;
    return 0;
}

/* L[k] = min(L[k], v). */
static int lmap_min(lmap *m, uint32_t k, int64_t v)
{
    if (lmap_grow(m))
        return -1;
    size_t j = lhome(k, m->cap);
    while (m->s[j].key != CP_NONE && m->s[j].key != k)
        j = (j + 1) & (m->cap - 1);
    if (m->s[j].key == CP_NONE) {
        m->s[j] = (lslot){k, v};
        m->n++;
    } else if (v < m->s[j].v) {
        m->s[j].v = v;
    }
    return 0;
}

/* Removes and returns L[k]; INT64_MAX when absent. */
static int64_t lmap_take(lmap *m, uint32_t k)
{
    if (!m->cap)
        return INT64_MAX;
    size_t msk = m->cap - 1, i = lhome(k, m->cap);
    while (m->s[i].key != k) {
        if (m->s[i].key == CP_NONE)
            return INT64_MAX;
        i = (i + 1) & msk;
    }
    int64_t v = m->s[i].v;
    m->s[i].key = CP_NONE;
    for (size_t j = (i + 1) & msk; m->s[j].key != CP_NONE; j = (j + 1) & msk) {
        size_t h = lhome(m->s[j].key, m->cap);
        if (((j - h) & msk) >= ((j - i) & msk)) {
            m->s[i] = m->s[j];
            m->s[j].key = CP_NONE;
            i = j;
        }
    }
    m->n--;
    return v;
}

/* ------------------------------------------------------------------ the path's shares */

static size_t ahome(uint64_t a, uint64_t b, size_t cap)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    return (size_t)(x ^ (x >> 29)) & (cap - 1);
}

int vt__cp_agg_add(cp_aggmap *m, uint64_t a, uint64_t b, int64_t ns, uint64_t events)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 64;
        cp_agg *nv = calloc(nc, sizeof *nv);
        if (!nv)
            return -1;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].events)
                continue;
            size_t j = ahome(m->v[i].a, m->v[i].b, nc);
            while (nv[j].events)
                j = (j + 1) & (nc - 1);
            nv[j] = m->v[i];
        }
        free(m->v);
        m->v = nv;
        m->cap = nc;
    }
    size_t j = ahome(a, b, m->cap);
    while (m->v[j].events && (m->v[j].a != a || m->v[j].b != b))
        j = (j + 1) & (m->cap - 1);
    if (!m->v[j].events) {
        m->v[j] = (cp_agg){a, b, 0, 0};
        m->n++;
    }
    m->v[j].ns += ns;
    m->v[j].events += events;
    return 0;
}

/* ------------------------------------------------------------------ the sweep */

static int io_err(vt_error *err)
{
    return vt__cp_err(err, "critical path: temporary file: %s", strerror(errno));
}

/* Whether rank's last event before seq exists (a rank of another process: from the
 * table of every rank's first node, critpath_par.c). */
static int remote_exists(const vt_critpath *cp, uint32_t rank, uint64_t seq)
{
    return cp->first && rank < cp->nranks && cp->first[rank] && cp->first[rank] - 1 < seq;
}

/* One step of the walk back from path node n (index cur): the next node on the path
 * (CP_NONE: the bottom; CP_REMOTE: rank e->from_rank's last event before *rseq, on
 * another process, whose pend e->ns still has to lose), whether it continues the same
 * segment, and otherwise the edge. */
static int walk_step(vt_critpath *cp, const cp_node *n, uint32_t cur, uint32_t *next, uint64_t *rseq, int *same,
                     vt_cp_edge *e, int *ok, vt_error *err)
{
    *next = CP_NONE;
    *same = 0;
    *e = (vt_cp_edge){.to_rank = n->rank, .to_seq = n->seq, .via_rank = n->via_rank, .via_seq = n->via_seq};
    uint32_t rrank = n->via_rank;
    *rseq = n->via_seq;
    switch (n->ck) {
    case CK_NONE: return 0;
    case CK_LOCAL:
    case CK_MSG:
    case CK_SYNC_MSG:
    case CK_SYNC_POST:
        *next = n->crit;
        e->kind = n->ck == CK_MSG ? VT_CP_MESSAGE : VT_CP_SYNC;
        break;
    case CK_GATE: {
        /* The member that arrived last (in predicted time); ties: this rank, then the
         * first member. */
        cp_node g;
        if (vt_spill_get(&cp->nodes, n->crit, &g, 0))
            return io_err(err);
        cp_edge pick = {0};
        int have = 0;
        for (uint64_t k = g.e0; k < g.e0 + g.ne; k++) {
            cp_edge x;
            cp_node p;
            if (vt_spill_get(&cp->edges, k, &x, 0))
                return io_err(err);
            int64_t at = x.w;
            if (x.pred == CP_REMOTE) {
                if (!remote_exists(cp, x.via_rank, x.via_seq))
                    continue;   /* (the serial graph has no such edge) */
            } else {
                if (vt_spill_get(&cp->nodes, x.pred, &p, 0))
                    return io_err(err);
                at += p.pend;
            }
            if (at != g.pend)
                continue;
            if (!have || (x.via_rank == n->rank && pick.via_rank != n->rank)) {
                pick = x;
                have = 1;
            }
        }
        if (!have)
            return 0;   /* the latest member has no event before it: the walk ends */
        *next = pick.pred;
        e->kind = VT_CP_COLLECTIVE;
        e->via_rank = rrank = pick.via_rank;
        e->via_seq = *rseq = pick.via_seq;
        break;
    }
    }
    if (*next == CP_REMOTE) {
        if (!remote_exists(cp, rrank, *rseq)) {
            *next = CP_NONE;   /* as a contributor without an event before it */
            return 0;
        }
        e->from_rank = rrank;
        e->ns = n->low;
        return 0;
    }
    if (*next == CP_NONE)
        return 0;
    if (*next >= cur)
        return vt__cp_err(err, "critical path: internal error: the walk does not go back at %u:%" PRIu64, n->rank,
                          n->seq);
    cp_node p;
    if (vt_spill_get(&cp->nodes, *next, &p, 0))
        return io_err(err);
    int64_t amount = n->low - p.pend;
    if (n->ck == CK_LOCAL ||
        (amount == 0 && p.rank == n->rank && e->via_rank == n->rank && e->via_seq == n->seq)) {
        *same = 1;   /* the same rank, its previous event: no edge */
        if (amount != 0)
            *ok = 0; /* a local continuation must start where the event before ended */
    } else {
        e->from_rank = p.rank;
        e->from_seq = p.seq;
        e->ns = amount;
    }
    return 0;
}

int vt__cp_sweep_begin(vt_critpath *cp, cp_sweep *sw, int64_t start, vt_error *err)
{
    vt_critpath_result *r = &cp->res;
    if (cp->finished)
        return vt__cp_err(err, "critical path: finished twice");
    cp->finished = 1;
    memset(r, 0, sizeof *r);
    r->start = start;
    r->nranks = cp->nranks;
    r->per_rank = calloc(cp->nranks ? cp->nranks : 1, sizeof *r->per_rank);
    if (!r->per_rank)
        return vt__cp_err(err, "critical path: out of memory");
    /* The end: the rank whose last event ends last (here: of this process's). */
    uint32_t top = CP_NONE;
    for (uint32_t k = cp->lo; k < cp->hi; k++) {
        const cp_rank *rv = &cp->ranks[k];
        if (!rv->n)
            continue;
        const cp_ref *last = &cp->win[(size_t)(k - cp->lo) * cp->wsize + ((rv->n - 1) & (cp->wsize - 1))];
        if (top == CP_NONE || last->pend > r->end) {
            top = last->idx;
            r->end = last->pend;
            r->end_rank = k;
        }
    }
    r->length = r->end - start;
    sw->ok = 1;
    sw->cur = top;
    sw->trank = CP_NONE;
    sw->eat = cp->edges.n;
    sw->next = cp->nn;
    return 0;
}

/* Writes the path's record of a segment (the walk's k-th, in first_step until read). */
static int put_seg(vt_critpath *cp, cp_sweep *sw, cp_pathrec *pr)
{
    pr->seg.first_step = (size_t)sw->pathk++;
    cp->res.nsegments++;
    if (pr->has_edge) {
        cp->res.nedges++;
        cp->res.edge_ns += pr->e.ns;
    }
    return vt_spill_put(&cp->path, pr);
}

/* The backward sweep. The latest predicted end of each node that keeps T', over every
 * dependency (not only the critical ones); the slack is that minus its end. Chains
 * end at a rank's last event (which may end at T'); a node without successors
 * otherwise (none in a full trace) is treated as one. The walk back follows the
 * critical predecessors from the top, so it meets its nodes in the sweep's order. */
int vt__cp_sweep(vt_critpath *cp, cp_sweep *sw, uint64_t lo, vt_error *err)
{
    vt_critpath_result *r = &cp->res;
    while (sw->next > lo) {
        uint64_t i = --sw->next;
        cp_node n;
        if (vt_spill_get(&cp->nodes, i, &n, 1))
            goto io;
        int64_t Li = lmap_take(&sw->L, (uint32_t)i);
        if (sw->pending && n.rank != CP_NONE && !(n.flags & NF_GAP)) {
            int64_t v = sw->pending(sw->rarg, n.rank, n.seq, n.pend);
            if (v < Li)
                Li = v;
        }
        if (Li == INT64_MAX)
            Li = r->end;
        if (n.e0 + n.ne != sw->eat)
            return vt__cp_err(err, "critical path: internal error: node %" PRIu64 "'s edges", i);
        for (uint64_t k = n.e0 + n.ne; k-- > n.e0;) {
            cp_edge x;
            if (vt_spill_get(&cp->edges, k, &x, 1))
                goto io;
            if (x.pred == CP_REMOTE) {
                if (!sw->remote || sw->remote(sw->rarg, x.via_rank, x.via_seq, Li - x.w))
                    return vt__cp_err(err, "critical path: out of memory");
            } else if (lmap_min(&sw->L, x.pred, Li - x.w)) {
                goto nomem;
            }
        }
        sw->eat = n.e0;
        if (sw->trank != CP_NONE && n.rank == sw->trank && n.seq < sw->tseq && !(n.flags & NF_GAP)) {
            /* The path comes from another process: its segment's edge starts here. */
            sw->tseg.e.from_seq = n.seq;
            sw->tseg.e.ns -= n.pend;
            if (put_seg(cp, sw, &sw->tseg))
                goto io;
            sw->trank = CP_NONE;
            sw->cur = (uint32_t)i;
        }
        if (n.flags & NF_CAND) {
            vt_cp_cand c = {n.rank, n.seq, n.dur, Li - n.pend, i == sw->cur, n.func};
            if (vt__cp_cand_add(cp, &c, err))
                return -1;
        }
        if (i != sw->cur)
            continue;
        /* A node of the path. */
        if (Li != n.pend)
            sw->ok = 0;
        uint32_t next;
        uint64_t rseq;
        int same, handed = 0;
        vt_cp_edge e;
        if (walk_step(cp, &n, sw->cur, &next, &rseq, &same, &e, &sw->ok, err))
            return -1;
        int64_t ns = n.pend - n.low;
        r->nsteps++;
        r->per_rank[n.rank] += ns;
        if (vt__cp_agg_add(&cp->by_func, (uint64_t)(uintptr_t)n.func, 0, ns, 1) ||
            vt__cp_agg_add(&cp->by_site, n.rank, (uint64_t)n.callsite, ns, 1))
            goto nomem;
        cp_pathrec *seg = &sw->seg;
        if (!sw->inseg) {
            memset(seg, 0, sizeof *seg);
            seg->seg.rank = n.rank;
            seg->seg.last_seq = n.seq;
            seg->seg.end = n.pend;
            sw->segsum = 0;
            sw->inseg = 1;
        }
        seg->seg.first_seq = n.seq;
        seg->seg.start = n.low;
        seg->seg.nsteps++;
        sw->segsum += ns;
        if (!same) {
            /* The segment's first event: it closes (the walk goes backwards). */
            if (sw->segsum != seg->seg.end - seg->seg.start)
                sw->ok = 0;
            r->seg_ns += seg->seg.end - seg->seg.start;
            if (next != CP_NONE) {
                seg->e = e;
                seg->has_edge = 1;
            }
            if (next == CP_REMOTE) {
                seg->seg.first_step = (size_t)sw->pathk;
                if (!sw->handover || sw->handover(sw->rarg, e.from_rank, rseq, seg))
                    return vt__cp_err(err, "critical path: out of memory");
                next = CP_NONE;
                handed = 1;
            } else if (put_seg(cp, sw, seg)) {
                goto io;
            }
            sw->inseg = 0;
        }
        if (next == CP_NONE && !handed)
            r->startup = n.low - r->start;
        sw->cur = next;
    }
    return 0;
io:
    return io_err(err);
nomem:
    return vt__cp_err(err, "critical path: out of memory");
}

void vt__cp_sweep_free(cp_sweep *sw)
{
    free(sw->L.s);
    sw->L.s = NULL;
}

int vt_critpath_finish(vt_critpath *cp, int64_t start, vt_error *err)
{
    cp_sweep sw = {0};
    if (vt__cp_sweep_begin(cp, &sw, start, err))
        return -1;
    if (sw.cur == CP_NONE)
        return vt__cp_err(err, "critical path: the trace has no events");
    vt_critpath_result *r = &cp->res;
    int rc = vt__cp_sweep(cp, &sw, 0, err);
    vt__cp_sweep_free(&sw);
    if (rc || vt__cp_cand_end(cp, err))
        return -1;
    if (r->startup + r->seg_ns + r->edge_ns != r->length)
        sw.ok = 0;
    r->consistent = sw.ok;
    return 0;
}

const vt_critpath_result *vt_critpath_get(const vt_critpath *cp) { return cp->finished ? &cp->res : NULL; }

int vt_critpath_path(vt_critpath *cp, vt_cp_path_fn fn, void *arg, vt_error *err)
{
    if (!cp->finished)
        return vt__cp_err(err, "critical path: not finished");
    size_t first = 0;
    for (uint64_t k = cp->res.nsegments; k-- > 0;) {
        cp_pathrec p;
        if (vt_spill_get(&cp->path, k, &p, 1))
            return io_err(err);
        p.seg.first_step = first;
        first += p.seg.nsteps;
        if (fn(arg, (size_t)(cp->res.nsegments - 1 - k), &p.seg, p.has_edge ? &p.e : NULL))
            return -1;
    }
    return 0;
}

static int load_one(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e)
{
    vt_critpath_result *r = arg;
    r->segments[i] = *s;
    if (e && i > 0)
        r->edges[i - 1] = *e;
    return 0;
}

int vt_critpath_load_path(vt_critpath *cp, vt_error *err)
{
    vt_critpath_result *r = &cp->res;
    if (!cp->finished)
        return vt__cp_err(err, "critical path: not finished");
    if (r->segments)
        return 0;
    r->segments = malloc((r->nsegments ? r->nsegments : 1) * sizeof *r->segments);
    r->edges = malloc((r->nedges ? r->nedges : 1) * sizeof *r->edges);
    if (!r->segments || !r->edges) {
        free(r->segments);
        free(r->edges);
        r->segments = NULL;
        r->edges = NULL;
        return vt__cp_err(err, "critical path: out of memory");
    }
    return vt_critpath_path(cp, load_one, r, err);
}

/* ------------------------------------------------------------------ shares of the path */

static int cmp_part_name(const void *a, const void *b)
{
    const vt_cp_part *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->symbol, y->symbol);
}

static int cmp_part_ns(const void *a, const void *b)
{
    const vt_cp_part *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return cmp_part_name(a, b);
}

/* Sorts parts by name, merges equal names, then sorts by time. */
static void merge_parts(vt_cp_part *v, size_t *n)
{
    if (*n == 0)
        return;
    vt_sort(v, *n, sizeof *v, cmp_part_name);
    size_t o = 0;
    for (size_t i = 1; i < *n; i++) {
        if (!strcmp(v[i].name, v[o].name)) {
            v[o].ns += v[i].ns;
            v[o].events += v[i].events;
            if (!v[o].symbol[0])
                memcpy(v[o].symbol, v[i].symbol, sizeof v[o].symbol);
        } else {
            v[++o] = v[i];
        }
    }
    *n = o + 1;
    vt_sort(v, *n, sizeof *v, cmp_part_ns);
}

static int cmp_agg(const void *a, const void *b)
{
    const cp_agg *x = a, *y = b;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    return ((int64_t)x->b > (int64_t)y->b) - ((int64_t)x->b < (int64_t)y->b);
}

/* Names the distinct keys of a share map. */
static int group(const vt_critpath *cp, int by_site, vt_cp_site_name_fn name, void *arg, vt_cp_part **out, size_t *n)
{
    const cp_aggmap *m = by_site ? &cp->by_site : &cp->by_func;
    *out = NULL;
    *n = 0;
    cp_agg *k = malloc((m->n ? m->n : 1) * sizeof *k);
    vt_cp_part *p = calloc(m->n ? m->n : 1, sizeof *p);
    if (!k || !p) {
        free(k);
        free(p);
        return -1;
    }
    size_t nk = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->v[i].events)
            k[nk++] = m->v[i];
    vt_sort(k, nk, sizeof *k, cmp_agg);
    for (size_t j = 0; j < nk; j++) {
        if (by_site)
            name(arg, (uint32_t)k[j].a, (int64_t)k[j].b, p[j].name, sizeof p[j].name, p[j].symbol, sizeof p[j].symbol);
        else
            snprintf(p[j].name, sizeof p[j].name, "%s",
                     k[j].a ? (const char *)(uintptr_t)k[j].a : "(computation)");
        p[j].ns = k[j].ns;
        p[j].events = k[j].events;
    }
    free(k);
    merge_parts(p, &nk);
    *out = p;
    *n = nk;
    return 0;
}

int vt_critpath_per_function(const vt_critpath *cp, vt_cp_part **out, size_t *n)
{
    return group(cp, 0, NULL, NULL, out, n);
}

int vt_critpath_per_site(const vt_critpath *cp, vt_cp_site_name_fn name, void *arg, vt_cp_part **out, size_t *n)
{
    return group(cp, 1, name, arg, out, n);
}
