/* One rank's reduction; see rankreduce.h. */
#include "vt_config.h"
#include "model/rankreduce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record waiting for the decision of an earlier probe (records go out in sequence
 * order, and a probe's record is known only at the receive of its message). */
struct vt_rr_held {
    vt_rrec r;
    vt_rmsg msg;            /* a probe has at most one */
    vt_rmsg *msgs;          /* owned copies */
    vt_rssend *ssends;
    vt_rgate *gates;
    int placeholder;        /* a probe's record, not decided yet */
    int dropped;
};

/* An open probe window: what its record needs once the message's difference is known. */
struct vt_rr_window {
    uint64_t seq;
    size_t held_at;         /* its placeholder */
    int64_t T;              /* S + λ_m */
    vt_poly D;
    vt_rmsg msg;
};

static int rr_fail(vt_error *err, const char *msg)
{
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return -1;
}

int vt_rr_init(vt_rankreduce *rr, uint32_t rank, unsigned m, unsigned K, enum vt_sym_broken broken,
               const vt_rr_sink *sink, const vt_rr_hooks *hooks)
{
    memset(rr, 0, sizeof *rr);
    if (sink)
        rr->sink = *sink;
    if (hooks)
        rr->hooks = *hooks;
    if (vt_sym_init(&rr->sym, rank, m, K))
        return -1;
    rr->sym.broken = broken;
    rr->d_version = 1;
    return 0;
}

static void held_free(vt_rr_held *h)
{
    free(h->msgs);
    free(h->ssends);
    free(h->gates);
}

void vt_rr_free(vt_rankreduce *rr)
{
    for (size_t i = 0; i < rr->nheld; i++)
        held_free(&rr->held[i]);
    free(rr->held);
    free(rr->win);
    free(rr->msgs);
    free(rr->rmsgs);
    free(rr->rssends);
    free(rr->rgates);
    vt_sym_free(&rr->sym);
    memset(rr, 0, sizeof *rr);
}

/* The fast paths' precondition (rankreduce.h), kept after everything that may change
 * what it reads: the start, sym.invalid (vt_rr_event, vt_rr_probe_fill). */
static void fast_flags(vt_rankreduce *rr)
{
    rr->quiet_ok = rr->started && !rr->sym.invalid && !rr->hooks.event;
    rr->fold_ok = rr->quiet_ok && rr->sym.broken == VT_SYM_CORRECT;
}

static int probe_fill(vt_rankreduce *rr, uint64_t probe_seq, const vt_obs_con *m);

int vt_rr_probe_fill(vt_rankreduce *rr, uint64_t probe_seq, const vt_obs_con *m)
{
    int rc = probe_fill(rr, probe_seq, m);
    fast_flags(rr);
    return rc;
}

static int probe_fill(vt_rankreduce *rr, uint64_t probe_seq, const vt_obs_con *m)
{
    rr->d_version++;
    for (size_t w = 0; w < rr->nwin; w++) {
        vt_rr_window *pw = &rr->win[w];
        if (pw->seq != probe_seq)
            continue;
        int64_t probe_start = pw->msg.P;
        pw->T = m->T;
        memcpy(&pw->D, m->ext, sizeof pw->D);
        pw->msg = (vt_rmsg){m->rank, m->seq, m->S_local, m->bytes, m->sync, m->sync ? m->post_seq : 0, probe_start};
        return 0;
    }
    return -1;
}

void vt_rr_publish(const vt_rankreduce *rr, void *ext)
{
    memcpy(ext, &rr->sym.d, sizeof(vt_poly));
}

/* ------------------------------------------------------------------ records out */

static int out_record(vt_rankreduce *rr, const vt_rrec *rec)
{
    rr->stats.records_out++;
    return rr->sink.record ? rr->sink.record(rr->sink.arg, rec) : 0;
}

