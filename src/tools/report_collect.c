/* vtrace report, the data: the function names across ranks, the analyses (critical path
 * of the measured run, domino path and what-if gains, wait-state patterns) and, through
 * report_timeline.c, the timeline read from the trace (report.h). */
#include "vt_config.h"
#include "tools/report.h"
#include "util/sort.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ function names */

static int32_t fn_index(report *R, const char *name)
{
    for (size_t i = 0; i < R->nfn; i++)
        if (!strcmp(R->fnames[i], name))
            return (int32_t)i;
    if (R->nfn == R->fncap) {
        size_t nc = R->fncap ? 2 * R->fncap : 64;
        char **n = realloc(R->fnames, nc * sizeof *n);
        if (!n)
            return -1;
        R->fnames = n;
        R->fncap = nc;
    }
    char *s = strdup(name);
    if (!s)
        return -1;
    R->fnames[R->nfn] = s;
    return (int32_t)R->nfn++;
}

static int build_fnmap(report *R)
{
    R->fnmap = calloc(R->nranks, sizeof *R->fnmap);
    if (!R->fnmap)
        return -1;
    for (uint32_t r = 0; r < R->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(R->t, r);
        R->fnmap[r] = calloc(rk->nfuncs + 1, sizeof **R->fnmap);
        if (!R->fnmap[r])
            return -1;
        for (size_t f = 0; f < rk->nfuncs; f++)
            if ((R->fnmap[r][f] = fn_index(R, rk->funcs[f].name)) < 0)
                return -1;
    }
    return 0;
}

static void step(report *R)
{
    vt__progress_update(&R->prog, ++R->done);
}

/* ------------------------------------------------------------------ analyses */

static int critical_path(report *R)
{
    vt_error err;
    vt_scenario sc;
    char msg[256];
    if (vt_scenario_parse("", &sc, msg, sizeof msg)) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", msg);
        return -1;
    }
    R->cp = vt_critpath_new(R->nranks, 0);
    if (!R->cp) {
        vt_scenario_free(&sc);
        snprintf(R->cp_error, sizeof R->cp_error, "out of memory");
        return -1;
    }
    vt_observer obs;
    vt_replay_result res;
    vt__report_tee tee;
    vt_critpath_observer(R->cp, &obs);
    if (!R->reduced)
        vt__report_tee_install(&tee, R, &obs); /* a full trace's messages come from this replay */
    int rc = vt_replay_observe(R->t, NULL, &R->p, &sc, 1, &obs, &res, &err);
    vt_scenario_free(&sc);
    if (rc) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", err.msg);
        return -1;
    }
    vt__clock_warn(&res, NULL);
    R->rstart = res.start;
    R->measured = res.total[0] - res.start;
    R->clock_violations = res.clock_violations;
    rc = vt_critpath_finish(R->cp, res.start, &err);
    if (rc == 0)
        rc = vt_critpath_load_path(R->cp, &err);
    vt_replay_result_free(&res);
    if (rc) {
        snprintf(R->cp_error, sizeof R->cp_error, "%s", err.msg);
        return -1;
    }
    R->cpr = vt_critpath_get(R->cp);
    if (vt_critpath_per_function(R->cp, &R->cpfn, &R->ncpfn)) {
        snprintf(R->cp_error, sizeof R->cp_error, "out of memory");
        R->cpr = NULL;
        return -1;
    }
    return 0;
}

/* The domino path and every candidate's gain eliminated alone (domino.h). */
static int domino_whatif(report *R)
{
    vt_error err;
    if (vt_domino_run(R->t, &R->p, R->top, R->maxc, &R->dom, &err)) {
        snprintf(R->an_error, sizeof R->an_error, "%s", err.msg);
        return -1;
    }
    if (R->measured < 0)
        R->measured = R->dom.measured;
    /* Only the what-if rows' and the steps' candidates are shown: the others (one for
     * every candidate of the trace) are freed before the next analyses run. */
    R->ncand = R->dom.n;
    R->nwk = R->nwhatif < R->dom.n ? R->nwhatif : R->dom.n;
    vt_domino_cand *k = malloc((R->nwk + R->dom.nsteps + 1) * sizeof *k);
    if (k) {
        if (R->nwk)
            memcpy(k, R->dom.c, R->nwk * sizeof *k);
        for (size_t s = 0; s < R->dom.nsteps; s++) {
            k[R->nwk + s] = R->dom.c[R->dom.order[s]];
            R->dom.order[s] = R->nwk + s;
        }
        free(R->dom.c);
        R->dom.c = k;
        R->dom.n = R->dom.cap = R->nwk + R->dom.nsteps;
    }
    step(R);
    /* each rank's, each function's candidates eliminated at once (vtrace domino --by) */
    if (vt_agg_run(R->t, &R->p, VT_AGG_RANK, "elim", R->maxc, &R->fix_rank, &err) ||
        vt_agg_run(R->t, &R->p, VT_AGG_FUNCTION, "elim", R->maxc, &R->fix_fn, &err)) {
        snprintf(R->an_error, sizeof R->an_error, "%s", err.msg);
        return -1;
    }
    /* the load imbalance removed (vtrace whatif -s balance) */
    vt_scenario bsc;
    vt_replay_result bres;
    if (vt_imbalance_scenario(R->t, &R->p, "balance", &bsc, &R->bal, &err) == 0) {
        if (vt_replay(R->t, NULL, &R->p, &bsc, 1, &bres, &err) == 0) {
            R->bal_pred = bres.total[0] - bres.start;
            R->bal_ok = 1;
            vt_replay_result_free(&bres);
        }
        vt_scenario_free(&bsc);
    }
    step(R);
    return 0;
}

