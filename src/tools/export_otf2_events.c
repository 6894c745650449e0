/* The OTF2 exporter's events (export_otf2.h): each location's Enter/Leave, point-to-point
 * and collective records of a full trace (with the requests of non-blocking and
 * persistent calls), the records, aggregated stretches and kept messages of a reduced
 * trace; also the exporter's error reporting and the classification of MPI functions
 * into collective operations, which the definitions (export_otf2.c) use too. Calls
 * nothing of export_otf2.c. */
#include "vt_config.h"
#include "tools/export.h"

#ifdef HAVE_OTF2

#include "tools/export_otf2.h"
#include "util/codec.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ requests */

typedef struct req_ent {
    uint64_t key; /* request id (0: empty slot) */
    int used;
    int send, persistent, active, coll;
    uint32_t comm;    /* OTF2 comm ref */
    int64_t peer, tag;
    uint64_t bytes;
} req_ent;

typedef struct req_map {
    req_ent *v;
    size_t cap, n;
} req_map;

static req_ent *req_find(req_map *m, uint64_t key, int create)
{
    if (create && (m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        req_ent *nv = calloc(ncap, sizeof *nv);
        if (!nv)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].used)
                continue;
            size_t j = (m->v[i].key * 0x9e3779b97f4a7c15u) & (ncap - 1);
            while (nv[j].used)
                j = (j + 1) & (ncap - 1);
            nv[j] = m->v[i];
        }
        free(m->v);
        m->v = nv;
        m->cap = ncap;
    }
    if (!m->cap)
        return NULL;
    size_t j = (key * 0x9e3779b97f4a7c15u) & (m->cap - 1);
    while (m->v[j].used) {
        if (m->v[j].key == key)
            return &m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!create)
        return NULL;
    memset(&m->v[j], 0, sizeof m->v[j]);
    m->v[j].used = 1;
    m->v[j].key = key;
    m->n++;
    return &m->v[j];
}

/* Removes E (a request or message that ended): backward-shift deletion, so that the
 * table holds the live ones only (kept as tombstones, it grew with every request of the
 * run). No entry pointer is held across calls. */
