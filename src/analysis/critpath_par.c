/* The critical path over the parallel replay (critpath.h, vt_replay_par_observe): the
 * graph's backward walk crosses ranks anywhere, so process 0 builds the whole graph, as
 * the serial intake does, from its own events and those the other processes forward
 * (this file packs and unpacks them). The replay hands them over in rounds, a
 * topological order of the graph (a dependency between processes crosses a round), and
 * the walk, the slack and the shares do not depend on which topological order: the
 * result is the serial one. What travels is the event's figures for the one scenario
 * the path follows, int64 words:
 *   rank seq flags fn callsite start end delta d_before d_after M base ncons, then per
 *   contributor: kind T D rank seq, and for a gate: comm seq nonblocking nmembers, then
 *   per member: T D rank seq. */
#include "vt_config.h"
#include "analysis/critpath_priv.h"

#include <stdlib.h>
#include <string.h>

enum { PF_CALL = 1, PF_CAND = 2, PF_BASE = 4 };

static int put(vt_critpath *cp, const int64_t *w, size_t n)
{
    if (vt__cp_grow((void **)&cp->fbuf, &cp->fcap, cp->fn + n * sizeof *w, 1))
        return -1;
    memcpy(cp->fbuf + cp->fn, w, n * sizeof *w);
    cp->fn += n * sizeof *w;
    return 0;
}

static int fwd_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    vt_critpath *cp = arg;
    const size_t s = cp->scen;
    int64_t h[13] = {ev->rank, (int64_t)ev->seq,
                     (ev->is_call ? PF_CALL : 0) | (ev->candidate ? PF_CAND : 0) | (ev->base ? PF_BASE : 0),
                     ev->fn, ev->callsite, ev->start, ev->end, ev->delta[s], ev->d_before[s], ev->d_after[s], ev->M,
                     ev->base ? ev->base[s] : 0, (int64_t)ev->ncons};
    if (put(cp, h, 13))
        goto nomem;
    for (size_t k = 0; k < ev->ncons; k++) {
        const vt_obs_con *c = &ev->cons[k];
        int64_t w[5] = {c->kind, c->T, c->D[s], c->rank, (int64_t)c->seq};
        if (put(cp, w, 5))
            goto nomem;
        if (c->kind != VT_CON_GATE)
            continue;
        int64_t g[4] = {(int64_t)c->gate_comm, (int64_t)c->gate_seq, c->nonblocking, (int64_t)c->nmembers};
        if (put(cp, g, 4))
            goto nomem;
        for (size_t j = 0; j < c->nmembers; j++) {
            const vt_obs_member *m = &c->members[j];
            int64_t x[4] = {m->T, m->D[s], m->rank, (int64_t)m->seq};
            if (put(cp, x, 4))
                goto nomem;
        }
    }
    return 0;
nomem:
    return vt__cp_err(err, "critical path: out of memory");
}

static size_t fwd_held(void *arg) { return ((vt_critpath *)arg)->fn; }

static void fwd_take(void *arg, const uint8_t **data, size_t *len)
{
    vt_critpath *cp = arg;
    *data = cp->fbuf;
    *len = cp->fn;
    cp->fn = 0;   /* (the replay copies them before anything is packed again) */
}

/* Reads n words at *off of [data, data + len); 0, or -1 past the end. */
static int get(const uint8_t *data, size_t len, size_t *off, int64_t *w, size_t n)
{
    if (len - *off < n * sizeof *w)
        return -1;
    memcpy(w, data + *off, n * sizeof *w);
    *off += n * sizeof *w;
    return 0;
}

static int grow_to(void **v, size_t *cap, size_t need, size_t size)
{
    return need > *cap ? vt__cp_grow(v, cap, need, size) : 0;
}

