/* Wait-state patterns of a full trace, streamed (patterns_priv.h): an observer of the
 * replay (replay.h), which matches messages and groups collectives in one pass with
 * memory for what is in flight. Every call's figures are those patterns.c computes with
 * the trace in memory:
 *   Late Sender: the receiving call's enter to the latest send's enter (S) of the
 *     messages it completes (a probed message counts at the receive that takes it);
 *   Late Receiver: a synchronous send's (or the Wait of its MPI_Isend) enter to the
 *     receive's post (P);
 *   collective waits: from the gate's members (every rank's enter);
 *   Wrong Order: a Late Sender call whose message was sent after one that a later call
 *     of the rank completes. That needs the rank's future: the calls that receive are
 *     spilled (32 bytes each) and swept backwards at the end. */
#include "analysis/patterns_priv.h"
#include "analysis/replay.h"
#include "analysis/spill.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct probed {  /* a message a probe completed, taken by a later receive */
    uint64_t probe_seq;
    int64_t S;
} probed;

typedef struct rank_st {
    agg a;
    uint8_t *ctype;      /* per function: enum vt__pat_ctype + 1, 0 not known yet */
    probed *pr;          /* in flight: a few */
    size_t npr, cappr;
    uint64_t *isend;     /* synchronous MPI_Isend calls (model seq) not completed yet */
    size_t nis, capis;
} rank_st;

typedef struct wo_rec {  /* a call that completed messages, for Wrong Order */
    int64_t minS, maxS;
    int64_t ls;          /* its Late Sender severity, 0 none */
    int32_t callsite;
    uint32_t rank;
} wo_rec;

typedef struct pstream {
    const vt_trace *t;
    const vt_model_params *mp;
    uint32_t nranks;
    uint32_t lo, hi;     /* the ranks this process replays (parallel; else all) */
    rank_st *rs;
    int64_t *rank_wait;
    vt_spill wo;
} pstream;

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        uint64_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv, *cap = nc;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Removes X from the set; 1 when it was there. */
static int take_u64(uint64_t *v, size_t *n, uint64_t x)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i] == x) {
            v[i] = v[--*n];
            return 1;
        }
    return 0;
}

static enum vt__pat_ctype ctype_of(rank_st *r, const vt_obs_event *ev)
{
    if (ev->kind != VT_MK_COLL && ev->kind != VT_MK_ICOLL)
        return C_NONE;
    if (!r->ctype[ev->fn])
        r->ctype[ev->fn] = (uint8_t)(vt__pat_coll_type(ev->func) + 1);
    return (enum vt__pat_ctype)(r->ctype[ev->fn] - 1);
}

/* The wait of a blocking collective's member at ENTER in its complete gate G. */
static int64_t coll_wait(const vt_obs_con *g, enum vt__pat_ctype ct, uint32_t rank, int64_t root, int64_t enter,
                         int *pat)
{
    int64_t last = INT64_MIN, root_enter = INT64_MIN, last_other = INT64_MIN;
    for (size_t k = 0; k < g->nmembers; k++) {
        const vt_obs_member *m = &g->members[k];
        if (m->T > last)
            last = m->T;
        if ((int64_t)m->rank == root)
            root_enter = m->T;
        else if (m->T > last_other)
            last_other = m->T;
    }
    switch (ct) {
    case C_BARRIER: *pat = VT_PAT_WAIT_BARRIER; return last - enter;
    case C_NXN: *pat = VT_PAT_WAIT_NXN; return last - enter;
    case C_TOROOT:
        *pat = VT_PAT_EARLY_REDUCE;
        return (int64_t)rank == root ? last_other - enter : 0;
    case C_FROMROOT:
        *pat = VT_PAT_LATE_BCAST;
        return (int64_t)rank != root && root_enter != INT64_MIN ? root_enter - enter : 0;
    default: return 0;
    }
}

/* A blocking collective counts when patterns.c would group it: a communicator of more
 * than one rank, not an intercommunicator, sequence numbered. */
