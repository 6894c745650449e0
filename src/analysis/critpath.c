/* Critical path and slack of one scenario, as an observer of the what-if replay
 * (critpath.h). Every model event becomes a node with its predicted start and end; every
 * contributor of a completion becomes an edge from the event that precedes the
 * contributor (the sender's event before its send call, the receiver's before its
 * posting call, the member's before its collective call, the rank's own previous event)
 * weighted so that pend(pred) + w is exactly the contributor's share of the completion's
 * predicted end:
 *     pend(c) = E - d_after = max_k ((T_k - D_k) + (E - M) - δ)   [max with R - d_before
 *                                                                   for a candidate]
 * A collective's gate is a node of its own (its predicted time is max over members of
 * T - D), so each member's completion has one edge to it. Events arrive in a
 * topological order of this graph (the replay's happened-before order), so the backward
 * pass for the slack is one reverse sweep. */
#include "vt_config.h"
#include "analysis/critpath.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

enum { CK_NONE, CK_LOCAL, CK_MSG, CK_SYNC_MSG, CK_SYNC_POST, CK_GATE };
enum { NF_CALL = 1, NF_CAND = 2, NF_GATE = 4, NF_PARTIAL = 8, NF_PATH = 16 };

typedef struct node {
    int64_t start, end;     /* measured, global ns */
    int64_t pstart, pend;   /* predicted: start - d_before, end - d_after */
    int64_t low;            /* where the event's own share starts: the critical
                             * contributor's predicted ready time T - D */
    uint64_t seq, e0, via_seq;
    const char *func;
    int64_t callsite;
    uint32_t rank, ne;      /* rank (NONE: a gate), its edges edges[e0 .. e0 + ne) */
    uint32_t crit, via_rank;/* critical predecessor (a gate node for CK_GATE), NONE: none */
    uint8_t flags, ck;
} node;

typedef struct edge {
    int64_t w;
    uint64_t via_seq;
    uint32_t pred, via_rank;
} edge;

typedef struct rankv {
    uint32_t *v;            /* node indices of the rank, in program order */
    size_t n, cap;
} rankv;

typedef struct gslot {
    uint64_t comm, seq, m0seq;
    uint32_t m0rank, node;  /* node NONE: empty */
} gslot;

struct vt_critpath {
    uint32_t nranks;
    size_t scen;
    node *nodes;
    size_t nn, capn;
    edge *edges;
    size_t ne, cape;
    rankv *ranks;
    gslot *gt;
    size_t gcap, gn;
    uint32_t *scratch;      /* per contributor of the current event: its gate node */
    size_t capscratch;
    int64_t *L;
    int finished;
    vt_critpath_result res;
};

