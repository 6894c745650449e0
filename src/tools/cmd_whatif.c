/* vtrace whatif: predicted run time and each rank's predicted end for scenarios that
 * shorten or eliminate candidate events (model.md; seed 002's PerWiz). */
#include "vt_config.h"
#include "tools/tools.h"
#include "tools/progress.h"
#include "model/model.h"
#include "analysis/replay.h"
#include "util/codec.h"
#include "util/settings.h"
#include "format/clockfix.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_whatif(FILE *out)
{
    fprintf(out,
            "usage: vtrace whatif [OPTIONS] DIR\n"
            "Predicts the run time if candidate events (computation or MPI calls lasting at least\n"
            "the trace's threshold) were shorter, by replaying the trace (vtrace-whatif(1)).\n\n"
            "  -s, --scenario TEXT      a scenario (repeatable); none: the measured run (baseline)\n"
            "  -f, --scenario-file F    one scenario per line ('-' for stdin); '#' starts a comment;\n"
            "                           an empty line is the baseline\n"
            "  -r, --random N           N random scenarios over the candidates\n"
            "      --seed S             seed of --random (default 1); the same seed gives the same\n"
            "                           scenarios for every trace of a run\n"
            "  -l, --list-candidates    list the candidate events (RANK:SEQ, duration, function)\n"
            "      --events             print each scenario in full (a long one is cut, random\n"
            "                           ones are one line each without it)\n"
            "      --ranks              every rank's predicted end (without it: min, median, max\n"
            "                           and the slowest ranks when there are more than 8)\n"
            "      --threshold DUR      override the trace's candidate threshold (e.g. 500us)\n"
            "      --json               one JSON object per scenario and line\n"
            VT__USAGE_DEBUG_DIR
            "  -q, --quiet          no progress display on a terminal\n"
            "      --balance            also the load-imbalance scenario (-s balance): no rank computes\n"
            "                           longer than the mean of the ranks between two collectives\n"
            "                           on MPI_COMM_WORLD (candidate bursts above it shortened)\n"
            "      --clock-repair       first repair receives that end before their send started\n"
            "                           (controlled logical clock, vtrace-whatif(1)); without it\n"
            "                           they are only counted, in a warning\n\n"
            "A scenario is a space-separated list of SELECTOR=SHORTENING:\n"
            "  SELECTOR   RANK:SEQ (an event: SEQ counts bursts and calls of the rank from 0),\n"
            "             rank:R (all candidates of rank R), fn:NAME (candidate calls of an MPI\n"
            "             function), site:NAME (candidate computation before a call site:\n"
            "             FILE:LINE, FILE, FUNCTION, symbol or module+0xOFFSET), R/fn:NAME,\n"
            "             R/site:NAME, all\n"
            "  SHORTENING elim (the whole duration), -P%% (a fraction), -N[ns|us|ms|s] (capped at\n"
            "             the duration)\n"
            "e.g.  vtrace whatif -s '0:17=elim' -s 'fn:MPI_Recv=-50%%' -s 'site:halo.c:44=-20%%' trace/\n");
}

/* The scenario's text, cut after a line's worth unless FULL. */
static void print_scenario(const vt_scenario *s, int full)
{
    const size_t cut = 100;
    if (!s->text[0])
        printf("scenario: (measured run)\n");
    else if (full || strlen(s->text) <= cut + 20)
        printf("scenario: %s\n", s->text);
    else
        printf("scenario: %.*s... (%zu items in all; --events prints them)\n", (int)cut, s->text, s->nitems);
}

static const int64_t *sort_ends;

static int by_end(const void *a, const void *b)
{
    int64_t x = sort_ends[*(const uint32_t *)a], y = sort_ends[*(const uint32_t *)b];
    if (x != y)
        return x > y ? -1 : 1;
    return *(const uint32_t *)a > *(const uint32_t *)b ? 1 : -1;
}

/* Each rank's predicted end, or beyond a handful of ranks (unless ALL) a summary: the
 * earliest, the median, the latest and the slowest ranks. */
