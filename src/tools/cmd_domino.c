/* vtrace domino: what to fix first. By event (the domino path): greedily, the candidate
 * event whose elimination gives the largest predicted gain, then the next given the
 * first, and so on, beside the naive choice of the k longest waits; every step is one
 * replay pass evaluating all remaining candidates at once. By rank, site, function or MPI
 * function: every candidate of each aggregate shortened at once, all aggregates in one
 * pass (analysis/aggregate.h), ranked by gain. */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/eventsite.h"
#include "tools/progress.h"
#include "format/clockfix.h"
#include "analysis/domino.h"
#include "analysis/aggregate.h"
#include "analysis/imbalance.h"
#include "model/model.h"
#include "analysis/replay.h"
#include "util/settings.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_domino(FILE *out)
{
    fprintf(out, "usage: vtrace domino [--by event|rank|site|function|mpi] [--shorten S] [--top K]\n"
                 "                     [--max-candidates N] [--threshold DUR] [--json] [--clock-repair] DIR\n"
                 "What to fix first, by the predicted gain (a what-if replay).\n"
                 "--by event (the default), the domino path: the K events whose successive\n"
                 "elimination gains the most (each chosen given the ones before), beside eliminating\n"
                 "the K longest waits. --by rank|site|function|mpi: every candidate of one rank, the\n"
                 "computation before one call site, before the calls of one function of the program,\n"
                 "or the candidate calls of one MPI function, shortened at once; the K best, each\n"
                 "with the scenario `vtrace whatif -s` takes for it. MPI_Init and MPI_Init_thread\n"
                 "are left out (start-up) but by rank.\n\n"
                 "  -b, --by WHAT             event, rank, site, function or mpi (default event)\n"
                 "      --shorten S           the shortening of an aggregate: elim (default), -P%%\n"
                 "                            or -N[ns|us|ms|s], as in a scenario\n"
                 "  -k, --top K               steps or rows (default 5; by aggregate 10)\n"
                 "      --max-candidates N    consider the N longest candidates or aggregates only\n"
                 "                            (default 400)\n"
                 "      --threshold DUR       override the trace's candidate threshold\n"
                 "      --json                one JSON object per step and line\n"
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet          no progress display on a terminal\n"
                 "      --clock-repair        first repair receives that end before their send started\n"
                 "                            (vtrace-whatif(1)); without it they are only counted\n");
}

/* "what" of an aggregate's row: a site by its call site as every command shows it */
static void row_label(const vt_trace *t, enum vt_agg_by by, const vt_agg_row *r, char *buf, size_t len)
{
    const vt_callsite *cs = r->site >= 0 ? vt_trace_callsite(t, r->site_rank, r->site) : NULL;
    if (by == VT_AGG_SITE && cs)
        snprintf(buf, len, "%s", vt_site_name(t, r->site_rank, r->site));
    else
        snprintf(buf, len, "%s", r->label);
}

/* By rank, the ranks together: the gain of removing the load imbalance (whatif --balance). */
static int balance_row(const vt_trace *t, const vt_matches *m, const vt_model_params *p, int64_t measured, int json,
                       vt_error *err)
{
    vt_scenario sc;
    vt_imbalance_stats st;
    if (vt_imbalance_scenario(t, p, "balance", &sc, &st, err))
        return -1;
    vt_replay_result res;
    int rc = vt_replay(t, m, p, &sc, 1, &res, err);
    vt_scenario_free(&sc);
    if (rc)
        return -1;
    int64_t pred = res.total[0] - res.start;
    vt_replay_result_free(&res);
    double g = measured > 0 ? 100.0 * (double)(measured - pred) / (double)measured : 0.0;
    if (json)
        printf("{\"by\":\"rank\",\"what\":\"load imbalance\",\"scenario\":\"balance\",\"intervals\":%" PRIu64
               ",\"candidates\":%" PRIu64 ",\"computation_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64
               ",\"measured_ns\":%" PRId64 ",\"gain_ns\":%" PRId64 ",\"gain_pct\":%.3f}\n",
               st.intervals, st.shortened, st.above_ns, pred, measured, measured - pred, g);
    else
        printf("load imbalance: if no rank computed longer than the mean between two collectives on MPI_COMM_WORLD "
               "(%" PRIu64 " intervals, %.6f s above the mean): predicted %.6f s, gain %.2f%% (vtrace whatif "
               "-s balance)\n", st.intervals, st.above_ns / 1e9, pred / 1e9, g);
    return 0;
}

