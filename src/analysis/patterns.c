/* Wait-state patterns (patterns.h). Full traces: every record of every rank is kept as a
 * small entry (times already global), messages come from vt_trace_match, collectives are
 * grouped by (communicator id, sequence number). Reduced traces: what their records
 * still show (unmerged messages, complete collective gates) and the exact profile. */
#include "analysis/patterns.h"
#include "analysis/patterns_priv.h"
#include "analysis/symbols.h"
#include "util/codec.h"
#include "model/model.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const builtin_names[VT_PAT_NBUILTIN] = {
    "Late Sender", "Wrong Order", "Late Receiver", "Wait at Barrier", "Wait at NxN", "Early Reduce",
    "Late Broadcast", "P2P Communication", "Collective Communication", "Synchronization",
};

const char *vt_pattern_name(enum vt_pattern_id id)
{
    return (unsigned)id < VT_PAT_NBUILTIN ? builtin_names[id] : "?";
}

const char *vt_pattern_parent(enum vt_pattern_id id)
{
    return id == VT_PAT_WRONG_ORDER ? "Late Sender" : NULL;
}

static void set_err(vt_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(vt_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ full traces */

typedef struct prec {
    int64_t enter, exit;     /* global ns */
    int64_t ls, lr, cw;      /* Late Sender, Late Receiver, collective wait found here */
    int64_t wait_rec;        /* non-blocking send: the record that completed it, -1 */
    int64_t p_enter, p_exit; /* matched partner (latest entered) */
    int32_t fn, callsite;
    uint32_t npart, p_rank;
    uint8_t kind, ctype, wrong, cpat;
} prec;

typedef struct rankdata {
    prec *r;
    size_t n;
} rankdata;

typedef struct centry {
    uint64_t comm_id, collseq;
    uint64_t idx;
    int64_t root;
    uint32_t rank, size;
} centry;

typedef struct centries {
    centry *v;
    size_t n, cap;
} centries;

static int cent_add(centries *c, centry x)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        centry *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v, c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

static int cmp_cent(const void *a, const void *b)
{
    const centry *x = a, *y = b;
    if (x->comm_id != y->comm_id)
        return x->comm_id < y->comm_id ? -1 : 1;
    if (x->collseq != y->collseq)
        return x->collseq < y->collseq ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Open non-blocking sends of one rank: request id -> record index (open addressing). */
typedef struct reqmap {
    uint64_t *key;
    uint64_t *val;
    size_t cap, n;
} reqmap;

static size_t rm_slot(const reqmap *m, uint64_t k)
{
    size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
    while (m->key[i] && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int rm_put(reqmap *m, uint64_t k, uint64_t v)
{
    if (!k)
        return 0;
    if (2 * (m->n + 1) > m->cap) {
        reqmap nm = {NULL, NULL, m->cap ? 2 * m->cap : 1024, 0};
        nm.key = calloc(nm.cap, sizeof *nm.key);
        nm.val = calloc(nm.cap, sizeof *nm.val);
        if (!nm.key || !nm.val) {
            free(nm.key), free(nm.val);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t s = rm_slot(&nm, m->key[i]);
                nm.key[s] = m->key[i], nm.val[s] = m->val[i], nm.n++;
            }
        free(m->key), free(m->val);
        *m = nm;
    }
    size_t s = rm_slot(m, k);
    if (!m->key[s])
        m->n++;
    m->key[s] = k, m->val[s] = v;
    return 0;
}

/* Removes K; returns its value or UINT64_MAX. (Deletion by re-inserting the cluster.) */
static uint64_t rm_take(reqmap *m, uint64_t k)
{
    if (!m->cap || !k)
        return UINT64_MAX;
    size_t s = rm_slot(m, k);
    if (!m->key[s])
        return UINT64_MAX;
    uint64_t v = m->val[s];
    m->key[s] = 0, m->n--;
    for (size_t i = (s + 1) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1)) {
        uint64_t kk = m->key[i], vv = m->val[i];
        m->key[i] = 0, m->n--;
        size_t j = rm_slot(m, kk);
        m->key[j] = kk, m->val[j] = vv, m->n++;
    }
    return v;
}

static int load_rank(const vt_trace *t, uint32_t rank, rankdata *rd, centries *ce, vt_error *err)
{
    const vt_rank *rk = vt_trace_rank(t, rank);
    size_t nf = rk->nfuncs;
    uint8_t *fkind = calloc(nf + 1, 1), *fct = calloc(nf + 1, 1);
    vt_cursor *c = NULL;
    reqmap rm = {0};
    int rc = -1;
    if (!fkind || !fct) {
        set_err(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nf; i++) {
        fkind[i] = (uint8_t)vt_model_kind_of(rk->funcs[i].name);
        fct[i] = (uint8_t)(fkind[i] == VT_MK_COLL || fkind[i] == VT_MK_ICOLL ? vt__pat_coll_type(rk->funcs[i].name)
                                                                            : C_NONE);
    }
    /* the blocks' record counts are the file's word until the records are read: a
     * first guess, grown as they come */
    size_t cap = rk->nrecords < (1u << 20) ? (rk->nrecords ? (size_t)rk->nrecords : 64) : (1u << 20);
    rd->r = malloc(cap * sizeof *rd->r);
    rd->n = 0;
    if (!rd->r) {
        set_err(err, "out of memory (%zu records on rank %" PRIu32 ")", cap, rank);
        goto out;
    }
    if (vt_cursor_open(t, rank, &c, err))
        goto out;
    vt_event ev;
    int got;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        if (ev.index >= cap) {
            size_t ncap = 2 * cap > ev.index + 1 ? 2 * cap : (size_t)ev.index + 1;
            prec *nr = realloc(rd->r, ncap * sizeof *nr);
            if (!nr) {
                set_err(err, "out of memory");
                goto out;
            }
            rd->r = nr, cap = ncap;
        }
        while (rd->n <= ev.index) {
            prec *p = &rd->r[rd->n++];
            memset(p, 0, sizeof *p);
            p->fn = -1, p->callsite = -1, p->wait_rec = -1;
            p->kind = VT_MK_LOCAL;
        }
        prec *p = &rd->r[ev.index];
        p->enter = vt_global_time(t, rank, ev.enter);
        p->exit = vt_global_time(t, rank, ev.exit);
        if (p->exit < p->enter)
            p->exit = p->enter;
        if (ev.fn < 0 || (size_t)ev.fn >= nf)
            continue;
        p->fn = (int32_t)ev.fn;
        p->callsite = ev.callsite >= 0 && (uint64_t)ev.callsite < rk->ncallsites ? (int32_t)ev.callsite : -1;
        p->kind = fkind[ev.fn];
        p->ctype = fct[ev.fn];
        if ((p->kind == VT_MK_ISEND || p->kind == VT_MK_ISSEND || p->kind == VT_MK_IBSEND) &&
            (ev.fields & VT_F_REQUEST) && rm_put(&rm, ev.request, ev.index)) {
            set_err(err, "out of memory");
            goto out;
        }
        for (size_t k = 0; k < ev.ndone; k++) {
            if (ev.done[k].flags & (VT_COMPL_RECV | VT_COMPL_PERSISTENT | VT_COMPL_CANCELLED))
                continue;
            uint64_t is = rm_take(&rm, ev.done[k].request);
            if (is != UINT64_MAX && is < rd->n)
                rd->r[is].wait_rec = (int64_t)ev.index;
        }
        if (p->kind == VT_MK_COLL && (ev.fields & VT_F_COLLSEQ) && (ev.fields & VT_F_COMM)) {
            const vt_comm *cm = vt_trace_comm(t, rank, ev.comm);
            if (cm && !(cm->flags & 1) && cm->size > 1) {
                centry x = {cm->id, ev.collseq, ev.index, (ev.fields & VT_F_ROOT) ? ev.root : -1, rank, cm->size};
                if (cent_add(ce, x)) {
                    set_err(err, "out of memory");
                    goto out;
                }
            }
        }
    }
    if (got == 0)
        rc = 0;
out:
    vt_cursor_close(c);
    free(rm.key), free(rm.val);
    free(fkind), free(fct);
    return rc;
}

static void set_partner(prec *p, uint32_t rank, int64_t enter, int64_t exit_)
{
    if (!p->npart || enter > p->p_enter)
        p->p_rank = rank, p->p_enter = enter, p->p_exit = exit_;
    p->npart++;
}

typedef struct recvo {
    uint64_t done;
    int64_t S;
} recvo;

static int cmp_recvo(const void *a, const void *b)
{
    const recvo *x = a, *y = b;
    return x->done < y->done ? -1 : x->done > y->done;
}

/* Late Sender, Wrong Order, Late Receiver; partners for the plug-ins. */
static int p2p_waits(const vt_trace *t, const vt_matches *m, rankdata *rd, uint32_t nranks, const vt_model_params *mp,
                     vt_error *err)
{
    for (uint32_t q = 0; q < nranks; q++) {
        size_t n;
        const vt_match_recv *rv = vt_matches_recvs(m, q, &n);
        if (!rv && n) {
            set_err(err, "out of memory (matching)");
            return -1;
        }
        recvo *ord = malloc((n ? n : 1) * sizeof *ord);
        if (!ord) {
            set_err(err, "out of memory");
            return -1;
        }
        size_t no = 0;
        for (size_t i = 0; i < n; i++) {
            const vt_match_recv *r = &rv[i];
            if (r->send_pos == SIZE_MAX || r->send_rank >= nranks || r->send_index >= rd[r->send_rank].n ||
                r->done_index >= rd[q].n)
                continue;
            const prec *s = &rd[r->send_rank].r[r->send_index];
            prec *d = &rd[q].r[r->done_index];
            set_partner(d, r->send_rank, s->enter, s->exit);
            if (r->index != r->done_index && r->index < rd[q].n)
                set_partner(&rd[q].r[r->index], r->send_rank, s->enter, s->exit);
            ord[no++] = (recvo){r->done_index, s->enter};
            if (d->kind == VT_MK_RECV || d->kind == VT_MK_SENDRECV || d->kind == VT_MK_COMPLETION) {
                int64_t w = s->enter - d->enter;
                if (w > d->ls)
                    d->ls = w;
            }
        }
        /* Wrong Order: a later-completed receive got a message sent before this one. */
        vt_sort(ord, no, sizeof *ord, cmp_recvo);
        int64_t minlater = INT64_MAX;
        for (size_t i = no; i > 0;) {
            size_t j = i;
            while (j > 0 && ord[j - 1].done == ord[i - 1].done)
                j--;
            int64_t mingroup = INT64_MAX;
            for (size_t k = j; k < i; k++) {
                prec *d = &rd[q].r[ord[k].done];
                if (d->ls > 0 && ord[k].S - d->enter > 0 && minlater < ord[k].S)
                    d->wrong = 1;
                if (ord[k].S < mingroup)
                    mingroup = ord[k].S;
            }
            if (mingroup < minlater)
                minlater = mingroup;
            i = j;
        }
        free(ord);
    }
    for (uint32_t p = 0; p < nranks; p++) {
        size_t n;
        const vt_match_send *sv = vt_matches_sends(m, p, &n);
        if (!sv && n) {
            set_err(err, "out of memory (matching)");
            return -1;
        }
        const vt_rank *rk = vt_trace_rank(t, p);
        for (size_t i = 0; i < n; i++) {
            const vt_match_send *s = &sv[i];
            if (s->recv_pos == SIZE_MAX || s->dst >= nranks || s->index >= rd[p].n)
                continue;
            size_t nr;
            const vt_match_recv *rv = vt_matches_recvs(m, s->dst, &nr);
            if (!rv || s->recv_pos >= nr)
                continue;
            const vt_match_recv *r = &rv[s->recv_pos];
            if (r->post_index >= rd[s->dst].n)
                continue;
            int64_t P = rd[s->dst].r[r->post_index].enter;
            int64_t E = vt_global_time(t, s->dst, r->done_exit);
            prec *sp = &rd[p].r[s->index];
            set_partner(sp, s->dst, P, E);
            prec *w = NULL;
            if (sp->kind == VT_MK_SEND || sp->kind == VT_MK_SSEND || sp->kind == VT_MK_BSEND ||
                sp->kind == VT_MK_SENDRECV)
                w = sp;
            else if (sp->wait_rec >= 0 && (size_t)sp->wait_rec < rd[p].n) {
                w = &rd[p].r[sp->wait_rec];
                set_partner(w, s->dst, P, E);
            }
            if (!w || s->fn < 0 || (size_t)s->fn >= rk->nfuncs)
                continue;
            if (!vt_model_is_sync(vt_model_send_kind(rk->funcs[s->fn].name), s->bytes, mp))
                continue;
            int64_t wt = P - w->enter;
            if (wt > w->lr)
                w->lr = wt;
        }
    }
    return 0;
}

static void coll_waits(rankdata *rd, centries *ce)
{
    vt_sort(ce->v, ce->n, sizeof *ce->v, cmp_cent);
    for (size_t i = 0; i < ce->n;) {
        size_t j = i;
        while (j < ce->n && ce->v[j].comm_id == ce->v[i].comm_id && ce->v[j].collseq == ce->v[i].collseq)
            j++;
        /* Only complete instances: every member recorded it (else nothing is sure). */
        if (j - i == ce->v[i].size) {
            int64_t last = INT64_MIN;
            int64_t root_enter = INT64_MIN, last_other = INT64_MIN;
            int64_t root = ce->v[i].root;
            for (size_t k = i; k < j; k++) {
                const prec *p = &rd[ce->v[k].rank].r[ce->v[k].idx];
                if (p->enter > last)
                    last = p->enter;
                if ((int64_t)ce->v[k].rank == root)
                    root_enter = p->enter;
                else if (p->enter > last_other)
                    last_other = p->enter;
            }
            for (size_t k = i; k < j; k++) {
                prec *p = &rd[ce->v[k].rank].r[ce->v[k].idx];
                int isroot = (int64_t)ce->v[k].rank == root;
                int64_t w = 0;
                switch (p->ctype) {
                case C_BARRIER: w = last - p->enter, p->cpat = VT_PAT_WAIT_BARRIER; break;
                case C_NXN: w = last - p->enter, p->cpat = VT_PAT_WAIT_NXN; break;
                case C_TOROOT:
                    if (isroot)
                        w = last_other - p->enter, p->cpat = VT_PAT_EARLY_REDUCE;
                    break;
                case C_FROMROOT:
                    if (!isroot && root_enter != INT64_MIN)
                        w = root_enter - p->enter, p->cpat = VT_PAT_LATE_BCAST;
                    break;
                default: break;
                }
                if (w > 0)
                    p->cw = w;
            }
        }
        i = j;
    }
}

/* The per-record figures, summed by (pattern, call site). */
static int full_aggregate(const vt_trace *t, rankdata *rd, uint32_t nranks, entries *e, int64_t *rank_wait,
                          vt_error *err)
{
    for (uint32_t q = 0; q < nranks; q++) {
        agg a;
        if (vt__pat_agg_init(&a, vt_trace_rank(t, q)->ncallsites)) {
            free(a.sev), free(a.cnt);
            set_err(err, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < rd[q].n; i++) {
            prec *p = &rd[q].r[i];
            if (p->fn < 0)
                continue;
            int64_t dur = p->exit - p->enter, waited = 0;
            int64_t ls = p->ls > 0 ? (p->ls < dur ? p->ls : dur) : 0;
            int64_t lr = p->lr > 0 ? (p->lr < dur ? p->lr : dur) - ls : 0;
            int64_t cw = p->cw > 0 ? (p->cw < dur ? p->cw : dur) : 0;
            if (ls > 0) {
                vt__pat_agg_add(&a, VT_PAT_LATE_SENDER, p->callsite, ls);
                if (p->wrong)
                    vt__pat_agg_add(&a, VT_PAT_WRONG_ORDER, p->callsite, ls);
            }
            if (lr > 0)
                vt__pat_agg_add(&a, VT_PAT_LATE_RECEIVER, p->callsite, lr);
            if (cw > 0)
                vt__pat_agg_add(&a, p->cpat, p->callsite, cw);
            waited = ls + (lr > 0 ? lr : 0) + cw;
            rank_wait[q] += waited;
            int cost = vt__pat_cost_of((enum vt_model_kind)p->kind, (enum vt__pat_ctype)p->ctype);
            if (cost >= 0)
                vt__pat_agg_add(&a, cost, p->callsite, dur - waited);
        }
        if (vt__pat_agg_flush(&a, q, e)) {
            set_err(err, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* Every call record to the plug-ins, with its partner. */
static int run_plugins(const vt_trace *t, rankdata *rd, uint32_t nranks, const vtrace_pattern *const *pl, void **st,
                       size_t npl, vt_error *err)
{
    int any = 0;
    for (size_t k = 0; k < npl; k++)
        any |= pl[k]->event != NULL;
    if (!any)
        return 0;
    for (uint32_t q = 0; q < nranks; q++) {
        vt_cursor *c;
        if (vt_cursor_open(t, q, &c, err))
            return -1;
        vt_event ev;
        int got;
        while ((got = vt_cursor_next(c, &ev, err)) == 1) {
            const vt_function *f = vt_trace_function(t, q, ev.fn);
            if (!f || ev.index >= rd[q].n)
                continue;
            const prec *p = &rd[q].r[ev.index];
            const char *site = vt_trace_callsite(t, q, p->callsite) ? vt_site_name(t, q, p->callsite) : "";
            vtrace_pattern_event pe = {
                .rank = q,
                .index = ev.index,
                .function = f->name,
                .enter_ns = p->enter,
                .exit_ns = p->exit,
                .callsite = p->callsite,
                .site = site,
                .peer = (ev.fields & VT_F_PEER) ? ev.peer : -1,
                .tag = (ev.fields & VT_F_TAG) ? ev.tag : -1,
                .bytes = (ev.fields & VT_F_BYTES) ? ev.bytes : 0,
                .rpeer = (ev.fields & VT_F_RPEER) ? ev.rpeer : -1,
                .rtag = (ev.fields & VT_F_RTAG) ? ev.rtag : -1,
                .rbytes = (ev.fields & VT_F_RBYTES) ? ev.rbytes : 0,
                .root = (ev.fields & VT_F_ROOT) ? ev.root : -1,
                .npartners = p->npart,
                .partner_rank = p->npart ? p->p_rank : 0,
                .partner_enter_ns = p->npart ? p->p_enter : -1,
                .partner_exit_ns = p->npart ? p->p_exit : -1,
            };
            for (size_t k = 0; k < npl; k++)
                if (pl[k]->event)
                    pl[k]->event(st[k], &pe);
        }
        vt_cursor_close(c);
        if (got < 0)
            return -1;
    }
    return 0;
}

static int analyze_full(const vt_trace *t, const vt_model_params *mp, entries *e, int64_t *rank_wait,
                        const vtrace_pattern *const *pl, void **st, size_t npl, vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    rankdata *rd = calloc(nranks ? nranks : 1, sizeof *rd);
    centries ce = {0};
    vt_matches *m = NULL;
    int rc = -1;
    if (!rd) {
        set_err(err, "out of memory");
        return -1;
    }
    for (uint32_t q = 0; q < nranks; q++)
        if (load_rank(t, q, &rd[q], &ce, err))
            goto out;
    if (vt_trace_match(t, VT_MATCH_PARTIAL, &m, err))
        goto out;
    if (p2p_waits(t, m, rd, nranks, mp, err))
        goto out;
    coll_waits(rd, &ce);
    if (full_aggregate(t, rd, nranks, e, rank_wait, err))
        goto out;
    if (run_plugins(t, rd, nranks, pl, st, npl, err))
        goto out;
    rc = 0;
out:
    vt_matches_free(m);
    for (uint32_t q = 0; q < nranks; q++)
        free(rd[q].r);
    free(rd);
    free(ce.v);
    return rc;
}

/* ------------------------------------------------------------------ reduced traces */

static int cmp_syncp(const void *a, const void *b)
{
    const syncp *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_rgent(const void *a, const void *b)
{
    const rgent *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->collseq != y->collseq)
        return x->collseq < y->collseq ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Serial (pc NULL), or this process's ranks of a parallel analysis (0 or -1 on every
 * process alike; process 0 gets every entry, par_stats the exchanges and bytes). */
static int reduced_run(const vt_trace *t, entries *e, int64_t *rank_wait, const vt_par_comm *pc, uint64_t *par_stats,
                       vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t), lo = 0, hi = nranks;
    if (pc) {
        lo = (uint32_t)((uint64_t)pc->me * nranks / (uint32_t)pc->nproc);
        hi = (uint32_t)((uint64_t)(pc->me + 1) * nranks / (uint32_t)pc->nproc);
    }
    int64_t bad, p1bad = 1;
    syncp *sp = NULL;
    size_t nsp = 0, capsp = 0;
    rgent *gv = NULL;
    size_t ng = 0, capg = 0;
    int rc = -1;
    vt_cursor *c = NULL;
    vt_rrec rr;
    int got;
    /* pass 1: receive posts of synchronous messages; collective gates */
    for (uint32_t q = lo; q < hi; q++) {
        const vt_rank *rk = vt_trace_rank(t, q);
        if (vt_cursor_open(t, q, &c, err))
            goto pass1_end;
        while ((got = vt_cursor_next_reduced(c, &rr, err)) == 1) {
            for (size_t i = 0; i < rr.nmsgs; i++) {
                if (!rr.msgs[i].sync)
                    continue;
                if (nsp == capsp) {
                    capsp = capsp ? 2 * capsp : 256;
                    syncp *v = realloc(sp, capsp * sizeof *v);
                    if (!v) {
                        set_err(err, "out of memory");
                        goto pass1_end;
                    }
                    sp = v;
                }
                sp[nsp++] = (syncp){rr.msgs[i].src, rr.msgs[i].send_seq, vt_global_time(t, q, rr.msgs[i].P)};
            }
            if (rr.fn < 0 || (size_t)rr.fn >= rk->nfuncs ||
                vt_model_kind_of(rk->funcs[rr.fn].name) != VT_MK_COLL)
                continue;
            for (size_t i = 0; i < rr.ngates; i++) {
                if (rr.gates[i].nonblocking)
                    continue;
                if (ng == capg) {
                    capg = capg ? 2 * capg : 256;
                    rgent *v = realloc(gv, capg * sizeof *v);
                    if (!v) {
                        set_err(err, "out of memory");
                        goto pass1_end;
                    }
                    gv = v;
                }
                int64_t cs = rr.callsite >= 0 && (uint64_t)rr.callsite < rk->ncallsites ? rr.callsite : -1;
                gv[ng++] = (rgent){rr.gates[i].comm, rr.gates[i].collseq, q, rr.gates[i].nmembers,
                                   vt_global_time(t, q, rr.enter), vt_global_time(t, q, rr.exit), (int32_t)cs,
                                   (uint8_t)vt__pat_coll_type(rk->funcs[rr.fn].name)};
            }
        }
        vt_cursor_close(c);
        c = NULL;
        if (got < 0)
            goto pass1_end;
    }
    p1bad = 0;
pass1_end:
    vt_cursor_close(c);
    c = NULL;
    bad = p1bad;
    if (pc && pc->sum(pc->arg, &bad, 1))
        bad = 1;
    if (bad)
        goto out;
    if (pc) {
        par_stats[0]++;
        bad = vt__pat_rshare(pc, nranks, &sp, &nsp, &capsp, &gv, &ng, &capg, &par_stats[1]) != 0;
        if (pc->sum(pc->arg, &bad, 1) || bad)
            goto out;
    }
    vt_sort(sp, nsp, sizeof *sp, cmp_syncp);
    vt_sort(gv, ng, sizeof *gv, cmp_rgent);
    /* pass 2: the waits each rank's completions show */
    for (uint32_t q = lo; q < hi; q++) {
        const vt_rank *rk = vt_trace_rank(t, q);
        agg a;
        if (vt__pat_agg_init(&a, rk->ncallsites)) {
            free(a.sev), free(a.cnt);
            goto oom;
        }
        int64_t p2p_wait = 0, coll_wait[VT_PAT_NBUILTIN] = {0};
        if (vt_cursor_open(t, q, &c, err)) {
            free(a.sev), free(a.cnt);
            goto out;
        }
        while ((got = vt_cursor_next_reduced(c, &rr, err)) == 1) {
            if (rr.kind != VT_RREC_COMP || (!rr.nmsgs && !rr.nssends))
                continue;
            int64_t en = vt_global_time(t, q, rr.enter), ex = vt_global_time(t, q, rr.exit);
            int64_t dur = ex > en ? ex - en : 0, ls = 0, lr = 0;
            int64_t cs = rr.callsite >= 0 && (uint64_t)rr.callsite < rk->ncallsites ? rr.callsite : -1;
            for (size_t i = 0; i < rr.nmsgs; i++) {
                int64_t w = vt_global_time(t, rr.msgs[i].src, rr.msgs[i].S) - en;
                if (w > ls)
                    ls = w;
            }
            for (size_t i = 0; i < rr.nssends; i++) {
                syncp key = {q, rr.ssends[i].send_seq, 0};
                const syncp *f = nsp ? bsearch(&key, sp, nsp, sizeof *sp, cmp_syncp) : NULL;
                if (f && f->P - en > lr)
                    lr = f->P - en;
            }
            ls = ls < dur ? ls : dur;
            lr = (lr < dur ? lr : dur) - ls;
            if (ls > 0)
                vt__pat_agg_add(&a, VT_PAT_LATE_SENDER, cs, ls), p2p_wait += ls;
            if (lr > 0)
                vt__pat_agg_add(&a, VT_PAT_LATE_RECEIVER, cs, lr), p2p_wait += lr;
        }
        vt_cursor_close(c);
        c = NULL;
        if (got < 0) {
            free(a.sev), free(a.cnt);
            goto out;
        }
        for (size_t i = 0; i < ng;) {
            size_t j = i;
            while (j < ng && gv[j].comm == gv[i].comm && gv[j].collseq == gv[i].collseq)
                j++;
            if (j - i == gv[i].nmembers && (gv[i].ctype == C_BARRIER || gv[i].ctype == C_NXN)) {
                int64_t last = INT64_MIN;
                for (size_t k = i; k < j; k++)
                    if (gv[k].enter > last)
                        last = gv[k].enter;
                for (size_t k = i; k < j; k++) {
                    if (gv[k].rank != q)
                        continue;
                    int64_t dur = gv[k].exit - gv[k].enter, w = last - gv[k].enter;
                    w = w < dur ? w : dur;
                    int pat = gv[k].ctype == C_BARRIER ? VT_PAT_WAIT_BARRIER : VT_PAT_WAIT_NXN;
                    if (w > 0)
                        vt__pat_agg_add(&a, pat, gv[k].callsite, w), coll_wait[pat] += w;
                }
            }
            i = j;
        }
        /* Costs from the exact per-function profile, less the waits found: upper bounds. */
        int64_t cost[VT_PAT_NBUILTIN] = {0};
        uint64_t calls[VT_PAT_NBUILTIN] = {0};
        for (size_t i = 0; i < rk->nprofile; i++) {
            const vt_function *f = vt_trace_function(t, q, rk->profile[i].fn);
            if (!f)
                continue;
            enum vt_model_kind k = vt_model_kind_of(f->name);
            int cat = vt__pat_cost_of(k, k == VT_MK_COLL ? vt__pat_coll_type(f->name) : C_NONE);
            if (cat >= 0)
                cost[cat] += (int64_t)rk->profile[i].time_ns, calls[cat] += rk->profile[i].calls;
        }
        cost[VT_PAT_P2P_COMM] -= p2p_wait;
        cost[VT_PAT_SYNC] -= coll_wait[VT_PAT_WAIT_BARRIER];
        cost[VT_PAT_COLL_COMM] -= coll_wait[VT_PAT_WAIT_NXN];
        rank_wait[q] += p2p_wait + coll_wait[VT_PAT_WAIT_BARRIER] + coll_wait[VT_PAT_WAIT_NXN];
        if (vt__pat_agg_flush(&a, q, e))
            goto oom;
        for (int cat = VT_PAT_P2P_COMM; cat <= VT_PAT_SYNC; cat++)
            if (calls[cat] && vt__pat_ent_add(e, cat, q, -1, cost[cat] > 0 ? cost[cat] : 0, calls[cat]))
                goto oom;
    }
    rc = 0;
    goto out;
oom:
    set_err(err, "out of memory");
out:
    vt_cursor_close(c);
    free(sp);
    free(gv);
    if (pc) {   /* (every process comes here, failed or not) */
        par_stats[0]++;
        par_stats[1] += pc->me != 0 ? e->n * sizeof *e->v : 0;
        bad = rc != 0;
        if (vt__pat_gather(pc, e, rank_wait, nranks))
            bad = 1;
        if (pc->sum(pc->arg, &bad, 1) || bad)
            rc = -1;
    }
    return rc;
}

static int reduced_serial(void *arg, entries *e, int64_t *rank_wait, uint64_t *par_stats, vt_error *err)
{
    return reduced_run(arg, e, rank_wait, NULL, par_stats, err);
}

static int analyze_reduced(const vt_trace *t, entries *e, int64_t *rank_wait, const vt_par_comm *pc,
                           uint64_t *par_stats, vt_error *err)
{
    memset(par_stats, 0, 3 * sizeof *par_stats);
    if (!pc)
        return reduced_run(t, e, rank_wait, NULL, par_stats, err);
    if (reduced_run(t, e, rank_wait, pc, par_stats, err) == 0) {
        int64_t v[2] = {(int64_t)par_stats[1], 0};
        for (uint32_t q = 0; q < vt_trace_nranks(t); q++)
            v[1] += (int64_t)vt_trace_rank(t, q)->nrecords * (pc->me == 0);
        if (pc->sum(pc->arg, v, 2) == 0) {
            par_stats[1] = (uint64_t)v[0];
            par_stats[2] = (uint64_t)v[1];
            return 0;
        }
    }
    return vt__pat_serial_fallback(t, pc, e, rank_wait, par_stats, err, reduced_serial, (void *)t);
}

/* ------------------------------------------------------------------ driver */

void vt_patterns_free(vt_patterns *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
    free(p->bounds);
    free(p->totals_ns);
    free(p->counts);
    free(p->entries);
    free(p->rank_wait_ns);
    free(p);
}

/* Index of NAME in p->names, added when new; -1 out of memory. */
static int name_index(vt_patterns *p, const char *name, int bound)
{
    for (size_t i = 0; i < p->nnames; i++)
        if (!strcmp(p->names[i], name))
            return (int)i;
    char **nn = realloc(p->names, (p->nnames + 1) * sizeof *nn);
    if (!nn)
        return -1;
    p->names = nn;
    int *nb = realloc(p->bounds, (p->nnames + 1) * sizeof *nb);
    if (!nb)
        return -1;
    p->bounds = nb;
    char *s = strdup(name);
    if (!s)
        return -1;
    p->names[p->nnames] = s;
    p->bounds[p->nnames] = bound;
    return (int)p->nnames++;
}

int vt_patterns_streams(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins)
{
    if (vt_trace_is_reduced(t) || (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE))
        return 0;
    for (size_t k = 0; k < nplugins; k++)
        if (plugins[k]->event)
            return 0;
    return getenv("VTRACE_TEST_PATTERNS_IN_MEMORY") == NULL;   /* (tests: the two must agree) */
}

int vt_patterns_parallel(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins)
{
    return vt_trace_is_reduced(t) || vt_patterns_streams(t, plugins, nplugins);
}

int vt_patterns_analyze(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins, vt_patterns **out,
                        vt_error *err)
{
    return vt_patterns_analyze_par(t, plugins, nplugins, NULL, out, err);
}

int vt_patterns_analyze_par(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins,
                            const vt_par_comm *pc, vt_patterns **out, vt_error *err)
{
    *out = NULL;
    vt_model_params mp;
    if (vt_replay_params(t, &mp, err))
        return -1;
    vt_patterns *p = calloc(1, sizeof *p);
    void **st = calloc(nplugins + 1, sizeof *st);
    entries e = {0};
    int rc = -1;
    if (!p || !st) {
        free(p), free(st);
        set_err(err, "out of memory");
        return -1;
    }
    p->reduced = vt_trace_is_reduced(t);
    p->nranks = vt_trace_nranks(t);
    p->rank_wait_ns = calloc(p->nranks ? p->nranks : 1, sizeof *p->rank_wait_ns);
    if (!p->rank_wait_ns)
        goto oom;
    for (uint32_t q = 0; q < p->nranks; q++) {
        const vt_rank *rk = vt_trace_rank(t, q);
        int64_t d = vt_global_time(t, q, rk->fini_time) - vt_global_time(t, q, rk->init_time);
        p->total_ns += d > 0 ? d : 0;
    }
    for (int i = 0; i < VT_PAT_NBUILTIN; i++) {
        int b = VT_BOUND_EXACT;
        if (p->reduced)
            b = vt_pattern_is_wait(i) ? VT_BOUND_LOWER : VT_BOUND_UPPER;
        if (name_index(p, builtin_names[i], b) != i)
            goto oom;
    }
    for (size_t k = 0; k < nplugins; k++) {
        st[k] = plugins[k]->begin ? plugins[k]->begin(p->nranks, vt_trace_config(t)) : NULL;
        if (name_index(p, plugins[k]->name, p->reduced ? VT_BOUND_LOWER : VT_BOUND_EXACT) < 0)
            goto oom;
    }
    /* Plug-ins see every record with its partner's times (known only once both sides are
     * read), and an incomplete trace is analysed past where the replay stops: both keep
     * the trace in memory. Otherwise it streams. */
    int in_memory = !p->reduced && !vt_patterns_streams(t, plugins, nplugins);
    if (p->reduced ? analyze_reduced(t, &e, p->rank_wait_ns, pc, p->par_stats, err)
        : in_memory ? analyze_full(t, &mp, &e, p->rank_wait_ns, plugins, st, nplugins, err)
                    : vt__patterns_stream(t, &mp, &e, p->rank_wait_ns, in_memory ? NULL : pc, p->par_stats, err))
        goto fail;
    for (size_t k = 0; k < nplugins; k++) {
        const vtrace_pattern_finding *f = NULL;
        size_t nf = plugins[k]->finish(st[k], &f);
        for (size_t i = 0; f && i < nf; i++) {
            int id = name_index(p, f[i].pattern ? f[i].pattern : plugins[k]->name,
                                p->reduced ? VT_BOUND_LOWER : VT_BOUND_EXACT);
            if (id < 0 || vt__pat_ent_add(&e, id, f[i].rank, f[i].callsite, f[i].severity_ns, f[i].count))
                goto oom;
        }
    }
    /* sum duplicates (plug-ins may repeat a key), then sort by severity */
    vt_sort(e.v, e.n, sizeof *e.v, vt__pat_cmp_key);
    size_t w = 0;
    for (size_t i = 0; i < e.n; i++) {
        if (w && !vt__pat_cmp_key(&e.v[w - 1], &e.v[i])) {
            e.v[w - 1].severity_ns += e.v[i].severity_ns;
            e.v[w - 1].count += e.v[i].count;
        } else {
            e.v[w++] = e.v[i];
        }
    }
    e.n = w;
    vt_sort(e.v, e.n, sizeof *e.v, vt__pat_cmp_sev);
    p->totals_ns = calloc(p->nnames, sizeof *p->totals_ns);
    p->counts = calloc(p->nnames, sizeof *p->counts);
    if (!p->totals_ns || !p->counts)
        goto oom;
    for (size_t i = 0; i < e.n; i++) {
        p->totals_ns[e.v[i].pattern] += e.v[i].severity_ns;
        p->counts[e.v[i].pattern] += e.v[i].count;
    }
    p->entries = e.v, p->nentries = e.n;
    e.v = NULL;
    rc = 0;
    goto fail;
oom:
    set_err(err, "out of memory");
fail:
    for (size_t k = 0; k < nplugins; k++)
        if (plugins[k]->end)
            plugins[k]->end(st[k]);
    free(st);
    free(e.v);
    if (rc)
        vt_patterns_free(p);
    else
        *out = p;
    return rc;
}
