/* Run-time reduction rules on symbolic differences (model.md §4-5); see symbolic.h. */
#include "vt_config.h"
#include "model/symbolic.h"

#include <stdlib.h>
#include <string.h>

int vt_sym_init(vt_sym_state *s, uint32_t rank, unsigned m, unsigned K)
{
    memset(s, 0, sizeof *s);
    if (!vt_poly_limits_ok(m, K))
        return -1;
    s->rank = rank;
    s->m = m;
    s->K = K;
    vt_poly_const(&s->d, 0);
    return 0;
}

void vt_sym_set_room(vt_sym_state *s, unsigned bytes) { s->room = bytes; }

static int too_long(const vt_poly *d, unsigned room)
{
    uint8_t enc[VT_POLY_ENC_MAX];
    return room && vt_poly_encode(d, enc) > room;
}

void vt_sym_free(vt_sym_state *s)
{
    free(s->win);
    s->win = NULL;
    s->nwin = s->capwin = 0;
}

/* End of every event: an inexact or oversized d becomes the event's overflow atom. */
static void finish_event(vt_sym_state *s, uint64_t seq, int exact)
{
    if (!exact || s->invalid) {
        vt_poly_atom(&s->d, vt_var_overflow(s->rank, seq));
        s->overflows++;
    } else if (vt_poly_overflow(&s->d, s->m, s->K, s->rank, seq) == 1) {
        s->overflows++;
    } else if (too_long(&s->d, s->room)) {
        vt_poly_atom(&s->d, vt_var_overflow(s->rank, seq));
        s->overflows++;
    }
    s->invalid = 0;
}

int vt_sym_local(vt_sym_state *s, uint64_t seq, int cand)
{
    /* d does not change: it was within every limit after the previous event */
    if (!cand && !s->invalid)
        return 0;
    int exact = 1;
    if (cand && !s->invalid)
        exact = vt_poly_addv(&s->d, vt_var_delta(s->rank, seq)) == VT_POLY_OK;
    /* also after a probe's substitution made d larger than the limits */
    finish_event(s, seq, exact);
    return 0;
}

/* d_after = min_k (in_k + δ) capped by d_before + (E - R) when a candidate, else min_k in_k;
 * one exact call (poly.h capacity rule). */
static int combine(vt_sym_state *s, vt_poly_shift *in, size_t n, const vt_poly *before, uint64_t seq, int cand,
                   int64_t R, int64_t E)
{
    if (cand) {
        vt_var v = vt_var_delta(s->rank, seq);
        for (size_t k = 0; k < n; k++) {
            in[k].var = v;
            in[k].has_var = 1;
        }
        /* the cap: it cannot end before it starts (E - R may be negative only with
         * broken clocks; the constant must stay >= 0 for the algebra) */
        in[n] = (vt_poly_shift){before, E - R > 0 ? E - R : 0, v, 0};
        n++;
    }
    vt_poly out;
    int rc = vt_poly_min_shifted(&out, in, n);
    s->d = out;
    return rc == VT_POLY_OK;
}

/* The common case, decided without copying d: every message eager with the rank's own
 * difference (R3 holds for all), no atom, not a candidate. Then d_after = min(d + 0) = d
 * (the general path's single input, shifted by M - R* = 0) and d stays within the limits
 * it was in: only R* moves. Returns 1 when it applied. */
static int all_folded(vt_sym_state *s, vt_sym_completion *c)
{
    if (c->coll || c->nbc || c->ssend || c->cand || s->invalid || s->broken != VT_SYM_CORRECT)
        return 0;
    for (size_t i = 0; i < c->nmsgs; i++)
        if (c->msgs[i].sync || !vt_poly_equal(c->msgs[i].D, &s->d))
            return 0;
    c->Rstar = c->R;
    for (size_t i = 0; i < c->nmsgs; i++) {
        c->msgs[i].folded = 1;
        if (c->msgs[i].T > c->Rstar)
            c->Rstar = c->msgs[i].T;
    }
    c->record = 0;
    return 1;
}

