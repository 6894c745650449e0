/* Overhead compensation streamed (compensate_priv.h): an observer of the replay, which
 * hands over the records in an order where every message's send and every collective's
 * members come before what depends on them. The rules are compensate.c's:
 *   a call's compensated enter from the rank's previous call and the flushes between
 *     (at the record, before its event);
 *   its exit at its event, from the messages it completes (the send's compensated enter
 *     travels with the message: vt_observer.publish) and its collective instance (open
 *     instances only are kept);
 *   a special record's time from the call before it, clamped by the next call's enter
 *     (it waits for that call: a few records).
 * The written times go to a temporary file in the replay's order, are sorted by rank
 * (stable: each rank's in record order) and read back while each rank is written. */
#include "vt_config.h"
#include "analysis/compensate_priv.h"
#include "analysis/replay.h"
#include "analysis/spill.h"
#include "model/model.h"
#include "util/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct sendx { /* travels with a message: the sending call's times (ps) */
    int64_t ae, me, mx;
} sendx;

typedef struct probed {
    uint64_t probe_seq;
    sendx s;
    uint64_t bytes;
} probed;

typedef struct tspan {
    int64_t me, mx;
} tspan;

typedef struct special { /* a special record waiting for the calls around its times */
    uint64_t idx;
    int64_t T[2];            /* measured enter, exit (ps); mapped once done[k] */
    int done[2];
    int flush;
} special;

typedef struct inst {
    uint64_t comm, seq;
    uint32_t members, entered, left;
    int64_t max_ae, max_me;
    int root_in;
    int64_t root_ae, root_me, root_mx;
} inst;

typedef struct out_rec {
    uint32_t rank, pad;
    uint64_t idx;
    int64_t e, x;            /* ns */
} out_rec;

typedef struct crank {
    int64_t O_ps;
    int have_prev;
    int64_t p_ae, p_me, p_ax, p_mx; /* the last call whose event came */
    uint64_t p_bytes;
    /* the current call */
    uint64_t idx;
    int64_t me, mx, ae;
    uint64_t rbytes, bytes;
    int ckind, root, in_inst;
    uint64_t comm, seq;
    tspan *fl;               /* flushes not yet before a call's enter */
    size_t nfl, capfl;
    tspan *sfl;              /* flushes not before the last call's exit */
    size_t nsfl, capsfl;
    special *sp;
    size_t nsp, capsp;
    probed *pr;
    size_t npr, cappr;
    int seen;
    int64_t first_me, first_ae, last_mx, last_ax;
} crank;

typedef struct cstream {
    const vt_trace *t;
    const vt__comp_rules *R;
    vt_comp_stats *st;
    uint32_t nranks;
    crank *rs;
    inst *in;
    size_t nin, capin;
    vt_spill out;
    vt_error *err;
} cstream;

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? 2 * *cap : 8;
    while (n < need)
        n *= 2;
    void *nv = realloc(*v, n * elem);
    if (!nv)
        return -1;
    *v = nv, *cap = n;
    return 0;
}

static int64_t gps(const vt_trace *t, uint32_t r, int64_t local) { return vt_global_time(t, r, local) * 1000; }

static int emit(cstream *C, uint32_t r, uint64_t idx, int64_t e_ps, int64_t x_ps)
{
    out_rec o = {r, 0, idx, vt__comp_ns_of(e_ps), vt__comp_ns_of(x_ps)};
    if (vt_spill_put(&C->out, &o))
        return vt_error_set(C->err, "compensate: cannot write a temporary file: %s", strerror(errno));
    return 0;
}

/* compensate.c's map_time of a time T of rank S: relative to the last call entered at or
 * before T (the last call whose event came, when HAVE_NEXT: the call at NEXT_AE enters
 * after T), clamped by the next call's enter; before the first call, relative to it. */
static int64_t map_time(cstream *C, crank *s, int64_t T, int have_next, int64_t next_ae, int64_t next_me)
{
    if (!s->have_prev)
        return have_next ? next_ae - (next_me - T) : T;
    if (T <= s->p_mx)
        return s->p_ae + (T - s->p_me) < s->p_ax ? s->p_ae + (T - s->p_me) : s->p_ax;
    int64_t fl = 0;
    for (size_t i = 0; i < s->nsfl; i++)
        if (s->sfl[i].me >= s->p_mx && s->sfl[i].me < T)
            fl += (T < s->sfl[i].mx ? T : s->sfl[i].mx) - s->sfl[i].me;
    int64_t a = s->p_ax + max64(0, T - s->p_mx - s->O_ps - C->R->copy_ps * (int64_t)s->p_bytes - fl);
    return have_next && a > next_ae ? next_ae : a;
}

