/* vtrace reduce: the run-time reduction (symbolic.h) applied to a full trace, as an
 * observer of the replay (replay.h), writing a reduced trace; see reduce.h. */
#include "vt_config.h"
#include "reduce.h"
#include "blockio.h"
#include "codec.h"
#include "rrec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_BYTES (1u << 20)

/* A record waiting for the decision of an earlier probe (records go out in sequence
 * order, and a probe's record is known only at the receive of its message). */
typedef struct held {
    vt_rrec r;
    vt_rmsg msg;            /* a probe has at most one */
    vt_rmsg *msgs;          /* owned copies */
    vt_rssend *ssends;
    vt_rgate *gates;
    int placeholder;        /* a probe's record, not decided yet */
    int dropped;
} held;

/* An open probe window: what its record needs once the message's difference is known. */
typedef struct probe_win {
    uint64_t seq;
    size_t held_at;         /* its placeholder */
    int64_t T;              /* S + λ_m */
    vt_poly D;
    vt_rmsg msg;
    int64_t numeric_after_at; /* index of the probe's numeric d_after (check mode) */
} probe_win;

typedef struct rank_out {
    vt_sym_state sym;
    int fd;
    uint8_t *buf;
    size_t len;
    uint32_t nblock;        /* records in the current block */
    uint64_t index;         /* records written */
    uint64_t prev_seq;
    int64_t prev_time;
    int started;
    int64_t prev_exit_local;
    int64_t last_exit_local;
    uint64_t last_seq;
    held *held;
    size_t nheld, capheld;
    probe_win *win;
    size_t nwin, capwin;
} rank_out;

/* Atom values for the check: variable -> nsc values. */
typedef struct atomtab {
    vt_var *keys;
    size_t *at;             /* offset in vals */
    size_t cap, n;
    int64_t *vals;
    size_t nvals, capvals;
} atomtab;

typedef struct reducer {
    const vt_trace *t;
    const vt_model_params *p;
    const vt_reduce_opts *o;
    vt_reduce_stats *st;
    size_t nsc;
    uint32_t nranks;
    rank_out *ro;
    vt_sym_msg *msgs;
    size_t capmsgs;
    vt_rmsg *rmsgs;
    vt_rssend *rssends;
    vt_rgate *rgates;
    size_t caprmsgs, caprssends, caprgates;
    atomtab atoms;
    vt_error *err;
    int failed;             /* a write failed: stop writing, report once */
} reducer;

