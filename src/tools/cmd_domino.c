/* vtrace domino: seed 002's domino path. Greedily, the candidate event whose
 * elimination gives the largest predicted gain, then the next given the first, and so
 * on, beside the naive choice of the k longest waits. Every step is one replay pass
 * evaluating all remaining candidates at once. */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/eventsite.h"
#include "tools/progress.h"
#include "format/clockfix.h"
#include "analysis/domino.h"
#include "model/model.h"
#include "analysis/replay.h"
#include "util/settings.h"

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
                 VT__USAGE_DEBUG_DIR
                 "  -q, --quiet          no progress display on a terminal\n"
                 "      --clock-repair        first repair receives that end before their send started\n"
                 "                            (doc/clock-repair.md); without it they are only counted\n");
}

int vt__cmd_domino(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL;
    uint32_t top = 5, maxc = 400;
    int json = 0, rc = VT_EXIT_ERROR, repair = 0;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    const vt__opt opts[] = {
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