/* The times of rank R's waiting specials that lie before the call entering at ME (AE
 * compensated), or all of them at the end (have_next 0); those done are written. */
static int settle_specials(cstream *C, uint32_t r, int have_next, int64_t ae, int64_t me)
{
    crank *s = &C->rs[r];
    size_t w = 0;
    for (size_t i = 0; i < s->nsp; i++) {
        special *p = &s->sp[i];
        for (int k = 0; k < 2; k++)
            if (!p->done[k] && (!have_next || p->T[k] < me)) {
                p->T[k] = map_time(C, s, p->T[k], have_next, ae, me);
                p->done[k] = 1;
            }
        if (!p->done[0] || !p->done[1]) {
            s->sp[w++] = *p;
            continue;
        }
        int64_t e = p->T[0], x = p->flush ? p->T[0] : p->T[1];
        if (vt__comp_ns_of(x) < vt__comp_ns_of(e))
            x = e;
        if (emit(C, r, p->idx, e, x))
            return -1;
    }
    s->nsp = w;
    return 0;
}

static inst *inst_find(cstream *C, uint64_t comm, uint64_t seq)
{
    for (size_t i = C->nin; i-- > 0;)
        if (C->in[i].comm == comm && C->in[i].seq == seq)
            return &C->in[i];
    return NULL;
}

static int on_call_record(cstream *C, uint32_t r, const vt_event *ev)
{
    crank *s = &C->rs[r];
    s->idx = ev->index;
    s->me = gps(C->t, r, ev->enter);
    s->mx = gps(C->t, r, ev->exit);
    s->bytes = ev->bytes;
    s->rbytes = ev->rbytes;
    if (!s->have_prev) {
        s->ae = s->me;
    } else {
        int64_t fl = 0;
        size_t k = 0;
        for (; k < s->nfl && s->fl[k].me < s->me; k++)
            if (s->fl[k].me >= s->p_mx)
                fl += s->fl[k].mx - s->fl[k].me;
        if (k)
            memmove(s->fl, s->fl + k, (s->nfl - k) * sizeof *s->fl);
        s->nfl -= k;
        int64_t O = s->O_ps + C->R->copy_ps * (int64_t)s->p_bytes;
        C->st->ranks[r].removed_ps += O + fl;
        s->ae = s->p_ax + max64(0, s->me - s->p_mx - O - fl);
    }
    if (settle_specials(C, r, 1, s->ae, s->me))
        return -1;
    C->st->ranks[r].calls++;
    if (!s->seen++)
        s->first_me = s->me, s->first_ae = s->ae;
    /* a collective instance: entered */
    s->ckind = C_NONE;
    s->in_inst = 0;
    const vt_function *f = vt_trace_function(C->t, r, ev->fn);
    const vt_comm *cm = ev->comm >= 0 ? vt_trace_comm(C->t, r, ev->comm) : NULL;
    int ck = f ? vt__comp_collective_kind(f->name) : C_NONE;
    if (ck == C_NONE || !cm || (cm->flags & 1) || !(ev->fields & VT_F_COLLSEQ) || cm->size <= 1 ||
        (ck != C_NTON && !(ev->fields & VT_F_ROOT)))
        return 0;
    inst *x = inst_find(C, cm->id, ev->collseq);
    if (!x) {
        if (grow((void **)&C->in, &C->capin, C->nin + 1, sizeof *C->in))
            return vt_error_set(C->err, "out of memory");
        x = &C->in[C->nin++];
        *x = (inst){.comm = cm->id, .seq = ev->collseq, .members = cm->size, .max_ae = INT64_MIN,
                    .max_me = INT64_MIN};
        C->st->collectives++;
    }
    x->entered++;
    x->max_ae = max64(x->max_ae, s->ae);
    x->max_me = max64(x->max_me, s->me);
    s->root = (ev->fields & VT_F_ROOT) && ev->root == (int64_t)r;
    if (s->root) {
        x->root_in = 1;
        x->root_ae = s->ae, x->root_me = s->me, x->root_mx = s->mx;
    }
    s->ckind = ck;
    s->in_inst = 1;
    s->comm = cm->id, s->seq = ev->collseq;
    return 0;
}