int vt_sym_complete(vt_sym_state *s, vt_sym_completion *c)
{
    if (all_folded(s, c))
        return 0;
    vt_poly before = s->d, atom;
    int exact = !s->invalid;
    c->Rstar = c->R;
    int remote = 0;
    int atom_base = c->coll || c->nbc || c->ssend;
    for (size_t i = 0; i < c->nmsgs; i++)
        c->msgs[i].folded = 0;
    vt_poly_shift small[16], *in = small;
    if (c->nmsgs + 2 > sizeof small / sizeof small[0]) {
        in = malloc((c->nmsgs + 2) * sizeof *in);
        if (!in)
            return -1;
    }
    size_t n = 0;
    if (atom_base) {
        /* model.md §4: the rank cannot know the other contributors' differences */
        if (c->coll)
            vt_poly_atom(&atom, vt_var_coll(c->coll_comm, c->coll_n));
        else if (c->nbc)
            vt_poly_atom(&atom, vt_var_nbc(s->rank, c->seq));
        else
            vt_poly_atom(&atom, vt_var_ssend(s->rank, c->seq));
        in[n++] = (vt_poly_shift){&atom, 0, {0, 0}, 0};
        remote = c->nmsgs > 0;
    } else {
        vt_sym_msg *keep[1] = {NULL};
        size_t nkeep = 0;
        for (size_t i = 0; i < c->nmsgs; i++) {
            vt_sym_msg *mg = &c->msgs[i];
            int same = exact && !mg->sync && vt_poly_equal(mg->D, &before);
            if (s->broken == VT_SYM_BROKEN_NOR3 && !mg->sync)
                same = 1;
            if (same) {
                mg->folded = 1;
                if (s->broken != VT_SYM_BROKEN_NOFOLD && mg->T > c->Rstar)
                    c->Rstar = mg->T;
            } else {
                nkeep++;
                keep[0] = mg;
            }
        }
        remote = nkeep > 0;
        if (c->nmsgs == 1 && nkeep == 1 && keep[0]->adoptable) {
            /* the pair's two contributors, as the sender computes them: share its atom */
            vt_poly_atom(&atom, vt_var_ssend(keep[0]->src, keep[0]->send_seq));
            in[n++] = (vt_poly_shift){&atom, 0, {0, 0}, 0};
        } else if (exact) {
            int64_t M = c->Rstar;
            for (size_t i = 0; i < c->nmsgs; i++)
                if (!c->msgs[i].folded && c->msgs[i].T > M)
                    M = c->msgs[i].T;
            in[n++] = (vt_poly_shift){&before, M - c->Rstar, {0, 0}, 0};
            for (size_t i = 0; i < c->nmsgs; i++)
                if (!c->msgs[i].folded)
                    in[n++] = (vt_poly_shift){c->msgs[i].D, M - c->msgs[i].T, {0, 0}, 0};
        }
    }
    if (n)
        exact = combine(s, in, n, &before, c->seq, c->cand, c->R, c->E) && exact;
    else
        exact = 0;
    if (in != small)
        free(in);
    finish_event(s, c->seq, exact);
    c->record = remote || c->cand || atom_base;
    return 0;
}

int vt_sym_probe(vt_sym_state *s, uint64_t seq, int64_t R, int64_t E, int cand)
{
    if (s->nwin == s->capwin) {
        size_t nc = s->capwin ? 2 * s->capwin : 4;
        vt_sym_window *w = realloc(s->win, nc * sizeof *w);
        if (!w)
            return -1;
        s->win = w;
        s->capwin = nc;
    }
    vt_sym_window *w = &s->win[s->nwin++];
    w->probe_seq = seq;
    w->before = s->d;
    w->R = R;
    w->E = E;
    w->cand = cand;
    if (s->invalid) {
        /* the probe's d before is unknown: its decision will record the message */
        vt_poly_atom(&w->before, vt_var_overflow(s->rank, seq));
        s->invalid = 0;
    }
    vt_poly_atom(&s->d, vt_var_probe(s->rank, seq));
    return 0;
}

/* d with every occurrence of variable v replaced by the polynomial q (min-plus
 * substitution: a term holding v becomes |q| terms). 1: exact, 0: does not fit. */
static int substitute(vt_poly *d, vt_var v, const vt_poly *q)
{
    vt_poly_rawterm raw[VT_POLY_MAX_TERMS * VT_POLY_MAX_TERMS];
    vt_var vars[VT_POLY_MAX_TERMS * VT_POLY_MAX_TERMS][2 * VT_POLY_MAX_VARS];
    size_t n = 0;
    for (unsigned i = 0; i < d->nterms; i++) {
        vt_var own[VT_POLY_MAX_VARS];
        size_t nown = 0;
        int has = 0;
        for (unsigned j = 0; j < d->nvars; j++) {
            if (!(d->mask[i] >> j & 1))
                continue;
            if (vt_var_eq(d->var[j], v))
                has = 1;
            else
                own[nown++] = d->var[j];
        }
        unsigned reps = has ? q->nterms : 1;
        for (unsigned k = 0; k < reps; k++) {
            size_t nv = 0;
            memcpy(vars[n], own, nown * sizeof *own);
            nv = nown;
            int64_t c = d->c[i];
            if (has) {
                c += q->c[k];
                for (unsigned j = 0; j < q->nvars; j++)
                    if (q->mask[k] >> j & 1)
                        vars[n][nv++] = q->var[j];
            }
            if (nv > VT_POLY_MAX_VARS)
                return 0;
            raw[n] = (vt_poly_rawterm){c, nv, vars[n]};
            n++;
        }
    }
    vt_poly out;
    if (vt_poly_from_terms(&out, raw, n) != VT_POLY_OK)
        return 0;
    *d = out;
    return 1;
}

int vt_sym_probe_resolve(vt_sym_state *s, uint64_t probe_seq, vt_sym_msg *msg, int64_t *Rstar, int *record,
                         vt_poly *probe_after)
{
    size_t w = 0;
    while (w < s->nwin && s->win[w].probe_seq != probe_seq)
        w++;
    if (w == s->nwin)
        return -1;
    vt_sym_window win = s->win[w];
    memmove(&s->win[w], &s->win[w + 1], (s->nwin - w - 1) * sizeof *s->win);
    s->nwin--;

    /* The probe as a completion of its message: the same rule as any receive. */
    vt_sym_state ps = *s;
    ps.d = win.before;
    ps.invalid = 0;
    ps.win = NULL;
    ps.nwin = ps.capwin = 0;
    vt_sym_completion c = {.seq = probe_seq, .R = win.R, .E = win.E, .cand = win.cand, .msgs = msg, .nmsgs = 1};
    msg->adoptable = 0;
    if (vt_sym_complete(&ps, &c))
        return -1;
    s->overflows = ps.overflows;
    *Rstar = c.Rstar;
    *record = c.record;
    if (probe_after)
        *probe_after = ps.d;
    if (!s->invalid && !substitute(&s->d, vt_var_probe(s->rank, probe_seq), &ps.d))
        s->invalid = 1;
    return 0;
}
