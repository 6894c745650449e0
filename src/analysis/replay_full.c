/* The records of a full trace in the what-if replay: each rank is streamed with its
 * own cursor; a rank advances until it needs a value another rank has not produced yet
 * (a sender's difference at a send, a receiver's difference where it posted a
 * synchronous receive, the members of a collective), then the next rank runs. Values
 * travel through slots that are freed once read. Without a vt_matches, messages are
 * matched in the same pass (replay_stream.c). */
#include "vt_config.h"
#include "analysis/replay_priv.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Receives complete in the order of their completing record, then of their posting (a
 * completion lists its messages in posting order, as the run time sees them). */
static int pend_before(pend a, pend b) { return a.done < b.done || (a.done == b.done && a.pos < b.pos); }

/* The heap's array at a line boundary: the few receives a rank has pending (a halo
 * exchange's 4) are its first entries, one line a turn (at realloc's 16-byte alignment
 * often two, each a miss at many ranks). */
static int heap_grow(heap *h)
{
    size_t nc = h->cap ? h->cap * 2 : 16;
    pend *v = aligned_alloc(64, nc * sizeof *v);
    if (!v)
        return -1;
    if (h->n)
        memcpy(v, h->v, h->n * sizeof *v);
    free(h->v);
    h->v = v;
    h->cap = nc;
    return 0;
}

static int heap_push(heap *h, uint64_t done, uint32_t pos)
{
    if (__builtin_expect(h->n == h->cap, 0) && heap_grow(h))
        return -1;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h->v[p].done < done || (h->v[p].done == done && h->v[p].pos <= pos))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = (pend){done, pos};
    return 0;
}