static int on_record(void *arg, uint32_t r, const vt_event *ev, vt_error *err)
{
    cstream *C = arg;
    (void)err;
    if (ev->fn >= 0)
        return on_call_record(C, r, ev);
    crank *s = &C->rs[r];
    int64_t me = gps(C->t, r, ev->enter), mx = gps(C->t, r, ev->exit);
    int flush = ev->code == VT_CODE_FLUSH;
    if (flush) {
        C->st->ranks[r].flushes++;
        if (grow((void **)&s->fl, &s->capfl, s->nfl + 1, sizeof *s->fl) ||
            grow((void **)&s->sfl, &s->capsfl, s->nsfl + 1, sizeof *s->sfl))
            return vt_error_set(C->err, "out of memory");
        s->fl[s->nfl++] = (tspan){me, mx};
    }
    if (grow((void **)&s->sp, &s->capsp, s->nsp + 1, sizeof *s->sp))
        return vt_error_set(C->err, "out of memory");
    s->sp[s->nsp++] = (special){.idx = ev->index, .T = {me, flush ? me : mx}, .flush = flush};
    if (flush)
        s->sfl[s->nsfl++] = (tspan){me, mx};
    return 0;
}

static void on_publish(void *arg, uint32_t rank, uint64_t send_seq, void *ext)
{
    cstream *C = arg;
    const crank *s = &C->rs[rank];
    (void)send_seq;
    sendx x = {s->ae, s->me, s->mx};
    memcpy(ext, &x, sizeof x);
}

static int on_event(void *arg, const vt_obs_event *ev, vt_error *err)
{
    cstream *C = arg;
    if (!ev->is_call || !ev->rec)
        return 0;
    uint32_t r = ev->rank;
    crank *s = &C->rs[r];
    if (ev->rec->index != s->idx)
        return vt_error_set(err, "compensate: rank %u: the event of record %llu came for record %llu", r,
                            (unsigned long long)ev->rec->index, (unsigned long long)s->idx);
    int64_t local = s->ae + (s->mx - s->me), lo = INT64_MIN, ax;
    int waited = 0, any = 0;
    for (size_t i = 0; i < ev->ncons; i++) {
        const vt_obs_con *o = &ev->cons[i];
        if (o->kind != VT_CON_MSG || !o->ext)
            continue;
        sendx x;
        memcpy(&x, o->ext, sizeof x);
        if (o->probed) {
            if (grow((void **)&s->pr, &s->cappr, s->npr + 1, sizeof *s->pr))
                return vt_error_set(err, "out of memory");
            s->pr[s->npr++] = (probed){ev->seq, x, o->bytes};
            continue;
        }
        lo = max64(lo, vt__comp_msg_bound(C->R, s->me, s->mx, s->ae, x.ae, x.me, x.mx, o->bytes, &waited));
        any = 1;
    }
    for (size_t k = 0; k < ev->nprobed; k++)
        for (size_t j = 0; j < s->npr; j++)
            if (s->pr[j].probe_seq == ev->probed_by[k]) {
                const probed *p = &s->pr[j];
                lo = max64(lo, vt__comp_msg_bound(C->R, s->me, s->mx, s->ae, p->s.ae, p->s.me, p->s.mx, p->bytes,
                                                  &waited));
                any = 1;
                s->pr[j--] = s->pr[--s->npr];
            }
    inst *x = s->in_inst ? inst_find(C, s->comm, s->seq) : NULL;
    int coll_dep = x && (s->ckind == C_NTON || (s->ckind == C_NTO1 && s->root) || (s->ckind == C_1TON && !s->root));
    if (coll_dep && (s->ckind == C_1TON ? !x->root_in : x->entered < x->members))
        return vt_error_set(err, "%s: record %llu of rank %u: its collective is not complete where the replay "
                            "completes it; not compensated", vt_trace_dir(C->t), (unsigned long long)s->idx, r);
    if (coll_dep && s->ckind == C_1TON) {
        lo = max64(lo, vt__comp_msg_bound(C->R, s->me, s->mx, s->ae, x->root_ae, x->root_me, x->root_mx, s->rbytes,
                                          &waited));
        any = 1;
    }
    if (coll_dep && s->ckind != C_1TON) {
        ax = max64(s->ae, x->max_ae + max64(0, s->mx - x->max_me));
        if (ax > local)
            C->st->delayed++;
    } else if (any) {
        int64_t base = waited ? s->ae + C->R->copy_ps * (int64_t)s->rbytes : local;
        ax = max64(base, lo);
        if (ax > local)
            C->st->delayed++;
    } else {
        ax = local;
    }
    if (x && ++x->left == x->members)
        *x = C->in[--C->nin];
    s->have_prev = 1;
    s->p_ae = s->ae, s->p_me = s->me, s->p_ax = ax, s->p_mx = s->mx, s->p_bytes = s->bytes;
    s->last_mx = s->mx, s->last_ax = ax;
    size_t w = 0; /* flushes before this call's exit matter no more to specials */
    for (size_t i = 0; i < s->nsfl; i++)
        if (s->sfl[i].me >= s->mx)
            s->sfl[w++] = s->sfl[i];
    s->nsfl = w;
    return emit(C, r, s->idx, s->ae, ax);
}

