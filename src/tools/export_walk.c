/* The walks the exporters share (export.h): a full trace's records with the messages
 * each call starts and completes (vt_trace_match's positions and one id per matched
 * message), and a reduced trace's records with the messages its COMP records name; also
 * the host of a rank and the growth of their arrays. Each exporter passes its own
 * callbacks; this file calls no exporter. */
#include "vt_config.h"
#include "tools/export.h"
#include "analysis/replay.h"
#include "model/model.h"
#include "util/codec.h"
#include "util/sort.h"
#include "util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vt__export_grow(void **v, size_t *cap, size_t need, size_t elem) { return vt_grow(v, cap, need, elem); }

const char *vt__export_host(const vt_trace *t, uint32_t r)
{
    const vt_rank *R = vt_trace_rank(t, r);
    if (R && R->hostname && R->hostname[0])
        return R->hostname;
    if (R && R->global_hostname && R->global_hostname[0])
        return R->global_hostname;
    return "unknown host";
}

static int oom(const char *name, vt_error *err)
{
    snprintf(err->msg, sizeof err->msg, "%s: out of memory", name);
    return -1;
}

int vt__xmsgs_open(vt__xmsgs *x, const vt_trace *t, const char *name, vt_error *err)
{
    memset(x, 0, sizeof *x);
    x->sends.fd = x->recvs.fd = -1;
    x->m = NULL;
    x->nranks = vt_trace_nranks(t);
    x->send_base = NULL;
    if (vt_trace_match(t, VT_MATCH_PARTIAL, &x->m, err))
        return -1;
    x->send_base = calloc(x->nranks + 1, sizeof *x->send_base);
    if (!x->send_base) {
        vt__xmsgs_close(x);
        return oom(name, err);
    }
    for (uint32_t r = 0; r < x->nranks; r++) {
        size_t n;
        vt_matches_csends(x->m, r, &n);
        x->send_base[r + 1] = x->send_base[r] + n;
    }
    return 0;
}

void vt__xmsgs_close(vt__xmsgs *x)
{
    if (x->streamed) {
        vt_spill_close(&x->sends);
        vt_spill_close(&x->recvs);
    }
    free(x->send_base);
    vt_matches_free(x->m);
    x->send_base = NULL;
    x->m = NULL;
}

/* ------------------------------------------------------------------ streamed */

typedef struct xsend { /* a matched send: its sender, place among the sender's sends, call */
    uint32_t src, pad;
    uint64_t pos, callno;
} xsend;

typedef struct xrecv { /* a matched receive: its receiver, completing record, send */
    uint32_t dst, src;
    uint64_t done_index, pos;
} xrecv;

typedef struct xprobed { /* a message a probe completed: reported at the receive that takes it */
    uint32_t rank;
    uint64_t probe_seq;
    xrecv rv;
    uint64_t callno;
} xprobed;

typedef struct xcollect {
    vt__xmsgs *x;
    xprobed *pr;
    size_t npr, cappr;
    int freed;    /* a receive ended by MPI_Request_free: the replay takes its message
                   * silently, the matcher completes it there */
    const char *name;
    vt_error *err;
} xcollect;

static int cmp_xsend(const void *a, const void *b)
{
    const xsend *p = a, *q = b;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    return (p->pos > q->pos) - (p->pos < q->pos);
}

static int cmp_xrecv(const void *a, const void *b)
{
    const xrecv *p = a, *q = b;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->done_index != q->done_index)
        return p->done_index < q->done_index ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    return (p->pos > q->pos) - (p->pos < q->pos);
}

static int x_put(xcollect *C, const xrecv *rv, uint64_t callno)
{
    xsend sd = {rv->src, 0, rv->pos, callno};
    if (vt_spill_put(&C->x->recvs, rv) || vt_spill_put(&C->x->sends, &sd))
        return vt_error_set(C->err, "%s: cannot write a temporary file: %s", C->name, strerror(errno));
    return 0;
}