static pend heap_pop(heap *h)
{
    pend top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && pend_before(h->v[c + 1], h->v[c]))
            c++;
        if (!pend_before(h->v[c], last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* The slot of send POS of rank s: streaming, in the send's window entry (read with the
 * entry, no map lookup in another rank's memory), else in s->ss. */
static inline __attribute__((always_inline)) uint32_t send_slot(const replay *R, const rstate *s, size_t pos)
{
    if (R->stream)
        return pos >= s->sm->slo && pos < s->sm->shi ? SX(s, pos)->slot : SLOT_NONE;
    return vt__rp_pm_get(&s->ss, (uint32_t)pos);
}

/* What an observer or the parallel replay does with slot i just filled (rare: out of
 * the inline path). */
static int slot_filled_extra(replay *R, rstate *s, int post, size_t pos, uint32_t i, const slot *sl)
{
    if (!post && R->obs && R->obs->publish)
        R->obs->publish(R->obs->arg, s->rank, sl->seq,
                        R->obs->ext_size ? R->slotext + (size_t)i * R->obs->ext_size : NULL);
    if (R->par) {
        /* a value a rank of another process reads goes there now, if its pairing allows */
        int rc = post ? vt__rp_ship_post(R, s, pos) : vt__rp_ship_send(R, s, pos);
        if (rc == 1)
            vt__rp_sm_trim(s);
        return rc < 0 ? -1 : 0;
    }
    return 0;
}

/* A new slot for (rank s, send or posting pos), named in the send's window entry
 * (streaming) or in s's map. */
static inline __attribute__((always_inline)) uint32_t slot_make(replay *R, rstate *s, posmap *pm, int inwin, size_t pos)
{
    uint32_t i = R->nfree ? R->freeslots[--R->nfree] : vt__rp_slot_alloc(R);
    if (i == SLOT_NONE)
        return SLOT_NONE;
    if (inwin) {
        SX(s, pos)->slot = i;
        const vt_match_csend *se = SE(s, pos);
        if (se->recv_pos != VT_MPOS_NONE)   /* paired already: its receiver takes the slot */
            vt__rp_hand_over(R, s, (uint32_t)pos, &R->rs[R->kq[se->key].dst], se->recv_pos);
    } else if (vt__rp_pm_put(pm, (uint32_t)pos, i)) {
        R->freeslots[R->nfree++] = i;
        return SLOT_NONE;
    }
    return i;
}

/* Fills the slot of (rank, send or posting pos) with T, E, d and its readers, reusing
 * the slot when it is still there (a second fill overwrites, as before). Inline (post
 * is a constant at each call): every send and most postings go through it. */
static inline __attribute__((always_inline)) int slot_fill(replay *R, rstate *s, int post, size_t pos, int64_t T,
                                                           int64_t E, uint32_t uses)
{
    posmap *pm = post ? &s->ps : &s->ss;
    int inwin = !post && R->stream;
    uint32_t i = inwin ? send_slot(R, s, pos) : vt__rp_pm_get(pm, (uint32_t)pos);
    if (i == SLOT_NONE && (i = slot_make(R, s, pm, inwin, pos)) == SLOT_NONE)
        return -1;
    slot *sl = vt__rp_slot(R, i);
    sl->T = T;
    sl->E = E;
    sl->uses = uses;
    sl->rank = s->rank;
    sl->pos = (uint32_t)pos;
    sl->post = (uint16_t)post;
    sl->held = 0;
    if (!post)
        sl->bytes = SE(s, pos)->bytes;
    sl->seq = 2 * s->record->callno + 1;
    sl->Tloc = s->record->enter;
    if (R->nsc <= VT_RP_FAST_NSC)   /* (mostly one or a few: no call) */
        for (size_t k = 0; k < R->nsc; k++)
            sl->d[k] = s->d[k];
    else
        memcpy(sl->d, s->d, sizeof(int64_t) * R->nsc);
    if (R->obs || R->par)
        return slot_filled_extra(R, s, post, pos, i, sl);
    return 0;
}

static uint32_t comm_members(const replay *R, uint32_t rank, int64_t ci, uint64_t *id)
{
    const vt_comm *c = vt_trace_comm(R->t, rank, ci);
    if (!c)
        return 0;
    *id = c->id;
    return c->size + ((c->flags & 1) ? c->remote_size : 0);
}
/* ------------------------------------------------------------------ the records */

/* Is the message of send entry (rank, pos) synchronous? (Out of line: the streaming
 * test below stays small enough to be inlined.) */
static __attribute__((noinline)) int send_is_sync(const replay *R, uint32_t rank, const vt_match_csend *se)
{
    const rstate *s = &R->rs[rank];
    enum vt_model_kind k = se->fn >= 0 && (size_t)se->fn < s->nfuncs ? s->skind[se->fn] : VT_MK_SEND;
    return vt_model_is_sync(k, se->bytes, R->p);
}

/* The same of send POS of rank o: streaming, from its window entry (no read of the
 * sender's function table, in another rank's memory). */
static inline int send_is_sync_at(const replay *R, const rstate *o, size_t pos)
{
    if (R->stream)
        return (SX(o, pos)->flags & XF_SYNC) != 0;
    return send_is_sync(R, o->rank, SE(o, pos));
}

/* The same of paired receive i of s: streaming, from the receive's entry when it holds
 * its send's slot (the send entry may be gone, see hand_over). */
static int recv_is_sync(const replay *R, const rstate *s, size_t i)
{
    if (R->stream && (RX(s, i)->flags & XF_HELD))
        return (RX(s, i)->flags & XF_SYNC) != 0;
    const vt_match_crecv *rv = RV(s, i);
    return send_is_sync_at(R, &R->rs[R->stream ? RX(s, i)->src : R->keys[rv->key].src], rv->send_pos);
}

static int note_req(replay *R, uint64_t req)
{
    return vt__rp_push_u64(&R->used_reqs, &R->nused_reqs, &R->capused_reqs, req);
}

static void release_used(replay *R, rstate *s)
{
    for (size_t i = 0; i < R->nused; i++) {
        slot *sl = vt__rp_slot(R, R->used[i]);
        if (sl->uses && --sl->uses == 0) {
            rstate *o = &R->rs[sl->rank];
            if (sl->post || !R->stream)
                vt__rp_pm_del(sl->post ? &o->ps : &o->ss, sl->pos);
            else if (!sl->held && sl->pos >= o->sm->slo && sl->pos < o->sm->shi)
                SX(o, sl->pos)->slot = SLOT_NONE;
            R->freeslots[R->nfree++] = R->used[i];
        }
    }
    for (size_t i = 0; i < R->nused_gates; i++)
        vt__rp_gate_leave(R, R->used_gates[i]);
    /* A completed request is not completed again (a persistent one is started again
     * first, which enters it anew). */
    for (size_t i = 0; i < R->nused_reqs; i++)
        vt__rp_map_del(&s->reqs, R->used_reqs[i]);
    if (R->nused_reqs)
        s->reqs_live = s->reqs.n != 0;
    /* streaming: sends read by this record (by the receiver, by a synchronous sender) */
    for (size_t i = 0; i < R->nused_sends; i++) {
        rstate *o = &R->rs[R->used_sends[i] >> 32];
        uint32_t pos = (uint32_t)R->used_sends[i];
        if (pos >= o->sm->slo && SX(o, pos)->refs && --SX(o, pos)->refs == 0) {
            SX(o, pos)->flags |= XF_RET;
            if (pos == o->sm->slo)
                vt__rp_sm_trim(o);
        }
    }
    R->nused = R->nused_gates = R->nused_reqs = R->nused_sends = 0;
}

/* The message a probe matched: MPI_Mprobe/Improbe name it (the receive they post);
 * MPI_Probe/Iprobe see the first message from the probed source and tag that a later
 * receive on this rank takes. That is: among the receives posted at or after the probe
 * that are matched and not probed yet, the first (in array order) posted by the probe
 * itself, else the first posted (then first in array order) with the probe's
 * communicator, source and tag. Receives are sorted by index and posted at their index,
 * except those an earlier matched probe posted (exc, sorted by posting index): both
 * kinds are searched from the probe's index on, each stopping at its first fit. */
static size_t probe_target(replay *R, rstate *s)
{
    const vt_event *ev = s->record;
    const vt_comm *c = vt_trace_comm(R->t, s->rank, ev->comm);
    int can_match = c && ev->rpeer >= 0;
    uint64_t x = ev->index;
#define PT_SKIP(i) (s->recvs[i].send_pos == VT_MPOS_NONE || vt__rp_probed_get(s, (uint32_t)(i)) != SLOT_NONE)
#define PT_FITS(rv) (R->keys[(rv)->key].comm_id == c->id && R->keys[(rv)->key].src == (uint32_t)ev->rpeer && \
                     R->keys[(rv)->key].tag == ev->rtag)
    size_t best = SIZE_MAX, lo = 0, hi = s->nrecvs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->recvs[mid].index < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->nrecvs; i++) {
        const vt_match_crecv *rv = &s->recvs[i];
        if (!can_match && rv->index > x)
            break;
        if (rv->post_index != rv->index || PT_SKIP(i))
            continue;
        if (rv->index == x)
            return i;
        if (can_match && PT_FITS(rv)) {
            best = i;
            break;
        }
    }
    lo = 0;
    hi = s->nexc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->recvs[s->exc[mid]].post_index < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t j = lo; j < s->nexc; j++) {
        size_t i = s->exc[j];
        const vt_match_crecv *rv = &s->recvs[i];
        if (!can_match && rv->post_index > x)
            break;
        if (PT_SKIP(i))
            continue;
        if (rv->post_index == x)
            return i;
        if (can_match && PT_FITS(rv)) {
            if (best == SIZE_MAX || rv->post_index < s->recvs[best].post_index ||
                (rv->post_index == s->recvs[best].post_index && i < best))
                best = i;
            break;
        }
    }