static int coll_counts(const vt_trace *t, uint32_t rank, const vt_event *rec)
{
    if (!(rec->fields & VT_F_COLLSEQ) || !(rec->fields & VT_F_COMM))
        return 0;
    const vt_comm *cm = vt_trace_comm(t, rank, rec->comm);
    return cm && !(cm->flags & 1) && cm->size > 1;
}

static int on_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    pstream *P = arg;
    if (!ev->is_call || ev->gap || !ev->rec || ev->fn < 0)
        return 0;
    uint32_t q = ev->rank;
    const vt_rank *rk = vt_trace_rank(P->t, q);
    if ((size_t)ev->fn >= rk->nfuncs)
        return 0;
    rank_st *r = &P->rs[q];
    const vt_event *rec = ev->rec;
    int64_t enter = vt_global_time(P->t, q, rec->enter), exit = vt_global_time(P->t, q, rec->exit);
    if (exit < enter)
        exit = enter;
    int64_t cs = rec->callsite >= 0 && (uint64_t)rec->callsite < rk->ncallsites ? rec->callsite : -1;
    enum vt_model_kind kind = ev->kind;
    enum vt__pat_ctype ct = ctype_of(r, ev);
    int64_t minS = INT64_MAX, maxS = INT64_MIN, lr = 0, cw = 0;
    size_t nmsg = 0;
    int cpat = 0;
    for (size_t i = 0; i < ev->ncons; i++) {
        const vt_obs_con *c = &ev->cons[i];
        if (c->kind == VT_CON_MSG && c->probed) {
            if (r->npr == r->cappr) {
                size_t nc = r->cappr ? 2 * r->cappr : 4;
                probed *v = realloc(r->pr, nc * sizeof *v);
                if (!v)
                    goto oom;
                r->pr = v, r->cappr = nc;
            }
            r->pr[r->npr++] = (probed){ev->seq, c->S};
        } else if (c->kind == VT_CON_MSG) {
            nmsg++;
            minS = c->S < minS ? c->S : minS;
            maxS = c->S > maxS ? c->S : maxS;
        } else if (c->kind == VT_CON_SYNC_POST && i > 0 && ev->cons[i - 1].kind == VT_CON_SYNC_MSG) {
            uint64_t send_seq = ev->cons[i - 1].seq;
            int counts = send_seq == ev->seq ? kind == VT_MK_SEND || kind == VT_MK_SSEND || kind == VT_MK_BSEND ||
                                                   kind == VT_MK_SENDRECV
                                             : take_u64(r->isend, &r->nis, send_seq);
            if (counts && c->P - enter > lr)
                lr = c->P - enter;
        } else if (c->kind == VT_CON_GATE && !c->nonblocking && kind == VT_MK_COLL && coll_counts(P->t, q, rec)) {
            int64_t root = (rec->fields & VT_F_ROOT) ? rec->root : -1;
            int64_t w = coll_wait(c, ct, q, root, enter, &cpat);
            if (w > 0)
                cw = w;
        }
    }
    for (size_t i = 0; i < ev->nprobed; i++)
        for (size_t j = 0; j < r->npr; j++)
            if (r->pr[j].probe_seq == ev->probed_by[i]) {
                nmsg++;
                minS = r->pr[j].S < minS ? r->pr[j].S : minS;
                maxS = r->pr[j].S > maxS ? r->pr[j].S : maxS;
                r->pr[j] = r->pr[--r->npr];
                j--;
            }
    if ((kind == VT_MK_ISEND || kind == VT_MK_ISSEND || kind == VT_MK_IBSEND) &&
        vt_model_is_sync(vt_model_send_kind(ev->func), (rec->fields & VT_F_BYTES) ? rec->bytes : 0, P->mp) &&
        push_u64(&r->isend, &r->nis, &r->capis, ev->seq))
        goto oom;
    int64_t dur = exit - enter, ls = 0;
    if (nmsg && (kind == VT_MK_RECV || kind == VT_MK_SENDRECV || kind == VT_MK_COMPLETION) && maxS - enter > 0)
        ls = maxS - enter < dur ? maxS - enter : dur;
    lr = lr > 0 ? (lr < dur ? lr : dur) - ls : 0;
    cw = cw > 0 ? (cw < dur ? cw : dur) : 0;
    if (ls > 0)
        vt__pat_agg_add(&r->a, VT_PAT_LATE_SENDER, cs, ls);
    if (lr > 0)
        vt__pat_agg_add(&r->a, VT_PAT_LATE_RECEIVER, cs, lr);
    if (cw > 0)
        vt__pat_agg_add(&r->a, cpat, cs, cw);
    int64_t waited = ls + (lr > 0 ? lr : 0) + cw;
    P->rank_wait[q] += waited;
    int cost = vt__pat_cost_of(kind, ct);
    if (cost >= 0)
        vt__pat_agg_add(&r->a, cost, cs, dur - waited);
    if (nmsg) {
        wo_rec w = {minS, maxS, ls, (int32_t)cs, q};
        if (vt_spill_put(&P->wo, &w))
            return vt_error_set(err, "cannot write a temporary file: %s", strerror(errno));
    }
    return 0;
