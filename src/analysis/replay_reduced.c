/* Replay of reduced traces (model.md §5-6; doc/format.md REDUCED blocks). */
#include "vt_config.h"
#include "analysis/replay_priv.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ reduced traces
 *
 * The records say which contributors each completion has (model.md §5-6); a sender's
 * difference at a send is its difference after its records before the send's
 * sequence number, published when the sender passes it. A first pass over the records
 * collects which (rank, seq) someone reads and the receiving side of every synchronous
 * message, so memory stays proportional to what the reduced trace records. */


static int need_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A need: one reader of (rank, seq), an entry seq << NEED_PROC_BITS | the reader's
 * process (0 serially) in rank's list, deduplicated later with a count. In parallel a
 * rank of another process goes to its process (PB, in the prepass's exchange). */
#define NEED_PROC_BITS 20
#define NEED_SEQ(e) ((e) >> NEED_PROC_BITS)
#define NEED_PROC(e) ((uint32_t)((e) & ((UINT64_C(1) << NEED_PROC_BITS) - 1)))

typedef struct prep {
    uint64_t **lists;
    size_t *n, *cap;
    struct wbuf *pb;        /* parallel: per process, what its ranks' lists get */
} prep;

static int prep_put(replay *R, prep *X, const int64_t *w, size_t nw)
{
    uint32_t q = vt__rp_owner(R, (uint32_t)w[1]);
    struct wbuf *b = &X->pb[q];
    if (b->n + nw * sizeof *w > b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 1024;
        while (nc < b->n + nw * sizeof *w)
            nc *= 2;
        uint8_t *nb = realloc(b->b, nc);
        if (!nb)
            return -1;
        b->b = nb, b->cap = nc;
    }
    memcpy(b->b + b->n, w, nw * sizeof *w);
    b->n += nw * sizeof *w;
    return 0;
}

static int need_add(replay *R, prep *X, uint32_t rank, uint64_t seq, uint32_t reader)
{
    if (rank >= R->nranks || seq >= (UINT64_C(1) << 40))
        return -2;
    uint64_t e = seq << NEED_PROC_BITS | (R->par ? vt__rp_owner(R, reader) : 0);
    if (!vt__rp_mine(R, rank))
        return prep_put(R, X, (const int64_t[]){1, rank, (int64_t)e}, 3);
    return vt__rp_push_u64(&X->lists[rank], &X->n[rank], &X->cap[rank], e);
}

static int sinfo_add(replay *R, uint32_t src, uint64_t send_seq, const struct sinfo *si)
{
    if (R->nsinfo == R->capsinfo) {
        size_t nc = R->capsinfo ? 2 * R->capsinfo : 64;
        struct sinfo *ns = realloc(R->sinfo, nc * sizeof *ns);
        if (!ns)
            return -1;
        R->sinfo = ns;
        R->capsinfo = nc;
    }
    R->sinfo[R->nsinfo] = *si;
    return vt__rp_map_put(&R->syncinfo, PUB_KEY(src, send_seq), R->nsinfo++) ? -1 : 0;
}

/* The receiving side of a synchronous message goes where its sender is replayed. */
static int sinfo_note(replay *R, prep *X, uint32_t src, uint64_t send_seq, const struct sinfo *si)
{
    if (src >= R->nranks || vt__rp_mine(R, src))
        return sinfo_add(R, src, send_seq, si);
    return prep_put(R, X, (const int64_t[]){2, src, (int64_t)send_seq, si->dst, (int64_t)si->post_seq, si->P, si->E},
                    7);
}

/* Parallel: another process's needs of this process's ranks and its synchronous
 * receives' sides. */
static int prep_deliver(void *arg, int from, const uint8_t *data, size_t len)
{
    (void)from;
    void **a = arg;
    replay *R = a[0];
    prep *X = a[1];
    for (size_t off = 0; off < len;) {
        int64_t w[7];
        memcpy(w, data + off, sizeof w[0]);
        size_t nw = w[0] == 1 ? 3 : w[0] == 2 ? 7 : 0;
        if (!nw || off + nw * sizeof w[0] > len)
            return -1;
        memcpy(w, data + off, nw * sizeof w[0]);
        off += nw * sizeof w[0];
        uint32_t r = (uint32_t)w[1];
        if (r >= R->nranks || !vt__rp_mine(R, r))
            return -1;
        if (w[0] == 1 ? vt__rp_push_u64(&X->lists[r], &X->n[r], &X->cap[r], (uint64_t)w[2])
                      : sinfo_add(R, r, (uint64_t)w[2], &(struct sinfo){(uint32_t)w[3], (uint64_t)w[4], w[5], w[6]}))
            return -1;
    }
    return 0;
}

/* Parallel: 0 on every process when every one is well, else -1 on every one. */
static int all_well(replay *R, int bad)
{
    if (!R->par)
        return bad ? -1 : 0;
    int64_t v = bad != 0;
    return R->par->sum(R->par->arg, &v, 1) || v ? -1 : 0;
}

int vt__rp_reduced_prepass(replay *R)
{
    size_t P = R->par ? (size_t)R->par->nproc : 1;
    prep X = {calloc(R->nranks, sizeof *X.lists), calloc(R->nranks, sizeof *X.n), calloc(R->nranks, sizeof *X.cap),
              calloc(P, sizeof *X.pb)};
    int rc = -1, bad = 1;
    if (!X.lists || !X.n || !X.cap || !X.pb)
        goto nomem;
    for (uint32_t r = 0; r < R->nranks; r++) {
        if (!vt__rp_mine(R, r))
            continue;
        vt_cursor *c;
        if (vt_cursor_open(R->t, r, &c, R->err))
            goto lists;
        vt_rrec rec;
        int got;
        while ((got = vt_cursor_next_reduced(c, &rec, R->err)) == 1) {
            if (rec.kind != VT_RREC_COMP)
                continue;
            for (size_t i = 0; i < rec.nmsgs; i++) {
                const vt_rmsg *mg = &rec.msgs[i];
                int e = need_add(R, &X, mg->src, mg->send_seq, r);
                if (!e && mg->sync) {
                    e = need_add(R, &X, r, mg->post_seq, mg->src);
                    struct sinfo si = {r, mg->post_seq, vt__rp_gtime(R, r, mg->P), vt__rp_gtime(R, r, rec.exit)};
                    if (!e)
                        e = sinfo_note(R, &X, mg->src, mg->send_seq, &si) ? -1 : 0;
                }
                if (e) {
                    /* (the record's lists are the cursor's: said before it closes) */
                    if (e == -2)
                        vt_error_set(R->err,
                                       "%s: record %" PRIu64 " (event %u:%" PRIu64 ") names a message from rank %u, "
                                       "event %" PRIu64 ", which is not in the trace",
                                       vt_trace_rank(R->t, r)->path, rec.index, r, rec.seq, mg->src, mg->send_seq);
                    vt_cursor_close(c);
                    if (e == -2)
                        goto lists;
                    goto nomem;
                }
            }
            for (size_t i = 0; i < rec.nssends; i++)
                if (need_add(R, &X, r, rec.ssends[i].send_seq, r)) {
                    vt_cursor_close(c);
                    goto nomem;
                }
        }
        vt_cursor_close(c);
        if (got < 0)
            goto lists;
    }
    bad = 0;
    goto lists;
nomem:
    vt_error_set(R->err, "out of memory reading the reduced trace");
lists:
    if (R->par) {
        /* what the other processes' ranks read of this process's, and the reverse */
        if (all_well(R, bad))
            goto out;
        uint8_t **out = calloc(P, sizeof *out);
        size_t *len = calloc(P, sizeof *len);
        void *arg[2] = {R, &X};
        bad = !out || !len;
        for (size_t q = 0; !bad && q < P; q++)
            out[q] = X.pb[q].b, len[q] = X.pb[q].n;
        if (!bad && R->par->exchange(R->par->arg, out, len, prep_deliver, arg))
            bad = vt_error_set(R->err, "parallel replay: the exchange of the reduced trace's readers failed");
        free(out);
        free(len);
    }
    for (uint32_t r = 0; !bad && r < R->nranks; r++) {
        rstate *s = &R->rs[r];
        if (!X.n[r])
            continue;
        vt_sort(X.lists[r], X.n[r], sizeof *X.lists[r], need_cmp);
        s->needs = X.lists[r];
        X.lists[r] = NULL;
        s->needcnt = malloc(X.n[r] * sizeof *s->needcnt);
        if (!s->needcnt) {
            bad = vt_error_set(R->err, "out of memory reading the reduced trace");
            break;
        }
        size_t k = 0;
        for (size_t i = 0; i < X.n[r]; i++) {
            if (k && s->needs[k - 1] == s->needs[i]) {
                s->needcnt[k - 1]++;
                continue;
            }
            s->needs[k] = s->needs[i];
            s->needcnt[k++] = 1;
        }
        s->nneeds = k;
    }
    rc = all_well(R, bad);
out:
    for (uint32_t r = 0; X.lists && r < R->nranks; r++)
        free(X.lists[r]);
    for (size_t q = 0; X.pb && q < P; q++)
        free(X.pb[q].b);
    free(X.lists);
    free(X.n);
    free(X.cap);
    free(X.pb);
    return rc;
}

/* Publishes this rank's current difference for every read sequence number up to seq. */
static int reduced_publish(replay *R, rstate *s, uint64_t upto)
{
    while (s->needptr < s->nneeds && NEED_SEQ(s->needs[s->needptr]) <= upto) {
        uint64_t e = s->needs[s->needptr], seq = NEED_SEQ(e);
        uint32_t q = NEED_PROC(e);
        if (R->par && q != (uint32_t)R->par->me) {
            /* a reader on process q: the value goes there */
            if (vt__rp_ship_pub(R, q, s->rank, seq, s->needcnt[s->needptr], s->d))
                return -1;
            s->needptr++;
            continue;
        }
        uint32_t i = vt__rp_slot_alloc(R);
        if (i == SLOT_NONE)
            return -1;
        slot *sl = vt__rp_slot(R, i);
        memset(sl, 0, sizeof *sl);
        sl->uses = s->needcnt[s->needptr];
        sl->rank = s->rank;
        sl->seq = seq;
        memcpy(vt__rp_slot_d(R, i), s->d, sizeof(int64_t) * R->nsc);
        if (vt__rp_map_put(&R->pub, PUB_KEY(s->rank, sl->seq), i))
            return -1;
        s->needptr++;
    }
    return 0;
}

/* Parallel: a value of another process's rank that a rank here reads (W_PUB). */
int vt__rp_remote_pub(replay *R, uint32_t rank, uint64_t seq, uint32_t uses, const int64_t *d)
{
    uint32_t i = vt__rp_slot_alloc(R);
    if (i == SLOT_NONE || rank >= R->nranks)
        return -1;
    slot *sl = vt__rp_slot(R, i);
    memset(sl, 0, sizeof *sl);
    sl->uses = uses;
    sl->rank = rank;
    sl->seq = seq;
    memcpy(vt__rp_slot_d(R, i), d, sizeof(int64_t) * R->nsc);
    if (vt__rp_map_put(&R->pub, PUB_KEY(rank, seq), i))
        return -1;
    R->activity++;
    return 0;
}

static uint32_t pub_get(const replay *R, uint32_t rank, uint64_t seq)
{
    uint64_t v;
    return vt__rp_map_get(&R->pub, PUB_KEY(rank, seq), &v) ? (uint32_t)v : SLOT_NONE;
}

static void reduced_release(replay *R)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = vt__rp_slot(R, R->used[i]);
        if (sl->uses && --sl->uses == 0) {
            vt__rp_map_del(&R->pub, PUB_KEY(sl->rank, sl->seq));
            R->freeslots[R->nfree++] = R->used[i];
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        vt__rp_gate_leave(R, R->used_gates[i]);
    R->nused = R->nused_gates = 0;
}

/* With an observer: the implicit stretch of a reduced trace from the last record's end
 * to `upto` (merged events: d does not change), so that observers see the rank's whole
 * timeline. */
static int report_gap(replay *R, rstate *s, int64_t upto, uint64_t seq)
{
    if (!R->obs || !R->obs->event || upto <= s->prev_exit)
        return 0;
    memset(R->delta, 0, sizeof(int64_t) * R->nsc);
    vt_obs_event e = {.rank = s->rank, .seq = seq, .func = "(merged)", .fn = -1, .callsite = -1,
                      .kind = VT_MK_LOCAL, .start = s->prev_exit, .end = upto, .delta = R->delta,
                      .d_before = s->d, .d_after = s->d, .gap = 1};
    s->prev_exit = upto;
    return R->obs->event(R->obs->arg, &e, R->err) ? -1 : 0;
}

/* Rank s joins gate g of its record's collective GR at ENTER; in parallel the other
 * processes that replay a member learn it too. */
static int rjoin(replay *R, rstate *s, gate *g, const vt_rgate *gr, int64_t enter)
{
    if (R->par) {
        const vt_rank *rk = vt_trace_rank(R->t, s->rank);
        const vt_comm *c = NULL;
        for (size_t i = 0; i < rk->ncomms && !c; i++)
            if (rk->comms[i].id == gr->comm)
                c = &rk->comms[i];
        if (!c || vt__rp_gate_local(R, g, c) ||
            vt__rp_ship_join(R, c, gr->comm, gr->collseq, gr->nmembers, enter, s->d, s->rank, s->rr.seq))
            return -1;   /* (an unknown communicator: process 0 replays alone, and names it) */
    }
    vt__rp_gate_join(R, g, enter, s->d, s->rank, s->rr.seq);
    return 0;
}

int vt__rp_rstep(replay *R, rstate *s)
{
    if (s->finished)
        return STEP_DONE;
    vt_rrec *rr = &s->rr;
    if (!s->have) {
        int rc = vt_cursor_next_reduced(s->cur, rr, R->err);
        if (rc < 0)
            return STEP_ERROR;
        if (rc == 0) {
            /* no END: an incomplete trace's rank ends with its last record */
            if (reduced_publish(R, s, UINT64_MAX))
                goto nomem;
            s->last_exit = s->prev_exit;
            s->finished = 1;
            return STEP_DONE;
        }
        s->have = 1;
        s->published = 0;
        s->genter = vt__rp_gtime(R, s->rank, rr->enter);
        s->gexit = vt__rp_gtime(R, s->rank, rr->exit);
        /* what apply_event and the scenario selectors read */
        s->ev.fn = rr->fn;
        s->ev.callsite = rr->callsite;
        s->ev.enter = rr->enter;
        s->ev.exit = rr->exit;
        s->ev.index = rr->index;
        s->ev.callno = rr->seq / 2;
        if (reduced_publish(R, s, rr->seq))
            goto nomem;
    }
    int64_t enter = s->genter, exit = s->gexit;
    const char *func = rr->fn >= 0 ? vt__rp_fname(R, s->rank, rr->fn) : NULL;
    enum vt_model_kind k = rr->fn >= 0 && (size_t)rr->fn < s->nfuncs ? s->fkind[rr->fn] : VT_MK_LOCAL;
    R->ncons = R->nused = R->nused_gates = R->nprobed_by = R->nmembers = 0;
    switch (rr->kind) {
    case VT_RREC_START:
        if (!s->started) {
            s->first_enter = s->prev_exit = enter;
            s->started = 1;
        }
        s->have = 0;
        return STEP_MOVED;
    case VT_RREC_END:
        if (report_gap(R, s, exit, s->gap_seq))
            return STEP_ERROR;
        s->last_exit = exit;
        s->ncalls = rr->seq / 2 + 1;
        s->have = 0;
        /* in a rank file cut short, END is where vtrace reduce's replay of the full
         * trace stopped: the rank's blocked call may have posted a send that another
         * rank received, valued as at a rank's end without END (above) */
        if (s->needptr < s->nneeds && NEED_SEQ(s->needs[s->nneeds - 1]) > rr->seq &&
            !vt_trace_rank(R->t, s->rank)->cut_at) {
            vt_error_set(R->err,
                           "%s: offset %" PRIu64 ": rank %u ends at event %" PRIu64 ", but a record of the trace "
                           "names its event %" PRIu64 " (a send or a posting it never made)",
                           vt_trace_rank(R->t, s->rank)->path, rr->block_offset, s->rank, rr->seq,
                           NEED_SEQ(s->needs[s->nneeds - 1]));
            return STEP_ERROR;
        }
        if (reduced_publish(R, s, UINT64_MAX))
            goto nomem;
        s->finished = 1;
        return STEP_DONE;
    case VT_RREC_CAND:
        if (report_gap(R, s, enter, s->gap_seq) ||
            vt__rp_apply_event(R, s, rr->seq, enter, exit, NULL, 0, func, rr->callsite, k))
            return STEP_ERROR;
        s->prev_exit = exit;
        s->gap_seq = rr->seq + 1;
        s->have = 0;
        return STEP_MOVED;
    case VT_RREC_NBCINIT: {
        size_t gi;
        gate *g = vt__rp_gate_get(R, rr->gates[0].comm, rr->gates[0].collseq, rr->gates[0].nmembers, &gi);
        if (!g || rjoin(R, s, g, &rr->gates[0], enter))
            goto nomem;
        s->nbc_joined = 1;
        s->nbc_comm = rr->gates[0].comm;
        s->ev.collseq = rr->gates[0].collseq;
        int bad = report_gap(R, s, enter, s->gap_seq) ||
                  vt__rp_apply_event(R, s, rr->seq, enter, exit, NULL, 0, func ? func : "?", rr->callsite, VT_MK_ICOLL);
        s->nbc_joined = 0;
        if (bad)
            return STEP_ERROR;
        s->prev_exit = exit;
        s->gap_seq = rr->seq + 1;
        s->have = 0;
        return STEP_MOVED;
    }
    default:
        break;
    }
    /* COMP: blocking collectives join their gate once */
    if (!s->published) {
        for (size_t i = 0; i < rr->ngates; i++) {
            if (rr->gates[i].nonblocking)
                continue;
            size_t gi;
            gate *g = vt__rp_gate_get(R, rr->gates[i].comm, rr->gates[i].collseq, rr->gates[i].nmembers, &gi);
            if (!g || rjoin(R, s, g, &rr->gates[i], enter))
                goto nomem;
        }
        s->published = 1;
    }
    for (size_t i = 0; i < rr->nmsgs; i++) {
        const vt_rmsg *mg = &rr->msgs[i];
        uint32_t sl = pub_get(R, mg->src, mg->send_seq);
        if (sl == SLOT_NONE)
            return STEP_BLOCKED;
        int64_t S = vt__rp_gtime(R, mg->src, mg->S);
        vt_obs_con *oc;
        if (vt__rp_add_con_obs(R, S + vt_model_lambda(R->p, mg->bytes, S, exit), vt__rp_slot_d(R, sl), VT_CON_MSG,
                               mg->src, mg->send_seq, &oc) ||
            vt__rp_note_used(R, sl))
            goto nomem;
        if (oc) {
            oc->S = S;
            oc->S_local = mg->S;
            oc->bytes = mg->bytes;
            oc->sync = mg->sync;
            oc->peer = s->rank;
            oc->probed = (rr->flags & VT_RREC_F_PROBE) != 0;
            oc->post_seq = mg->sync ? mg->post_seq : rr->seq;
            oc->P = mg->sync ? vt__rp_gtime(R, s->rank, mg->P) : enter;
            oc->P_local = mg->sync ? mg->P : rr->enter;
        }
    }
    for (size_t i = 0; i < rr->nssends; i++) {
        const vt_rssend *x = &rr->ssends[i];
        uint64_t si;
        if (!vt__rp_map_get(&R->syncinfo, PUB_KEY(s->rank, x->send_seq), &si)) {
            vt_error_set(R->err,
                           "%s: record %" PRIu64 ": the synchronous send %u:%" PRIu64 " to rank %u has no receive "
                           "record (a reduced trace records both ends)",
                           vt_trace_rank(R->t, s->rank)->path, rr->index, s->rank, x->send_seq, x->dst);
            return STEP_ERROR;
        }
        const struct sinfo *inf = &R->sinfo[si];
        uint32_t sl = pub_get(R, s->rank, x->send_seq), pl = pub_get(R, inf->dst, inf->post_seq);
        if (sl == SLOT_NONE || pl == SLOT_NONE)
            return STEP_BLOCKED;
        int64_t S = vt__rp_gtime(R, s->rank, x->S);
        vt_obs_con *om, *op;
        if (vt__rp_add_con_obs(R, S + vt_model_lambda(R->p, x->bytes, S, inf->E), vt__rp_slot_d(R, sl), VT_CON_SYNC_MSG,
                               s->rank, x->send_seq, &om) ||
            vt__rp_add_con_obs(R, inf->P, vt__rp_slot_d(R, pl), VT_CON_SYNC_POST, inf->dst, inf->post_seq, &op) ||
            vt__rp_note_used(R, sl) || vt__rp_note_used(R, pl))
            goto nomem;
        if (om) {
            om->S = op->S = S;
            om->S_local = op->S_local = x->S;
            om->bytes = op->bytes = x->bytes;
            om->sync = op->sync = 1;
            om->peer = op->peer = x->dst;
            op->post_seq = inf->post_seq;
            op->P = inf->P;
        }
    }
    for (size_t i = 0; i < rr->ngates; i++) {
        size_t gi;
        gate *g = NULL;
        if (R->ngate_of) {
            for (size_t j = vt__rp_gate_home(rr->gates[i].comm, rr->gates[i].collseq, R->capgate_of);;
                 j = (j + 1) & (R->capgate_of - 1)) {
                if (!R->gate_of[j])
                    break;
                gate *h = R->gates[R->gate_of[j] - 1];
                if (h->comm == rr->gates[i].comm && h->seq == rr->gates[i].collseq) {
                    g = h;
                    gi = R->gate_of[j] - 1;
                    break;
                }
            }
        }
        if (!g || !g->complete)
            return STEP_BLOCKED;
        if (vt__rp_add_gate_con(R, g, rr->gates[i].nonblocking) || vt__rp_note_gate(R, vt__rp_gate_id(R, gi)))
            goto nomem;
    }
    if (!(rr->flags & VT_RREC_F_NOLOCAL) &&
        vt__rp_add_con_obs(R, vt__rp_gtime(R, s->rank, rr->rstar), s->d, VT_CON_LOCAL, s->rank, rr->seq, NULL))
        goto nomem;
    const int64_t *base = NULL;
    int64_t M = 0;
    if (R->ncons) {
        M = vt_model_complete(R->cons, R->ncons, R->nsc, R->tmp);
        base = R->tmp;
        if (R->obs)
            vt__rp_fix_members(R);
    }
    if (report_gap(R, s, enter, s->gap_seq) ||
        vt__rp_apply_event(R, s, rr->seq, enter, exit, base, M, func ? func : "?", rr->callsite, k))
        return STEP_ERROR;
    s->prev_exit = exit;
    s->gap_seq = rr->seq + 1;
    reduced_release(R);
    s->have = 0;
    return STEP_MOVED;
nomem:
    vt_error_set(R->err, "out of memory replaying rank %u", s->rank);
    return STEP_ERROR;
}

int vt__rp_reduced_candidates(const vt_trace *t, vt_candidate_fn fn, void *arg, vt_error *err)
{
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_rrec rec;
        int rc;
        while ((rc = vt_cursor_next_reduced(c, &rec, err)) == 1) {
            if (rec.kind != VT_RREC_CAND &&
                !((rec.kind == VT_RREC_COMP || rec.kind == VT_RREC_NBCINIT) && (rec.flags & VT_RREC_F_CAND)))
                continue;
            int64_t dur = vt_global_time(t, r, rec.exit) - vt_global_time(t, r, rec.enter);
            const vt_function *f = rec.fn >= 0 ? vt_trace_function(t, r, rec.fn) : NULL;
            fn(arg, r, rec.seq, dur, rec.fn >= 0 ? (f ? f->name : "?") : NULL, rec.callsite);
        }
        vt_cursor_close(c);
        if (rc < 0)
            return -1;
    }
    return 0;
}

