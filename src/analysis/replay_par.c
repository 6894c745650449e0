/* The parallel replay (vt_replay_par): this process steps its block of ranks as the
 * serial loop does, until each is blocked or done; then one round of messages carries
 * what its ranks made for ranks of other processes (replay_wire.c) and brings theirs,
 * which enter the proxies of their ranks: a remote send is paired as a local one, a
 * synchronous receive's posting fills the slot its sender reads, a member's entry joins
 * the gate. A sum over the processes then says whether any moved, how many ranks are
 * done and whether one failed. The values, and the order in which each rank reads them,
 * are the serial replay's: the results are the same to the nanosecond. */
#include "vt_config.h"
#include "analysis/replay_priv.h"

#include <stdlib.h>
#include <string.h>

int vt__rp_par_init(replay *R)
{
    const vt_par_comm *pc = R->par;
    uint32_t me = (uint32_t)pc->me, P = (uint32_t)pc->nproc;
    R->lo = (uint32_t)((uint64_t)me * R->nranks / P);
    R->hi = (uint32_t)((uint64_t)(me + 1) * R->nranks / P);
    R->out = R->outsets = calloc(2 * (size_t)P, sizeof *R->out);
    R->stamp = calloc(P, sizeof *R->stamp);
    if (!R->out || !R->stamp) {
        vt_error_set(R->err, "out of memory preparing the parallel replay");
        return -1;
    }
    return 0;
}

void vt__rp_par_free(replay *R)
{
    for (size_t q = 0; R->outsets && q < 2 * (size_t)R->par->nproc; q++)
        free(R->outsets[q].b);
    free(R->outsets);
    free(R->stamp);
    vt__rp_map_free(&R->commloc);
}

/* One message of another process's round. */
static int deliver(void *arg, int from, const uint8_t *data, size_t len)
{
    replay *R = arg;
    size_t nsc = R->nsc, off = 0;
    int64_t w[W_SEND_WORDS];
    while (off < len) {
        memcpy(w, data + off, sizeof w[0]);
        if (w[0] == W_OBS) {   /* (n, then n bytes in whole words) */
            if (off + 2 * sizeof(int64_t) > len)
                goto bad;
            memcpy(w, data + off, 2 * sizeof w[0]);
            size_t n = (size_t)w[1], nw = (n + sizeof(int64_t) - 1) / sizeof(int64_t);
            if (w[1] < 0 || nw > (len - off) / sizeof(int64_t) - 2 || !R->obs || !R->obs->give)
                goto bad;
            if (R->obs->give(R->obs->arg, from, data + off + 2 * sizeof(int64_t), n, R->err)) {
                R->failed = 1;
                return -1;
            }
            off += (2 + nw) * sizeof(int64_t);
            continue;
        }
        size_t nw = w[0] == W_SEND ? W_SEND_WORDS : w[0] == W_POST ? 8 : w[0] == W_JOIN ? 7 : w[0] == W_SETTLE ? 2
                  : w[0] == W_PUB ? 4 : 0;
        size_t nd = w[0] == W_SETTLE ? 0 : nsc, ne = 0, next = 0;
        int hasx = w[0] == W_SEND && vt__rp_ext_wire(R);
        if (!nw || off + (nw + nd + (size_t)hasx) * sizeof(int64_t) > len)
            goto bad;
        if (hasx) {   /* (the ext's byte count, then its words) */
            int64_t x;
            memcpy(&x, data + off + (nw + nd) * sizeof(int64_t), sizeof x);
            ne = 1 + ((size_t)x + sizeof(int64_t) - 1) / sizeof(int64_t);
            next = (size_t)x;
            if (x < 0 || (size_t)x > len || off + (nw + nd + ne) * sizeof(int64_t) > len)
                goto bad;
        }
        memcpy(w, data + off, nw * sizeof w[0]);
        int64_t *d = R->tmp;   /* (scratch of nsc; unaligned in the buffer) */
        memcpy(d, data + off + nw * sizeof(int64_t), nd * sizeof(int64_t));
        const uint8_t *ext = hasx ? data + off + (nw + nd + 1) * sizeof(int64_t) : NULL;
        off += (nw + nd + ne) * sizeof(int64_t);
        switch (w[0]) {
        case W_SEND:
            if (vt__rp_remote_send(R, w, d, ext, next))
                return -1;
            break;
        case W_POST: {
            /* (src spos dst T E Tloc seq): the slot of the receiver's proxy that the
             * sender's synchronous completion reads */
            uint32_t src = (uint32_t)w[1], dst = (uint32_t)w[3];
            rstate *s = &R->rs[src], *o = &R->rs[dst];
            uint64_t spos = (uint64_t)w[2];
            if (!vt__rp_mine(R, src) || spos < s->sm->slo || spos >= s->sm->shi) {
                vt_error_set(R->err, "parallel replay: a posting for send %llu of rank %u that is not pending",
                             (unsigned long long)spos, src);
                R->failed = 1;
                return -1;
            }
            uint32_t j = (uint32_t)o->post_ptr++;   /* a proxy's postings are numbered as they come */
            if (vt__rp_slot_new(R, o, &o->ps, dst, j, 1, w + 4, d, NULL, 0, 1)) {
                vt_error_set(R->err, "out of memory in the parallel replay");
                R->failed = 1;
                return -1;
            }
            SE(s, spos)->recv_pos = j;
            R->activity++;
            break;
        }
        case W_JOIN: {
            size_t gi;
            gate *g = vt__rp_gate_get(R, (uint64_t)w[1], (uint64_t)w[2], (uint32_t)w[3], &gi);
            if (!g) {
                vt_error_set(R->err, "out of memory in the parallel replay");
                R->failed = 1;
                return -1;
            }
            vt__rp_gate_join(R, g, w[4], d, (uint32_t)w[5], (uint64_t)w[6]);
            R->activity++;
            break;
        }
        case W_PUB:
            if (vt__rp_remote_pub(R, (uint32_t)w[1], (uint64_t)w[2], (uint32_t)w[3], d)) {
                vt_error_set(R->err, "parallel replay: no room for a difference of rank %u", (uint32_t)w[1]);
                R->failed = 1;
                return -1;
            }
            break;
        case W_SETTLE: {
            uint32_t r = (uint32_t)w[1];
            if (!vt__rp_mine(R, r))
                break;
            smatch *m = R->rs[r].sm;
            uint64_t before = m->bhi + m->qrel + (uint64_t)m->eof;
            if (vt__rp_settle(R, &R->rs[r]))
                return -1;
            R->activity += m->bhi + m->qrel + (uint64_t)m->eof != before;
            break;
        }
        }
    }
    return 0;
bad:
    vt_error_set(R->err, "parallel replay: a malformed message from process %d", from);
    R->failed = 1;
    return -1;
}