static int x_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    xcollect *C = arg;
    (void)err;
    if (!ev->is_call || !ev->rec)
        return 0;
    for (size_t i = 0; i < ev->rec->ndone; i++)
        if ((ev->rec->done[i].flags & VT_COMPL_FREED) && (ev->rec->done[i].flags & VT_COMPL_RECV))
            C->freed = 1;
    for (size_t i = 0; i < ev->ncons; i++) {
        const vt_obs_con *o = &ev->cons[i];
        if (o->kind != VT_CON_MSG)
            continue;
        xrecv rv = {ev->rank, o->rank, ev->rec->index, o->send_pos};
        uint64_t callno = (o->seq - 1) / 2;
        if (o->probed) {
            if (vt__export_grow((void **)&C->pr, &C->cappr, C->npr + 1, sizeof *C->pr))
                return vt_error_set(C->err, "%s: out of memory", C->name);
            C->pr[C->npr++] = (xprobed){ev->rank, ev->seq, rv, callno};
        } else if (x_put(C, &rv, callno)) {
            return -1;
        }
    }
    for (size_t k = 0; k < ev->nprobed; k++)
        for (size_t j = 0; j < C->npr; j++)
            if (C->pr[j].rank == ev->rank && C->pr[j].probe_seq == ev->probed_by[k]) {
                xrecv rv = C->pr[j].rv;
                rv.done_index = ev->rec->index;
                uint64_t callno = C->pr[j].callno;
                C->pr[j--] = C->pr[--C->npr];
                if (x_put(C, &rv, callno))
                    return -1;
            }
    return 0;
}

int vt__xmsgs_stream(vt__xmsgs *x, const vt_trace *t, const char *name, vt_error *err)
{
    if (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE)
        return vt__xmsgs_open(x, t, name, err); /* the replay stops at the cut */
    memset(x, 0, sizeof *x);
    x->nranks = vt_trace_nranks(t);
    x->streamed = 1;
    x->sends.fd = x->recvs.fd = -1;
    vt_model_params mp;
    if (vt_replay_params(t, &mp, err))
        return -1;
    vt_spill in_s, in_r;
    if (vt_spill_open(&in_s, sizeof(xsend)))
        return vt_error_set(err, "%s: cannot create a temporary file: %s", name, strerror(errno));
    if (vt_spill_open(&in_r, sizeof(xrecv))) {
        vt_spill_close(&in_s);
        return vt_error_set(err, "%s: cannot create a temporary file: %s", name, strerror(errno));
    }
    /* collected into x's files, then sorted from them into x's */
    x->sends = in_s;
    x->recvs = in_r;
    xcollect C = {.x = x, .name = name, .err = err};
    vt_observer obs = {.arg = &C, .event = x_event};
    vt_replay_result res;
    int rc = vt_replay_observe(t, NULL, &mp, NULL, 0, &obs, &res, err);
    free(C.pr);
    if (rc || C.freed) {
        if (!rc)
            vt_replay_result_free(&res);
        vt__xmsgs_close(x);
        /* a receive ended by MPI_Request_free takes a message the replay reports to no
         * call: matched as a whole, as the matcher pairs it (rare; memory per message) */
        return rc ? -1 : vt__xmsgs_open(x, t, name, err);
    }
    x->send_base = calloc(x->nranks + 1, sizeof *x->send_base);
    for (uint32_t r = 0; x->send_base && res.sends && r < x->nranks; r++)
        x->send_base[r + 1] = x->send_base[r] + res.sends[r];
    int have = res.sends != NULL;
    vt_replay_result_free(&res);
    if (!x->send_base || !have) {
        vt__xmsgs_close(x);
        return vt_error_set(err, "%s: out of memory", name);
    }
    in_s = x->sends;
    in_r = x->recvs;
    x->sends.fd = x->recvs.fd = -1;
    if (vt_spill_sort(&in_s, &x->sends, cmp_xsend, 0)) {
        vt_spill_close(&in_r);
        vt__xmsgs_close(x);
        return vt_error_set(err, "%s: cannot sort in a temporary file: %s", name, strerror(errno));
    }
    if (vt_spill_sort(&in_r, &x->recvs, cmp_xrecv, 0)) {
        x->recvs.fd = -1;
        vt__xmsgs_close(x);
        return vt_error_set(err, "%s: cannot sort in a temporary file: %s", name, strerror(errno));
    }
    return 0;
}

