/* Critical path and slack of one scenario, as an observer of the what-if replay
 * (critpath.h): the intake. Every model event becomes a node with its predicted end;
 * every contributor of a completion becomes an edge from the event that precedes the
 * contributor (the sender's event before its send call, the receiver's before its
 * posting call, the member's before its collective call, the rank's own previous event)
 * weighted so that pend(pred) + w is exactly the contributor's share of the completion's
 * predicted end:
 *     pend(c) = E - d_after = max_k ((T_k - D_k) + (E - M) - δ)   [max with R - d_before
 *                                                                   for a candidate]
 * A collective's gate is a node of its own (its predicted time is max over members of
 * T - D), so each member's completion has one edge to it. Events arrive in a
 * topological order of this graph (the replay's happened-before order), so the backward
 * pass for the slack is one reverse sweep (critpath_walk.c). Nodes and edges go to
 * temporary files as they come (critpath_priv.h); a predecessor is found in its rank's
 * window of recent nodes, else from a checkpoint back along the rank's chain on disk. */
#include "vt_config.h"
#include "analysis/critpath_priv.h"
#include "util/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank windows hold at most this many nodes in all (24 bytes each). */
#define WIN_TOTAL (1u << 20)

int vt__cp_err(vt_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int vt__cp_grow(void **v, size_t *cap, size_t need, size_t size) { return vt_grow(v, cap, need, size); }

/* The rank windows of ranks lo .. hi (the others': none); 0, or -1 (no memory: the old
 * ones stay). */
int vt__cp_window(vt_critpath *cp, uint32_t lo, uint32_t hi)
{
    uint64_t n = hi > lo ? hi - lo : 1, w = 8;
    while (w < 1024 && w * 2 * n <= WIN_TOTAL)
        w *= 2;
    /* For the tests: a smaller window sends most look-ups to the chains on disk. */
    const char *tw = getenv("VTRACE_TEST_CP_WINDOW");
    if (tw && atoi(tw) > 0)
        for (w = 1; w * 2 <= (uint64_t)atoi(tw) && w < 1024;)
            w *= 2;
    cp_ref *win = malloc((size_t)w * n * sizeof *win);
    if (!win)
        return -1;
    free(cp->win);
    cp->win = win;
    cp->wsize = w;
    cp->lo = lo;
    cp->hi = hi;
    return 0;
}

vt_critpath *vt_critpath_new(uint32_t nranks, size_t scen)
{
    vt_critpath *cp = calloc(1, sizeof *cp);
    if (!cp)
        return NULL;
    cp->nranks = nranks;
    cp->scen = scen;
    const char *tr = getenv("VTRACE_TEST_CP_RUN");
    cp->crun = tr && atoi(tr) > 0 ? (size_t)atoi(tr) : (size_t)1 << 18;  /* candidates a sorted run */
    cp->ranks = calloc(nranks ? nranks : 1, sizeof *cp->ranks);
    if (!cp->ranks || vt__cp_window(cp, 0, nranks)) {
        free(cp->ranks);
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
        free(cp->ranks[r].ck);
    free(cp->ranks);
    free(cp->win);
    free(cp->gt);
    free(cp->scratch);
    free(cp->scratch_partial);
    free(cp->by_func.v);
    free(cp->by_site.v);
    if (cp->open) {
        vt_spill_close(&cp->nodes);
        vt_spill_close(&cp->edges);
        vt_spill_close(&cp->path);
    }
    free(cp->res.segments);
    free(cp->res.edges);
    free(cp->res.per_rank);
    free(cp->cbuf);
    if (cp->copen)
        vt_spill_close(&cp->cands);
    for (uint32_t r = cp->lo; cp->pend && r < cp->hi; r++)
        free(cp->pend[r - cp->lo].v);
    free(cp->pend);
    free(cp->rmark);
    free(cp->first);
    for (size_t k = 0; k < cp->nnames; k++)
        free(cp->names[k]);
    free(cp->names);
    free(cp);
}

static int obs_event(void *arg, const vt_obs_event *ev, vt_error *err) { return vt_critpath_event(arg, ev, err); }

void vt_critpath_observer(vt_critpath *cp, vt_observer *obs)
{
    memset(obs, 0, sizeof *obs);
    obs->arg = cp;
    obs->event = obs_event;
}

static int open_spills(vt_critpath *cp, vt_error *err)
{
    if (vt_spill_open(&cp->nodes, sizeof(cp_node)) == 0) {
        if (vt_spill_open(&cp->edges, sizeof(cp_edge)) == 0) {
            if (vt_spill_open(&cp->path, sizeof(cp_pathrec)) == 0) {
                cp->open = 1;
                return 0;
            }
            vt_spill_close(&cp->edges);
        }
        vt_spill_close(&cp->nodes);
    }
    const char *dir = getenv("TMPDIR");
    return vt__cp_err(err, "critical path: cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
                      strerror(errno));
}

static int io_err(vt_error *err)
{
    return vt__cp_err(err, "critical path: temporary file: %s", strerror(errno));
}

static const cp_ref *win_at(const vt_critpath *cp, uint32_t rank, uint64_t ord)
{
    return &cp->win[(size_t)(rank - cp->lo) * cp->wsize + (ord & (cp->wsize - 1))];
}

/* The rank's last event with a sequence number below seq (idx CP_NONE: none yet). Usually
 * one of the last few: the window, searched from its end; further back, from the first
 * checkpoint at or after seq back along the rank's chain of nodes on disk. */
static int before(vt_critpath *cp, uint32_t rank, uint64_t seq, cp_ref *out, vt_error *err)
{
    out->idx = CP_NONE;
    out->pend = 0;
    if (rank >= cp->nranks)
        return 0;
    if (rank < cp->lo || rank >= cp->hi) {
        out->idx = CP_REMOTE;   /* another process's rank: the edge names it */
        return 0;
    }
    const cp_rank *rv = &cp->ranks[rank];
    if (rv->n == 0)
        return 0;
    const cp_ref *last = win_at(cp, rank, rv->n - 1);
    if (last->seq < seq) {
        *out = *last;
        return 0;
    }
    uint64_t lo = rv->n > cp->wsize ? rv->n - cp->wsize : 0, hi = rv->n, base = lo;
    if (win_at(cp, rank, lo)->seq < seq) {
        while (lo < hi) { /* first ordinal with seq >= target */
            uint64_t mid = lo + (hi - lo) / 2;
            if (win_at(cp, rank, mid)->seq < seq)
                lo = mid + 1;
            else
                hi = mid;
        }
        *out = *win_at(cp, rank, lo - 1);
        return 0;
    }
    if (base == 0)
        return 0;
    size_t a = 0, b = rv->nck; /* first checkpoint with seq >= target */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (rv->ck[mid].seq < seq)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == 0)
        return 0;  /* the rank's first node is at or after seq */
    uint32_t at = a < rv->nck ? rv->ck[a].idx : win_at(cp, rank, base)->idx;
    for (;;) {
        cp_node n;
        if (vt_spill_get(&cp->nodes, at, &n, 0))
            return io_err(err);
        if (n.seq < seq) {
            *out = (cp_ref){n.seq, n.pend, at, (n.flags & NF_GAP) != 0};
            return 0;
        }
        if (n.prev == CP_NONE)
            return 0;
        at = n.prev;
    }
}

/* before() for a predecessor through a message, a posting or a gate: not a gap
 * (NF_GAP), the record before it then. */
static int before_rec(vt_critpath *cp, uint32_t rank, uint64_t seq, cp_ref *out, vt_error *err)
{
    for (;;) {
        if (before(cp, rank, seq, out, err))
            return -1;
        if (out->idx == CP_NONE || out->idx == CP_REMOTE || !out->gap)
            return 0;
        seq = out->seq;
    }
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

static int put_edge(vt_critpath *cp, cp_node *to, uint32_t pred, int64_t w, uint32_t via_rank, uint64_t via_seq)
{
    cp_edge e = {w, via_seq, pred, via_rank};
    if (vt_spill_put(&cp->edges, &e))
        return -1;
    to->ne++;
    return 0;
}

static int put_node(vt_critpath *cp, const cp_node *n, vt_error *err)
{
    if (cp->nn >= CP_NONE - 1)
        return vt__cp_err(err, "critical path: more than %u events", CP_NONE - 2);
    if (vt_spill_put(&cp->nodes, n))
        return io_err(err);
    cp->nn++;
    return 0;
}

/* Removes slot i of the gate table (linear probing: the later slots of its run move up). */
static void gate_del(vt_critpath *cp, size_t i)
{
    size_t m = cp->gcap - 1;
    cp->gt[i].node = CP_NONE;
    for (size_t j = (i + 1) & m; cp->gt[j].node != CP_NONE; j = (j + 1) & m) {
        size_t h = ghome(cp->gt[j].comm, cp->gt[j].seq, cp->gcap);
        if (((j - h) & m) >= ((j - i) & m)) {
            cp->gt[i] = cp->gt[j];
            cp->gt[j].node = CP_NONE;
            i = j;
        }
    }
    cp->gn--;
}

static int gate_grow(vt_critpath *cp)
{
    if (2 * (cp->gn + 1) <= cp->gcap)
        return 0;
    size_t nc = cp->gcap ? 2 * cp->gcap : 256;
    cp_gslot *nt = malloc(nc * sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < nc; i++)
        nt[i].node = CP_NONE;
    for (size_t i = 0; i < cp->gcap; i++) {
        if (cp->gt[i].node == CP_NONE)
            continue;
        size_t j = ghome(cp->gt[i].comm, cp->gt[i].seq, nc);
        while (nt[j].node != CP_NONE)
            j = (j + 1) & (nc - 1);
        nt[j] = cp->gt[i];
    }
    free(cp->gt);
    cp->gt = nt;
    cp->gcap = nc;
    return 0;
}

/* The node of a gate, made at its first completion (all its members are known then:
 * every member's event before its collective call has been seen), forgotten at its last.
 * A gate is named by its communicator, sequence number and first member, so a reused id
 * is a new gate. */
static int gate_node(vt_critpath *cp, const vt_obs_con *c, cp_ref *out, uint8_t *partial, vt_error *err)
{
    if (c->nmembers == 0)
        return vt__cp_err(err, "critical path: a collective gate without members");
    const vt_obs_member *m0 = &c->members[0];
    if (cp->gcap) {
        for (size_t i = ghome(c->gate_comm, c->gate_seq, cp->gcap);; i = (i + 1) & (cp->gcap - 1)) {
            cp_gslot *g = &cp->gt[i];
            if (g->node == CP_NONE)
                break;
            if (g->comm == c->gate_comm && g->seq == c->gate_seq && g->m0rank == m0->rank && g->m0seq == m0->seq) {
                *out = (cp_ref){g->seq, g->pend, g->node, 0};
                *partial = g->partial;
                if (--g->left == 0)
                    gate_del(cp, i);
                return 0;
            }
        }
    }
    if (gate_grow(cp))
        return vt__cp_err(err, "critical path: out of memory");
    cp_node g = {0};
    g.rank = CP_NONE;
    g.crit = g.via_rank = g.prev = CP_NONE;
    g.seq = c->gate_seq;
    g.flags = NF_GATE;
    g.callsite = -1;
    g.e0 = cp->edges.n;
    int64_t top = INT64_MIN;
    for (size_t k = 0; k < c->nmembers; k++) {
        const vt_obs_member *m = &c->members[k];
        int64_t ready = m->T - m->D[cp->scen];
        if (ready > top)
            top = ready;
    }
    g.pend = g.low = top;
    int64_t f = INT64_MIN;
    for (size_t k = 0; k < c->nmembers; k++) {
        const vt_obs_member *m = &c->members[k];
        cp_ref p;
        if (before_rec(cp, m->rank, m->seq, &p, err))
            return -1;
        if (p.idx == CP_NONE) {
            g.flags |= NF_PARTIAL;
            continue;
        }
        int64_t w = m->T - m->D[cp->scen] - p.pend;
        if (put_edge(cp, &g, p.idx, w, m->rank, m->seq))
            return io_err(err);
        if (p.pend + w > f)
            f = p.pend + w;
    }
    if (g.ne && !(g.flags & NF_PARTIAL) && f != g.pend)
        return vt__cp_err(err, "critical path: internal error: a gate of communicator %" PRIu64 " is ready at %" PRId64
                          " predicted, its members give %" PRId64, c->gate_comm, g.pend, f);
    uint32_t gi = (uint32_t)cp->nn;
    if (put_node(cp, &g, err))
        return -1;
    *out = (cp_ref){g.seq, g.pend, gi, 0};
    *partial = (g.flags & NF_PARTIAL) != 0;
    uint32_t local = 0;   /* completions this process sees: its members' */
    for (size_t k = 0; k < c->nmembers; k++)
        local += c->members[k].rank >= cp->lo && c->members[k].rank < cp->hi;
    if (local > 1) {
        size_t j = ghome(c->gate_comm, c->gate_seq, cp->gcap);
        while (cp->gt[j].node != CP_NONE)
            j = (j + 1) & (cp->gcap - 1);
        cp->gt[j] = (cp_gslot){c->gate_comm, c->gate_seq, m0->seq, g.pend, m0->rank, gi, local - 1,
                               *partial};
        cp->gn++;
    }
    return 0;
}

/* Appends node i (seq, pend, a gap or not) to its rank's window and checkpoints. */
static int push_rank(vt_critpath *cp, uint32_t rank, uint64_t seq, int64_t pend, uint32_t i, int gap)
{
    cp_rank *rv = &cp->ranks[rank];
    if (!gap && !rv->first)
        rv->first = seq + 1;
    if (rv->n % CP_CKPT == 0) {
        if (vt__cp_grow((void **)&rv->ck, &rv->capck, rv->nck + 1, sizeof *rv->ck))
            return -1;
        rv->ck[rv->nck++] = (cp_ckpt){seq, i};
    }
    cp->win[(size_t)(rank - cp->lo) * cp->wsize + (rv->n & (cp->wsize - 1))] = (cp_ref){seq, pend, i, (uint32_t)gap};
    rv->n++;
    return 0;
}

int vt_critpath_event(vt_critpath *cp, const vt_obs_event *ev, vt_error *err)
{
    const size_t s = cp->scen;
    if (ev->rank >= cp->nranks)
        return vt__cp_err(err, "critical path: event %u:%" PRIu64 " of a rank beyond the trace's %u", ev->rank,
                          ev->seq, cp->nranks);
    if (ev->rank < cp->lo || ev->rank >= cp->hi)
        return vt__cp_err(err, "critical path: event %u:%" PRIu64 " of another process's rank", ev->rank, ev->seq);
    if (cp->finished)
        return vt__cp_err(err, "critical path: an event after the end");
    if (!cp->open && open_spills(cp, err))
        return -1;
    /* Gates first: their nodes come before the completion's (topological order). */
    if (ev->ncons) {
        size_t had = cp->capscratch;
        if (vt__cp_grow((void **)&cp->scratch, &cp->capscratch, ev->ncons, sizeof *cp->scratch))
            goto nomem;
        if (had != cp->capscratch) {
            free(cp->scratch_partial);
            if (!(cp->scratch_partial = malloc(cp->capscratch))) {
                cp->capscratch = 0;
                goto nomem;
            }
        }
        for (size_t k = 0; k < ev->ncons; k++) {
            cp->scratch[k].idx = CP_NONE;
            if (ev->cons[k].kind == VT_CON_GATE &&
                gate_node(cp, &ev->cons[k], &cp->scratch[k], &cp->scratch_partial[k], err))
                return -1;
        }
    }
    cp_rank *rv = &cp->ranks[ev->rank];
    cp_ref pr = {0, 0, CP_NONE, 0};
    if (rv->n)
        pr = *win_at(cp, ev->rank, rv->n - 1);
    const uint32_t prev = pr.idx;
    const uint32_t i = (uint32_t)cp->nn;
    int64_t db = ev->d_before[s], da = ev->d_after[s], delta = ev->delta[s];
    int64_t R = ev->start, E = ev->end;
    cp_node n = {0};
    n.dur = E - R;
    n.pend = E - da;
    n.seq = ev->seq;
    n.func = ev->func;
    n.callsite = ev->callsite;
    n.rank = ev->rank;
    n.prev = prev;
    n.e0 = cp->edges.n;
    n.flags = (uint8_t)((ev->is_call ? NF_CALL : 0) | (ev->candidate ? NF_CAND : 0) | (ev->gap ? NF_GAP : 0));
    const int64_t pend = E - da, pprev = pr.pend;
    int64_t f = INT64_MIN;  /* the latest of the edges: pend, checked below */
#define EDGE(p, pp, w, vr, vs)                                                                                         \
    do {                                                                                                               \
        if (put_edge(cp, &n, (p), (w), (vr), (vs)))                                                                    \
            return io_err(err);                                                                                        \
        if ((pp) + (w) > f)                                                                                            \
            f = (pp) + (w);                                                                                            \
    } while (0)
    uint8_t ck;
    uint32_t crit = CP_NONE, via_rank = CP_NONE;
    uint64_t via_seq = 0;
    int64_t low;
    if (ev->ncons == 0) {
        /* A local event: d_after = d_before + δ. */
        if (da != db + delta)
            return vt__cp_err(err, "critical path: event %u:%" PRIu64 ": d_after %" PRId64 " is not d_before %" PRId64
                              " + delta %" PRId64 " for a local event", ev->rank, ev->seq, da, db, delta);
        if (prev != CP_NONE) {
            EDGE(prev, pprev, pend - pprev, ev->rank, ev->seq);
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
        uint32_t bestpred = CP_NONE;
        for (size_t k = 0; k < ev->ncons; k++) {
            const vt_obs_con *c = &ev->cons[k];
            /* A local contributor's D is this rank's d before the call: d_before (its D
             * pointer may already show the rank's d after the event). */
            int64_t D = c->kind == VT_CON_LOCAL ? db : c->D[s];
            int64_t val = D + (M - c->T), ready = c->T - D;
            uint32_t vr = c->rank;
            cp_ref p = {0, 0, CP_NONE, 0};
            switch (c->kind) {
            case VT_CON_LOCAL: p = pr; break;
            case VT_CON_SYNC_MSG:
                if (before(cp, ev->rank, c->seq, &p, err))
                    return -1;
                vr = ev->rank;
                break;
            case VT_CON_GATE:
                p = cp->scratch[k];
                vr = CP_NONE;
                if (!cp->scratch_partial[k] && p.pend != ready)
                    return vt__cp_err(err, "critical path: event %u:%" PRIu64 ": gate ready time %" PRId64
                                      " differs from its members' latest %" PRId64, ev->rank, ev->seq, ready, p.pend);
                break;
            default:
                if (before_rec(cp, c->rank, c->seq, &p, err))
                    return -1;
                break;
            }
            if (p.idx != CP_NONE)
                EDGE(p.idx, p.pend, ready - p.pend + (E - M - delta), vr, c->seq);
            else
                n.flags |= NF_PARTIAL;
            /* The least D + (M - T); ties: the local contributor, then the first. */
            if (best == SIZE_MAX || val < bestval ||
                (val == bestval && c->kind == VT_CON_LOCAL && ev->cons[best].kind != VT_CON_LOCAL)) {
                best = k;
                bestval = val;
                bestready = ready;
                bestpred = p.idx;
            }
        }
        if (ev->base && ev->base[s] != bestval)
            return vt__cp_err(err, "critical path: event %u:%" PRIu64 ": completion rule gives %" PRId64
                              ", the replay %" PRId64, ev->rank, ev->seq, bestval, ev->base[s]);
        const vt_obs_con *b = &ev->cons[best];
        static const uint8_t map[] = {[VT_CON_LOCAL] = CK_LOCAL, [VT_CON_MSG] = CK_MSG, [VT_CON_SYNC_MSG] = CK_SYNC_MSG,
                                      [VT_CON_SYNC_POST] = CK_SYNC_POST, [VT_CON_GATE] = CK_GATE};
        ck = map[b->kind];
        crit = bestpred;
        low = bestready;
        via_rank = b->kind == VT_CON_SYNC_MSG ? ev->rank : b->rank;
        via_seq = b->seq;
        if (ck == CK_LOCAL && prev != CP_NONE)
            low = pprev;   /* a reduced trace's R* > R: the gap is the event's */
        int64_t want = bestval;
        if (ev->candidate) {
            /* The candidate rule's cap d_before + (E - R): pend >= R - d_before. */
            int64_t cap = db + (E - R);
            if (prev != CP_NONE)
                EDGE(prev, pprev, (R - db) - pprev, ev->rank, ev->seq);
            if (cap <= bestval + delta) {
                ck = prev != CP_NONE ? CK_LOCAL : CK_NONE;
                crit = prev;
                low = prev != CP_NONE ? pprev : R - db;
                via_rank = CP_NONE;
                want = cap;
            } else {
                want = bestval + delta;
            }
        }
        if (want != da)
            return vt__cp_err(err, "critical path: event %u:%" PRIu64 ": d_after %" PRId64 " is not the model's %" PRId64,
                              ev->rank, ev->seq, da, want);
        if (crit == CP_NONE && ck != CK_NONE)
            ck = CK_NONE; /* a contributor without an event before it: the walk ends here */
    }
#undef EDGE
    /* Every node's predicted end is the latest of its edges (exactly: the weights are
     * built that way), a check of the graph the slack relies on. */
    if (n.ne && !(n.flags & NF_PARTIAL) && f != n.pend)
        return vt__cp_err(err, "critical path: internal error: event %u:%" PRIu64 " ends at %" PRId64
                          " predicted, its dependencies give %" PRId64, n.rank, n.seq, n.pend, f);
    n.ck = ck;
    n.crit = crit;
    n.low = low;
    n.via_rank = via_rank;
    n.via_seq = via_seq;
    if (put_node(cp, &n, err))
        return -1;
    if (push_rank(cp, ev->rank, ev->seq, n.pend, i, ev->gap))
        goto nomem;
    return 0;
nomem:
    return vt__cp_err(err, "critical path: out of memory");
}