static int by_aggregate(const char *dir, const char *threshold, int quiet, int repair, int json, enum vt_agg_by by,
                        const char *shorten, uint32_t top, uint32_t maxc)
{
    static const char *const what[] = {
        "every candidate of one rank",
        "the computation before one call site",
        "the computation before the calls of one function",
        "the candidate calls of one MPI function",
    };
    int rc = VT_EXIT_ERROR;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt_error err;
    vt_agg a = {0};
    vt_model_params p;
    int go = vt__replay_open(dir, threshold, quiet, vt__usage_domino, &t, &pr, &p);
    if (go != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    if (vt__clock_repair(t, repair, &m, &fix, &err) || vt_agg_run(t, &p, by, shorten, maxc, &a, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    vt__progress_end(&pr);
    vt_replay_result counts = {.messages = a.messages, .clock_violations = a.clock_violations};
    vt__clock_warn(&counts, fix);
    if (a.n == 0) {
        fprintf(stderr, "vtrace: %s: no candidate events by %s (none lasts the threshold %" PRId64 " ns)\n", dir,
                vt_agg_by_name(by), p.theta);
        goto out;
    }
    int64_t measured = a.measured;
    size_t shown = a.n < top ? a.n : top;
    if (!json)
        printf("what to fix first in %s, by %s: %s %s%s (measured %.6f s)\n"
               "%4s %-32s %10s %12s %14s %8s   %s\n",
               dir, vt_agg_by_name(by), what[by], strcmp(shorten, "elim") ? "shortened by " : "eliminated",
               strcmp(shorten, "elim") ? shorten + 1 : "", measured / 1e9,
               "#", "what", "candidates", "duration", "predicted (s)", "gain", "scenario (vtrace whatif -s)");
    for (size_t i = 0; i < shown; i++) {
        const vt_agg_row *r = &a.rows[i];
        char label[512];
        row_label(t, by, r, label, sizeof label);
        double g = measured > 0 ? 100.0 * (double)(measured - r->pred) / (double)measured : 0.0;
        if (json) {
            int first = 1;
            fputc('{', stdout);
            vt__json_key(stdout, &first, "rank");
            printf("%zu", i + 1);
            vt__json_key(stdout, &first, "by");
            vt__json_str(stdout, vt_agg_by_name(by));
            vt__json_key(stdout, &first, "what");
            vt__json_str(stdout, label);
            vt__json_key(stdout, &first, "scenario");
            vt__json_str(stdout, r->scenario);
            printf(",\"candidates\":%" PRIu64 ",\"duration_ns\":%" PRId64 ",\"computation_ns\":%" PRId64
                   ",\"predicted_ns\":%" PRId64 ",\"measured_ns\":%" PRId64 ",\"gain_ns\":%" PRId64
                   ",\"gain_pct\":%.3f}\n",
                   r->count, r->dur, r->comp, r->pred, measured, measured - r->pred, g);
        } else {
            printf("%4zu %-32.32s %10" PRIu64 " %10.6f s %14.6f %7.2f%%   %s\n", i + 1, label, r->count, r->dur / 1e9,
                   r->pred / 1e9, g, r->scenario);
        }
    }
    if (!json && a.ngroups > shown)
        printf("(%zu more %s not shown%s: --top N)\n", a.ngroups - shown, a.ngroups - shown > 1 ? "aggregates" : "aggregate",
               a.ngroups > a.n ? "; the longest --max-candidates replayed" : "");
    if (by == VT_AGG_RANK && balance_row(t, m, &p, measured, json, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    rc = VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    vt_agg_free(&a);
    vt_matches_free(m);
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}

int vt__cmd_domino(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL, *byname = "event", *shorten = "elim";
    uint32_t top = 0, maxc = 400;
    int json = 0, rc = VT_EXIT_ERROR, repair = 0;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    const vt__opt opts[] = {
        {"-b", "--by", VT_OPT_STRING, .dest = &byname},
        {NULL, "--shorten", VT_OPT_STRING, .dest = &shorten},
        {"-k", "--top", VT_OPT_POSITIVE, .dest = &top},
        {NULL, "--max-candidates", VT_OPT_POSITIVE, .dest = &maxc},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {NULL, "--clock-repair", VT_OPT_FLAG, .dest = &repair},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_domino, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    int by = strcmp(byname, "event") ? vt_agg_by_parse(byname) : -2;
    if (by == -1)
        return vt__usage_error(vt__usage_domino, "--by takes event, rank, site, function or mpi, not '%s'", byname);
    char ctext[128];
    vt_scenario check;
    snprintf(ctext, sizeof ctext, "all=%s", shorten);
    if (vt_scenario_parse(ctext, &check, ctext, sizeof ctext))
        return vt__usage_error(vt__usage_domino, "--shorten takes elim, -P%% or -N[ns|us|ms|s], not '%s'", shorten);
    vt_scenario_free(&check);
    if (by >= 0)
        return by_aggregate(dir, threshold, quiet, repair, json, (enum vt_agg_by)by, shorten, top ? top : 10, maxc);
    if (!top)
        top = 5;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt_error err;
    const char **csite = NULL;
    uint32_t *crank = NULL;
    uint64_t *cseq = NULL;
    vt_domino d = {0};
    vt_model_params p;
    if ((go = vt__replay_open(dir, threshold, quiet, vt__usage_domino, &t, &pr, &p)) != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    if (vt__clock_repair(t, repair, &m, &fix, &err) ||
        vt_domino_run(t, &p, top, maxc, &d, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    vt_replay_result counts = {.messages = d.messages, .clock_violations = d.clock_violations};
    vt__clock_warn(&counts, fix);
    if (d.n == 0) {
        fprintf(stderr, "vtrace: %s: no candidate events (none lasts the threshold %" PRId64 " ns)\n", dir, p.theta);
        goto out;
    }
    int64_t measured = d.measured;
    /* each step's call site (a burst: the call that ends it) */
    csite = calloc(d.nsteps ? d.nsteps : 1, sizeof *csite);
    crank = calloc(d.nsteps ? d.nsteps : 1, sizeof *crank);
    cseq = calloc(d.nsteps ? d.nsteps : 1, sizeof *cseq);
    if (!csite || !crank || !cseq) {
        fprintf(stderr, "vtrace: out of memory\n");
        goto out;
    }
    for (size_t step = 0; step < d.nsteps; step++)
        crank[step] = d.c[d.order[step]].rank, cseq[step] = d.c[d.order[step]].seq;
    if (vt__event_sites(t, d.nsteps, crank, cseq, csite, &err)) {
        rc = vt__fail(&err);
        goto out;
    }
    if (!json)
        printf("domino path of %s (measured %.6f s, %zu candidates considered)\n"
               "%4s %-14s %-22s %12s %14s %8s   %14s %8s  %s\n",
               dir, measured / 1e9, d.n, "step", "event", "what", "duration", "predicted (s)", "gain",
               "k longest waits", "gain", "call site");
    int64_t prev = measured;
    for (size_t step = 0; step < d.nsteps; step++) {
        const vt_domino_cand *c = &d.c[d.order[step]];
        int64_t pred = d.pred[step];
        int64_t nv = step + 1 <= d.nwaits ? d.naive[step + 1] : d.naive[d.nwaits];
        double g = 100.0 * (double)(measured - pred) / (double)measured;
        double gn = 100.0 * (double)(measured - nv) / (double)measured;
        if (json) {
            printf("{\"step\":%zu,\"event\":\"%u:%" PRIu64 "\",\"what\":", step + 1, c->rank, c->seq);
            vt__json_str(stdout, c->fn);
            fputs(",\"site\":", stdout);
            vt__json_str(stdout, csite[step]);
            printf(",\"duration_ns\":%" PRId64 ",\"predicted_ns\":%" PRId64 ",\"step_gain_ns\":%" PRId64
                   ",\"gain_pct\":%.3f,\"naive_predicted_ns\":%" PRId64 ",\"naive_gain_pct\":%.3f}\n",
                   c->dur, pred, prev - pred, g, nv, gn);
        } else {
            char id[32];
            snprintf(id, sizeof id, "%u:%" PRIu64, c->rank, c->seq);
            printf("%4zu %-14s %-22.22s %10.6f s %14.6f %7.2f%%   %14.6f %7.2f%%  %s\n", step + 1, id, c->fn,
                   c->dur / 1e9, pred / 1e9, g, nv / 1e9, gn, csite[step]);
        }
        prev = pred;
    }
    rc = VT_EXIT_OK;
out:
    free(csite);
    free(crank);
    free(cseq);
    vt__progress_end(&pr);
    vt_domino_free(&d);
    vt_matches_free(m);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