/* Rounds until every rank is done; -1 on every process when one failed, or when no
 * process can move (an incomplete trace: its ranks stop at the cut, 0). */
int vt__rp_par_loop(replay *R)
{
    const vt_par_comm *pc = R->par;
    size_t P = (size_t)pc->nproc;
    uint32_t done = 0;
    struct wbuf *sets = R->outsets;   /* two sets of P buffers; R->out is the one being filled */
    for (uint32_t r = 0; r < R->nranks; r++)
        if (!vt__rp_mine(R, r))
            R->rs[r].finished = 1;   /* proxies are stepped by their own process */
    uint8_t **bufs = calloc(P, sizeof *bufs);
    size_t *lens = calloc(P, sizeof *lens);
    int rc = -1;
    if (!bufs || !lens) {
        vt_error_set(R->err, "out of memory in the parallel replay");
        R->failed = 1;
    }
    /* a forwarding observer's bytes for process 0: a round stops past its share */
    int fwd = R->obs && R->obs->take && pc->me != 0;
    size_t held_max = VT_PAR_HELD_MAX / P;
    const char *th = getenv("VTRACE_TEST_PAR_HELD");   /* (tests: rounds cut short often) */
    if (th && atol(th) > 0)
        held_max = (size_t)atol(th);
    for (;;) {
        uint64_t act0 = R->activity;
        int64_t moved = 0;
        int full = 0;
        for (uint32_t r = R->lo; r < R->hi && !R->failed && !full; r++) {
            rstate *s = &R->rs[r];
            if (s->finished)
                continue;
            for (;;) {
                int st = R->reduced ? vt__rp_rstep(R, s) : vt__rp_step(R, s);
                if (st == STEP_ERROR) {
                    R->failed = 1;
                    break;
                }
                if (st == STEP_BLOCKED)
                    break;
                moved++;
                if (st == STEP_DONE) {
                    done++;
                    break;
                }
                if (fwd && R->obs->held(R->obs->arg) > held_max) {
                    full = 1;
                    break;
                }
            }
        }
        /* The set filled so far is sent; what the deliveries make fills the other set,
         * sent next round (the exchange reads this one meanwhile). */
        if (fwd && !R->failed && vt__rp_ship_obs(R))
            R->failed = 1;
        if (R->obs && R->obs->round)
            R->obs->round(R->obs->arg);
        struct wbuf *cur = R->out, *other = cur == sets ? sets + P : sets;
        for (size_t q = 0; q < P; q++) {
            bufs[q] = cur[q].b;
            lens[q] = R->failed ? 0 : cur[q].n;
            R->res->par_bytes += lens[q];
        }
        R->res->par_rounds++;
        R->out = other;
        if (pc->exchange(pc->arg, bufs, lens, deliver, R)) {
            vt_error_set(R->err, "parallel replay: the exchange of a round failed");
            R->failed = 1;
        }
        for (size_t q = 0; q < P; q++)
            cur[q].n = 0;
        int64_t v[3] = {moved + (int64_t)(R->activity - act0), done, R->failed};
        if (pc->sum(pc->arg, v, 3)) {
            vt_error_set(R->err, "parallel replay: the sum of a round failed");
            goto out;
        }
        if (v[2])
            goto out;
        if ((uint64_t)v[1] == R->nranks)
            break;
        if (v[0] == 0) {
            if (!R->partial)
                goto out;   /* nothing moves: process 0 replays alone and names the cause */
            vt__rp_stop_at_cut(R);
            break;
        }
    }
    rc = 0;
out:
    free(bufs);
    free(lens);
    return rc;
}