static void set_err(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(vt_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *n = realloc(*v, nc * size);
    if (!n)
        return -1;
    *v = n;
    *cap = nc;
    return 0;
}

vt_critpath *vt_critpath_new(uint32_t nranks, size_t scen)
{
    vt_critpath *cp = calloc(1, sizeof *cp);
    if (!cp)
        return NULL;
    cp->nranks = nranks;
    cp->scen = scen;
    cp->ranks = calloc(nranks ? nranks : 1, sizeof *cp->ranks);
    if (!cp->ranks) {
        free(cp);
        return NULL;
    }
    return cp;
}

void vt_critpath_free(vt_critpath *cp)
{
    if (!cp)
        return;
    for (uint32_t r = 0; r < cp->nranks; r++)
        free(cp->ranks[r].v);
    free(cp->ranks);
    free(cp->nodes);
    free(cp->edges);
    free(cp->gt);
    free(cp->scratch);
    free(cp->L);
    free(cp->res.steps);
    free(cp->res.segments);
    free(cp->res.edges);
    free(cp->res.per_rank);
    free(cp->res.cands);
    free(cp);
}

static int obs_event(void *arg, const vt_obs_event *ev, vt_error *err) { return vt_critpath_event(arg, ev, err); }

void vt_critpath_observer(vt_critpath *cp, vt_observer *obs)
{
    memset(obs, 0, sizeof *obs);
    obs->arg = cp;
    obs->event = obs_event;
}

static uint32_t new_node(vt_critpath *cp)
{
    if (cp->nn >= NONE - 1 || grow((void **)&cp->nodes, &cp->capn, cp->nn + 1, sizeof(node)))
        return NONE;
    node *n = &cp->nodes[cp->nn];
    memset(n, 0, sizeof *n);
    n->crit = n->via_rank = NONE;
    n->e0 = cp->ne;
    return (uint32_t)cp->nn++;
}

static int add_edge(vt_critpath *cp, uint32_t to, uint32_t pred, int64_t w, uint32_t via_rank, uint64_t via_seq)
{
    if (grow((void **)&cp->edges, &cp->cape, cp->ne + 1, sizeof(edge)))
        return -1;
    cp->edges[cp->ne++] = (edge){w, via_seq, pred, via_rank};
    cp->nodes[to].ne++;
    return 0;
}

/* The rank's last event with a sequence number below seq (NONE: none yet). Usually one
 * of the last few, so the search starts from the end. */
static uint32_t before(const vt_critpath *cp, uint32_t rank, uint64_t seq)
{
    if (rank >= cp->nranks)
        return NONE;
    const rankv *rv = &cp->ranks[rank];
    if (rv->n == 0)
        return NONE;
    if (cp->nodes[rv->v[rv->n - 1]].seq < seq)
        return rv->v[rv->n - 1];
    size_t lo = 0, hi = rv->n; /* first position with seq >= target */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp->nodes[rv->v[mid]].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? rv->v[lo - 1] : NONE;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static size_t ghome(uint64_t comm, uint64_t seq, size_t cap)
{
    return (size_t)mix(comm ^ mix(seq + 0x9e3779b97f4a7c15ull)) & (cap - 1);
}

/* The node of a gate, made at its first completion (all its members are known then:
 * every member's event before its collective call has been seen). A gate is named by
 * its communicator, sequence number and first member, so a reused id is a new gate. */
static uint32_t gate_node(vt_critpath *cp, const vt_obs_con *c, vt_error *err)
{
    if (c->nmembers == 0) {
        set_err(err, "critical path: a collective gate without members");
        return NONE;
    }
    const vt_obs_member *m0 = &c->members[0];
    if (cp->gcap) {
        for (size_t i = ghome(c->gate_comm, c->gate_seq, cp->gcap);; i = (i + 1) & (cp->gcap - 1)) {
            gslot *g = &cp->gt[i];
            if (g->node == NONE)
                break;
            if (g->comm == c->gate_comm && g->seq == c->gate_seq && g->m0rank == m0->rank && g->m0seq == m0->seq)
                return g->node;
        }
    }
    if (2 * (cp->gn + 1) > cp->gcap) {
        size_t nc = cp->gcap ? 2 * cp->gcap : 256;
        gslot *nt = malloc(nc * sizeof *nt);
        if (!nt)
            goto nomem;
        for (size_t i = 0; i < nc; i++)
            nt[i].node = NONE;
        for (size_t i = 0; i < cp->gcap; i++) {
            if (cp->gt[i].node == NONE)
                continue;
            size_t j = ghome(cp->gt[i].comm, cp->gt[i].seq, nc);
            while (nt[j].node != NONE)
                j = (j + 1) & (nc - 1);
            nt[j] = cp->gt[i];
        }
        free(cp->gt);
        cp->gt = nt;
        cp->gcap = nc;
    }
    uint32_t gi = new_node(cp);
    if (gi == NONE)
        goto nomem;
    node *g = &cp->nodes[gi];
    g->rank = NONE;
    g->seq = c->gate_seq;
    g->flags = NF_GATE;
    g->callsite = -1;
    int64_t top = INT64_MIN;
    for (size_t k = 0; k < c->nmembers; k++) {
        const vt_obs_member *m = &c->members[k];
        int64_t ready = m->T - m->D[cp->scen];
        if (ready > top)
            top = ready;
    }
    g->pend = g->pstart = g->low = top;
    g->start = g->end = c->T;
    for (size_t k = 0; k < c->nmembers; k++) {
        const vt_obs_member *m = &c->members[k];
        uint32_t p = before(cp, m->rank, m->seq);
        if (p == NONE) {
            cp->nodes[gi].flags |= NF_PARTIAL;
            continue;
        }
        if (add_edge(cp, gi, p, m->T - m->D[cp->scen] - cp->nodes[p].pend, m->rank, m->seq))
            goto nomem;
    }
    size_t j = ghome(c->gate_comm, c->gate_seq, cp->gcap);
    while (cp->gt[j].node != NONE)
        j = (j + 1) & (cp->gcap - 1);
    cp->gt[j] = (gslot){c->gate_comm, c->gate_seq, m0->seq, m0->rank, gi};
    cp->gn++;
    return gi;
nomem:
    set_err(err, "critical path: out of memory");
    return NONE;
}

int vt_critpath_event(vt_critpath *cp, const vt_obs_event *ev, vt_error *err)
{
    const size_t s = cp->scen;
    if (ev->rank >= cp->nranks) {
        set_err(err, "critical path: event %u:%" PRIu64 " of a rank beyond the trace's %u", ev->rank, ev->seq,
                cp->nranks);
        return -1;
    }
    /* Gates first: their nodes come before the completion's (topological order). */
    if (ev->ncons) {
        if (grow((void **)&cp->scratch, &cp->capscratch, ev->ncons, sizeof(uint32_t)))
            goto nomem;
        for (size_t k = 0; k < ev->ncons; k++) {
            cp->scratch[k] = NONE;
            if (ev->cons[k].kind == VT_CON_GATE && (cp->scratch[k] = gate_node(cp, &ev->cons[k], err)) == NONE)
                return -1;
        }
    }
    rankv *rv = &cp->ranks[ev->rank];
    uint32_t prev = rv->n ? rv->v[rv->n - 1] : NONE;
    if (grow((void **)&rv->v, &rv->cap, rv->n + 1, sizeof(uint32_t)))
        goto nomem;
    uint32_t i = new_node(cp);
    if (i == NONE)
        goto nomem;
    int64_t db = ev->d_before[s], da = ev->d_after[s], delta = ev->delta[s];
    int64_t R = ev->start, E = ev->end;
    {
        node *n = &cp->nodes[i];
        n->start = R;
        n->end = E;
        n->pstart = R - db;
        n->pend = E - da;
        n->seq = ev->seq;
        n->func = ev->func;
        n->callsite = ev->callsite;
        n->rank = ev->rank;
        n->flags = (uint8_t)((ev->is_call ? NF_CALL : 0) | (ev->candidate ? NF_CAND : 0));
    }
    const int64_t pend = E - da, pprev = prev != NONE ? cp->nodes[prev].pend : 0;
    uint8_t ck;
    uint32_t crit = NONE, via_rank = NONE;
    uint64_t via_seq = 0;
    int64_t low;
    if (ev->ncons == 0) {
        /* A local event: d_after = d_before + δ. */
        if (da != db + delta) {
            set_err(err, "critical path: event %u:%" PRIu64 ": d_after %" PRId64 " is not d_before %" PRId64
                    " + delta %" PRId64 " for a local event", ev->rank, ev->seq, da, db, delta);
            return -1;
        }
        if (prev != NONE) {
            if (add_edge(cp, i, prev, pend - pprev, ev->rank, ev->seq))
                goto nomem;
            ck = CK_LOCAL;
            crit = prev;
            low = pprev;
        } else {
            ck = CK_NONE;
            low = R - db;
        }
    } else {
        const int64_t M = ev->M;
        size_t best = SIZE_MAX;
        int64_t bestval = 0, bestready = 0;
        uint32_t bestpred = NONE;
        for (size_t k = 0; k < ev->ncons; k++) {
            const vt_obs_con *c = &ev->cons[k];
            /* A local contributor's D is this rank's d before the call: d_before (its D
             * pointer may already show the rank's d after the event). */
            int64_t D = c->kind == VT_CON_LOCAL ? db : c->D[s];
            int64_t val = D + (M - c->T), ready = c->T - D;
            uint32_t p, vr = c->rank;
            switch (c->kind) {
            case VT_CON_LOCAL: p = prev; break;
            case VT_CON_SYNC_MSG: p = before(cp, ev->rank, c->seq); vr = ev->rank; break;
            case VT_CON_GATE:
                p = cp->scratch[k];
                vr = NONE;
                if (!(cp->nodes[p].flags & NF_PARTIAL) && cp->nodes[p].pend != ready) {
                    set_err(err, "critical path: event %u:%" PRIu64 ": gate ready time %" PRId64
                            " differs from its members' latest %" PRId64, ev->rank, ev->seq, ready, cp->nodes[p].pend);
                    return -1;
                }
                break;
            default: p = before(cp, c->rank, c->seq); break;
            }
            if (p != NONE) {
                if (add_edge(cp, i, p, ready - cp->nodes[p].pend + (E - M - delta), vr, c->seq))
                    goto nomem;
            } else {
                cp->nodes[i].flags |= NF_PARTIAL;
            }
            /* The least D + (M - T); ties: the local contributor, then the first. */
            if (best == SIZE_MAX || val < bestval ||
                (val == bestval && c->kind == VT_CON_LOCAL && ev->cons[best].kind != VT_CON_LOCAL)) {
                best = k;
                bestval = val;
                bestready = ready;
                bestpred = p;
            }
        }
        if (ev->base && ev->base[s] != bestval) {
            set_err(err, "critical path: event %u:%" PRIu64 ": completion rule gives %" PRId64 ", the replay %" PRId64,
                    ev->rank, ev->seq, bestval, ev->base[s]);
            return -1;
        }
        const vt_obs_con *b = &ev->cons[best];
        static const uint8_t map[] = {[VT_CON_LOCAL] = CK_LOCAL, [VT_CON_MSG] = CK_MSG, [VT_CON_SYNC_MSG] = CK_SYNC_MSG,
                                      [VT_CON_SYNC_POST] = CK_SYNC_POST, [VT_CON_GATE] = CK_GATE};
        ck = map[b->kind];
        crit = bestpred;
        low = bestready;
        via_rank = b->kind == VT_CON_SYNC_MSG ? ev->rank : b->rank;
        via_seq = b->seq;
        if (ck == CK_LOCAL && prev != NONE)
            low = pprev;   /* a reduced trace's R* > R: the gap is the event's */
        int64_t want = bestval;
        if (ev->candidate) {
            /* The candidate rule's cap d_before + (E - R): pend >= R - d_before. */
            int64_t cap = db + (E - R);
            if (prev != NONE && add_edge(cp, i, prev, (R - db) - pprev, ev->rank, ev->seq))
                goto nomem;
            if (cap <= bestval + delta) {
                ck = prev != NONE ? CK_LOCAL : CK_NONE;
                crit = prev;
                low = prev != NONE ? pprev : R - db;
                via_rank = NONE;
                want = cap;
            } else {
                want = bestval + delta;
            }
        }
        if (want != da) {
            set_err(err, "critical path: event %u:%" PRIu64 ": d_after %" PRId64 " is not the model's %" PRId64,
                    ev->rank, ev->seq, da, want);
            return -1;
        }
        if (crit == NONE && ck != CK_NONE)
            ck = CK_NONE; /* a contributor without an event before it: the walk ends here */
    }
    node *n = &cp->nodes[i];
    n->ck = ck;
    n->crit = crit;
    n->low = low;
    n->via_rank = via_rank;
    n->via_seq = via_seq;
    rv->v[rv->n++] = i;
    return 0;
nomem:
    set_err(err, "critical path: out of memory");
    return -1;
}

/* ------------------------------------------------------------------ after the replay */

typedef struct link {
    int kind;               /* 0 the bottom (startup), 1 the same segment, 2 an edge */
    vt_cp_edge e;
} link;

static int cmp_cand(const void *a, const void *b)
{
    const vt_cp_cand *x = a, *y = b;
    if (x->slack != y->slack)
        return x->slack < y->slack ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int vt_critpath_finish(vt_critpath *cp, int64_t start, vt_error *err)
{
    vt_critpath_result *r = &cp->res;
    if (cp->finished) {
        set_err(err, "critical path: finished twice");
        return -1;
    }
    cp->finished = 1;
    memset(r, 0, sizeof *r);
    r->start = start;
    r->nranks = cp->nranks;
    r->per_rank = calloc(cp->nranks ? cp->nranks : 1, sizeof *r->per_rank);
    if (!r->per_rank)
        goto nomem;
    /* The end: the rank whose last event ends last. */
    uint32_t top = NONE;
    for (uint32_t k = 0; k < cp->nranks; k++) {
        const rankv *rv = &cp->ranks[k];
        if (!rv->n)
            continue;
        uint32_t last = rv->v[rv->n - 1];
        if (top == NONE || cp->nodes[last].pend > cp->nodes[top].pend) {
            top = last;
            r->end_rank = k;
        }
    }
    if (top == NONE) {
        set_err(err, "critical path: the trace has no events");
        return -1;
    }
    r->end = cp->nodes[top].pend;
    r->length = r->end - start;

    /* Forward pass: every node's predicted end is the latest of its edges (exactly: the
     * weights are built that way), a check of the graph the slack relies on. */
    for (size_t i = 0; i < cp->nn; i++) {
        const node *n = &cp->nodes[i];
        if (!n->ne || (n->flags & NF_PARTIAL))
            continue;
        int64_t f = INT64_MIN;
        for (uint64_t e = n->e0; e < n->e0 + n->ne; e++) {
            const edge *x = &cp->edges[e];
            if (x->pred >= i) {
                set_err(err, "critical path: event %u:%" PRIu64 " depends on a later event", n->rank, n->seq);
                return -1;
            }
            int64_t v = cp->nodes[x->pred].pend + x->w;
            if (v > f)
                f = v;
        }
        if (f != n->pend) {
            set_err(err, "critical path: internal error: event %u:%" PRIu64 " ends at %" PRId64
                    " predicted, its dependencies give %" PRId64, n->rank, n->seq, n->pend, f);
            return -1;
        }
    }

    /* The walk back, from the end to the start. */
    size_t cap = 0, nst = 0;
    uint32_t *st = NULL;
    link *lk = NULL;
    size_t caplk = 0;
    uint32_t cur = top;
    for (;;) {
        if (grow((void **)&st, &cap, nst + 1, sizeof *st) || grow((void **)&lk, &caplk, nst + 1, sizeof *lk)) {
            free(st);
            free(lk);
            goto nomem;
        }
        node *n = &cp->nodes[cur];
        n->flags |= NF_PATH;
        st[nst] = cur;
        link *L = &lk[nst++];
        memset(L, 0, sizeof *L);
        uint32_t next = NONE;
        int64_t amount = 0;
        vt_cp_edge e = {.to_rank = n->rank, .to_seq = n->seq, .via_rank = n->via_rank, .via_seq = n->via_seq};
        switch (n->ck) {
        case CK_NONE:
            break;
        case CK_LOCAL:
            next = n->crit;
            amount = n->low - cp->nodes[next].pend;
            break;
        case CK_MSG:
        case CK_SYNC_MSG:
        case CK_SYNC_POST:
            next = n->crit;
            amount = n->low - cp->nodes[next].pend;
            e.kind = n->ck == CK_MSG ? VT_CP_MESSAGE : VT_CP_SYNC;
            break;
        case CK_GATE: {
            /* The member that arrived last (in predicted time); ties: this rank, then the
             * first member. */
            const node *g = &cp->nodes[n->crit];
            const edge *pick = NULL;
            for (uint64_t k = g->e0; k < g->e0 + g->ne; k++) {
                const edge *x = &cp->edges[k];
                if (cp->nodes[x->pred].pend + x->w != g->pend)
                    continue;
                if (!pick || (x->via_rank == n->rank && pick->via_rank != n->rank))
                    pick = x;
            }
            if (!pick)
                break;   /* the latest member has no event before it: the walk ends */
            next = pick->pred;
            amount = n->low - cp->nodes[next].pend;
            e.kind = VT_CP_COLLECTIVE;
            e.via_rank = pick->via_rank;
            e.via_seq = pick->via_seq;
            break;
        }
        }
        if (next == NONE) {
            L->kind = 0;
            r->startup = n->low - start;
            break;
        }
        if (next >= cur) {
            free(st);
            free(lk);
            set_err(err, "critical path: internal error: the walk does not go back at %u:%" PRIu64, n->rank, n->seq);
            return -1;
        }
        const node *p = &cp->nodes[next];
        if (n->ck == CK_LOCAL ||
            (amount == 0 && p->rank == n->rank && e.via_rank == n->rank && e.via_seq == n->seq)) {
            L->kind = 1;   /* the same rank, its previous event: no edge */
        } else {
            L->kind = 2;
            e.from_rank = p->rank;
            e.from_seq = p->seq;
            e.ns = amount;
            L->e = e;
        }
        cur = next;
    }
    /* Chronological order: steps, segments, edges. */
    r->steps = malloc((nst ? nst : 1) * sizeof *r->steps);
    r->segments = malloc((nst ? nst : 1) * sizeof *r->segments);
    r->edges = malloc((nst ? nst : 1) * sizeof *r->edges);
    if (!r->steps || !r->segments || !r->edges) {
        free(st);
        free(lk);
        goto nomem;
    }
    int ok = 1;
    for (size_t j = 0; j < nst; j++) {
        const node *n = &cp->nodes[st[nst - 1 - j]];
        const link *L = &lk[nst - 1 - j];
        vt_cp_step *x = &r->steps[j];
        *x = (vt_cp_step){n->rank, n->seq, n->func, n->callsite, n->pend - n->low};
        if (L->kind == 1 && n->low != cp->nodes[st[nst - j]].pend)
            ok = 0; /* a local continuation must start where the event before ended */
        r->per_rank[n->rank] += x->ns;
        if (L->kind != 1) {
            if (L->kind == 2) {
                r->edges[r->nedges++] = L->e;
                r->edge_ns += L->e.ns;
            }
            vt_cp_segment *sg = &r->segments[r->nsegments++];
            *sg = (vt_cp_segment){n->rank, n->seq, n->seq, n->low, n->pend, j, 0};
        }
        vt_cp_segment *sg = &r->segments[r->nsegments - 1];
        sg->last_seq = n->seq;
        sg->end = n->pend;
        sg->nsteps++;
    }
    r->nsteps = nst;
    free(st);
    free(lk);
    for (size_t k = 0; k < r->nsegments; k++) {
        const vt_cp_segment *sg = &r->segments[k];
        int64_t sum = 0;
        for (size_t j = sg->first_step; j < sg->first_step + sg->nsteps; j++)
            sum += r->steps[j].ns;
        if (sum != sg->end - sg->start)
            ok = 0;
        r->seg_ns += sg->end - sg->start;
    }
    if (r->startup + r->seg_ns + r->edge_ns != r->length)
        ok = 0;

    /* Backward pass: the latest predicted end of each node that keeps T', over every
     * dependency (not only the critical ones); the slack is that minus its end. Chains
     * end at a rank's last event (which may end at T'); a node without successors
     * otherwise (none in a full trace) is treated as one. */
    cp->L = malloc((cp->nn ? cp->nn : 1) * sizeof *cp->L);
    if (!cp->L)
        goto nomem;
    for (size_t i = 0; i < cp->nn; i++)
        cp->L[i] = INT64_MAX;
    size_t ncand = 0;
    for (size_t i = cp->nn; i-- > 0;) {
        const node *n = &cp->nodes[i];
        if (cp->L[i] == INT64_MAX)
            cp->L[i] = r->end;
        for (uint64_t e = n->e0; e < n->e0 + n->ne; e++) {
            const edge *x = &cp->edges[e];
            int64_t v = cp->L[i] - x->w;
            if (v < cp->L[x->pred])
                cp->L[x->pred] = v;
        }
        if (n->flags & NF_CAND)
            ncand++;
        if ((n->flags & NF_PATH) && cp->L[i] != n->pend)
            ok = 0;
    }
    r->cands = malloc((ncand ? ncand : 1) * sizeof *r->cands);
    if (!r->cands)
        goto nomem;
    for (size_t i = 0; i < cp->nn; i++) {
        const node *n = &cp->nodes[i];
        if (!(n->flags & NF_CAND))
            continue;
        r->cands[r->ncands++] = (vt_cp_cand){n->rank, n->seq, n->end - n->start, cp->L[i] - n->pend,
                                             !!(n->flags & NF_PATH), n->func};
    }
    vt_sort(r->cands, r->ncands, sizeof *r->cands, cmp_cand);
    r->consistent = ok;
    return 0;
nomem:
    set_err(err, "critical path: out of memory");
    return -1;
}

const vt_critpath_result *vt_critpath_get(const vt_critpath *cp) { return cp->finished ? &cp->res : NULL; }

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

typedef struct key {
    uint32_t rank;
    int64_t cs;
    const char *func;
    int64_t ns;
    uint64_t events;
} key;

static int cmp_key_site(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->cs > y->cs) - (x->cs < y->cs);
}

static int cmp_key_func(const void *a, const void *b)
{
    const key *x = a, *y = b;
    return (x->func > y->func) - (x->func < y->func);
}

/* Groups the steps by (rank, call site) or by function pointer first, so that only the
 * distinct keys are named. */
static int group(const vt_critpath *cp, int by_site, vt_cp_site_name_fn name, void *arg, vt_cp_part **out, size_t *n)
{
    const vt_critpath_result *r = &cp->res;
    *out = NULL;
    *n = 0;
    key *k = malloc((r->nsteps ? r->nsteps : 1) * sizeof *k);
    if (!k)
        return -1;
    for (size_t j = 0; j < r->nsteps; j++)
        k[j] = (key){r->steps[j].rank, r->steps[j].callsite, r->steps[j].func, r->steps[j].ns, 1};
    vt_sort(k, r->nsteps, sizeof *k, by_site ? cmp_key_site : cmp_key_func);
    size_t nk = 0;
    for (size_t j = 0; j < r->nsteps; j++) {
        if (nk && (by_site ? cmp_key_site(&k[nk - 1], &k[j]) : cmp_key_func(&k[nk - 1], &k[j])) == 0) {
            k[nk - 1].ns += k[j].ns;
            k[nk - 1].events++;
        } else {
            k[nk++] = k[j];
        }
    }
    vt_cp_part *p = calloc(nk ? nk : 1, sizeof *p);
    if (!p) {
        free(k);
        return -1;
    }
    for (size_t j = 0; j < nk; j++) {
        if (by_site)
            name(arg, k[j].rank, k[j].cs, p[j].name, sizeof p[j].name, p[j].symbol, sizeof p[j].symbol);
        else
            snprintf(p[j].name, sizeof p[j].name, "%s", k[j].func ? k[j].func : "(computation)");
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
