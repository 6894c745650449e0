/* vtrace domino: seed 002's domino path. Greedily, the candidate event whose
 * elimination gives the largest predicted gain, then the next given the first, and so
 * on, beside the naive choice of the k longest waits. Every step is one replay pass
 * evaluating all remaining candidates at once. */
#include "vt_config.h"
#include "tools.h"
#include "clockfix.h"
#include "model.h"
#include "replay.h"
#include "settings.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_domino(FILE *out)
{
    fprintf(out, "usage: vtrace domino [--top K] [--max-candidates N] [--threshold DUR] [--json] [--clock-repair] DIR\n"
                 "The domino path: the K events whose successive elimination gains the most\n"
                 "(each chosen given the ones before), beside eliminating the K longest waits.\n"
                 "MPI_Init and MPI_Init_thread are left out (start-up).\n\n"
                 "  -k, --top K               steps (default 5)\n"
                 "      --max-candidates N    consider the N longest candidates only (default 400)\n"
                 "      --threshold DUR       override the trace's candidate threshold\n"
                 "      --json                one JSON object per step and line\n"
                 "      --clock-repair        first repair receives that end before their send started\n"
                 "                            (doc/clock-repair.md); without it they are only counted\n");
}

typedef struct dcand {
    uint32_t rank;
    uint64_t seq;
    int64_t dur;
    int call;
    char fn[64];
    int chosen;
} dcand;

typedef struct dlist {
    dcand *v;
    size_t n, cap;
} dlist;

static void collect(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname)
{
    dlist *l = arg;
    /* Start-up is no work a programmer can shorten. */
    if (fname && !strncmp(fname, "MPI_Init", 8))
        return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        dcand *n = realloc(l->v, nc * sizeof *n);
        if (!n)
            return;
        l->v = n;
        l->cap = nc;
    }
    dcand *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->seq = seq;
    c->dur = dur;
    c->call = fname != NULL;
    snprintf(c->fn, sizeof c->fn, "%s", fname ? fname : "(computation)");
}