static int walk_streamed(vt__xmsgs *x, const vt_trace *t, uint32_t r, const vt__xcall_ops *ops, void *arg,
                         const char *name, vt_error *err)
{
    vt_cursor *c;
    if (vt_cursor_open(t, r, &c, err))
        return -1;
    vt_event ev;
    int got;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        if (ops->record(arg, &ev))
            goto fail;
        xsend sd;
        while (ev.fn >= 0 && x->si < x->sends.n) {
            if (vt_spill_get(&x->sends, x->si, &sd, 0))
                goto io;
            if (sd.src > r || (sd.src == r && sd.callno > ev.callno))
                break;
            x->si++;
            if (sd.src == r && sd.callno == ev.callno &&
                ops->sent(arg, &ev, (size_t)sd.pos, x->send_base[r] + sd.pos + 1))
                goto fail;
        }
        xrecv rv;
        while (x->ri < x->recvs.n) {
            if (vt_spill_get(&x->recvs, x->ri, &rv, 0))
                goto io;
            if (rv.dst > r || (rv.dst == r && rv.done_index > ev.index))
                break;
            x->ri++;
            if (rv.dst == r && rv.done_index == ev.index &&
                ops->completed(arg, &ev, 0, x->send_base[rv.src] + rv.pos + 1))
                goto fail;
        }
        if (ops->done && ops->done(arg, &ev))
            goto fail;
    }
    if (got < 0)
        goto fail;
    vt_cursor_close(c);
    return 0;
io:
    vt_error_set(err, "%s: cannot read a temporary file: %s", name, strerror(errno));
fail:
    vt_cursor_close(c);
    return -1;
}

/* A receive and the call that completed it. */
typedef struct done_ref {
    uint64_t done_index;
    uint64_t id;  /* 0: no send */
    size_t pos;
} done_ref;