/* Sends rec out, or holds it (a copy) behind an open probe window. */
static int emit(vt_rankreduce *rr, const vt_rrec *rec, vt_error *err)
{
    if (!rr->nwin)
        return out_record(rr, rec);
    if (rr->nheld == rr->capheld) {
        size_t nc = rr->capheld ? 2 * rr->capheld : 16;
        vt_rr_held *n = realloc(rr->held, nc * sizeof *n);
        if (!n)
            return rr_fail(err, "out of memory holding records");
        rr->held = n;
        rr->capheld = nc;
    }
    vt_rr_held *h = &rr->held[rr->nheld++];
    memset(h, 0, sizeof *h);
    h->r = *rec;
    h->msgs = rec->nmsgs ? malloc(rec->nmsgs * sizeof *h->msgs) : NULL;
    h->ssends = rec->nssends ? malloc(rec->nssends * sizeof *h->ssends) : NULL;
    h->gates = rec->ngates ? malloc(rec->ngates * sizeof *h->gates) : NULL;
    if ((rec->nmsgs && !h->msgs) || (rec->nssends && !h->ssends) || (rec->ngates && !h->gates))
        return rr_fail(err, "out of memory holding records");
    if (rec->nmsgs)
        memcpy(h->msgs, rec->msgs, rec->nmsgs * sizeof *h->msgs);
    if (rec->nssends)
        memcpy(h->ssends, rec->ssends, rec->nssends * sizeof *h->ssends);
    if (rec->ngates)
        memcpy(h->gates, rec->gates, rec->ngates * sizeof *h->gates);
    h->r.msgs = h->msgs;
    h->r.ssends = h->ssends;
    h->r.gates = h->gates;
    return 0;
}

static int release_held(vt_rankreduce *rr)
{
    if (rr->nwin)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < rr->nheld; i++) {
        vt_rr_held *h = &rr->held[i];
        if (h->r.nmsgs && !h->msgs)
            h->r.msgs = &h->msg; /* a probe's message: set here, as the array may have moved */
        if (!rc && !h->dropped && out_record(rr, &h->r))
            rc = -1;
        held_free(h);
    }
    rr->nheld = 0;
    return rc;
}

/* ------------------------------------------------------------------ events */

static int64_t to_local(const vt_obs_event *e, int64_t global)
{
    /* the event's own offset (global - local of its enter) */
    return global - (e->start - e->rec->enter);
}

static int grow_scratch(vt_rankreduce *rr, size_t n, vt_error *err)
{
    if (n <= rr->capmsgs)
        return 0;
    size_t nc = 2 * n;
    vt_sym_msg *a = realloc(rr->msgs, nc * sizeof *a);
    if (a)
        rr->msgs = a;
    vt_rmsg *b = a ? realloc(rr->rmsgs, nc * sizeof *b) : NULL;
    if (b)
        rr->rmsgs = b;
    vt_rssend *c = b ? realloc(rr->rssends, nc * sizeof *c) : NULL;
    if (c)
        rr->rssends = c;
    vt_rgate *g = c ? realloc(rr->rgates, nc * sizeof *g) : NULL;
    if (g)
        rr->rgates = g;
    if (!g)
        return rr_fail(err, "out of memory reducing");
    rr->capmsgs = nc;
    return 0;
}

static int after_event(vt_rankreduce *rr, const vt_obs_event *e, const vt_poly *base_atom)
{
    return rr->hooks.event ? rr->hooks.event(rr->hooks.arg, e, &rr->sym.d, base_atom) : 0;
}

/* The probe's record, decided now that its message is received (R* and msg.P of the
 * window are global; the record's are local). */
static void decide_probe(vt_rankreduce *rr, const vt_rr_window *pw, const vt_sym_msg *m, int64_t Rstar, int record)
{
    rr->stats.messages++;
    if (m->folded)
        rr->stats.folded++;
    else
        rr->stats.messages_kept++;
    rr->stats.completions++;
    vt_rr_held *h = &rr->held[pw->held_at];
    h->placeholder = 0;
    if (!record) {
        h->dropped = 1;
        return;
    }
    rr->stats.completions_kept++;
    h->r.rstar = h->r.enter + (Rstar - pw->msg.P); /* msg.P holds the probe's global enter */
    if (!m->folded) {
        h->msg = pw->msg;
        h->msg.P = h->r.enter;
        h->r.nmsgs = 1; /* h->r.msgs is set at its release */
    }
}