oom:
    return vt_error_set(err, "out of memory");
}

/* Wrong Order: backwards over each rank's receiving calls, with the earliest send of
 * the messages its later calls completed. */
static int wrong_order(pstream *P, vt_error *err)
{
    int64_t *minlater = malloc((P->nranks ? P->nranks : 1) * sizeof *minlater);
    if (!minlater)
        return vt_error_set(err, "out of memory");
    for (uint32_t q = 0; q < P->nranks; q++)
        minlater[q] = INT64_MAX;
    for (uint64_t i = P->wo.n; i > 0; i--) {
        wo_rec w;
        if (vt_spill_get(&P->wo, i - 1, &w, 1)) {
            free(minlater);
            return vt_error_set(err, "cannot read a temporary file: %s", strerror(errno));
        }
        if (w.ls > 0 && w.maxS > minlater[w.rank])
            vt__pat_agg_add(&P->rs[w.rank].a, VT_PAT_WRONG_ORDER, w.callsite, w.ls);
        if (w.minS < minlater[w.rank])
            minlater[w.rank] = w.minS;
    }
    free(minlater);
    return 0;
}

/* Process 0 of a parallel run takes the others' entries (their ranks'). */
static int take_entries(void *arg, int from, const uint8_t *data, size_t len)
{
    (void)from;
    entries *e = arg;
    vt_pattern_result_entry x;
    if (len % sizeof x)
        return -1;
    for (size_t off = 0; off < len; off += sizeof x) {
        memcpy(&x, data + off, sizeof x);
        if (vt__pat_ent_add(e, x.pattern, x.rank, x.callsite, x.severity_ns, x.count))
            return -1;
    }
    return 0;
}

int vt__pat_gather(const vt_par_comm *pc, entries *e, int64_t *rank_wait, uint32_t nranks)
{
    uint8_t **out = calloc((size_t)pc->nproc, sizeof *out);
    size_t *len = calloc((size_t)pc->nproc, sizeof *len);
    int rc = -1;
    if (out && len) {
        if (pc->me != 0) {
            out[0] = (uint8_t *)e->v;
            len[0] = e->n * sizeof *e->v;
        }
        rc = pc->exchange(pc->arg, out, len, take_entries, e);
        if (pc->me != 0)
            e->n = 0;
    }
    int64_t bad = rc != 0;
    if (pc->sum(pc->arg, &bad, 1) || bad || pc->sum(pc->arg, rank_wait, nranks))
        rc = -1;
    free(out);
    free(len);
    return rc;
}

/* One analysis: serial (pc NULL) or this process's share of a parallel one (0 or -1
 * on every process alike; process 0 gets every entry). */