#undef PT_SKIP
#undef PT_FITS
    return best;
}

/* Enters the request REQ of synchronous send i: its completion has contributors. */
static __attribute__((noinline)) int req_send_sync(rstate *s, uint64_t req, size_t i)
{
    s->reqs_live = 1;
    return vt__rp_map_put(&s->reqs, req, ((uint64_t)REQ_SEND << 56) | i);
}

/* Enters (or, for a message that is not synchronous, forgets) the send request REQ:
 * only a synchronous send's completion has contributors. SYNC: send_is_sync_at. */
static inline int req_send_known(rstate *s, uint64_t req, size_t i, int sync)
{
    if (sync)
        return req_send_sync(s, req, i);
    if (s->reqs_live) {
        vt__rp_map_del(&s->reqs, req);
        s->reqs_live = s->reqs.n != 0;
    }
    return 0;
}

static int req_send(rstate *s, const replay *R, uint64_t req, size_t i)
{
    return req_send_known(s, req, i, send_is_sync_at(R, s, i));
}

/* The position of the current record's first send (post 0) or receive entry, kept in
 * s->send_ptr (post_ptr). Streaming: vt__rp_next_record set it, where match made the
 * entries; those the windows dropped since (a cancelled one, released while it was read
 * ahead) are skipped. Else a scan of the vt_matches arrays from the last record's. */
static inline size_t first_entry(const replay *R, rstate *s, int post)
{
    size_t *ptr = post ? &s->post_ptr : &s->send_ptr;
    if (R->stream) {
        uint64_t lo = post ? s->sm->rlo : s->sm->slo;
        if (*ptr < lo)
            *ptr = lo;
        return *ptr;
    }
    uint64_t index = s->record->index;
    size_t first = *ptr, n = post ? s->nrecvs : s->nsends;
    if (post)
        while (first < n && RV(s, first)->index < index)
            first++;
    else
        while (first < n && SE(s, first)->index < index)
            first++;
    return *ptr = first;
}

