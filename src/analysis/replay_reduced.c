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

/* Adds one reader of (rank, seq) to the per-rank lists (deduplicated later). */
static int need_add(replay *R, uint32_t rank, uint64_t seq, uint64_t **lists, size_t *n, size_t *cap)
{
    if (rank >= R->nranks || seq >= (UINT64_C(1) << 40))
        return -2;
    return vt__rp_push_u64(&lists[rank], &n[rank], &cap[rank], seq);
}

int vt__rp_reduced_prepass(replay *R)
{
    uint64_t **lists = calloc(R->nranks, sizeof *lists);
    size_t *n = calloc(R->nranks, sizeof *n), *cap = calloc(R->nranks, sizeof *cap);
    int rc = -1;
    if (!lists || !n || !cap)
        goto nomem;
    for (uint32_t r = 0; r < R->nranks; r++) {
        vt_cursor *c;
        if (vt_cursor_open(R->t, r, &c, R->err))
            goto out;
        vt_rrec rec;
        int got;
        while ((got = vt_cursor_next_reduced(c, &rec, R->err)) == 1) {
            if (rec.kind != VT_RREC_COMP)
                continue;
            for (size_t i = 0; i < rec.nmsgs; i++) {
                const vt_rmsg *mg = &rec.msgs[i];
                int e = need_add(R, mg->src, mg->send_seq, lists, n, cap);
                if (!e && mg->sync) {
                    e = need_add(R, r, mg->post_seq, lists, n, cap);
                    if (!e) {
                        if (R->nsinfo == R->capsinfo) {
                            size_t nc = R->capsinfo ? 2 * R->capsinfo : 64;
                            struct sinfo *ns = realloc(R->sinfo, nc * sizeof *ns);
                            if (!ns) {
                                vt_cursor_close(c);
                                goto nomem;
                            }
                            R->sinfo = ns;
                            R->capsinfo = nc;
                        }
                        R->sinfo[R->nsinfo] =
                            (struct sinfo){r, mg->post_seq, vt__rp_gtime(R, r, mg->P), vt__rp_gtime(R, r, rec.exit)};
                        e = vt__rp_map_put(&R->syncinfo, PUB_KEY(mg->src, mg->send_seq), R->nsinfo++) ? -1 : 0;
                    }
                }
                if (e) {
                    vt_cursor_close(c);
                    if (e == -2) {
                        vt_error_set(R->err,
                                       "%s: record %" PRIu64 " (event %u:%" PRIu64 ") names a message from rank %u, "
                                       "event %" PRIu64 ", which is not in the trace",
                                       vt_trace_rank(R->t, r)->path, rec.index, r, rec.seq, mg->src, mg->send_seq);
                        goto out;
                    }
                    goto nomem;
                }
            }
            for (size_t i = 0; i < rec.nssends; i++)
                if (need_add(R, r, rec.ssends[i].send_seq, lists, n, cap)) {
                    vt_cursor_close(c);
                    goto nomem;
                }
        }
        vt_cursor_close(c);
        if (got < 0)
            goto out;
    }
    for (uint32_t r = 0; r < R->nranks; r++) {
        rstate *s = &R->rs[r];
        if (!n[r])
            continue;
        vt_sort(lists[r], n[r], sizeof *lists[r], need_cmp);
        s->needs = lists[r];
        lists[r] = NULL;
        s->needcnt = malloc(n[r] * sizeof *s->needcnt);
        if (!s->needcnt)
            goto nomem;
        size_t k = 0;
        for (size_t i = 0; i < n[r]; i++) {
            if (k && s->needs[k - 1] == s->needs[i]) {
                s->needcnt[k - 1]++;
                continue;
            }
            s->needs[k] = s->needs[i];
            s->needcnt[k++] = 1;
        }
        s->nneeds = k;
    }
    rc = 0;
    goto out;
nomem:
    vt_error_set(R->err, "out of memory reading the reduced trace");
out:
    for (uint32_t r = 0; lists && r < R->nranks; r++)
        free(lists[r]);
    free(lists);
    free(n);
    free(cap);
    return rc;
}

/* Publishes this rank's current difference for every read sequence number up to seq. */
static int reduced_publish(replay *R, rstate *s, uint64_t upto)
{
    while (s->needptr < s->nneeds && s->needs[s->needptr] <= upto) {
        uint32_t i = vt__rp_slot_alloc(R);
        if (i == SLOT_NONE)
            return -1;
        slot *sl = &R->slots[i];
        memset(sl, 0, sizeof *sl);
        sl->uses = s->needcnt[s->needptr];
        sl->rank = s->rank;
        sl->seq = s->needs[s->needptr];
        memcpy(vt__rp_slot_d(R, i), s->d, sizeof(int64_t) * R->nsc);
        if (vt__rp_map_put(&R->pub, PUB_KEY(s->rank, sl->seq), i))
            return -1;
        s->needptr++;
    }
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
        slot *sl = &R->slots[R->used[i]];
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
        if (s->needptr < s->nneeds && s->needs[s->nneeds - 1] > rr->seq) {
            vt_error_set(R->err,
                           "%s: offset %" PRIu64 ": rank %u ends at event %" PRIu64 ", but a record of the trace "
                           "names its event %" PRIu64 " (a send or a posting it never made)",
                           vt_trace_rank(R->t, s->rank)->path, rr->block_offset, s->rank, rr->seq,
                           s->needs[s->nneeds - 1]);
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
        if (!g)
            goto nomem;
        vt__rp_gate_join(R, g, enter, s->d, s->rank, rr->seq);
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
            if (!g)
                goto nomem;
            vt__rp_gate_join(R, g, enter, s->d, s->rank, rr->seq);
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