static int cmp_done(const void *a, const void *b)
{
    const done_ref *x = a, *y = b;
    if (x->done_index != y->done_index)
        return x->done_index < y->done_index ? -1 : 1;
    uint64_t i = x->id ? x->id : UINT64_MAX, j = y->id ? y->id : UINT64_MAX;
    if (i != j)
        return i < j ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int vt__xmsgs_walk(vt__xmsgs *x, const vt_trace *t, uint32_t r, const vt__xcall_ops *ops, void *arg,
                   const char *name, vt_error *err)
{
    if (x->streamed)
        return walk_streamed(x, t, r, ops, arg, name, err);
    size_t ns, nr, nkeys;
    const vt_match_csend *cs = vt_matches_csends(x->m, r, &ns);
    const vt_match_crecv *cr = vt_matches_crecvs(x->m, r, &nr);
    const vt_match_key *keys = vt_matches_keys(x->m, &nkeys);
    done_ref *dr = malloc((nr + 1) * sizeof *dr);
    if (!dr)
        return oom(name, err);
    for (size_t j = 0; j < nr; j++) {
        uint64_t id = 0;
        if (cr[j].send_pos != VT_MPOS_NONE && cr[j].key < nkeys)
            id = x->send_base[keys[cr[j].key].src] + cr[j].send_pos + 1;
        dr[j] = (done_ref){cr[j].done_index, id, j};
    }
    vt_sort(dr, nr, sizeof *dr, cmp_done);
    vt_cursor *c;
    if (vt_cursor_open(t, r, &c, err)) {
        free(dr);
        return -1;
    }
    size_t si = 0, di = 0;
    vt_event ev;
    int got;
    while ((got = vt_cursor_next(c, &ev, err)) == 1) {
        if (ops->record(arg, &ev))
            goto fail;
        while (si < ns && cs[si].index < ev.index)
            si++;
        for (; si < ns && cs[si].index == ev.index; si++)
            if (ops->sent(arg, &ev, si, cs[si].recv_pos != VT_MPOS_NONE ? x->send_base[r] + si + 1 : 0))
                goto fail;
        while (di < nr && dr[di].done_index < ev.index)
            di++;
        for (; di < nr && dr[di].done_index == ev.index; di++)
            if (ops->completed(arg, &ev, dr[di].pos, dr[di].id))
                goto fail;
        if (ops->done && ops->done(arg, &ev))
            goto fail;
    }
    if (got < 0)
        goto fail;
    vt_cursor_close(c);
    free(dr);
    return 0;
fail:
    vt_cursor_close(c);
    free(dr);
    return -1;
}

/* One record of rank R and, for a COMP record, its messages (*id counts them). */
static int visit_rrec(const vt__xrrec_ops *ops, void *arg, uint32_t r, uint32_t nranks, const vt_rrec *rr,
                      uint64_t *id)
{
    if (ops->record && ops->record(arg, r, rr))
        return -1;
    if (rr->kind != VT_RREC_COMP)
        return 0;
    for (size_t i = 0; i < rr->nmsgs; i++) {
        ++*id;
        if (rr->msgs[i].src < nranks && ops->message(arg, r, rr, &rr->msgs[i], *id))
            return -1;
    }
    return 0;
}

int vt__xrrecs_walk(const vt_trace *t, const vt__xrrec_ops *ops, void *arg, vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    uint64_t id = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_rrec rr;
        int got = 0, rc = 0;
        while (!rc && (got = vt_cursor_next_reduced(c, &rr, err)) == 1)
            rc = visit_rrec(ops, arg, r, nranks, &rr, &id);
        vt_cursor_close(c);
        if (rc || got < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ reduced sends */

typedef struct xrcollect {
    vt_spill *s;
    const char *name;
    vt_error *err;
} xrcollect;

static int put_xrsend(void *arg, uint32_t rank, const vt_rrec *rr, const vt_rmsg *msg, uint64_t id)
{
    xrcollect *C = arg;
    (void)rr;
    vt__xrsend v = {msg->src, rank, msg->send_seq, msg->S, msg->bytes, id};
    if (vt_spill_put(C->s, &v))
        return vt_error_set(C->err, "%s: cannot write a temporary file: %s", C->name, strerror(errno));
    return 0;
}

static int (*xr_cmp)(const void *, const void *); /* vt_spill_sort's comparison has no argument */

static int cmp_xrsend(const void *a, const void *b)
{
    const vt__xrsend *p = a, *q = b;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    return xr_cmp(a, b);
}

int vt__xrsends_open(vt__xrsends *x, const vt_trace *t, int (*cmp)(const void *, const void *), const char *name,
                     vt_error *err)
{
    static const vt__xrrec_ops ops = {NULL, put_xrsend};
    memset(x, 0, sizeof *x);
    x->s.fd = -1;
    x->cmp = cmp;
    vt_spill in;
    if (vt_spill_open(&in, sizeof(vt__xrsend)))
        return vt_error_set(err, "%s: cannot create a temporary file: %s", name, strerror(errno));
    xrcollect C = {&in, name, err};
    if (vt__xrrecs_walk(t, &ops, &C, err)) {
        vt_spill_close(&in);
        return -1;
    }
    xr_cmp = cmp;
    if (vt_spill_sort(&in, &x->s, cmp_xrsend, 0)) {
        x->s.fd = -1;
        return vt_error_set(err, "%s: cannot sort in a temporary file: %s", name, strerror(errno));
    }
    return 0;
}

int vt__xrsends_peek(vt__xrsends *x, uint32_t r, vt__xrsend *out, const char *name, vt_error *err)
{
    if (x->next >= x->s.n)
        return 0;
    if (vt_spill_get(&x->s, x->next, out, 0))
        return vt_error_set(err, "%s: cannot read a temporary file: %s", name, strerror(errno));
    return out->src == r;
}

void vt__xrsends_take(vt__xrsends *x)
{
    x->next++;
}

void vt__xrsends_close(vt__xrsends *x)
{
    vt_spill_close(&x->s);
}
