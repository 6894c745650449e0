/* Seed 002's domino path (domino.h). */
#include "vt_config.h"
#include "analysis/domino.h"
#include "analysis/replay.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void collect(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname, int64_t callsite)
{
    (void)callsite;
    vt_domino *d = arg;
    /* Start-up is no work a programmer can shorten. */
    if ((fname && !strncmp(fname, "MPI_Init", 8)) || d->cap == SIZE_MAX)
        return;   /* (SIZE_MAX: memory ran out before: the caller says so) */
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 256;
        vt_domino_cand *n = realloc(d->c, nc * sizeof *n);
        if (!n) {
            d->cap = SIZE_MAX;   /* marks the failure */
            return;
        }
        d->c = n;
        d->cap = nc;
    }
    vt_domino_cand *c = &d->c[d->n++];
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->seq = seq;
    c->dur = dur;
    c->call = fname != NULL;
    c->alone = -1;
    snprintf(c->fn, sizeof c->fn, "%s", fname ? fname : "(computation)");
}

static int by_dur(const void *a, const void *b)
{
    const vt_domino_cand *x = a, *y = b;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

/* "R:S=elim ..." of the first k entries of order[] and, when extra is not NULL, it. */
static char *elim_text(const vt_domino *d, const size_t *order, size_t k, const vt_domino_cand *extra)
{
    size_t cap = 64 + 40 * (k + 1), len = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[0] = '\0';
    for (size_t i = 0; i <= k; i++) {
        const vt_domino_cand *c = i < k ? &d->c[order[i]] : extra;
        if (c)
            len += (size_t)snprintf(t + len, cap - len, "%s%u:%" PRIu64 "=elim", len ? " " : "", c->rank, c->seq);
    }
    return t;
}

/* One replay of the scenarios texts[0..n); the predicted run times (from the start) go
 * to out[]. Frees the texts. */
static int pass(const vt_trace *t, const vt_model_params *p, char **texts, size_t n, int64_t *out,
                vt_replay_result *keep, vt_error *err)
{
    vt_scenario *sc = calloc(n ? n : 1, sizeof *sc);
    char msg[512];
    int rc = -1;
    size_t ok = 0;
    if (!sc) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto out;
    }
    for (; ok < n; ok++) {
        if (!texts[ok] || vt_scenario_parse(texts[ok], &sc[ok], msg, sizeof msg)) {
            snprintf(err->msg, sizeof err->msg, "%s", texts[ok] ? msg : "out of memory");
            goto out;
        }
    }
    vt_replay_result res;
    if (vt_replay(t, NULL, p, sc, n, &res, err))   /* matching messages as it goes */
        goto out;
    for (size_t k = 0; k < n; k++)
        out[k] = res.total[k] - res.start;
    if (keep)
        *keep = res;
    else
        vt_replay_result_free(&res);
    rc = 0;
out:
    for (size_t i = 0; i < ok; i++)
        vt_scenario_free(&sc[i]);
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
    free(sc);
    return rc;
}

int vt_domino_run(const vt_trace *t, const vt_model_params *p, size_t top, size_t maxc, vt_domino *d, vt_error *err)
{
    memset(d, 0, sizeof *d);
    if (vt_replay_candidates(t, p, collect, d, err)) {
        vt_domino_free(d);
        return -1;
    }
    if (d->cap == SIZE_MAX) {
        vt_domino_free(d);
        snprintf(err->msg, sizeof err->msg, "out of memory listing the candidates");
        return -1;
    }
    vt_sort(d->c, d->n, sizeof *d->c, by_dur);
    if (d->n > maxc)
        d->n = maxc;
    if (top > d->n)
        top = d->n;
    size_t n = d->n;
    d->order = calloc(top + 1, sizeof *d->order);
    d->pred = calloc(top + 1, sizeof *d->pred);
    d->waits = calloc(top + 1, sizeof *d->waits);
    d->naive = calloc(top + 1, sizeof *d->naive);
    char **texts = calloc(n + top + 2, sizeof *texts);
    int64_t *out = calloc(n + top + 2, sizeof *out);
    size_t *idx = calloc(n + 1, sizeof *idx);
    if (!d->order || !d->pred || !d->waits || !d->naive || !texts || !out || !idx) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto fail;
    }
    /* The baseline and the naive choice (the k longest waits, by prefix) in one pass. */
    for (size_t i = 0; i < n && d->nwaits < top; i++)
        if (d->c[i].call)
            d->waits[d->nwaits++] = i;
    for (size_t k = 0; k <= d->nwaits; k++)
        texts[k] = elim_text(d, d->waits, k, NULL);
    vt_replay_result res;
    if (pass(t, p, texts, d->nwaits + 1, d->naive, &res, err))
        goto fail;
    d->measured = d->naive[0];
    d->messages = res.messages;
    d->clock_violations = res.clock_violations;
    vt_replay_result_free(&res);
    /* Each step: every remaining candidate eliminated with the chosen ones; the first
     * step also gives each candidate's gain alone. Ties: the longer candidate. */
    for (size_t s = 0; s < (top ? top : (n ? 1 : 0)); s++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (d->c[i].chosen)
                continue;
            texts[m] = elim_text(d, d->order, s, &d->c[i]);
            idx[m++] = i;
        }
        if (!m)
            break;
        if (pass(t, p, texts, m, out, NULL, err))
            goto fail;
        size_t best = 0;
        for (size_t k = 0; k < m; k++) {
            if (s == 0)
                d->c[idx[k]].alone = out[k];
            if (out[k] < out[best])
                best = k;
        }
        if (s < top) {
            d->c[idx[best]].chosen = 1;
            d->order[s] = idx[best];
            d->pred[s] = out[best];
            d->nsteps = s + 1;
        }
    }
    free(texts);
    free(out);
    free(idx);
    return 0;
fail:
    free(texts);
    free(out);
    free(idx);
    vt_domino_free(d);
    return -1;
}

void vt_domino_free(vt_domino *d)
{
    free(d->c);
    free(d->order);
    free(d->pred);
    free(d->waits);
    free(d->naive);
    memset(d, 0, sizeof *d);
}