static int resolve_probes(vt_rankreduce *rr, const vt_obs_event *e, vt_error *err)
{
    for (size_t j = 0; j < e->nprobed; j++) {
        uint64_t ps = e->probed_by[j];
        size_t w = 0;
        while (w < rr->nwin && rr->win[w].seq != ps)
            w++;
        if (w == rr->nwin)
            continue; /* a probe that matched nothing the reduction saw */
        vt_rr_window pw = rr->win[w];
        memmove(&rr->win[w], &rr->win[w + 1], (rr->nwin - w - 1) * sizeof *rr->win);
        rr->nwin--;
        vt_sym_msg m = {.T = pw.T, .D = &pw.D, .sync = pw.msg.sync, .src = pw.msg.src, .send_seq = pw.msg.send_seq};
        int64_t Rstar;
        int record;
        vt_poly after;
        if (vt_sym_probe_resolve(&rr->sym, ps, &m, &Rstar, &record, &after)) {
            snprintf(err->msg, sizeof err->msg, "rank %u: probe %" PRIu64 " has no open window", e->rank, ps);
            return -1;
        }
        decide_probe(rr, &pw, &m, Rstar, record);
        if (rr->hooks.probe && rr->hooks.probe(rr->hooks.arg, e->rank, ps, &after))
            return -1;
    }
    return release_held(rr);
}

static int start(vt_rankreduce *rr, const vt_obs_event *e)
{
    rr->started = 1;
    rr->prev_exit_local = e->rec->enter;
    vt_rrec s = {.kind = VT_RREC_START, .seq = 0, .enter = e->rec->enter, .exit = e->rec->enter, .fn = -1,
                 .callsite = -1};
    return out_record(rr, &s);
}

/* A burst: recorded when it is a candidate, from the previous call's exit. */
static int burst(vt_rankreduce *rr, const vt_obs_event *e, vt_rrec *rec, vt_error *err)
{
    vt_sym_local(&rr->sym, e->seq, e->candidate);
    /* the END comes after this burst's record: a rank of an incomplete trace can stop
     * in the call after it, whose sequence number is never seen */
    rr->last_seq = e->seq;
    if (e->candidate) {
        rec->kind = VT_RREC_CAND;
        rec->enter = rr->prev_exit_local;
        rec->exit = e->rec->enter;
        if (emit(rr, rec, err))
            return -1;
    }
    return after_event(rr, e, NULL);
}

/* A probe: its decision waits for the message's receive. */
static int probe(vt_rankreduce *rr, const vt_obs_event *e, const vt_obs_con *probed, vt_rrec *rec, vt_error *err)
{
    if (vt_sym_probe(&rr->sym, e->seq, e->start, e->end, e->candidate))
        return rr_fail(err, "out of memory");
    if (rr->nwin == rr->capwin) {
        size_t nc = rr->capwin ? 2 * rr->capwin : 4;
        vt_rr_window *w = realloc(rr->win, nc * sizeof *w);
        if (!w)
            return rr_fail(err, "out of memory");
        rr->win = w;
        rr->capwin = nc;
    }
    vt_rr_window *w = &rr->win[rr->nwin++];
    w->seq = e->seq;
    w->T = probed->T;
    memcpy(&w->D, probed->ext, sizeof w->D);
    w->msg = (vt_rmsg){probed->rank, probed->seq, probed->S_local, probed->bytes, probed->sync,
                       probed->sync ? probed->post_seq : 0, e->start};
    rec->kind = VT_RREC_COMP;
    rec->flags = VT_RREC_F_PROBE | (e->candidate ? VT_RREC_F_CAND : 0);
    rec->rstar = rec->enter;
    if (emit(rr, rec, err))
        return -1;
    w->held_at = rr->nheld - 1;
    rr->held[w->held_at].placeholder = 1;
    return after_event(rr, e, NULL);
}