/* Phase A, once per record: what this record makes available to other ranks. */
static int publish(replay *R, rstate *s, int64_t enter, int64_t exit, enum vt_model_kind k, unsigned kf)
{
    const vt_event *ev = s->record;
    /* Persistent send templates: their starts are the sends. */
    if ((kf & FK_TMPL) && ev->request && ev->peer >= 0)
        if (vt__rp_map_put(&s->tmpl, ev->request, 1))
            return -1;
    /* Sends made by this record: S = its enter, D = d before it. (Streaming: first drops
     * the sends their receivers let go at pairing, hand_over.) */
    if (R->stream && s->sm->slo < s->sm->srel && (SX(s, s->sm->slo)->flags & XF_RET))
        vt__rp_sm_trim(s);
    size_t first = first_entry(R, s, 0);
    for (size_t i = first; i < s->nsends && SE(s, i)->index == ev->index; i++) {
        if (R->stream) {
            if (vt__rp_ensure_send(R, s, i))
                return -1;
            if (SE(s, i)->key == KEY_SKIP)
                continue;   /* cancelled: no message */
        }
        /* (a send's slot keeps the call's exit as E, for observers: vt_obs_con.S_exit) */
        int sync = send_is_sync_at(R, s, i);
        if (slot_fill(R, s, 0, i, enter, exit, (uint32_t)(1 + sync)))
            return -1;
        if ((kf & FK_ISEND) && ev->request)
            if (req_send_known(s, ev->request, i, sync))
                return -1;
    }
    if (kf & FK_START) {
        uint32_t nth = 0;
        for (size_t q = 0; q < ev->nstarted; q++) {
            uint64_t v;
            if (!vt__rp_map_get(&s->tmpl, ev->started[q], &v))
                continue;
            for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++)
                if (SE(s, i)->key != KEY_SKIP && SE(s, i)->sub == nth && req_send(s, R, ev->started[q], i))
                    return -1;
            nth++;
        }
    }
    /* A probe completes the message it matched, and posts it (probe_msg is read for
     * probes only). */
    if (kf & FK_PROBE) {
        s->probe_msg = R->stream ? vt__rp_probe_target_stream(R, s) : probe_target(R, s);
        if (R->failed)
            return -1;
        if (s->probe_msg != SIZE_MAX) {
            const vt_match_crecv *rv = RV(s, s->probe_msg);
            if (vt__rp_pm_put(&s->probed, (uint32_t)s->probe_msg, (uint32_t)ev->callno))
                return -1;
            s->probed_live = 1;
            /* read by the sender and by this probe (streaming: while the message is not
             * paired yet, whether it is synchronous is not known: the slot is made, and
             * dropped by the probe when it is not) */
            if ((rv->send_pos == VT_MPOS_NONE || recv_is_sync(R, s, s->probe_msg)) &&
                slot_fill(R, s, 1, s->probe_msg, enter, exit, 2))
                return -1;
        }
    }
    /* Receives this record posts: each waits for its completing record; a synchronous
     * one publishes (P_q, d_q(P_q)) and the exit of the call that will complete it. */
    first = first_entry(R, s, 1);
    for (size_t i = first; i < s->nrecvs && RV(s, i)->index == ev->index; i++) {
        if (R->stream) {
            /* its source, tag and completing record (the streaming matcher reads ahead
             * on this rank up to its completion when needed) */
            if (vt__rp_ensure_recv(R, s, i))
                return -1;
            if (RV(s, i)->key == KEY_SKIP)
                continue;   /* cancelled, MPI_PROC_NULL: no message */
        }
        const vt_match_crecv *rv = RV(s, i);
        if (heap_push(&s->pending, rv->done_index, (uint32_t)i))
            return -1;
        if ((!R->stream && rv->send_pos == VT_MPOS_NONE) || rv->post_index != rv->index ||
            vt__rp_probed_get(s, (uint32_t)i) != SLOT_NONE)
            continue;
        if (rv->send_pos != VT_MPOS_NONE && !recv_is_sync(R, s, i))
            continue;
        /* read by the sender and by the completing call (streaming, not paired yet: made
         * in case, dropped by the completing call when the message is not synchronous) */
        if (slot_fill(R, s, 1, i, enter, vt__rp_gtime_at(R, s, rv->done_exit), 2))
            return -1;
    }
    /* Collectives: join the gate of (communicator, sequence number) with (enter, d)
     * (coll_gate and nbc_joined are read for collectives only). */
    if (!(kf & FK_GATE))
        return 0;
    s->coll_gate = 0;
    s->nbc_joined = 0;
    if (ev->comm >= 0 && ev->collseq != VT_SEQ_NONE) {
        uint64_t id = 0;
        uint32_t need = comm_members(R, s->rank, ev->comm, &id);
        if (need) {
            size_t gi;
            gate *g = vt__rp_gate_get(R, id, ev->collseq, need, &gi);
            if (!g)
                return -1;
            if (R->par && (vt__rp_gate_local(R, g, vt_trace_comm(R->t, s->rank, ev->comm)) ||
                           vt__rp_ship_join(R, vt_trace_comm(R->t, s->rank, ev->comm), id, ev->collseq, need, enter,
                                            s->d, s->rank, 2 * ev->callno + 1)))
                return -1;
            vt__rp_gate_join(R, g, enter, s->d, s->rank, 2 * ev->callno + 1);
            uint64_t gid = vt__rp_gate_id(R, gi);
            if (k == VT_MK_ICOLL) {
                s->nbc_joined = 1;
                s->nbc_comm = id;
            }
            if (k == VT_MK_COLL) {
                s->coll_gate = gid + 1;
            } else if (ev->request) {
                s->reqs_live = 1;
                if (vt__rp_map_put(&s->reqs, ev->request, ((uint64_t)REQ_ICOLL << 56) | gid))
                    return -1;
            }
        }
    }
    return 0;
}

/* (S + λ_m, D) of the message of receive entry i, received by a call exiting at E.
 * Returns 1 when the sender has not reached the send yet. */
