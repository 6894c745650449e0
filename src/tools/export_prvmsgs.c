/* The messages of a Paraver export (export_prvmsgs.h). They come in receive order and
 * are put into a temporary file, then sorted there (vt_spill_sort): the export keeps
 * O(ranks) of them in memory, not one per message. */
#include "vt_config.h"
#include "tools/export_prvmsgs.h"
#include "tools/export.h"
#include "analysis/replay.h"
#include "model/model.h"
#include "util/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probed { /* a message a probe completed: shown at the receive that takes it */
    uint32_t rank;
    uint64_t probe_seq;
    vt__prv_comm c;
} probed;

typedef struct collect {
    const vt_trace *t;
    vt__prv_msgs *m;
    vt_spill in;
    uint64_t *count;        /* per sender */
    int have;
    probed *pr;
    size_t npr, cappr;
    const char *name;
    vt_error *err;
} collect;

static int io_err(collect *C, const char *what)
{
    snprintf(C->err->msg, sizeof C->err->msg, "%s: %s a temporary file: %s", C->name, what, strerror(errno));
    return -1;
}

static int add(collect *C, const vt__prv_comm *c)
{
    if (c->src >= vt_trace_nranks(C->t))
        return 0;
    if (vt_spill_put(&C->in, c))
        return io_err(C, "cannot write");
    C->count[c->src]++;
    return 0;
}

static void extend(collect *C, int64_t b, int64_t e)
{
    if (!C->have || b < C->m->t0)
        C->m->t0 = b;
    if (!C->have || e > C->m->tend)
        C->m->tend = e;
    C->have = 1;
}

/* ------------------------------------------------------------------ full, streamed */

static int on_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    collect *C = arg;
    (void)err;
    if (!ev->is_call || !ev->rec)
        return 0;
    int64_t lr = vt_global_time(C->t, ev->rank, ev->rec->enter), pr = vt_global_time(C->t, ev->rank, ev->rec->exit);
    for (size_t i = 0; i < ev->ncons; i++) {
        const vt_obs_con *o = &ev->cons[i];
        if (o->kind != VT_CON_MSG)
            continue;
        vt__prv_comm c = {o->S, o->S_exit, lr, pr, o->rank, ev->rank, o->bytes, o->tag, o->seq};
        if (o->probed) {
            if (vt__export_grow((void **)&C->pr, &C->cappr, C->npr + 1, sizeof *C->pr))
                return vt_error_set(C->err, "%s: out of memory", C->name);
            C->pr[C->npr++] = (probed){ev->rank, ev->seq, c};
        } else if (add(C, &c)) {
            return -1;
        }
    }
    for (size_t k = 0; k < ev->nprobed; k++)
        for (size_t j = 0; j < C->npr; j++)
            if (C->pr[j].rank == ev->rank && C->pr[j].probe_seq == ev->probed_by[k]) {
                vt__prv_comm c = C->pr[j].c;
                c.lr = lr, c.pr = pr;
                C->pr[j--] = C->pr[--C->npr];
                if (add(C, &c))
                    return -1;
            }
    return 0;
}