static void req_forget(req_map *m, req_ent *e)
{
    size_t i = (size_t)(e - m->v), mask = m->cap - 1;
    for (size_t j = (i + 1) & mask; m->v[j].used; j = (j + 1) & mask) {
        size_t home = (m->v[j].key * 0x9e3779b97f4a7c15u) & mask;
        /* j's entry may move into the hole i unless its home lies cyclically in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->v[i] = m->v[j];
            i = j;
        }
    }
    memset(&m->v[i], 0, sizeof m->v[i]);
    m->n--;
}

/* ------------------------------------------------------------------ errors */

static char otf2_msg[512];

static OTF2_ErrorCode otf2_error_cb(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                                    const char *fmt, va_list va)
{
    (void)ud;
    (void)file;
    (void)line;
    (void)fn;
    if (fmt)
        vsnprintf(otf2_msg, sizeof otf2_msg, fmt, va);
    else
        otf2_msg[0] = 0;
    return code;
}

int vt__otf2_fail(ex *x, const char *what, OTF2_ErrorCode rc)
{
    snprintf(x->err->msg, sizeof x->err->msg, "%s: OTF2 error in %s: %s%s%s", x->o->out, what, OTF2_Error_GetName(rc),
             otf2_msg[0] ? ": " : "", otf2_msg);
    return -1;
}

int vt__otf2_oom(ex *x)
{
    snprintf(x->err->msg, sizeof x->err->msg, "%s: out of memory", x->o->out);
    return -1;
}

void vt__otf2_errors_init(void)
{
    otf2_msg[0] = 0;
    OTF2_Error_RegisterCallback(otf2_error_cb, NULL);
}

/* ------------------------------------------------------------------ MPI functions */

void vt__otf2_base_name(const char *name, char *buf, size_t len)
{
    if (!strncmp(name, "MPI_", 4))
        name += 4;
    snprintf(buf, len, "%s", name);
    size_t n = strlen(buf);
    if (n > 2 && !strcmp(buf + n - 2, "_c"))
        buf[n - 2] = 0;
}

OTF2_CollectiveOp vt__otf2_coll_op(const char *name, int *known)
{
    static const struct {
        const char *n;
        OTF2_CollectiveOp op;
    } ops[] = {
        {"Barrier", OTF2_COLLECTIVE_OP_BARRIER},
        {"Bcast", OTF2_COLLECTIVE_OP_BCAST},
        {"Gather", OTF2_COLLECTIVE_OP_GATHER},
        {"Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
        {"Scatter", OTF2_COLLECTIVE_OP_SCATTER},
        {"Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
        {"Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
        {"Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
        {"Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
        {"Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
        {"Reduce", OTF2_COLLECTIVE_OP_REDUCE},
        {"Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
        {"Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
        {"Scan", OTF2_COLLECTIVE_OP_SCAN},
        {"Exscan", OTF2_COLLECTIVE_OP_EXSCAN},
        {"Neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
        {"Neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"Neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
        {"Neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"Neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
    };
    char b[64];
    vt__otf2_base_name(name, b, sizeof b);
    const char *n = b;
    if (n[0] == 'I' && strcmp(n, "Init") && strncmp(n, "Intercomm", 9))
        n++; /* non-blocking collectives: the role of their blocking form */
    size_t l = strlen(n);
    char c[64];
    snprintf(c, sizeof c, "%s", n);
    if (l > 5 && !strcmp(c + l - 5, "_init"))
        c[l - 5] = 0; /* persistent collectives */
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].n, c)) {
            *known = 1;
            return ops[i].op;
        }
    *known = 0;
    return OTF2_COLLECTIVE_OP_BARRIER;
}

/* ------------------------------------------------------------------ events */

/* Rank of world rank W in communicator C; OTF2_UNDEFINED_UINT32 when not a member. */
static uint32_t comm_rank(const ex *x, uint32_t c, int64_t w)
{
    if (w < 0 || c >= x->ncomms)
        return OTF2_UNDEFINED_UINT32;
    const gcomm *g = &x->comms[c];
    if ((uint64_t)w < g->size && g->members[w] == (uint32_t)w)
        return (uint32_t)w;
    for (uint32_t i = 0; i < g->size; i++)
        if (g->members[i] == (uint32_t)w)
            return i;
    return OTF2_UNDEFINED_UINT32;
}

/* Local time, never before the previous one of the location (OTF2 wants them ordered). */
static OTF2_TimeStamp ts(loc *l, int64_t t)
{
    if (l->any && t < l->last)
        t = l->last;
    if (t < 0)
        t = 0;
    if (!l->any) {
        l->x->first[l->rank] = t;
        l->any = 1;
    }
    l->last = t;
    int64_t g = vt_global_time(l->x->t, l->rank, t);
    if (g < l->x->gmin)
        l->x->gmin = g;
    if (g > l->x->gmax)
        l->x->gmax = g;
    return (OTF2_TimeStamp)t;
}

static int ev_comm(loc *l, int64_t index, uint32_t *c)
{
    const vt_rank *rk = vt_trace_rank(l->x->t, l->rank);
    if (index < 0 || (size_t)index >= rk->ncomms)
        return 0;
    *c = l->x->rank_comm[l->rank][index];
    return 1;
}

OTF2_AttributeList *vt__otf2_site_attrs(ex *x, uint32_t rank, int64_t cs)
{
    const vt_rank *rk = vt_trace_rank(x->t, rank);
    if (!x->al || cs < 0 || (size_t)cs >= rk->ncallsites || !x->rank_site[rank][cs])
        return NULL;
    OTF2_AttributeList_RemoveAllAttributes(x->al);
    OTF2_AttributeList_AddStringRef(x->al, 0, x->rank_site[rank][cs] - 1);
    if (x->rank_scl[rank][cs])
        OTF2_AttributeList_AddSourceCodeLocationRef(x->al, 1, x->rank_scl[rank][cs] - 1);
    return x->al;
}

int vt__otf2_full_rank(ex *x, loc *l, vt__progress *p, uint64_t *done)
{
    const vt_trace *t = x->t;
    uint32_t r = l->rank;
    vt_cursor *cur;
    if (vt_cursor_open(t, r, &cur, x->err))
        return -1;
    req_map reqs = {0}, msgs = {0};
    vt_event ev;
    int got, rc = -1;
    while ((got = vt_cursor_next(cur, &ev, x->err)) == 1) {
        if (++*done % 4096 == 0)
            vt__progress_update(p, *done);
        OTF2_EvtWriter *w = l->w;
        if (ev.fn < 0) {
            if (ev.code != VT_CODE_FLUSH)
                continue;
            if (OTF2_EvtWriter_Enter(w, NULL, ts(l, ev.enter), x->r_flush) != OTF2_SUCCESS ||
                OTF2_EvtWriter_Leave(w, NULL, ts(l, ev.exit), x->r_flush) != OTF2_SUCCESS) {
                vt__otf2_fail(x, "EvtWriter_Enter/Leave", OTF2_ERROR_INVALID);
                goto out;
            }
            continue;
        }
        const vt_function *f = vt_trace_function(t, r, ev.fn);
        uint32_t region = x->rank_region[r][ev.fn];
        unsigned fl = ev.fields;
        char b[64];
        vt__otf2_base_name(f->name, b, sizeof b);
        size_t bl = strlen(b);
        int is_init = bl > 5 && !strcmp(b + bl - 5, "_init");
        int is_probe = strstr(b, "probe") || strstr(b, "Probe"); /* Probe, Iprobe, Mprobe, Improbe */
        uint32_t comm = OTF2_UNDEFINED_COMM;
        int has_comm = (fl & VT_F_COMM) && ev_comm(l, ev.comm, &comm);
        OTF2_ErrorCode e = OTF2_SUCCESS;
        OTF2_TimeStamp t0 = ts(l, ev.enter);
        e = OTF2_EvtWriter_Enter(w, vt__otf2_site_attrs(x, r, ev.callsite), t0, region);

        int coll = (fl & VT_F_COLLSEQ) && !(fl & (VT_F_REQUEST | VT_F_NEWCOMM)) && has_comm;
        int known = 0;
        OTF2_CollectiveOp op = coll ? vt__otf2_coll_op(f->name, &known) : OTF2_COLLECTIVE_OP_BARRIER;
        coll = coll && known;
        if (coll && e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t0);

        /* Send side at the enter. */
        if ((fl & VT_F_PEER) && has_comm && e == OTF2_SUCCESS) {
            if (fl & VT_F_REQUEST) {
                req_ent *q = req_find(&reqs, ev.request, 1);
                if (!q) {
                    vt__otf2_oom(x);
                    goto out;
                }
                q->send = 1;
                q->coll = 0;
                q->comm = comm;
                q->peer = ev.peer;
                q->tag = ev.tag;
                q->bytes = ev.bytes;
                q->persistent = is_init;
                q->active = !is_init && ev.peer >= 0;
                if (q->active)
                    e = OTF2_EvtWriter_MpiIsend(w, NULL, t0, comm_rank(x, comm, ev.peer), comm, (uint32_t)ev.tag,
                                                ev.bytes, ev.request);
            } else if (ev.peer >= 0) {
                e = OTF2_EvtWriter_MpiSend(w, NULL, t0, comm_rank(x, comm, ev.peer), comm, (uint32_t)ev.tag, ev.bytes);
            }
        }
        /* Non-blocking and persistent receives: their request. */
        if ((fl & VT_F_REQUEST) && !(fl & (VT_F_PEER | VT_F_COLLSEQ | VT_F_NEWCOMM | VT_F_FILE)) &&
            (has_comm || (fl & VT_F_MSG)) && e == OTF2_SUCCESS && ev.request) {
            uint32_t c = comm;
            if (!has_comm) { /* MPI_Imrecv: the communicator of its probe */
                req_ent *m = req_find(&msgs, ev.msg, 0);
                c = m ? m->comm : OTF2_UNDEFINED_COMM;
            }
            if (c != OTF2_UNDEFINED_COMM) {
                req_ent *q = req_find(&reqs, ev.request, 1);
                if (!q) {
                    vt__otf2_oom(x);
                    goto out;
                }
                q->send = 0;
                q->coll = 0;
                q->comm = c;
                q->persistent = is_init;
                q->active = !is_init;
                if (q->active)
                    e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t0, ev.request);
            }
        } else if ((fl & VT_F_REQUEST) && (fl & (VT_F_COLLSEQ | VT_F_NEWCOMM | VT_F_FILE)) && ev.request) {
            req_ent *q = req_find(&reqs, ev.request, 0); /* an id reused by another kind of request */
            if (q)
                req_forget(&reqs, q);
        }
        /* Persistent requests started. */
        for (size_t i = 0; i < ev.nstarted && e == OTF2_SUCCESS; i++) {
            req_ent *q = req_find(&reqs, ev.started[i], 0);
            if (!q || !q->persistent || q->comm == OTF2_UNDEFINED_COMM)
                continue;
            if (q->send && q->peer >= 0) {
                q->active = 1;
                e = OTF2_EvtWriter_MpiIsend(w, NULL, t0, comm_rank(x, q->comm, q->peer), q->comm, (uint32_t)q->tag,
                                            q->bytes, ev.started[i]);
            } else if (!q->send) {
                q->active = 1;
                e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t0, ev.started[i]);
            }
        }

        OTF2_TimeStamp t1 = ts(l, ev.exit);
        /* Blocking receives (probes receive nothing) at the exit. */
        if ((fl & VT_F_RPEER) && !is_probe && e == OTF2_SUCCESS && ev.rpeer >= 0) {
            uint32_t c = comm;
            if (!has_comm) { /* MPI_Mrecv */
                req_ent *m = req_find(&msgs, ev.msg, 0);
                c = m ? m->comm : OTF2_UNDEFINED_COMM;
            }
            if (c != OTF2_UNDEFINED_COMM)
                e = OTF2_EvtWriter_MpiRecv(w, NULL, t1, comm_rank(x, c, ev.rpeer), c, (uint32_t)ev.rtag, ev.rbytes);
        }
        if (is_probe && (fl & VT_F_MSG) && has_comm) { /* a matched message: its communicator */
            req_ent *m = req_find(&msgs, ev.msg, 1);
            if (!m) {
                vt__otf2_oom(x);
                goto out;
            }
            m->comm = comm;
        }
        /* Completions. */
        for (size_t i = 0; i < ev.ndone && e == OTF2_SUCCESS; i++) {
            const vt_completion *d = &ev.done[i];
            req_ent *q = req_find(&reqs, d->request, 0);
            if (!q || !q->active || q->comm == OTF2_UNDEFINED_COMM)
                continue;
            if (d->flags & 2u)
                e = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t1, d->request);
            else if (q->send)
                e = OTF2_EvtWriter_MpiIsendComplete(w, NULL, t1, d->request);
            else if (d->peer >= 0)
                e = OTF2_EvtWriter_MpiIrecv(w, NULL, t1, comm_rank(x, q->comm, d->peer), q->comm, (uint32_t)d->tag,
                                            d->bytes, d->request);
            else /* from MPI_PROC_NULL: no message, the request ends */
                e = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t1, d->request);
            q->active = 0;
            if (!q->persistent)
                req_forget(&reqs, q);
        }
        if (!strcmp(b, "Request_free") && (fl & VT_F_REQUEST)) {
            req_ent *q = req_find(&reqs, ev.request, 0);
            if (q && !q->active)
                req_forget(&reqs, q);
        }
        if (coll && e == OTF2_SUCCESS) {
            uint32_t root = OTF2_UNDEFINED_UINT32;
            if ((fl & VT_F_ROOT) && ev.root >= 0)
                root = comm_rank(x, comm, ev.root);
            e = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t1, op, comm, root, ev.bytes, ev.rbytes);
        }
        if (e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_Leave(w, NULL, t1, region);
        if (e != OTF2_SUCCESS) {
            vt__otf2_fail(x, "an OTF2_EvtWriter call", e);
            goto out;
        }
    }
    if (got == 0)
        rc = 0;
out:
    free(reqs.v);
    free(msgs.v);
    vt_cursor_close(cur);
    return rc;
}

/* Reduced traces, first pass: every message a COMP record keeps, by sender, then
 * sequence number and receiver (ties in the order of the COMP records). */
static int rsend_cmp(const void *a, const void *b)
{
    const vt__xrsend *p = a, *q = b;
    if (p->seq != q->seq)
        return p->seq < q->seq ? -1 : 1;
    return p->dst < q->dst ? -1 : p->dst > q->dst;
}

int vt__otf2_collect_rsends(ex *x)
{
    x->rs.s.fd = -1;
    x->rs_open = 1;
    return vt__xrsends_open(&x->rs, x->t, rsend_cmp, x->o->out, x->err);
}

void vt__otf2_rsends_close(ex *x)
{
    if (x->rs_open)
        vt__xrsends_close(&x->rs);
    x->rs_open = 0;
}

/* The sends of the location with S before END, inside the span [.., END] just entered;
 * -1 with x->err when the temporary file cannot be read. */
static OTF2_ErrorCode emit_rsends(ex *x, loc *l, int64_t end, int all, int *ioerr)
{
    uint32_t r = l->rank;
    OTF2_ErrorCode e = OTF2_SUCCESS;
    vt__xrsend s;
    int got = 0;
    while (e == OTF2_SUCCESS && (got = vt__xrsends_peek(&x->rs, r, &s, x->o->out, x->err)) == 1 &&
           (all || s.S < end)) {
        vt__xrsends_take(&x->rs);
        e = OTF2_EvtWriter_MpiSend(l->w, NULL, ts(l, s.S), s.dst, x->world, (uint32_t)s.seq, s.bytes);
    }
    if (e == OTF2_SUCCESS && got < 0)
        *ioerr = 1;
    return e;
}

int vt__otf2_reduced_rank(ex *x, loc *l, vt__progress *p, uint64_t *done)
{
    uint32_t r = l->rank;
    vt_cursor *cur;
    if (vt_cursor_open(x->t, r, &cur, x->err))
        return -1;
    vt_rrec rr;
    int got, have_prev = 0;
    int64_t prev_exit = 0;
    int ioerr = 0;
    OTF2_ErrorCode e = OTF2_SUCCESS;
    while (e == OTF2_SUCCESS && !ioerr && (got = vt_cursor_next_reduced(cur, &rr, x->err)) == 1) {
        if (++*done % 4096 == 0)
            vt__progress_update(p, *done);
        /* The implicit stretch since the previous record. */
        if (have_prev && rr.enter > prev_exit) {
            e = OTF2_EvtWriter_Enter(l->w, NULL, ts(l, prev_exit), x->r_aggr);
            if (e == OTF2_SUCCESS)
                e = emit_rsends(x, l, rr.enter, 0, &ioerr);
            if (e == OTF2_SUCCESS)
                e = OTF2_EvtWriter_Leave(l->w, NULL, ts(l, rr.enter), x->r_aggr);
        }
        have_prev = 1;
        if (rr.exit > prev_exit || rr.kind == VT_RREC_START)
            prev_exit = rr.exit;
        if (e != OTF2_SUCCESS || rr.kind == VT_RREC_START || rr.kind == VT_RREC_END)
            continue;
        uint32_t region = x->r_comp;
        if (rr.fn >= 0) {
            if ((size_t)rr.fn >= vt_trace_rank(x->t, r)->nfuncs)
                continue;
            region = x->rank_region[r][rr.fn];
        }
        e = OTF2_EvtWriter_Enter(l->w, rr.fn >= 0 ? vt__otf2_site_attrs(x, r, rr.callsite) : NULL, ts(l, rr.enter),
                                 region);
        if (e == OTF2_SUCCESS)
            e = emit_rsends(x, l, rr.exit, 0, &ioerr);
        if (rr.kind == VT_RREC_COMP)
            for (size_t i = 0; i < rr.nmsgs && e == OTF2_SUCCESS; i++)
                e = OTF2_EvtWriter_MpiRecv(l->w, NULL, ts(l, rr.exit), rr.msgs[i].src, x->world,
                                           (uint32_t)rr.msgs[i].send_seq, rr.msgs[i].bytes);
        if (e == OTF2_SUCCESS)
            e = OTF2_EvtWriter_Leave(l->w, NULL, ts(l, rr.exit), region);
    }
    if (e == OTF2_SUCCESS && !ioerr && got >= 0) /* sends after the last record (none in a sound trace) */
        e = emit_rsends(x, l, 0, 1, &ioerr);
    vt_cursor_close(cur);
    if (got < 0 || ioerr)
        return -1;
    if (e != OTF2_SUCCESS)
        return vt__otf2_fail(x, "an OTF2_EvtWriter call", e);
    return 0;
}

#endif