static int message_in(replay *R, rstate *s, size_t i, int64_t E, int probed)
{
    if (R->stream && RV(s, i)->send_pos == VT_MPOS_NONE) {
        /* not paired yet: not released while a receive posted before it is unresolved
         * (read ahead until it is), or its send is not made yet (wait for it) */
        while (!(RX(s, i)->flags & XF_REL)) {
            int rc = vt__rp_more(R, s);
            if (rc < 0)
                return -1;
            if (rc == 0)
                break;
        }
        if (RV(s, i)->send_pos == VT_MPOS_NONE)
            /* (its key, and so its sender, is known once it is released) */
            return vt__rp_blocked_on(R, (RX(s, i)->flags & XF_REL) && RV(s, i)->key < R->capkq
                                            ? R->kq[RV(s, i)->key].src : WAIT_NONE);
    }
    if (R->stream && (RX(s, i)->flags & XF_HELD)) {
        /* the pairing gave this entry the send's slot: nothing of the sender's is read */
        const rx *x = RX(s, i);
        slot *sd = vt__rp_slot(R, x->slot);
        int sync = (x->flags & XF_SYNC) != 0;
        sd->held = 1;
        R->step_msgs++;
        R->step_viol += E < sd->T;
        if (vt__rp_add_con_obs(R, sd->T + vt_model_lambda(R->p, sd->bytes, sd->T, E), vt__rp_slot_d(R, x->slot),
                               VT_CON_MSG, x->src, sd->seq, NULL) ||
            vt__rp_note_used(R, x->slot))
            return -1;
        uint32_t pl = sync ? vt__rp_pm_get(&s->ps, (uint32_t)i) : SLOT_NONE;
        if (pl != SLOT_NONE && vt__rp_note_used(R, pl))
            return -1;
        return !sync && vt__rp_drop_post(R, s, i) ? -1 : 0;
    }
    const vt_match_crecv *rv = RV(s, i);
    /* (streaming: the sender from the receive's entry, not from the key table) */
    uint32_t src = R->stream ? RX(s, i)->src : R->keys[rv->key].src;
    rstate *snd = &R->rs[src];
    uint32_t sl = send_slot(R, snd, rv->send_pos);
    if (sl == SLOT_NONE)
        return vt__rp_blocked_on(R, src);
    const vt_match_csend *se = SE(snd, rv->send_pos);
    const slot *sd = vt__rp_slot(R, sl);
    int sync = send_is_sync_at(R, snd, rv->send_pos);
    R->step_msgs++;
    R->step_viol += E < sd->T;
    vt_obs_con *oc;
    if (vt__rp_add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, E), vt__rp_slot_d(R, sl), VT_CON_MSG,
                           src, sd->seq, &oc) ||
        vt__rp_note_used(R, sl))
        return -1;
    /* a synchronous message's posting (its slot is read here and by the sender) */
    uint32_t pl = sync ? vt__rp_pm_get(&s->ps, (uint32_t)i) : SLOT_NONE;
    if (pl != SLOT_NONE && vt__rp_note_used(R, pl))
        return -1;
    if (R->stream && (!sync && vt__rp_drop_post(R, s, i)))
        return -1;
    if (R->stream && vt__rp_note_send(R, src, rv->send_pos))
        return -1;
    if (oc) {
        const vt_match_key *key = &R->keys[rv->key];
        oc->S = sd->T;
        oc->S_local = sd->Tloc;
        oc->S_exit = sd->E;
        oc->bytes = se->bytes;
        oc->sync = sync;
        enum vt_model_kind fk = se->fn >= 0 && (size_t)se->fn < snd->nfuncs ? snd->fkind[se->fn] : VT_MK_LOCAL;
        oc->blocking_send = fk == VT_MK_SEND || fk == VT_MK_SSEND || fk == VT_MK_BSEND;
        oc->peer = s->rank;
        oc->tag = key->tag;
        oc->comm_id = key->comm_id;
        oc->probed = probed;
        oc->send_pos = rv->send_pos;
        oc->ext = R->obs->ext_size ? R->slotext + (size_t)sl * R->obs->ext_size : NULL;
        if (pl != SLOT_NONE) {
            oc->post_seq = vt__rp_slot(R, pl)->seq;
            oc->P = vt__rp_slot(R, pl)->T;
            oc->P_local = vt__rp_slot(R, pl)->Tloc;
        } else {
            oc->post_seq = 2 * s->record->callno + 1;
            oc->P = s->genter;
            oc->P_local = s->record->enter;
        }
    }
    return 0;
}

/* Sender side of a synchronous message (send entry i of s): (S + λ_m, D) and the
 * receiver's (P_q, d_q(P_q)). Returns 1 while the receiver has not posted it. */
static int sync_sender(replay *R, rstate *s, size_t i)
{
    const vt_match_csend *se = SE(s, i);
    if (se->recv_pos == VT_MPOS_NONE) {
        if (!R->stream)
            return 0;
        /* not paired yet: the receiver may not have posted it, or holds unresolved receives */
        if (R->par && !vt__rp_mine(R, R->keys[se->key].dst))
            return vt__rp_ship_settle(R, R->keys[se->key].dst) ? -1 : 1;   /* its process settles it */
        if (vt__rp_settle(R, &R->rs[R->keys[se->key].dst]))
            return -1;
        se = SE(s, i);
        if (se->recv_pos == VT_MPOS_NONE)
            return vt__rp_blocked_on(R, R->keys[se->key].dst);
    }
    uint32_t pl = vt__rp_pm_get(&R->rs[R->keys[se->key].dst].ps, se->recv_pos);
    if (pl == SLOT_NONE)
        return vt__rp_blocked_on(R, R->keys[se->key].dst);
    uint32_t sl = send_slot(R, s, i);
    if (sl == SLOT_NONE)
        return 1; /* read already by both readers: not a trace this replay can order */
    const slot *sd = vt__rp_slot(R, sl), *po = vt__rp_slot(R, pl);
    const vt_match_key *key = &R->keys[se->key];
    vt_obs_con *om, *op;
    if (vt__rp_add_con_obs(R, sd->T + vt_model_lambda(R->p, se->bytes, sd->T, po->E), vt__rp_slot_d(R, sl),
                           VT_CON_SYNC_MSG, s->rank, sd->seq, &om) ||
        vt__rp_add_con_obs(R, po->T, vt__rp_slot_d(R, pl), VT_CON_SYNC_POST, key->dst, po->seq, &op) ||
        vt__rp_note_used(R, sl) || vt__rp_note_used(R, pl) || (R->stream && vt__rp_note_send(R, s->rank, (uint32_t)i)))
        return -1;
    if (om) {
        om->S = sd->T;
        om->S_local = sd->Tloc;
        om->bytes = se->bytes;
        om->sync = 1;
        om->peer = key->dst;
        om->tag = key->tag;
        om->comm_id = key->comm_id;
        op->S = sd->T;
        op->S_local = sd->Tloc;
        op->bytes = se->bytes;
        op->sync = 1;
        op->peer = key->dst;
        op->tag = key->tag;
        op->comm_id = key->comm_id;
        op->post_seq = po->seq;
        op->P = po->T;
        op->P_local = po->Tloc;
    }
    return 0;
}