static int want_cmp(const void *a, const void *b)
{
    const want *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_wants(report *R)
{
    size_t nw = R->nwk;
    R->wants = calloc(R->dom.nsteps + nw + 1, sizeof *R->wants);
    if (!R->wants)
        return -1;
    for (size_t i = 0; i < R->dom.nsteps + nw; i++) {
        const vt_domino_cand *c = &R->dom.c[i < R->dom.nsteps ? R->dom.order[i] : i - R->dom.nsteps];
        R->wants[R->nwants++] = (want){c->rank, c->seq, 1, 0};
    }
    vt_sort(R->wants, R->nwants, sizeof *R->wants, want_cmp);
    return 0;
}

const want *vt__report_find_want(const report *R, uint32_t rank, uint64_t seq)
{
    want key = {rank, seq, 0, 0};
    return R->nwants ? bsearch(&key, R->wants, R->nwants, sizeof key, want_cmp) : NULL;
}

/* ------------------------------------------------------------------ the whole collection */

int vt__report_collect(report *R, int quiet)
{
    const char *dir = R->dir;
    vt_error err;
    if (build_fnmap(R) || vt__report_timeline_init(R)) {
        fprintf(stderr, "vtrace: out of memory\n");
        return VT_EXIT_ERROR;
    }
    vt__progress_start(&R->prog, "report", 2 + (R->top ? R->top : 1) + R->nranks, quiet);
    /* The analyses: a trace they cannot replay still gets its timeline and profile, and
     * the page says why they are missing. The domino path comes first: the timeline's
     * pass finds the times of its events; the critical path's replay, after the
     * timeline's pass, gives the messages of the detail window. */
    if (domino_whatif(R))
        fprintf(stderr, "vtrace: warning: %s: no domino path or what-if gains: %s\n", dir, R->an_error);
    if (build_wants(R)) {
        vt__progress_end(&R->prog);
        fprintf(stderr, "vtrace: out of memory\n");
        return VT_EXIT_ERROR;
    }
    if (vt__report_timeline(R, &err)) {
        vt__progress_end(&R->prog);
        return vt__fail(&err);
    }
    if (critical_path(R))
        fprintf(stderr, "vtrace: warning: %s: no critical path: %s\n", dir, R->cp_error);
    step(R);
    if (vt__report_mark_path(R)) {
        vt__progress_end(&R->prog);
        fprintf(stderr, "vtrace: out of memory\n");
        return VT_EXIT_ERROR;
    }
    if (vt_patterns_analyze(R->t, NULL, 0, &R->pat, &err)) {
        snprintf(R->pat_error, sizeof R->pat_error, "%s", err.msg);
        R->pat = NULL;
        fprintf(stderr, "vtrace: warning: %s: no wait-state patterns: %s\n", dir, R->pat_error);
    }
    vt__progress_end(&R->prog);
    return VT_EXIT_OK;
}

void vt__report_free(report *R)
{
    for (size_t i = 0; i < R->nfn; i++)
        free(R->fnames[i]);
    free(R->fnames);
    if (R->fnmap)
        for (uint32_t r = 0; r < R->nranks; r++)
            free(R->fnmap[r]);
    free(R->fnmap);
    free(R->cpfn);
    vt_critpath_free(R->cp);
    vt_domino_free(&R->dom);
    vt_agg_free(&R->fix_rank);
    vt_agg_free(&R->fix_fn);
    vt_patterns_free(R->pat);
    free(R->wants);
    vt__report_timeline_free(R);
}