static int fail(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(vt_error *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* ------------------------------------------------------------------ atom values */

static uint64_t var_hash(vt_var v)
{
    uint64_t x = v.ks * 0x9e3779b97f4a7c15ull ^ v.owner * 0xc2b2ae3d27d4eb4full;
    x ^= x >> 29;
    return x * 0xbf58476d1ce4e5b9ull;
}

static int64_t *atom_get(const atomtab *a, vt_var v, size_t nsc)
{
    if (!a->n)
        return NULL;
    for (size_t j = var_hash(v) & (a->cap - 1);; j = (j + 1) & (a->cap - 1)) {
        if (!a->at[j])
            return NULL;
        if (vt_var_eq(a->keys[j], v))
            return a->vals + (a->at[j] - 1) * nsc;
    }
}

/* Registers v = vals, or, when it is known already, compares: 1 equal or new, 0 differs, -1. */
static int atom_put(atomtab *a, vt_var v, const int64_t *vals, size_t nsc)
{
    int64_t *old = atom_get(a, v, nsc);
    if (old)
        return memcmp(old, vals, nsc * sizeof *vals) == 0;
    if ((a->n + 1) * 2 > a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 1024;
        vt_var *k = calloc(nc, sizeof *k);
        size_t *at = calloc(nc, sizeof *at);
        if (!k || !at) {
            free(k);
            free(at);
            return -1;
        }
        for (size_t i = 0; i < a->cap; i++) {
            if (!a->at[i])
                continue;
            size_t j = var_hash(a->keys[i]) & (nc - 1);
            while (at[j])
                j = (j + 1) & (nc - 1);
            k[j] = a->keys[i];
            at[j] = a->at[i];
        }
        free(a->keys);
        free(a->at);
        a->keys = k;
        a->at = at;
        a->cap = nc;
    }
    if ((a->nvals + 1) * nsc > a->capvals) {
        size_t nc = a->capvals ? 2 * a->capvals : 1024 * (nsc ? nsc : 1);
        while (nc < (a->nvals + 1) * nsc)
            nc *= 2;
        int64_t *nv = realloc(a->vals, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->vals = nv;
        a->capvals = nc;
    }
    memcpy(a->vals + a->nvals * nsc, vals, nsc * sizeof *vals);
    a->nvals++;
    size_t j = var_hash(v) & (a->cap - 1);
    while (a->at[j])
        j = (j + 1) & (a->cap - 1);
    a->keys[j] = v;
    a->at[j] = a->nvals;
    a->n++;
    return 1;
}

typedef struct evalctx {
    const atomtab *a;
    size_t nsc, k;
} evalctx;

static int atom_value(void *ctx, vt_var v, int64_t *val)
{
    const evalctx *c = ctx;
    const int64_t *x = atom_get(c->a, v, c->nsc);
    if (!x)
        return -1;
    *val = x[c->k];
    return 0;
}

static void check_note(reducer *Z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check_note(reducer *Z, const char *fmt, ...)
{
    if (Z->st->check_failures++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(Z->st->first_failure, sizeof Z->st->first_failure, fmt, ap);
    va_end(ap);
}

static int register_atom(reducer *Z, vt_var v, const int64_t *vals, uint32_t rank, uint64_t seq)
{
    int rc = atom_put(&Z->atoms, v, vals, Z->nsc);
    if (rc < 0)
        return fail(Z->err, "out of memory checking the reduction");
    if (rc == 0) {
        char name[96];
        vt_var_format(v, name, sizeof name);
        check_note(Z, "event %" PRIu32 ":%" PRIu64 ": atom %s has two different values", rank, seq, name);
    }
    return 0;
}

/* model.md §7.4: the polynomial p, evaluated at every scenario, equals want. */
static void check_poly(reducer *Z, const vt_poly *p, const int64_t *want, uint32_t rank, uint64_t seq, const char *what)
{
    for (size_t k = 0; k < Z->nsc; k++) {
        evalctx c = {&Z->atoms, Z->nsc, k};
        int64_t v;
        int rc = vt_poly_eval(p, atom_value, &c, &v);
        Z->st->checked++;
        if (rc != VT_POLY_OK || v != want[k]) {
            char text[256];
            vt_poly_format(p, text, sizeof text);
            if (rc != VT_POLY_OK)
                check_note(Z, "event %" PRIu32 ":%" PRIu64 ": %s %s cannot be evaluated (%s) in scenario %zu", rank,
                           seq, what, text, vt_poly_strerror(rc), k);
            else
                check_note(
                    Z, "event %" PRIu32 ":%" PRIu64 ": %s %s = %" PRId64 " in scenario %zu, the replay has %" PRId64,
                    rank, seq, what, text, v, k, want[k]);
            return;
        }
    }
}

/* ------------------------------------------------------------------ writing */

static int out_flush(reducer *Z, rank_out *r)
{
    if (!r->len || Z->failed)
        return 0;
    int rc = vt_block_write(r->fd, VT_BLOCK_REDUCED, r->buf, r->len, r->nblock, Z->o->zstd_level);
    if (rc) {
        Z->failed = 1;
        return fail(Z->err, "%s: cannot write the reduced trace: %s", Z->o->out_dir, strerror(-rc));
    }
    r->len = 0;
    r->nblock = 0;
    return 0;
}

static int out_record(reducer *Z, rank_out *r, const vt_rrec *rec)
{
    Z->st->records_out++;
    if (!Z->o->out_dir)
        return 0;
    size_t need = vt_rrec_size_max(rec) + 3 * VT_UVAR_MAX;
    if (r->len && r->len + need > BLOCK_BYTES && out_flush(Z, r))
        return -1;
    if (need > BLOCK_BYTES) {
        uint8_t *nb = realloc(r->buf, need + BLOCK_BYTES);
        if (!nb)
            return fail(Z->err, "out of memory writing the reduced trace");
        r->buf = nb;
    }
    if (!r->len)
        r->len = (size_t)(vt_rrec_block_begin(r->buf, r->index, r->prev_time, r->prev_seq) - r->buf);
    r->len = (size_t)(vt_rrec_encode(r->buf + r->len, rec, &r->prev_seq, &r->prev_time) - r->buf);
    r->nblock++;
    r->index++;
    return 0;
}

static void held_free(held *h)
{
    free(h->msgs);
    free(h->ssends);
    free(h->gates);
}

/* Sends rec out, or holds it (a copy) behind an open probe window. */
static int emit(reducer *Z, rank_out *r, const vt_rrec *rec)
{
    if (!r->nwin)
        return out_record(Z, r, rec);
    if (r->nheld == r->capheld) {
        size_t nc = r->capheld ? 2 * r->capheld : 16;
        held *n = realloc(r->held, nc * sizeof *n);
        if (!n)
            return fail(Z->err, "out of memory holding records");
        r->held = n;
        r->capheld = nc;
    }
    held *h = &r->held[r->nheld++];
    memset(h, 0, sizeof *h);
    h->r = *rec;
    h->msgs = rec->nmsgs ? malloc(rec->nmsgs * sizeof *h->msgs) : NULL;
    h->ssends = rec->nssends ? malloc(rec->nssends * sizeof *h->ssends) : NULL;
    h->gates = rec->ngates ? malloc(rec->ngates * sizeof *h->gates) : NULL;
    if ((rec->nmsgs && !h->msgs) || (rec->nssends && !h->ssends) || (rec->ngates && !h->gates))
        return fail(Z->err, "out of memory holding records");
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

static int release_held(reducer *Z, rank_out *r)
{
    if (r->nwin)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < r->nheld; i++) {
        if (!rc && !r->held[i].dropped && out_record(Z, r, &r->held[i].r))
            rc = -1;
        held_free(&r->held[i]);
    }
    r->nheld = 0;
    return rc;
}

/* ------------------------------------------------------------------ the observer */

static void on_publish(void *arg, uint32_t rank, uint64_t send_seq, void *ext)
{
    (void)send_seq;
    reducer *Z = arg;
    memcpy(ext, &Z->ro[rank].sym.d, sizeof(vt_poly));
}

static int64_t to_local(const vt_obs_event *e, int64_t global)
{
    /* the event's own offset (global - local of its enter) */
    return global - (e->start - e->rec->enter);
}

static int grow_scratch(reducer *Z, size_t n)
{
    if (n <= Z->capmsgs)
        return 0;
    size_t nc = 2 * n;
    vt_sym_msg *a = realloc(Z->msgs, nc * sizeof *a);
    if (a)
        Z->msgs = a;
    vt_rmsg *b = a ? realloc(Z->rmsgs, nc * sizeof *b) : NULL;
    if (b)
        Z->rmsgs = b;
    vt_rssend *c = b ? realloc(Z->rssends, nc * sizeof *c) : NULL;
    if (c)
        Z->rssends = c;
    vt_rgate *g = c ? realloc(Z->rgates, nc * sizeof *g) : NULL;
    if (g)
        Z->rgates = g;
    if (!g)
        return fail(Z->err, "out of memory reducing");
    Z->capmsgs = nc;
    return 0;
}

/* Registers the atoms event e made (check mode) and checks d after it; with a poly
 * stream, writes "RANK:SEQ d" (the polynomial after the event) to it. */
static int check_event(reducer *Z, const vt_obs_event *e, rank_out *r, const vt_poly *after_base_atom)
{
    if (Z->o->polys) {
        char text[1024];
        vt_poly_format(&r->sym.d, text, sizeof text);
        fprintf(Z->o->polys, "%" PRIu32 ":%" PRIu64 " %s\n", e->rank, e->seq, text);
    }
    if (!Z->o->check)
        return 0;
    if (e->candidate && register_atom(Z, vt_var_delta(e->rank, e->seq), e->delta, e->rank, e->seq))
        return -1;
    if (after_base_atom && register_atom(Z, after_base_atom->var[0], e->base, e->rank, e->seq))
        return -1;
    const vt_poly *d = &r->sym.d;
    if (d->nterms == 1 && d->nvars == 1 && d->c[0] == 0 &&
        (vt_var_eq(d->var[0], vt_var_overflow(e->rank, e->seq)) ||
         vt_var_eq(d->var[0], vt_var_probe(e->rank, e->seq))) &&
        register_atom(Z, d->var[0], e->d_after, e->rank, e->seq))
        return -1;
    check_poly(Z, d, e->d_after, e->rank, e->seq, "d");
    return 0;
}

static int resolve_probes(reducer *Z, const vt_obs_event *e, rank_out *r)
{
    for (size_t j = 0; j < e->nprobed; j++) {
        uint64_t ps = e->probed_by[j];
        size_t w = 0;
        while (w < r->nwin && r->win[w].seq != ps)
            w++;
        if (w == r->nwin)
            continue; /* a probe that matched nothing the reduction saw */
        probe_win pw = r->win[w];
        memmove(&r->win[w], &r->win[w + 1], (r->nwin - w - 1) * sizeof *r->win);
        r->nwin--;
        vt_sym_msg m = {.T = pw.T, .D = &pw.D, .sync = pw.msg.sync, .src = pw.msg.src, .send_seq = pw.msg.send_seq};
        int64_t Rstar;
        int record;
        vt_poly after;
        if (vt_sym_probe_resolve(&r->sym, ps, &m, &Rstar, &record, &after))
            return fail(Z->err, "rank %u: probe %" PRIu64 " has no open window", e->rank, ps);
        Z->st->messages++;
        if (m.folded)
            Z->st->folded++;
        else
            Z->st->messages_kept++;
        Z->st->completions++;
        held *h = &r->held[pw.held_at];
        h->placeholder = 0;
        if (!record) {
            h->dropped = 1;
        } else {
            Z->st->completions_kept++;
            h->r.rstar = h->r.enter + (Rstar - pw.msg.P); /* msg.P holds the probe's global enter */
            if (!m.folded) {
                h->msg = pw.msg;
                h->msg.P = h->r.enter;
                h->r.msgs = &h->msg;
                h->r.nmsgs = 1;
            }
        }
        if (Z->o->polys) {
            /* the probe's own difference, known now: a second line for its event */
            char text[1024];
            vt_poly_format(&after, text, sizeof text);
            fprintf(Z->o->polys, "%" PRIu32 ":%" PRIu64 " %s\n", e->rank, ps, text);
        }
        if (Z->o->check) {
            const int64_t *want = atom_get(&Z->atoms, vt_var_probe(e->rank, ps), Z->nsc);
            if (want) {
                /* an overflow at the probe names the probe's own value */
                if (after.nterms == 1 && after.nvars == 1 && vt_var_eq(after.var[0], vt_var_overflow(e->rank, ps)) &&
                    register_atom(Z, after.var[0], want, e->rank, ps))
                    return -1;
                check_poly(Z, &after, want, e->rank, ps, "the probe's d");
            }
        }
    }
    return release_held(Z, r);
}

static int on_event(void *arg, const vt_obs_event *e, vt_error *err)
{
    reducer *Z = arg;
    (void)err;
    rank_out *r = &Z->ro[e->rank];
    Z->st->events++;
    vt_rrec rec;
    memset(&rec, 0, sizeof rec);
    rec.seq = e->seq;
    rec.fn = e->fn;
    rec.callsite = e->callsite;
    if (!r->started) {
        r->started = 1;
        r->prev_exit_local = e->rec->enter;
        r->prev_time = e->rec->enter;
        vt_rrec s = {.kind = VT_RREC_START, .seq = 0, .enter = e->rec->enter, .exit = e->rec->enter, .fn = -1,
                     .callsite = -1};
        if (out_record(Z, r, &s))
            return -1;
    }
    if (!e->is_call) {
        vt_sym_local(&r->sym, e->seq, e->candidate);
        if (e->candidate) {
            rec.kind = VT_RREC_CAND;
            rec.enter = r->prev_exit_local;
            rec.exit = e->rec->enter;
            if (emit(Z, r, &rec))
                return -1;
        }
        return check_event(Z, e, r, NULL);
    }
    Z->st->records_in++;
    rec.enter = e->rec->enter;
    rec.exit = e->rec->exit;
    r->prev_exit_local = r->last_exit_local = e->rec->exit;
    r->last_seq = e->seq;
    if (e->nprobed && resolve_probes(Z, e, r))
        return -1;

    const vt_obs_con *probed = NULL;
    for (size_t i = 0; i < e->ncons; i++)
        if (e->cons[i].kind == VT_CON_MSG && e->cons[i].probed)
            probed = &e->cons[i];
    if (probed) {
        /* a probe: its decision waits for the message's receive */
        if (vt_sym_probe(&r->sym, e->seq, e->start, e->end, e->candidate))
            return fail(Z->err, "out of memory");
        if (r->nwin == r->capwin) {
            size_t nc = r->capwin ? 2 * r->capwin : 4;
            probe_win *w = realloc(r->win, nc * sizeof *w);
            if (!w)
                return fail(Z->err, "out of memory");
            r->win = w;
            r->capwin = nc;
        }
        probe_win *w = &r->win[r->nwin++];
        w->seq = e->seq;
        w->T = probed->T;
        memcpy(&w->D, probed->ext, sizeof w->D);
        w->msg = (vt_rmsg){probed->rank, probed->seq, probed->S_local, probed->bytes, probed->sync,
                           probed->sync ? probed->post_seq : 0, e->start};
        rec.kind = VT_RREC_COMP;
        rec.flags = VT_RREC_F_PROBE | (e->candidate ? VT_RREC_F_CAND : 0);
        rec.rstar = rec.enter;
        if (emit(Z, r, &rec))
            return -1;
        w->held_at = r->nheld - 1;
        r->held[w->held_at].placeholder = 1;
        return check_event(Z, e, r, NULL);
    }

    if (e->initiates_nbc) {
        vt_rgate g = {e->nbc_comm, e->nbc_seq, 0, 1};
        const vt_comm *c = NULL;
        for (size_t i = 0; i < vt_trace_rank(Z->t, e->rank)->ncomms && !c; i++)
            if (vt_trace_rank(Z->t, e->rank)->comms[i].id == e->nbc_comm)
                c = &vt_trace_rank(Z->t, e->rank)->comms[i];
        g.nmembers = c ? c->size + ((c->flags & 1) ? c->remote_size : 0) : 0;
        vt_rrec n = rec;
        n.kind = VT_RREC_NBCINIT;
        n.flags = e->candidate ? VT_RREC_F_CAND : 0;
        n.gates = &g;
        n.ngates = 1;
        if (emit(Z, r, &n))
            return -1;
    }

    if (e->ncons == 0) {
        vt_sym_local(&r->sym, e->seq, e->candidate);
        if (e->candidate && !e->initiates_nbc) {
            rec.kind = VT_RREC_CAND;
            if (emit(Z, r, &rec))
                return -1;
        }
        return check_event(Z, e, r, NULL);
    }

    /* a completion */
    if (grow_scratch(Z, e->ncons))
        return -1;
    vt_sym_completion c = {.seq = e->seq, .R = e->start, .E = e->end, .cand = e->candidate, .msgs = Z->msgs};
    int local = 0;
    size_t nss = 0, ng = 0;
    for (size_t i = 0; i < e->ncons; i++) {
        const vt_obs_con *k = &e->cons[i];
        switch (k->kind) {
        case VT_CON_LOCAL:
            local = 1;
            break;
        case VT_CON_MSG:
            Z->msgs[c.nmsgs++] = (vt_sym_msg){.T = k->T, .D = k->ext, .sync = k->sync,
                                               .adoptable = k->sync && k->blocking_send && k->post_seq == e->seq,
                                               .src = k->rank, .send_seq = k->seq};
            break;
        case VT_CON_SYNC_MSG:
            c.ssend = 1;
            Z->rssends[nss++] = (vt_rssend){k->peer, k->seq, k->S_local, k->bytes};
            break;
        case VT_CON_SYNC_POST:
            break;
        case VT_CON_GATE:
            if (k->nonblocking) {
                c.nbc = 1;
            } else {
                c.coll = 1;
                c.coll_comm = k->gate_comm;
                c.coll_n = k->gate_seq;
            }
            Z->rgates[ng++] = (vt_rgate){k->gate_comm, k->gate_seq, (uint32_t)k->nmembers, k->nonblocking};
            break;
        }
    }
    if (vt_sym_complete(&r->sym, &c))
        return fail(Z->err, "out of memory");
    Z->st->completions++;
    Z->st->messages += c.nmsgs;
    size_t nm = 0;
    for (size_t i = 0, j = 0; i < e->ncons; i++) {
        const vt_obs_con *k = &e->cons[i];
        if (k->kind != VT_CON_MSG)
            continue;
        const vt_sym_msg *sm = &Z->msgs[j++];
        if (sm->folded) {
            Z->st->folded++;
            continue;
        }
        Z->st->messages_kept++;
        Z->rmsgs[nm++] = (vt_rmsg){k->rank, k->seq, k->S_local, k->bytes, k->sync, k->sync ? k->post_seq : 0,
                                   k->sync ? k->P_local : 0};
    }
    const vt_poly *base_atom = NULL;
    vt_poly ba;
    if (c.coll || c.nbc || c.ssend) {
        vt_poly_atom(&ba, c.coll ? vt_var_coll(c.coll_comm, c.coll_n)
                                 : c.nbc ? vt_var_nbc(e->rank, e->seq) : vt_var_ssend(e->rank, e->seq));
        base_atom = &ba;
    } else if (c.nmsgs == 1 && !c.msgs[0].folded && c.msgs[0].adoptable) {
        vt_poly_atom(&ba, vt_var_ssend(c.msgs[0].src, c.msgs[0].send_seq));
        base_atom = &ba;
    }
    if (c.record) {
        Z->st->completions_kept++;
        rec.kind = VT_RREC_COMP;
        rec.flags = (e->candidate ? VT_RREC_F_CAND : 0) | (local ? 0 : VT_RREC_F_NOLOCAL);
        rec.rstar = to_local(e, c.Rstar);
        rec.msgs = Z->rmsgs;
        rec.nmsgs = nm;
        rec.ssends = Z->rssends;
        rec.nssends = nss;
        rec.gates = Z->rgates;
        rec.ngates = ng;
        if (emit(Z, r, &rec))
            return -1;
    }
    return check_event(Z, e, r, base_atom);
}

/* ------------------------------------------------------------------ files */

static int write_file(const char *dir, const char *name, const char *magic, uint32_t value, const uint8_t *payload,
                      size_t len, unsigned type, int zstd_level, int *keep_fd, vt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(err, "%s: cannot create: %s", path, strerror(errno));
    int rc = vt_file_header_write(fd, magic, value);
    if (!rc && payload)
        rc = vt_block_write(fd, (uint8_t)type, payload, len, 0, zstd_level);
    if (rc) {
        close(fd);
        return fail(err, "%s: cannot write: %s", path, strerror(-rc));
    }
    if (keep_fd) {
        *keep_fd = fd;
        return 0;
    }
    rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0);
    if (close(fd) || rc)
        return fail(err, "%s: cannot write: %s", path, rc ? strerror(-rc) : strerror(errno));
    return 0;
}

static int line_key_is(const char *l, const char *key)
{
    size_t n = strlen(key);
    return !strncmp(l, key, n) && l[n] == '=';
}

char *vt_reduce_config_text(const char *config, const vt_model_params *p)
{
    static const char *const keys[] = {"VTRACE_THRESHOLD", "VTRACE_CANDIDATES", "VTRACE_MODEL_L", "VTRACE_MODEL_G",
                                       "VTRACE_MODEL_TRDV", "VTRACE_MODEL_M", "VTRACE_MODEL_K"};
    size_t len = config ? strlen(config) : 0;
    char *out = malloc(len + 512);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const char *l = config; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        int drop = 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            drop |= line_key_is(l, keys[k]);
        if (!drop) {
            memcpy(out + o, l, n);
            o += n;
            if (!e)
                out[o++] = '\n';
        }
        l += n;
    }
    snprintf(out + o, 512,
             "VTRACE_THRESHOLD=%" PRId64 "ns\nVTRACE_CANDIDATES=%s\nVTRACE_MODEL_L=%" PRId64
             "ns\nVTRACE_MODEL_G=%" PRId64 "ps\nVTRACE_MODEL_TRDV=%" PRId64 "\nVTRACE_MODEL_M=%d\nVTRACE_MODEL_K=%d\n",
             p->theta, p->cand_calls ? "all" : "bursts", p->L, p->G_ps, p->T_rdv, p->m, p->K);
    return out;
}

/* The GLOBAL payload with the new configuration text and the reduced flag. */
static int global_payload(const vt_trace *t, const vt_model_params *p, uint8_t **out, size_t *outlen, vt_error *err)
{
    uint8_t *raw;
    size_t len;
    if (vt_trace_raw_block(t, 0, VT_BLOCK_GLOBAL, &raw, &len, err))
        return -1;
    const uint8_t *q = raw, *end = raw + len;
    uint64_t sl[3];
    const uint8_t *str[3];
    int64_t sv;
    uint64_t u, nranks;
    for (int i = 0; i < 3; i++) {
        if (vt_get_uvar(&q, end, &sl[i]) || sl[i] > (uint64_t)(end - q))
            goto bad;
        str[i] = q;
        q += sl[i];
    }
    const uint8_t *rest = q;
    if (vt_get_uvar(&q, end, &nranks))
        goto bad;
    for (uint64_t r = 0; r < nranks; r++) {
        for (int i = 0; i < 4; i++)
            if (vt_get_svar(&q, end, &sv))
                goto bad;
        if (vt_get_uvar(&q, end, &u) || vt_get_uvar(&q, end, &u) || u > (uint64_t)(end - q))
            goto bad;
        q += u;
    }
    const uint8_t *flags_at = q;
    uint64_t flags;
    if (vt_get_uvar(&q, end, &flags))
        goto bad;
    char *cfg = vt_reduce_config_text(vt_trace_config(t), p);
    if (!cfg) {
        free(raw);
        return fail(err, "out of memory");
    }
    size_t cl = strlen(cfg);
    uint8_t *o = malloc(len + cl + 64), *w = o;
    if (!o) {
        free(cfg);
        free(raw);
        return fail(err, "out of memory");
    }
    w = vt_put_str(w, (const char *)str[0], sl[0]);
    w = vt_put_str(w, (const char *)str[1], sl[1]);
    w = vt_put_str(w, cfg, cl);
    memcpy(w, rest, (size_t)(flags_at - rest));
    w += flags_at - rest;
    w = vt_put_uvar(w, flags | VT_GLOBAL_REDUCED);
    memcpy(w, q, (size_t)(end - q));
    w += end - q;
    free(cfg);
    free(raw);
    *out = o;
    *outlen = (size_t)(w - o);
    return 0;
bad:
    free(raw);
    return fail(err, "%s/vtrace.defs: the GLOBAL block does not parse as this version's", vt_trace_dir(t));
}

static int open_outputs(reducer *Z)
{
    const char *dir = Z->o->out_dir;
    if (mkdir(dir, 0755) && errno != EEXIST)
        return fail(Z->err, "%s: cannot create the directory: %s", dir, strerror(errno));
    for (uint32_t r = 0; r < Z->nranks; r++) {
        uint8_t *funcs;
        size_t len;
        if (vt_trace_raw_block(Z->t, r, VT_BLOCK_FUNCS, &funcs, &len, Z->err))
            return -1;
        char name[32];
        snprintf(name, sizeof name, "rank-%06u.vte", r);
        int rc = write_file(dir, name, VT_MAGIC_RANK, r, funcs, len, VT_BLOCK_FUNCS, Z->o->zstd_level, &Z->ro[r].fd,
                            Z->err);
        free(funcs);
        if (rc)
            return -1;
        Z->ro[r].buf = malloc(BLOCK_BYTES);
        if (!Z->ro[r].buf)
            return fail(Z->err, "out of memory");
    }
    return 0;
}

static int close_outputs(reducer *Z)
{
    const char *dir = Z->o->out_dir;
    for (uint32_t r = 0; r < Z->nranks; r++) {
        rank_out *ro = &Z->ro[r];
        if (out_flush(Z, ro))
            return -1;
        uint8_t *defs;
        size_t len;
        if (vt_trace_raw_block(Z->t, r, VT_BLOCK_RANKDEFS, &defs, &len, Z->err))
            return -1;
        int rc = vt_block_write(ro->fd, VT_BLOCK_RANKDEFS, defs, len, 0, Z->o->zstd_level);
        free(defs);
        if (!rc)
            rc = vt_block_write(ro->fd, VT_BLOCK_END, NULL, 0, 0, 0);
        int crc = close(ro->fd);
        ro->fd = -1;
        if (rc || crc)
            return fail(Z->err, "%s/rank-%06u.vte: cannot write: %s", dir, r, strerror(rc ? -rc : errno));
    }
    uint8_t *g = NULL;
    size_t glen = 0;
    if (global_payload(Z->t, Z->p, &g, &glen, Z->err))
        return -1;
    int rc = write_file(dir, "vtrace.defs", VT_MAGIC_DEFS, Z->nranks, g, glen, VT_BLOCK_GLOBAL, 0, NULL, Z->err);
    free(g);
    return rc;
}

int vt_reduce(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              const vt_reduce_opts *o, vt_reduce_stats *st, vt_error *err)
{
    memset(st, 0, sizeof *st);
    if (vt_trace_is_reduced(t))
        return fail(err, "%s: already a reduced trace", vt_trace_dir(t));
    reducer Z = {.t = t, .p = p, .o = o, .st = st, .nsc = o->check ? nsc : 0, .nranks = vt_trace_nranks(t), .err = err};
    Z.ro = calloc(Z.nranks, sizeof *Z.ro);
    int rc = -1;
    if (!Z.ro) {
        fail(err, "out of memory");
        goto out;
    }
    for (uint32_t r = 0; r < Z.nranks; r++) {
        Z.ro[r].fd = -1;
        if (vt_sym_init(&Z.ro[r].sym, r, (unsigned)p->m, (unsigned)p->K)) {
            fail(err, "model limits m=%d, K=%d out of range (m 1-7, K 1-8)", p->m, p->K);
            goto out;
        }
        Z.ro[r].sym.broken = o->broken;
    }
    if (o->out_dir && open_outputs(&Z))
        goto out;
    vt_observer obs = {.arg = &Z, .ext_size = sizeof(vt_poly), .publish = on_publish, .event = on_event};
    vt_replay_result res;
    if (vt_replay_observe(t, m, p, sc, o->check ? nsc : 0, &obs, &res, err))
        goto out;
    vt_replay_result_free(&res);
    for (uint32_t r = 0; r < Z.nranks; r++) {
        rank_out *ro = &Z.ro[r];
        if (ro->nwin) {
            /* probes whose message never arrived: their records stay as placeholders */
            ro->nwin = 0;
            if (release_held(&Z, ro))
                goto out;
        }
        vt_rrec end = {.kind = VT_RREC_END, .seq = ro->last_seq, .enter = ro->last_exit_local,
                       .exit = ro->last_exit_local, .fn = -1, .callsite = -1};
        if (ro->started && out_record(&Z, ro, &end))
            goto out;
        st->overflows += ro->sym.overflows;
    }
    if (o->out_dir) {
        if (close_outputs(&Z))
            goto out;
        /* what the reduced trace takes on disk, as vt_trace_bytes counts the full one */
        vt_trace *rt;
        vt_error e2;
        if (vt_trace_open(o->out_dir, &rt, &e2) == 0) {
            st->bytes_out = vt_trace_bytes(rt);
            vt_trace_close(rt);
        } else {
            *err = e2;
            goto out;
        }
    }
    st->bytes_in = vt_trace_bytes(t);
    rc = 0;
out:
    for (uint32_t r = 0; Z.ro && r < Z.nranks; r++) {
        if (Z.ro[r].fd >= 0)
            close(Z.ro[r].fd);
        free(Z.ro[r].buf);
        for (size_t i = 0; i < Z.ro[r].nheld; i++)
            held_free(&Z.ro[r].held[i]);
        free(Z.ro[r].held);
        free(Z.ro[r].win);
        vt_sym_free(&Z.ro[r].sym);
    }
    free(Z.ro);
    free(Z.msgs);
    free(Z.rmsgs);
    free(Z.rssends);
    free(Z.rgates);
    free(Z.atoms.keys);
    free(Z.atoms.at);
    free(Z.atoms.vals);
    return rc;
}