/* What phase B gathered is dropped when the record blocks (it is gathered again when it
 * goes on): the lists are empty at each record's phase B, and so reset only when used. */
static int blocked(replay *R)
{
    R->ncons = R->nused = R->nused_gates = R->nused_reqs = R->nprobed_by = R->nmembers = R->nused_sends = 0;
    R->step_msgs = R->step_viol = 0;
    return STEP_BLOCKED;
}

#define TRY(x) \
    do { \
        int rc_ = (x); \
        if (rc_ > 0) \
            return blocked(R); \
        if (rc_ < 0) \
            goto nomem; \
    } while (0)

int vt__rp_step(replay *R, rstate *s)
{
    if (s->finished)
        return STEP_DONE;
    if (!s->have) {
        int rc = R->stream ? vt__rp_next_record(R, s) : vt_cursor_next(s->cur, &s->ev, R->err);
        if (rc < 0)
            return STEP_ERROR;
        if (rc == 0) {
            s->finished = 1;
            return STEP_DONE;
        }
        if (R->obs && R->obs->record && R->obs->record(R->obs->arg, s->rank, s->record, R->err)) {
            R->failed = 1;
            return STEP_ERROR;
        }
        /* Special records (FLUSH, MARKER, STOPPED) are no model events: a flush belongs
         * to the burst around it, which ends at the next call. */
        if (s->record->fn < 0)
            return STEP_MOVED;
        s->have = 1;
        size_t fn = (size_t)s->record->fn;
        s->kind = (uint8_t)(fn < s->nfuncs ? s->fkind[fn] : VT_MK_LOCAL);
        s->kflags = fn < s->nfuncs ? s->fflags[fn] : 0;
        s->ncalls = s->record->callno + 1;
        s->published = 0;
        s->done_ready = 0;
        s->genter = vt__rp_gtime_at(R, s, s->record->enter);
        s->gexit = vt__rp_gtime_at(R, s, s->record->exit);
        if (!s->started) {
            s->prev_exit = s->first_enter = s->genter;
            s->started = 1;
        }
        /* The computation burst before this record: a local event. */
        if (vt__rp_apply(R, s, 2 * s->record->callno, s->prev_exit, s->genter, NULL, 0, -1, s->record->callsite,
                               VT_MK_LOCAL))
            return STEP_ERROR;
    }
    const vt_event *ev = s->record;
    int64_t enter = s->genter, exit = s->gexit;
    enum vt_model_kind k = (enum vt_model_kind)s->kind;
    unsigned kf = s->kflags;
    if (!s->published) {
        if (publish(R, s, enter, exit, k, kf))
            goto nomem;
        s->published = 1;
    }
    /* Phase B: the contributors (model.md §3); block while one is not available. (What
     * it gathers, R->cons, used, ..., is empty here: see blocked.) */
    int completion = 0, local = 1;
    if ((kf & FK_PROBE) && s->probe_msg != SIZE_MAX) {
        completion = 1;
        TRY(message_in(R, s, s->probe_msg, exit, 1));
    }
    if (!s->done_ready) {
        s->ndone = 0;
        while (s->pending.n && s->pending.v[0].done <= ev->index) {
            pend p = heap_pop(&s->pending);
            if (p.done == ev->index && vt__rp_push_u32(&s->done, &s->ndone, &s->capdone, p.pos))
                goto nomem;
        }
        s->done_ready = 1;
    }
    /* A receive whose completion a local call records (MPI_Request_free of an active
     * receive, VT_COMPL_FREED) takes its message but nobody waits for it: no contributor. */
    if (kf & FK_RECVDONE) {
        for (size_t j = 0; j < s->ndone; j++) {
            size_t i = s->done[j];
            if (!R->stream && RV(s, i)->send_pos == VT_MPOS_NONE)
                continue;
            completion = 1;   /* a receive completion, even of a probed (local) message */
            uint32_t pr = vt__rp_probed_get(s, (uint32_t)i);
            if (pr == SLOT_NONE)
                TRY(message_in(R, s, i, exit, 0));
            else if (R->obs && vt__rp_push_u64(&R->probed_by, &R->nprobed_by, &R->capprobed_by, 2 * (uint64_t)pr + 1))
                goto nomem;
        }
    }
    if (kf & FK_SYNCSEND) {
        for (size_t i = s->send_ptr; i < s->nsends && SE(s, i)->index == ev->index; i++) {
            if (SE(s, i)->key == KEY_SKIP || !send_is_sync_at(R, s, i))
                continue;
            completion = 1;
            if (k != VT_MK_SENDRECV)
                local = 0;   /* a blocking synchronous send: no local contributor */
            TRY(sync_sender(R, s, i));
        }
    }
    if ((kf & FK_COMPL) && s->reqs_live) {
        for (size_t c = 0; c < ev->ndone; c++) {
            const vt_completion *d = &ev->done[c];
            uint64_t v;
            if ((d->flags & (VT_COMPL_RECV | VT_COMPL_CANCELLED)) || !vt__rp_map_get(&s->reqs, d->request, &v))
                continue;
            uint64_t pos = v & ((1ull << 56) - 1);
            if ((v >> 56) == REQ_ICOLL) {
                gate *g = vt__rp_gate_by_id(R, pos);
                if (!g || !g->complete)
                    return blocked(R);
                completion = 1;
                if (vt__rp_add_gate_con(R, g, 1) || vt__rp_note_gate(R, pos) || note_req(R, d->request))
                    goto nomem;
            } else {
                /* only synchronous sends are entered (req_send) */
                completion = 1;
                TRY(sync_sender(R, s, (size_t)pos));
                /* (reading ahead may have moved this record's lists: index again) */
                if (note_req(R, ev->done[c].request))
                    goto nomem;
            }
        }
    }
    if ((kf & FK_GATE) && s->coll_gate) {
        gate *g = vt__rp_gate_by_id(R, s->coll_gate - 1);
        if (!g || !g->complete)
            return blocked(R);
        completion = 1;
        local = 0;   /* its own (enter, d) is in the gate */
        if (vt__rp_add_gate_con(R, g, 0) || vt__rp_note_gate(R, s->coll_gate - 1))
            goto nomem;
    }
    if (completion && local && vt__rp_add_con_obs(R, enter, s->d, VT_CON_LOCAL, s->rank, 2 * ev->callno + 1, NULL))
        goto nomem;
    /* Phase C: the completion rule, then the candidate rule (apply_event). */
    const int64_t *base = NULL;
    int64_t M = 0;
    if (completion && R->ncons) {
        M = vt_model_complete(R->cons, R->ncons, R->nsc, R->tmp);
        base = R->tmp;
        if (R->obs)
            vt__rp_fix_members(R);
    }
    if (vt__rp_apply(R, s, 2 * ev->callno + 1, enter, exit, base, M, ev->fn,
                           ev->callsite, k))
        return STEP_ERROR;
    /* (phase B gathers only where it sets completion) */
    if (completion) {
        R->res->messages += R->step_msgs;
        R->res->clock_violations += R->step_viol;
        R->step_msgs = R->step_viol = 0;
        R->ncons = R->nprobed_by = R->nmembers = 0;
        release_used(R, s);
    }
    if (s->probed_live) {
        for (size_t j = 0; j < s->ndone; j++)
            vt__rp_pm_del(&s->probed, s->done[j]);
        s->probed_live = s->probed.n != 0;
    }
    if (R->stream && s->ndone) {
        int front = 0;
        for (size_t j = 0; j < s->ndone; j++) {
            RX(s, s->done[j])->flags |= XF_RET;
            s->sm->rdirty = 1;
            front |= s->done[j] == s->sm->rlo;
        }
        if (front)
            vt__rp_sm_trim(s);
    }
    s->prev_exit = s->last_exit = exit;
    s->have = 0;
    if (k == VT_MK_END) {
        s->finished = 1;
        return STEP_DONE;
    }
    return STEP_MOVED;
nomem:
    if (!R->failed)
        vt_error_set(R->err, "out of memory replaying rank %u", s->rank);
    return STEP_ERROR;
}