static int full_streamed(collect *C)
{
    vt_model_params mp;
    if (vt_replay_params(C->t, &mp, C->err))
        return -1;
    vt_observer obs = {.arg = C, .event = on_event};
    vt_replay_result res;
    if (vt_replay_observe(C->t, NULL, &mp, NULL, 0, &obs, &res, C->err))
        return -1;
    vt_replay_result_free(&res);
    /* the first enter and the last exit: every record's, special ones too */
    for (uint32_t r = 0; r < vt_trace_nranks(C->t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(C->t, r, &c, C->err))
            return -1;
        vt_event ev;
        int got;
        while ((got = vt_cursor_next(c, &ev, C->err)) == 1)
            extend(C, vt_global_time(C->t, r, ev.enter), vt_global_time(C->t, r, ev.exit));
        vt_cursor_close(c);
        if (got < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ full, matched */

typedef struct tpair {
    int64_t enter, exit;
} tpair;

typedef struct matched {
    collect *C;
    uint32_t rank;
    tpair **st, **rt;
    tpair cur;
} matched;

static int m_record(void *arg, const vt_event *ev)
{
    matched *q = arg;
    q->cur = (tpair){vt_global_time(q->C->t, q->rank, ev->enter), vt_global_time(q->C->t, q->rank, ev->exit)};
    extend(q->C, q->cur.enter, q->cur.exit);
    return 0;
}

static int m_sent(void *arg, const vt_event *ev, size_t pos, uint64_t id)
{
    matched *q = arg;
    (void)ev, (void)id;
    q->st[q->rank][pos] = q->cur;
    return 0;
}

static int m_completed(void *arg, const vt_event *ev, size_t pos, uint64_t id)
{
    matched *q = arg;
    (void)ev, (void)id;
    q->rt[q->rank][pos] = q->cur;
    return 0;
}

/* An incomplete trace: matched as a whole (partially), as the replay stops at the cut. */
static int full_matched(collect *C)
{
    static const vt__xcall_ops ops = {m_record, m_sent, m_completed, NULL};
    uint32_t n = vt_trace_nranks(C->t);
    vt__xmsgs x;
    if (vt__xmsgs_open(&x, C->t, C->name, C->err))
        return -1;
    int rc = -1;
    matched q = {.C = C, .st = calloc(n + 1, sizeof *q.st), .rt = calloc(n + 1, sizeof *q.rt)};
    if (!q.st || !q.rt)
        goto oom;
    for (uint32_t r = 0; r < n; r++) {
        size_t ns, nr;
        vt_matches_csends(x.m, r, &ns);
        vt_matches_crecvs(x.m, r, &nr);
        q.st[r] = calloc(ns + 1, sizeof **q.st);
        q.rt[r] = calloc(nr + 1, sizeof **q.rt);
        if (!q.st[r] || !q.rt[r])
            goto oom;
        q.rank = r;
        if (vt__xmsgs_walk(&x, C->t, r, &ops, &q, C->name, C->err))
            goto out;
    }
    size_t nkeys;
    const vt_match_key *keys = vt_matches_keys(x.m, &nkeys);
    for (uint32_t s = 0; s < n; s++) {
        size_t ns;
        const vt_match_csend *cs = vt_matches_csends(x.m, s, &ns);
        for (size_t i = 0; i < ns; i++) {
            if (cs[i].recv_pos == VT_MPOS_NONE || cs[i].key >= nkeys)
                continue;
            const vt_match_key *k = &keys[cs[i].key];
            if (k->dst >= n)
                continue;
            const tpair *rx = &q.rt[k->dst][cs[i].recv_pos];
            vt__prv_comm c = {q.st[s][i].enter, q.st[s][i].exit, rx->enter, rx->exit, s, k->dst, cs[i].bytes, k->tag,
                              i};
            if (add(C, &c))
                goto out;
        }
    }
    rc = 0;
    goto out;
oom:
    vt_error_set(C->err, "%s: out of memory", C->name);
out:
    for (uint32_t r = 0; r < n; r++) {
        if (q.st)
            free(q.st[r]);
        if (q.rt)
            free(q.rt[r]);
    }
    free(q.st);
    free(q.rt);
    vt__xmsgs_close(&x);
    return rc;
}

/* ------------------------------------------------------------------ reduced */

static int r_record(void *arg, uint32_t r, const vt_rrec *rr)
{
    collect *C = arg;
    extend(C, vt_global_time(C->t, r, rr->enter), vt_global_time(C->t, r, rr->exit));
    return 0;
}

static int r_message(void *arg, uint32_t r, const vt_rrec *rr, const vt_rmsg *msg, uint64_t id)
{
    collect *C = arg;
    int64_t S = vt_global_time(C->t, msg->src, msg->S);
    vt__prv_comm c = {S, S, vt_global_time(C->t, r, rr->enter), vt_global_time(C->t, r, rr->exit), msg->src, r,
                      msg->bytes, 0, id};
    return add(C, &c);
}

/* ------------------------------------------------------------------ sorting */

static int cmp_comm(const void *a, const void *b)
{
    const vt__prv_comm *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->ls != y->ls)
        return x->ls < y->ls ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->lr != y->lr)
        return x->lr < y->lr ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int vt__prv_msgs_collect(vt__prv_msgs *m, const vt_trace *t, const char *name, vt_error *err)
{
    uint32_t n = vt_trace_nranks(t);
    memset(m, 0, sizeof *m);
    m->sorted.fd = -1;
    collect C = {.t = t, .m = m, .name = name, .err = err};
    C.count = calloc(n + 1, sizeof *C.count);
    m->first = calloc(n + 1, sizeof *m->first);
    int rc = -1;
    if (!C.count || !m->first) {
        vt_error_set(err, "%s: out of memory", name);
        goto out;
    }
    if (vt_spill_open(&C.in, sizeof(vt__prv_comm))) {
        io_err(&C, "cannot create");
        goto out;
    }
    if (vt_trace_is_reduced(t)) {
        static const vt__xrrec_ops ops = {r_record, r_message};
        if (vt__xrrecs_walk(t, &ops, &C, err))
            goto out;
    } else if (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE ? full_matched(&C) : full_streamed(&C)) {
        goto out;
    }
    for (uint32_t r = 0; r < n; r++)
        m->first[r + 1] = m->first[r] + C.count[r];
    if (vt_spill_sort(&C.in, &m->sorted, cmp_comm, 0)) {
        io_err(&C, "cannot sort in");
        goto out;
    }
    rc = 0;
out:
    vt_spill_close(&C.in);
    free(C.count);
    free(C.pr);
    return rc;
}

void vt__prv_msgs_free(vt__prv_msgs *m)
{
    vt_spill_close(&m->sorted);
    free(m->first);
    m->first = NULL;
}