static void print_ends(const vt_replay_result *res, size_t k, int all)
{
    const int64_t *ends = &res->ends[k * res->nranks];
    uint32_t n = res->nranks;
    uint32_t *ix = n > 8 && !all ? malloc(n * sizeof *ix) : NULL;
    if (!ix) {
        printf("  rank ends (s from start):");
        for (uint32_t r = 0; r < n; r++)
            printf(" %.6f", (ends[r] - res->start) / 1e9);
        printf("\n");
        return;
    }
    for (uint32_t r = 0; r < n; r++)
        ix[r] = r;
    sort_ends = ends;
    qsort(ix, n, sizeof *ix, by_end);
    printf("  rank ends (s from start) of %" PRIu32 " ranks: latest %.6f (rank %" PRIu32 "), median %.6f, earliest"
           " %.6f (rank %" PRIu32 ")\n  slowest:",
           n, (ends[ix[0]] - res->start) / 1e9, ix[0], (ends[ix[n / 2]] - res->start) / 1e9,
           (ends[ix[n - 1]] - res->start) / 1e9, ix[n - 1]);
    for (uint32_t i = 0; i < 5; i++)
        printf(" rank %" PRIu32 " %.6f%s", ix[i], (ends[ix[i]] - res->start) / 1e9, i < 4 ? "," : "");
    printf(" (--ranks prints all)\n");
    free(ix);
}