/* An incomplete trace: no rank can go on, the ones left stop at the cut. */
void vt__rp_stop_at_cut(replay *R)
{
    for (uint32_t r = 0; r < R->nranks; r++) {
        rstate *s = &R->rs[r];
        if (s->finished)
            continue;
        s->finished = 1;
        if (s->have && !R->reduced)
            s->last_exit = s->genter; /* the burst before the call it waits in was replayed */
        else if (R->reduced)
            s->last_exit = s->prev_exit; /* the last record replayed: a reduced trace's END is lost */
        uint64_t n = vt_trace_rank(R->t, r)->nrecords;
        R->res->cut_ranks++;
        R->res->cut_records += n > s->record->index ? n - s->record->index : 0;
    }
}

static int cmp_evitem(const void *a, const void *b)
{
    const struct evitem *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->scen < y->scen ? -1 : x->scen > y->scen;
}

static int cmp_exc(const void *a, const void *b, void *arg)
{
    const vt_match_crecv *r = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r[x].post_index != r[y].post_index)
        return r[x].post_index < r[y].post_index ? -1 : 1;
    return (x > y) - (x < y);
}

/* What a record of a function of kind K needs of vt__rp_step (FK_*); SINIT: a persistent
 * send's *_init. */
static uint8_t kind_flags(enum vt_model_kind k, int sinit)
{
    uint8_t f = sinit ? FK_TMPL : 0;
    if (k == VT_MK_ISEND || k == VT_MK_ISSEND || k == VT_MK_IBSEND)
        f |= FK_ISEND;
    if (k == VT_MK_SEND || k == VT_MK_SSEND || k == VT_MK_SENDRECV)
        f |= FK_SYNCSEND;
    if (k != VT_MK_PROBE && k != VT_MK_LOCAL)
        f |= FK_RECVDONE;
    if (k == VT_MK_COMPLETION)
        f |= FK_COMPL;
    if (k == VT_MK_START)
        f |= FK_START;
    if (k == VT_MK_PROBE)
        f |= FK_PROBE;
    if (k == VT_MK_COLL || k == VT_MK_ICOLL)
        f |= FK_GATE;
    return f;
}