/* After the rounds: a last exchange (what the final deliveries made), then messages
 * left unpaired anywhere fail, and every process gets every rank's results and the
 * scenario items' counts. */
int vt__rp_par_gather(replay *R)
{
    const vt_par_comm *pc = R->par;
    size_t P = (size_t)pc->nproc, n = R->nranks, nsc = R->nsc, nit = 0;
    for (size_t k = 0; k < nsc; k++)
        nit += R->sc[k].nitems;
    uint8_t **bufs = calloc(P, sizeof *bufs);
    size_t *lens = calloc(P, sizeof *lens);
    size_t nv = n * (2 + nsc) + 8 + 3 * nit;
    int64_t *v = calloc(nv, sizeof *v);
    int rc = -1;
    if (bufs && lens && v && !R->partial) {
        struct wbuf *cur = R->out;
        for (size_t q = 0; q < P; q++) {
            bufs[q] = cur[q].b;
            lens[q] = cur[q].n;
            R->res->par_bytes += lens[q];
        }
        R->out = cur == R->outsets ? R->outsets + P : R->outsets;
        if (pc->exchange(pc->arg, bufs, lens, deliver, R))
            R->failed = 1;
    }
    int64_t bad = !bufs || !lens || !v || R->failed;
    for (size_t k = 0; !R->partial && k < R->kt.n; k++)
        bad |= R->kq[k].side != 0;   /* an unmatched send or receive: the serial replay names it */
    if (pc->sum(pc->arg, &bad, 1) || bad)
        goto out;
    for (uint32_t r = R->lo; r < R->hi; r++) {
        const rstate *s = &R->rs[r];
        v[r] = s->last_exit;
        v[n + r] = s->started ? s->first_enter : INT64_MIN; /* (as the serial replay: no record, no start) */
        for (size_t k = 0; k < nsc; k++)
            v[2 * n + k * n + r] = s->last_exit - s->d[k];
    }
    int64_t *c = v + n * (2 + nsc), *it = c + 8;
    c[0] = (int64_t)R->res->messages;
    c[1] = (int64_t)R->res->clock_violations;
    c[2] = R->res->cut_ranks;
    c[3] = (int64_t)R->res->cut_records;
    c[4] = (int64_t)R->res->events;
    c[5] = (int64_t)R->res->candidates;
    c[6] = (int64_t)R->res->par_bytes;
    for (size_t k = 0, j = 0; k < nsc; k++)
        for (size_t i = 0; i < R->sc[k].nitems; i++, j++) {
            const vt_shorten *x = &R->sc[k].items[i];
            it[3 * j] = (int64_t)x->hits;
            it[3 * j + 1] = x->seen;
            it[3 * j + 2] = x->seen ? x->seen_dur : 0;
        }
    if (pc->sum(pc->arg, v, nv))
        goto out;
    vt_replay_result *res = R->res;
    res->messages = (uint64_t)c[0];
    res->clock_violations = (uint64_t)c[1];
    res->cut_ranks = (uint32_t)c[2];
    res->cut_records = (uint64_t)c[3];
    res->events = (uint64_t)c[4];
    res->candidates = (uint64_t)c[5];
    res->par_bytes = (uint64_t)c[6];
    for (size_t k = 0, j = 0; k < nsc; k++)
        for (size_t i = 0; i < R->sc[k].nitems; i++, j++) {
            vt_shorten *x = &R->sc[k].items[i];
            x->hits = (uint64_t)it[3 * j];
            x->seen = it[3 * j + 1] != 0;
            x->seen_dur = it[3 * j + 2];
        }
    int have_start = 0;
    for (uint32_t r = 0; r < n; r++)
        if (v[n + r] != INT64_MIN && (!have_start || v[n + r] < res->start)) {
            res->start = v[n + r];
            have_start = 1;
        }
    for (uint32_t r = 0; r < n; r++) {
        int none = v[n + r] == INT64_MIN;
        res->measured[r] = none ? res->start : v[r];
        for (size_t k = 0; k < nsc; k++) {
            int64_t e = none ? res->start : v[2 * n + k * n + r];
            res->ends[k * n + r] = e;
            if (r == 0 || e > res->total[k])
                res->total[k] = e;
        }
    }
    rc = 0;
out:
    free(bufs);
    free(lens);
    free(v);
    return rc;
}