static int nbc_init(vt_rankreduce *rr, const vt_obs_event *e, const vt_rrec *rec, uint32_t nbc_members,
                    vt_error *err)
{
    vt_rgate g = {e->nbc_comm, e->nbc_seq, nbc_members, 1};
    vt_rrec n = *rec;
    n.kind = VT_RREC_NBCINIT;
    n.flags = e->candidate ? VT_RREC_F_CAND : 0;
    n.gates = &g;
    n.ngates = 1;
    return emit(rr, &n, err);
}

/* The completion's contributors as vt_sym_complete wants them; the sender sides of
 * synchronous sends and the gates go to the scratch lists of the record. */
static int completion_of(vt_rankreduce *rr, const vt_obs_event *e, vt_sym_completion *c, size_t *nss, size_t *ng)
{
    int local = 0;
    for (size_t i = 0; i < e->ncons; i++) {
        const vt_obs_con *k = &e->cons[i];
        switch (k->kind) {
        case VT_CON_LOCAL:
            local = 1;
            break;
        case VT_CON_MSG:
            rr->msgs[c->nmsgs++] = (vt_sym_msg){.T = k->T, .D = k->ext, .sync = k->sync,
                                                 .adoptable = k->sync && k->blocking_send && k->post_seq == e->seq,
                                                 .src = k->rank, .send_seq = k->seq};
            break;
        case VT_CON_SYNC_MSG:
            c->ssend = 1;
            rr->rssends[(*nss)++] = (vt_rssend){k->peer, k->seq, k->S_local, k->bytes};
            break;
        case VT_CON_SYNC_POST:
            break;
        case VT_CON_GATE:
            if (k->nonblocking) {
                c->nbc = 1;
            } else {
                c->coll = 1;
                c->coll_comm = k->gate_comm;
                c->coll_n = k->gate_seq;
            }
            rr->rgates[(*ng)++] = (vt_rgate){k->gate_comm, k->gate_seq, (uint32_t)k->nmembers, k->nonblocking};
            break;
        }
    }
    return local;
}

/* The messages R3 did not fold, for the record; counts them. */
static size_t kept_messages(vt_rankreduce *rr, const vt_obs_event *e)
{
    size_t nm = 0;
    for (size_t i = 0, j = 0; i < e->ncons; i++) {
        const vt_obs_con *k = &e->cons[i];
        if (k->kind != VT_CON_MSG)
            continue;
        const vt_sym_msg *sm = &rr->msgs[j++];
        if (sm->folded) {
            rr->stats.folded++;
            continue;
        }
        rr->stats.messages_kept++;
        rr->rmsgs[nm++] = (vt_rmsg){k->rank, k->seq, k->S_local, k->bytes, k->sync, k->sync ? k->post_seq : 0,
                                    k->sync ? k->P_local : 0};
    }
    return nm;
}

/* The atom the completion rule gave d, if any (for the check). */
static const vt_poly *base_atom_of(const vt_obs_event *e, const vt_sym_completion *c, vt_poly *ba)
{
    if (c->coll || c->nbc || c->ssend) {
        vt_poly_atom(ba, c->coll ? vt_var_coll(c->coll_comm, c->coll_n)
                                 : c->nbc ? vt_var_nbc(e->rank, e->seq) : vt_var_ssend(e->rank, e->seq));
        return ba;
    }
    if (c->nmsgs == 1 && !c->msgs[0].folded && c->msgs[0].adoptable) {
        vt_poly_atom(ba, vt_var_ssend(c->msgs[0].src, c->msgs[0].send_seq));
        return ba;
    }
    return NULL;
}