/* Another process's events of one round (process 0). */
static int give(void *arg, int from, const uint8_t *data, size_t len, vt_error *err)
{
    vt_critpath *cp = arg;
    const size_t s = cp->scen, sv = s + 1;
    cp_unpacked *u = &cp->up;
    size_t off = 0;
    while (off < len) {
        int64_t h[13];
        if (get(data, len, &off, h, 13) || h[12] < 0 || (uint64_t)h[12] > len / sizeof(int64_t))
            goto bad;
        size_t ncons = (size_t)h[12], nmem = 0;
        /* first pass: the counts (members), to size the scratch */
        size_t at = off;
        for (size_t k = 0; k < ncons; k++) {
            int64_t w[5], g[4];
            if (get(data, len, &at, w, 5))
                goto bad;
            if (w[0] != VT_CON_GATE)
                continue;
            if (get(data, len, &at, g, 4) || g[3] < 0 || (uint64_t)g[3] > (len - at) / (4 * sizeof(int64_t)))
                goto bad;
            nmem += (size_t)g[3];
            at += (size_t)g[3] * 4 * sizeof(int64_t);
        }
        if (grow_to((void **)&u->cons, &u->capcons, ncons + 1, sizeof *u->cons) ||
            grow_to((void **)&u->mem, &u->capmem, nmem + 1, sizeof *u->mem) ||
            grow_to((void **)&u->vals, &u->capvals, (5 + ncons + nmem) * sv, sizeof *u->vals))
            return vt__cp_err(err, "critical path: out of memory");
        int64_t *v = u->vals;
        memset(v, 0, (5 + ncons + nmem) * sv * sizeof *v);
        int64_t *delta = v, *db = v + sv, *da = v + 2 * sv, *base = v + 3 * sv, *next = v + 5 * sv;
        delta[s] = h[7], db[s] = h[8], da[s] = h[9], base[s] = h[11];
        uint32_t rank = (uint32_t)h[0];
        const vt_function *f = h[2] & PF_CALL ? vt_trace_function(cp->t, rank, h[3]) : NULL;
        vt_obs_event e = {.rank = rank, .seq = (uint64_t)h[1], .is_call = (h[2] & PF_CALL) != 0,
                          .func = h[2] & PF_CALL ? (f ? f->name : "?") : NULL, .fn = h[3], .callsite = h[4],
                          .start = h[5], .end = h[6], .candidate = (h[2] & PF_CAND) != 0, .delta = delta,
                          .d_before = db, .d_after = da, .cons = u->cons, .ncons = ncons, .M = h[10],
                          .base = h[2] & PF_BASE ? base : NULL};
        size_t mi = 0;
        for (size_t k = 0; k < ncons; k++) {
            int64_t w[5], g[4];
            get(data, len, &off, w, 5);
            vt_obs_con *c = &u->cons[k];
            memset(c, 0, sizeof *c);
            c->kind = (enum vt_con_kind)w[0];
            c->T = w[1];
            next[s] = w[2];
            c->D = next;
            next += sv;
            c->rank = (uint32_t)w[3];
            c->seq = (uint64_t)w[4];
            if (c->kind != VT_CON_GATE)
                continue;
            get(data, len, &off, g, 4);
            c->gate_comm = (uint64_t)g[0];
            c->gate_seq = (uint64_t)g[1];
            c->nonblocking = (int)g[2];
            c->nmembers = (size_t)g[3];
            c->members = u->mem + mi;
            for (size_t j = 0; j < c->nmembers; j++, mi++) {
                int64_t x[4];
                get(data, len, &off, x, 4);
                next[s] = x[1];
                u->mem[mi] = (vt_obs_member){x[0], next, (uint32_t)x[2], (uint64_t)x[3]};
                next += sv;
            }
        }
        if (vt_critpath_event(cp, &e, err))
            return -1;
    }
    return 0;
bad:
    return vt__cp_err(err, "critical path: a malformed event from process %d", from);
}

static int own_event(void *arg, const vt_obs_event *ev, vt_error *err) { return vt_critpath_event(arg, ev, err); }

void vt_critpath_par_observer(vt_critpath *cp, const vt_trace *t, int me, vt_observer *obs)
{
    memset(obs, 0, sizeof *obs);
    cp->t = t;
    obs->arg = cp;
    obs->event = me == 0 ? own_event : fwd_event;
    obs->held = fwd_held;
    obs->take = fwd_take;
    obs->give = give;
}