static int by_dur(const void *a, const void *b)
{
    const dcand *x = a, *y = b;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

/* Text of "eliminate these": the chosen ones, plus `extra` when not NULL. */
static char *elim_text(const dlist *l, const dcand *extra, const size_t *order, size_t norder)
{
    size_t cap = 64 + 40 * (norder + 1), len = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[0] = '\0';
    for (size_t i = 0; i <= norder; i++) {
        const dcand *c = i < norder ? &l->v[order[i]] : extra;
        if (!c)
            continue;
        len += (size_t)snprintf(t + len, cap - len, "%s%u:%" PRIu64 "=elim", len ? " " : "", c->rank, c->seq);
    }
    return t;
}

static int run(const vt_trace *t, const vt_model_params *p, char **texts, size_t n, vt_replay_result *res,
               vt_error *err)
{
    vt_scenario *sc = calloc(n, sizeof *sc);
    char msg[512];
    int rc = -1;
    if (!sc)
        return -1;
    size_t ok = 0;
    for (; ok < n; ok++)
        if (vt_scenario_parse(texts[ok], &sc[ok], msg, sizeof msg))
            break;
    if (ok == n)
        rc = vt_replay(t, NULL, p, sc, n, res, err); /* matching messages as it goes */
    else
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    for (size_t i = 0; i < ok; i++)
        vt_scenario_free(&sc[i]);
    free(sc);
    return rc;
}

int vt__cmd_domino(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL;
    uint32_t top = 5, maxc = 400;
    int json = 0, rc = VT_EXIT_ERROR, repair = 0;
    struct vt_clockfix *fix = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            vt__usage_domino(stdout);
            return VT_EXIT_OK;
        } else if ((!strcmp(a, "-k") || !strcmp(a, "--top")) && i + 1 < argc) {
            if (vt__parse_u32(argv[++i], &top) || top == 0)
                return vt__usage_error(vt__usage_domino, "--top takes a positive count, not '%s'", argv[i]);
        } else if (!strcmp(a, "--max-candidates") && i + 1 < argc) {
            if (vt__parse_u32(argv[++i], &maxc) || maxc == 0)
                return vt__usage_error(vt__usage_domino, "--max-candidates takes a positive count, not '%s'", argv[i]);
        } else if (!strcmp(a, "--threshold") && i + 1 < argc) {
            threshold = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--clock-repair")) {
            repair = 1;
        } else if (a[0] == '-' && a[1]) {
            return vt__usage_error(vt__usage_domino, "unknown option '%s'", a);
        } else if (!dir) {
            dir = a;
        } else {
            return vt__usage_error(vt__usage_domino, "one trace directory only ('%s')", a);
        }
    }
    if (!dir)
        return vt__usage_error(vt__usage_domino, "missing trace directory");
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt_error err;
    dlist l = {0};
    size_t *order = NULL;
    char **texts = NULL;
    size_t ntexts = 0;
    if (vt_trace_open(dir, &t, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    vt_model_params p;
    vt_model_defaults(&p);
    char msg[512];
    if (vt_model_params_parse(&p, vt_trace_config(t), msg, sizeof msg)) {
        fprintf(stderr, "vtrace: %s: %s\n", dir, msg);
        goto out;
    }
    if (threshold && vt_parse_duration(threshold, &p.theta)) {
        rc = vt__usage_error(vt__usage_domino, "--threshold takes a duration such as 500us, not '%s'", threshold);
        goto out;
    }
    /* the replay matches messages as it goes; the clock repair needs the whole matching */
    if ((repair && vt_trace_match(t, 0, &m, &err)) || vt__clock_repair(t, m, repair, &fix, &err) ||
        vt_replay_candidates(t, &p, collect, &l, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    if (l.n == 0) {
        /* a trace the replay cannot match or order is reported as such first */
        vt_replay_result r0;
        if (vt_replay(t, NULL, &p, NULL, 0, &r0, &err)) {
            rc = vt__fail(&err);
            goto out;
        }
        vt_replay_result_free(&r0);
        fprintf(stderr, "vtrace: %s: no candidate events (none lasts the threshold %" PRId64 " ns)\n", dir, p.theta);
        goto out;
    }
    qsort(l.v, l.n, sizeof *l.v, by_dur);
    if (l.n > maxc)
        l.n = maxc;
    if (top > l.n)
        top = (uint32_t)l.n;
    order = calloc(top, sizeof *order);
    texts = calloc(l.n + 1, sizeof *texts);
    if (!order || !texts)
        goto out;
    /* Naive: the k longest waits (candidate MPI calls), eliminated together, by prefix. */
    size_t nwaits = 0;
    size_t *waits = calloc(top, sizeof *waits);
    for (size_t i = 0; waits && i < l.n && nwaits < top; i++)
        if (l.v[i].call)
            waits[nwaits++] = i;
    int64_t *naive = calloc(top + 1, sizeof *naive);
    vt_replay_result res;
    if (!waits || !naive)
        goto out;
    for (size_t k = 0; k <= nwaits; k++) {
        texts[k] = elim_text(&l, NULL, waits, k);
        ntexts = k + 1;
    }
    if (run(t, &p, texts, ntexts, &res, &err)) {
        free(waits);
        free(naive);
        rc = vt__fail(&err);
        goto out;
    }
    vt__clock_warn(&res, fix);
    int64_t measured = res.total[0] - res.start;
    for (size_t k = 0; k <= nwaits; k++)
        naive[k] = res.total[k] - res.start;
    vt_replay_result_free(&res);
    for (size_t i = 0; i < ntexts; i++)
        free(texts[i]);
    ntexts = 0;
    if (!json)
        printf("domino path of %s (measured %.6f s, %zu candidates considered)\n"
               "%4s %-14s %-22s %12s %14s %8s   %14s %8s\n",
               dir, measured / 1e9, l.n, "step", "event", "what", "duration", "predicted (s)", "gain",
               "k longest waits", "gain");
    int64_t prev = measured;
    for (uint32_t step = 0; step < top; step++) {
        size_t *idx = calloc(l.n, sizeof *idx);
        size_t n = 0;
        if (!idx)
            goto out;
        for (size_t i = 0; i < l.n; i++) {
            if (l.v[i].chosen)
                continue;
            texts[n] = elim_text(&l, &l.v[i], order, step);
            idx[n++] = i;
        }
        ntexts = n;
        if (run(t, &p, texts, n, &res, &err)) {
            free(idx);
            free(waits);
            free(naive);
            rc = vt__fail(&err);
            goto out;
        }
        size_t best = 0;
        for (size_t k = 1; k < n; k++)
            if (res.total[k] < res.total[best])
                best = k;
        int64_t pred = res.total[best] - res.start;
        dcand *c = &l.v[idx[best]];
        c->chosen = 1;
        order[step] = idx[best];
        int64_t nv = step + 1 <= nwaits ? naive[step + 1] : naive[nwaits];
        double g = 100.0 * (double)(measured - pred) / (double)measured;
        double gn = 100.0 * (double)(measured - nv) / (double)measured;
        if (json) {
            printf("{\"step\":%u,\"event\":\"%u:%" PRIu64 "\",\"what\":", step + 1, c->rank, c->seq);
            vt__json_str(stdout, c->fn);
            printf(",\"duration_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64 ",\"step_gain_ns\":%" PRId64
                   ",\"gain_pct\":%.3f,\"naive_predicted_ns\":%" PRId64 ",\"naive_gain_pct\":%.3f}\n",
                   c->dur, pred, prev - pred, g, nv, gn);
        } else {
            char id[32];
            snprintf(id, sizeof id, "%u:%" PRIu64, c->rank, c->seq);
            printf("%4u %-14s %-22.22s %10.6f s %14.6f %7.2f%%   %14.6f %7.2f%%\n", step + 1, id, c->fn, c->dur / 1e9,
                   pred / 1e9, g, nv / 1e9, gn);
        }
        prev = pred;
        vt_replay_result_free(&res);
        for (size_t i = 0; i < n; i++)
            free(texts[i]);
        ntexts = 0;
        free(idx);
    }
    free(waits);
    free(naive);
    rc = VT_EXIT_OK;
out:
    for (size_t i = 0; i < ntexts; i++)
        free(texts[i]);
    free(texts);
    free(order);
    free(l.v);
    vt_matches_free(m);
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