static int completion(vt_rankreduce *rr, const vt_obs_event *e, vt_rrec *rec, vt_error *err)
{
    if (grow_scratch(rr, e->ncons, err))
        return -1;
    vt_sym_completion c = {.seq = e->seq, .R = e->start, .E = e->end, .cand = e->candidate, .msgs = rr->msgs};
    size_t nss = 0, ng = 0;
    int local = completion_of(rr, e, &c, &nss, &ng);
    if (vt_sym_complete(&rr->sym, &c))
        return rr_fail(err, "out of memory");
    rr->stats.completions++;
    rr->stats.messages += c.nmsgs;
    size_t nm = kept_messages(rr, e);
    vt_poly ba;
    const vt_poly *base_atom = base_atom_of(e, &c, &ba);
    if (c.record) {
        rr->stats.completions_kept++;
        rec->kind = VT_RREC_COMP;
        rec->flags = (e->candidate ? VT_RREC_F_CAND : 0) | (local ? 0 : VT_RREC_F_NOLOCAL);
        rec->rstar = to_local(e, c.Rstar);
        rec->msgs = rr->rmsgs;
        rec->nmsgs = nm;
        rec->ssends = rr->rssends;
        rec->nssends = nss;
        rec->gates = rr->rgates;
        rec->ngates = ng;
        if (emit(rr, rec, err))
            return -1;
    }
    return after_event(rr, e, base_atom);
}

static const vt_obs_con *probed_message(const vt_obs_event *e)
{
    const vt_obs_con *probed = NULL;
    for (size_t i = 0; i < e->ncons; i++)
        if (e->cons[i].kind == VT_CON_MSG && e->cons[i].probed)
            probed = &e->cons[i];
    return probed;
}

static int event(vt_rankreduce *rr, const vt_obs_event *e, uint32_t nbc_members, vt_error *err);

int vt_rr_event(vt_rankreduce *rr, const vt_obs_event *e, uint32_t nbc_members, vt_error *err)
{
    int rc = event(rr, e, nbc_members, err);
    fast_flags(rr);
    return rc;
}

static int event(vt_rankreduce *rr, const vt_obs_event *e, uint32_t nbc_members, vt_error *err)
{
    rr->stats.events++;
    rr->d_version++;
    /* every field by hand: a memset of the struct (rep stos) was 40% of an event */
    vt_rrec rec;
    rec.index = rec.block_offset = 0;
    rec.kind = rec.flags = 0;
    rec.seq = e->seq;
    rec.enter = rec.exit = rec.rstar = 0;
    rec.fn = e->fn;
    rec.nmsgs = rec.nssends = rec.ngates = 0;
    rec.msgs = NULL;
    rec.ssends = NULL;
    rec.gates = NULL;
    if (!rr->started && start(rr, e))
        return -1;
    /* apart from fn: one 16-byte load of the two fields the run time has just stored
     * one by one stalls on store forwarding */
    rec.callsite = e->callsite;
    if (!e->is_call)
        return burst(rr, e, &rec, err);
    rr->stats.calls++;
    rec.enter = e->rec->enter;
    rec.exit = e->rec->exit;
    rr->prev_exit_local = rr->last_exit_local = e->rec->exit;
    rr->last_seq = e->seq;
    if (e->nprobed && resolve_probes(rr, e, err))
        return -1;
    const vt_obs_con *probed = probed_message(e);
    if (probed)
        return probe(rr, e, probed, &rec, err);
    if (e->initiates_nbc && nbc_init(rr, e, &rec, nbc_members, err))
        return -1;
    if (e->ncons == 0) {
        vt_sym_local(&rr->sym, e->seq, e->candidate);
        if (e->candidate && !e->initiates_nbc) {
            rec.kind = VT_RREC_CAND;
            if (emit(rr, &rec, err))
                return -1;
        }
        return after_event(rr, e, NULL);
    }
    return completion(rr, e, &rec, err);
}

/* What vt_rr_event does before anything that depends on the event's kind. */
int vt_rr_finish(vt_rankreduce *rr, int64_t stop_local)
{
    if (rr->nwin) {
        /* probes whose message never arrived: their records stay as placeholders */
        rr->nwin = 0;
        if (release_held(rr))
            return -1;
    }
    int64_t at = stop_local > rr->last_exit_local ? stop_local : rr->last_exit_local;
    vt_rrec end = {.kind = VT_RREC_END, .seq = rr->last_seq, .enter = at, .exit = at, .fn = -1, .callsite = -1};
    if (rr->started && out_record(rr, &end))
        return -1;
    rr->stats.overflows = rr->sym.overflows;
    return 0;
}