static int stream_run(const vt_trace *t, const vt_model_params *mp, entries *e, int64_t *rank_wait,
                      const vt_par_comm *pc, uint64_t *par_stats, vt_error *err)
{
    pstream P = {.t = t, .mp = mp, .nranks = vt_trace_nranks(t), .rank_wait = rank_wait, .wo = {.fd = -1}};
    P.hi = P.nranks;
    if (pc) {
        P.lo = (uint32_t)((uint64_t)pc->me * P.nranks / (uint32_t)pc->nproc);
        P.hi = (uint32_t)((uint64_t)(pc->me + 1) * P.nranks / (uint32_t)pc->nproc);
    }
    int rc = -1;
    int64_t bad = 0;
    P.rs = calloc(P.nranks ? P.nranks : 1, sizeof *P.rs);
    if (!P.rs)
        bad = vt_error_set(err, "out of memory");
    for (uint32_t q = P.lo; !bad && q < P.hi; q++) {
        const vt_rank *rk = vt_trace_rank(t, q);
        if (vt__pat_agg_init(&P.rs[q].a, rk->ncallsites) || !(P.rs[q].ctype = calloc(rk->nfuncs + 1, 1)))
            bad = vt_error_set(err, "out of memory");
    }
    if (!bad && vt_spill_open(&P.wo, sizeof(wo_rec)))
        bad = vt_error_set(err, "cannot create a temporary file: %s", strerror(errno));
    if (pc && pc->sum(pc->arg, &bad, 1))
        bad = 1;
    if (bad)
        goto out;
    vt_observer obs = {.arg = &P, .event = on_event};
    vt_replay_result res;
    if (pc ? vt_replay_par_observe(t, mp, NULL, 0, &obs, pc, &res, err)
           : vt_replay_observe(t, NULL, mp, NULL, 0, &obs, &res, err))
        goto out;
    par_stats[0] = res.par_rounds;
    par_stats[1] = res.par_bytes;
    par_stats[2] = res.events;
    vt_replay_result_free(&res);
    bad = wrong_order(&P, err);
    for (uint32_t q = P.lo; !bad && q < P.hi; q++)
        if (vt__pat_agg_flush(&P.rs[q].a, q, e))
            bad = vt_error_set(err, "out of memory");
    if (pc && pc->sum(pc->arg, &bad, 1))
        bad = 1;
    if (bad || (pc && vt__pat_gather(pc, e, rank_wait, P.nranks)))
        goto out;
    rc = 0;
out:
    vt_spill_close(&P.wo);
    for (uint32_t q = 0; P.rs && q < P.nranks; q++) {
        free(P.rs[q].a.sev), free(P.rs[q].a.cnt);
        free(P.rs[q].ctype), free(P.rs[q].pr), free(P.rs[q].isend);
    }
    free(P.rs);
    return rc;
}

int vt__pat_serial_fallback(const vt_trace *t, const vt_par_comm *pc, entries *e, int64_t *rank_wait,
                            uint64_t *par_stats, vt_error *err, vt__pat_serial_fn serial, void *arg)
{
    e->n = 0;
    memset(par_stats, 0, 3 * sizeof *par_stats);
    memset(rank_wait, 0, vt_trace_nranks(t) * sizeof *rank_wait);
    err->msg[0] = 0;
    int64_t v = 0;
    int rc = -1;
    if (pc->me == 0) {
        rc = serial(arg, e, rank_wait, par_stats, err);
        v = rc != 0;
    }
    if (pc->sum(pc->arg, &v, 1))
        v = 1;
    return pc->me == 0 ? rc : v ? -1 : 0;
}

typedef struct stream_args {
    const vt_trace *t;
    const vt_model_params *mp;
} stream_args;

static int stream_serial(void *arg, entries *e, int64_t *rank_wait, uint64_t *par_stats, vt_error *err)
{
    const stream_args *a = arg;
    return stream_run(a->t, a->mp, e, rank_wait, NULL, par_stats, err);
}

int vt__patterns_stream(const vt_trace *t, const vt_model_params *mp, entries *e, int64_t *rank_wait,
                        const vt_par_comm *pc, uint64_t *par_stats, vt_error *err)
{
    memset(par_stats, 0, 3 * sizeof *par_stats);
    if (!pc)
        return stream_run(t, mp, e, rank_wait, NULL, par_stats, err);
    if (stream_run(t, mp, e, rank_wait, pc, par_stats, err) == 0)
        return 0;
    stream_args a = {t, mp};
    return vt__pat_serial_fallback(t, pc, e, rank_wait, par_stats, err, stream_serial, &a);
}