/* The kinds of RK's functions: ranks share their function tables (the reader shares
 * identical ones between consecutive ranks), and so do their kinds here. */
static const ftab *function_table(replay *R, const vt_rank *rk)
{
    if (R->nftabs && R->ftabs[R->nftabs - 1].funcs == rk->funcs && R->ftabs[R->nftabs - 1].n == rk->nfuncs)
        return &R->ftabs[R->nftabs - 1];
    ftab *n = realloc(R->ftabs, (R->nftabs + 1) * sizeof *n);
    if (!n)
        return NULL;
    R->ftabs = n;
    ftab *f = &n[R->nftabs];
    size_t nf = rk->nfuncs + 1;
    *f = (ftab){rk->funcs, rk->nfuncs, malloc(nf * sizeof *f->fkind), malloc(nf * sizeof *f->skind), malloc(nf),
                malloc(nf), malloc(nf), malloc(nf * sizeof *f->fname)};
    if (!f->fkind || !f->skind || !f->kinds || !f->inits || !f->fflags || !f->fname) {
        vt__rp_free_ftab(f);
        return NULL;
    }
    R->nftabs++;
    for (size_t i = 0; i < rk->nfuncs; i++) {
        const char *name = rk->funcs[i].name;
        f->fkind[i] = vt_model_kind_of(name);
        f->skind[i] = vt_model_send_kind(name);
        /* MPI_Send_init and the Ssend, Bsend, Rsend ones (and their _c variants) */
        int sinit = strstr(name, "send_init") || strstr(name, "Send_init");
        f->fflags[i] = kind_flags(f->fkind[i], sinit);
        f->kinds[i] = vt__match_classify(&rk->funcs[i], &f->inits[i]);
        f->fname[i] = name;
    }
    return f;
}

void vt__rp_free_ftab(ftab *f)
{
    free(f->fkind);
    free(f->skind);
    free(f->kinds);
    free(f->inits);
    free(f->fflags);
    free(f->fname);
}

int vt__rp_setup_rank(replay *R, rstate *s, uint32_t r)
{
    s->rank = r;
    s->probe_msg = SIZE_MAX;
    s->record = &s->ev;
    /* (parallel: another process reads the ranks it replays) */
    if (vt__rp_mine(R, r) && vt_cursor_open(R->t, r, &s->cur, R->err))
        return -1;
    vt_cursor_fast(s->cur);
    s->d = R->dall + (size_t)r * R->nsc;
    const vt_rank *rk = vt_trace_rank(R->t, r);
    s->rk = rk;
    const ftab *ft = function_table(R, rk);
    if (R->stream)
        s->sm = &R->sms[r];
    if (!ft) {
        vt_error_set(R->err, "out of memory preparing the replay of rank %u", r);
        return -1;
    }
    int64_t off;
    s->goff_ok = vt_global_offset(R->t, r, &off);
    s->goff = s->goff_ok ? off : 0;
    if (R->stream) {
        s->sm->kinds = ft->kinds;
        s->sm->inits = ft->inits;
    } else {
        s->recvs = vt_matches_crecvs(R->m, r, &s->nrecvs);
        s->sends = vt_matches_csends(R->m, r, &s->nsends);
        s->rw = (vt_match_crecv *)s->recvs;  /* read only */
        s->sw = (vt_match_csend *)s->sends;
        s->rmask = s->smask = UINT32_MAX;   /* (positions are 32-bit) */
        s->rstride = sizeof *s->rw;
        s->sstride = sizeof *s->sw;
    }
    s->nfuncs = rk->nfuncs;
    s->fkind = ft->fkind;
    s->skind = ft->skind;
    s->fflags = ft->fflags;
    s->fname = ft->fname;
    for (size_t i = 0; i < s->nrecvs; i++)
        s->nexc += s->recvs[i].post_index != s->recvs[i].index;
    if (s->nexc) {
        s->exc = malloc(s->nexc * sizeof *s->exc);
        if (!s->exc) {
            vt_error_set(R->err, "out of memory preparing the replay of rank %u", r);
            return -1;
        }
        size_t n = 0;
        for (size_t i = 0; i < s->nrecvs; i++)
            if (s->recvs[i].post_index != s->recvs[i].index)
                s->exc[n++] = (uint32_t)i;
        qsort_r(s->exc, n, sizeof *s->exc, cmp_exc, (void *)s->recvs);
    }
    /* s->evitems: this rank's scenario events, given by vt__rp_rank_items */
    if (s->nevitems > 1)
        vt_sort(s->evitems, s->nevitems, sizeof *s->evitems, cmp_evitem);
    s->apply_fast = R->plan.fast && !s->nevitems;
    return 0;
}

void vt__rp_free_rank(replay *R, rstate *s)
{
    vt_cursor_close(s->cur);
    free(s->ss.e);
    free(s->ps.e);
    free(s->probed.e);
    free(s->pending.v);
    free(s->done);
    free(s->exc);
    free(s->evitems);
    free(s->needs);
    free(s->needcnt);
    vt__rp_sm_free(R, s);
    vt__rp_map_free(&s->reqs);
    vt__rp_map_free(&s->tmpl);
}