int vt__cmd_whatif(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL;
    int json = 0, list = 0, repair = 0, events = 0, allranks = 0, balance = 0;
    vt_imbalance_stats ist;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    uint32_t nrandom = 0, seed = 1;
    vt__scenarios sc = {0};
    vt__strlist files = {0}; /* read once the arguments are all valid */
    char err[1024];
    int rc = VT_EXIT_ERROR;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt__cands cs = {0};
    vt_error verr;
    const vt__opt opts[] = {
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {NULL, "--clock-repair", VT_OPT_FLAG, .dest = &repair},
        {"-l", "--list-candidates", VT_OPT_FLAG, .dest = &list},
        {NULL, "--events", VT_OPT_FLAG, .dest = &events},
        {NULL, "--ranks", VT_OPT_FLAG, .dest = &allranks},
        {NULL, "--balance", VT_OPT_FLAG, .dest = &balance},
        {"-s", "--scenario", VT_OPT_CALL, .dest = &sc, .call = vt__opt_scenario},
        {"-f", "--scenario-file", VT_OPT_LIST, .dest = &files},
        {"-r", "--random", VT_OPT_COUNT, .dest = &nrandom},
        {NULL, "--seed", VT_OPT_COUNT, .dest = &seed, .what = "a number"},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_whatif, .opts = opts, .pos = {&dir},
                           .missing = "missing trace directory"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    for (size_t i = 0; i < files.n; i++) {
        if (vt__scenario_read_file(files.v[i], &sc, err, sizeof err)) {
            fprintf(stderr, "vtrace: %s\n", err);
            goto out;
        }
    }
    vt_model_params p;
    if ((go = vt__replay_open(dir, threshold, quiet, vt__usage_whatif, &t, &pr, &p)) != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    if (list || nrandom) {
        if (vt_replay_candidates(t, &p, vt__cand_collect, &cs, &verr)) {
            rc = vt__fail(&verr);
            goto out;
        }
    }
    if (list) {
        for (size_t i = 0; i < cs.n; i++)
            printf("%u:%" PRIu64 " %" PRId64 " ns %s\n", cs.v[i].rank, cs.v[i].seq, cs.v[i].dur, cs.v[i].fn);
        rc = VT_EXIT_OK;
        goto out;
    }
    if (balance && vt__scenario_add(&sc, VT__BALANCE, err, sizeof err)) {
        fprintf(stderr, "vtrace: %s\n", err);
        goto out;
    }
    int expanded = vt__scenarios_expand(&sc, t, &p, &ist, &verr);
    if (expanded < 0) {
        rc = vt__fail(&verr);
        goto out;
    }
    if (expanded && !json && (!vt__par() || vt__par()->me == 0))
        printf("balance: %" PRIu64 " intervals between collectives on MPI_COMM_WORLD; %" PRIu64
               " candidate bursts of ranks above the mean shortened, %.6f s of %.6f s of candidate computation "
               "(summed over ranks)\n",
               ist.intervals, ist.shortened, ist.above_ns / 1e9, ist.candidate_ns / 1e9);
    size_t first_random = nrandom ? sc.n : SIZE_MAX;
    if (nrandom && vt__scenario_random(&cs, nrandom, seed, &sc, err, sizeof err)) {
        fprintf(stderr, "vtrace: %s\n", err);
        goto out;
    }
    if (sc.n == 0 && vt__scenario_add(&sc, "", err, sizeof err))
        goto out;
    if (vt__clock_repair(t, repair, &m, &fix, &verr)) {
        rc = vt__fail(&verr);
        goto out;
    }
    vt_replay_result res;
    const vt_par_comm *par = vt__par();
    if (par ? vt_replay_par(t, &p, sc.v, sc.n, par, &res, &verr) : vt_replay(t, NULL, &p, sc.v, sc.n, &res, &verr)) {
        rc = par && par->me != 0 ? VT_EXIT_ERROR : vt__fail(&verr);
        goto out;
    }
    if (par && par->me != 0) {   /* process 0 writes the answers */
        vt_replay_result_free(&res);
        rc = VT_EXIT_OK;
        goto out;
    }
    vt__clock_warn(&res, fix);
    vt__par_stats(par, res.par_rounds, res.par_bytes, res.events);
    /* a selector that shortened nothing is most likely misspelt: say so (once each) */
    for (size_t k = 0; k < first_random && k < sc.n; k++)
        for (size_t i = 0; i < sc.v[k].nitems; i++) {
            const vt_shorten *it = &sc.v[k].items[i];
            if (it->sel != VT_SEL_EVENT && it->hits == 0)
                fprintf(stderr, "vtrace: note: scenario '%s': %s%s%s matches no candidate event%s\n", sc.v[k].text,
                        it->sel == VT_SEL_SITE ? "site:" : it->sel == VT_SEL_FUNC ? "fn:" : "",
                        it->name ? it->name : it->sel == VT_SEL_ALL ? "all" : "rank:",
                        it->sel == VT_SEL_RANK ? "(that rank)" : "",
                        it->sel == VT_SEL_SITE ? " (sites are named as vtrace dump prints them: FUNCTION, FILE, "
                                                 "FILE:LINE, symbol or module+0xOFFSET)" : "");
        }
    int64_t measured = 0;
    for (uint32_t r = 0; r < res.nranks; r++)
        if (r == 0 || res.measured[r] > measured)
            measured = res.measured[r];
    for (size_t k = 0; k < sc.n; k++) {
        int64_t pred = res.total[k] - res.start, meas = measured - res.start;
        if (json) {
            int first = 1;
            fputc('{', stdout);
            vt__json_key(stdout, &first, "scenario");
            vt__json_str(stdout, sc.v[k].text);
            vt__json_key(stdout, &first, "predicted_ns");
            printf("%" PRId64, pred);
            vt__json_key(stdout, &first, "measured_ns");
            printf("%" PRId64, meas);
            vt__json_key(stdout, &first, "gain_ns");
            printf("%" PRId64, meas - pred);
            vt__json_key(stdout, &first, "start_ns");
            printf("%" PRId64, res.start);
            vt__json_key(stdout, &first, "predicted_end_ns");
            printf("%" PRId64, res.total[k]);
            vt__json_key(stdout, &first, "rank_end_ns");
            fputc('[', stdout);
            for (uint32_t r = 0; r < res.nranks; r++)
                printf("%s%" PRId64, r ? "," : "", res.ends[k * res.nranks + r]);
            fputs("]}\n", stdout);
        } else if (k >= first_random && !events) {
            if (k == first_random)
                printf("%zu random scenarios (seed %" PRIu32 "; --events prints each, --json each rank's end)\n"
                       "%8s %10s %14s %14s %8s\n", sc.n - first_random, seed, "scenario", "events", "predicted (s)",
                       "gain (s)", "gain");
            printf("%8zu %10zu %14.6f %14.6f %7.2f%%\n", k - first_random + 1, sc.v[k].nitems, pred / 1e9,
                   (meas - pred) / 1e9, meas > 0 ? 100.0 * (double)(meas - pred) / (double)meas : 0.0);
        } else {
            print_scenario(&sc.v[k], events);
            printf("  predicted %.6f s, measured %.6f s, gain %.6f s (%.2f%%)\n", pred / 1e9, meas / 1e9,
                   (meas - pred) / 1e9, meas > 0 ? 100.0 * (double)(meas - pred) / (double)meas : 0.0);
            print_ends(&res, k, allranks);
        }
    }
    vt_replay_result_free(&res);
    rc = VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    vt__scenarios_free(&sc);
    free(files.v);
    free(cs.v);
    vt_matches_free(m);
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