/* ------------------------------------------------------------------ writing */

typedef struct reader {
    vt_spill *s;
    uint64_t at;
    out_rec buf[4096];
    size_t n, i;
} reader;

static int cmp_rank(const void *a, const void *b)
{
    const out_rec *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int next_times(void *arg, uint32_t r, uint64_t idx, int64_t *e, int64_t *x, vt_error *err)
{
    reader *rd = arg;
    if (rd->i == rd->n) {
        size_t k = rd->s->n - rd->at < 4096 ? (size_t)(rd->s->n - rd->at) : 4096;
        if (k && vt_spill_read(rd->s, rd->at, k, rd->buf))
            return vt_error_set(err, "compensate: cannot read a temporary file: %s", strerror(errno));
        rd->at += k;
        rd->n = k;
        rd->i = 0;
    }
    if (rd->i == rd->n || rd->buf[rd->i].rank != r || rd->buf[rd->i].idx != idx)
        return vt_error_set(err, "compensate: rank %u: no compensated times for record %llu", r,
                            (unsigned long long)idx);
    *e = rd->buf[rd->i].e;
    *x = rd->buf[rd->i].x;
    rd->i++;
    return 0;
}

int vt__compensate_stream(const vt_trace *t, const char *out, const vt_comp_opts *o, const vt__comp_rules *rules,
                          vt_comp_stats *st, vt_error *err)
{
    cstream C = {.t = t, .R = rules, .st = st, .nranks = vt_trace_nranks(t), .out = {.fd = -1}, .err = err};
    vt_spill sorted = {.fd = -1};
    reader *rd = NULL;
    int rc = -1;
    C.rs = calloc(C.nranks ? C.nranks : 1, sizeof *C.rs);
    if (!C.rs) {
        vt_error_set(err, "out of memory");
        goto out;
    }
    for (uint32_t r = 0; r < C.nranks; r++)
        C.rs[r].O_ps = (int64_t)st->ranks[r].overhead_ps;
    if (vt_spill_open(&C.out, sizeof(out_rec))) {
        vt_error_set(err, "compensate: cannot create a temporary file: %s", strerror(errno));
        goto out;
    }
    vt_model_params mp;
    if (vt_replay_params(t, &mp, err))
        goto out;
    vt_observer obs = {.arg = &C, .ext_size = sizeof(sendx), .publish = on_publish, .event = on_event,
                       .record = on_record};
    vt_replay_result res;
    if (vt_replay_observe(t, NULL, &mp, NULL, 0, &obs, &res, err))
        goto out;
    vt_replay_result_free(&res);
    for (uint32_t r = 0; r < C.nranks; r++) {
        crank *s = &C.rs[r];
        if (settle_specials(&C, r, 0, 0, 0))
            goto out;
        st->ranks[r].measured_ns = vt__comp_ns_of(s->last_mx - s->first_me);
        st->ranks[r].compensated_ns = vt__comp_ns_of(s->last_ax - s->first_ae);
    }
    if (vt_spill_sort(&C.out, &sorted, cmp_rank, 0)) {
        vt_error_set(err, "compensate: cannot sort in a temporary file: %s", strerror(errno));
        goto out;
    }
    if (mkdir(out, 0755) && errno != EEXIST) {
        vt_error_set(err, "%s: cannot create the output directory (%s)", out, strerror(errno));
        goto out;
    }
    rd = calloc(1, sizeof *rd);
    if (!rd) {
        vt_error_set(err, "out of memory");
        goto out;
    }
    rd->s = &sorted;
    for (uint32_t r = 0; r < C.nranks; r++)
        if (vt__comp_write_rank(t, out, r, o->zstd_level, UINT64_MAX, next_times, rd, err))
            goto out;
    if (vt__comp_write_defs(t, out, o, err))
        goto out;
    rc = 0;
out:
    free(rd);
    vt_spill_close(&sorted);
    vt_spill_close(&C.out);
    for (uint32_t r = 0; C.rs && r < C.nranks; r++) {
        free(C.rs[r].fl), free(C.rs[r].sfl), free(C.rs[r].sp), free(C.rs[r].pr);
    }
    free(C.rs);
    free(C.in);
    return rc;
}
