/* vtrace whatif: predicted run time and each rank's predicted end for scenarios that
 * shorten or eliminate candidate events (model.md; seed 002's PerWiz). */
#include "vt_config.h"
#include "tools/tools.h"
#include "tools/progress.h"
#include "model/model.h"
#include "analysis/replay.h"
#include "util/settings.h"
#include "format/clockfix.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_whatif(FILE *out)
{
    fprintf(out,
            "usage: vtrace whatif [OPTIONS] DIR\n"
            "Predicts the run time if candidate events were shorter (model.md).\n\n"
            "  -s, --scenario TEXT      a scenario (repeatable); none: the measured run (baseline)\n"
            "  -f, --scenario-file F    one scenario per line ('-' for stdin); '#' starts a comment;\n"
            "                           an empty line is the baseline\n"
            "  -r, --random N           N random scenarios over the candidates\n"
            "      --seed S             seed of --random (default 1); the same seed gives the same\n"
            "                           scenarios for every trace of a run\n"
            "  -l, --list-candidates    list the candidate events (RANK:SEQ, duration, function)\n"
            "      --threshold DUR      override the trace's candidate threshold (e.g. 500us)\n"
            "      --json               one JSON object per scenario and line\n"
            "  -q, --quiet          no progress display on a terminal\n"
            "      --clock-repair       first repair receives that end before their send started\n"
            "                           (controlled logical clock, doc/clock-repair.md); without it\n"
            "                           they are only counted, in a warning\n\n"
            "A scenario is a space-separated list of SELECTOR=SHORTENING:\n"
            "  SELECTOR   RANK:SEQ (an event: SEQ counts bursts and calls of the rank from 0),\n"
            "             rank:R (all candidates of rank R), fn:NAME (candidate calls of an MPI\n"
            "             function), site:NAME (candidate computation before a call site, by\n"
            "             symbol or module+0xOFFSET), R/fn:NAME, R/site:NAME, all\n"
            "  SHORTENING elim (the whole duration), -P%% (a fraction), -N[ns|us|ms|s] (capped at\n"
            "             the duration)\n"
            "e.g.  vtrace whatif -s '0:17=elim' -s 'fn:MPI_Recv=-50%%' -s 'rank:1=-20%%' trace/\n");
}

int vt__cmd_whatif(int argc, char **argv)
{
    const char *dir = NULL, *threshold = NULL;
    int json = 0, list = 0, repair = 0;
    int quiet = 0;
    vt__progress pr = {0};
    struct vt_clockfix *fix = NULL;
    uint32_t nrandom = 0, seed = 1;
    vt_scenario *sc = NULL;
    size_t nsc = 0;
    char err[1024];
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t nfiles = 0;
    int rc = VT_EXIT_ERROR;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt__cands cs = {0};
    vt_error verr;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            vt__usage_whatif(stdout);
            rc = VT_EXIT_OK;
            goto out;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (!strcmp(a, "--clock-repair")) {
            repair = 1;
        } else if (!strcmp(a, "-l") || !strcmp(a, "--list-candidates")) {
            list = 1;
        } else if ((!strcmp(a, "-s") || !strcmp(a, "--scenario")) && i + 1 < argc) {
            if (vt__scenario_add(&sc, &nsc, argv[++i], err, sizeof err)) {
                rc = vt__usage_error(vt__usage_whatif, "scenario %s", err);
                goto out;
            }
        } else if ((!strcmp(a, "-f") || !strcmp(a, "--scenario-file")) && i + 1 < argc) {
            files[nfiles++] = argv[++i];
        } else if ((!strcmp(a, "-r") || !strcmp(a, "--random")) && i + 1 < argc) {
            if (vt__parse_u32(argv[++i], &nrandom)) {
                rc = vt__usage_error(vt__usage_whatif, "--random takes a count, not '%s'", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            if (vt__parse_u32(argv[++i], &seed)) {
                rc = vt__usage_error(vt__usage_whatif, "--seed takes a number, not '%s'", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--threshold") && i + 1 < argc) {
            threshold = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            rc = vt__usage_error(vt__usage_whatif, "unknown option '%s'", a);
            goto out;
        } else if (!dir) {
            dir = a;
        } else {
            rc = vt__usage_error(vt__usage_whatif, "one trace directory only ('%s')", a);
            goto out;
        }
    }
    if (!dir) {
        rc = vt__usage_error(vt__usage_whatif, "missing trace directory");
        goto out;
    }
    for (size_t i = 0; i < nfiles; i++) {
        if (vt__scenario_read_file(files[i], &sc, &nsc, err, sizeof err)) {
            fprintf(stderr, "vtrace: %s\n", err);
            goto out;
        }
    }
    if (vt_trace_open(dir, &t, &verr)) {
        rc = vt__fail(&verr);
        goto out;
    }
    vt__progress_start(&pr, "replay", vt_trace_nrecords(t), quiet);
    vt__progress_replays(&pr);
    vt_model_params p;
    vt_model_defaults(&p);
    if (vt_model_params_parse(&p, vt_trace_config(t), err, sizeof err)) {
        fprintf(stderr, "vtrace: %s: %s\n", dir, err);
        goto out;
    }
    if (threshold && vt_parse_duration(threshold, &p.theta)) {
        rc = vt__usage_error(vt__usage_whatif, "--threshold takes a duration such as 500us, not '%s'", threshold);
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
    if (nrandom && vt__scenario_random(&cs, nrandom, seed, &sc, &nsc, err, sizeof err)) {
        fprintf(stderr, "vtrace: %s\n", err);
        goto out;
    }
    if (nsc == 0 && vt__scenario_add(&sc, &nsc, "", err, sizeof err))
        goto out;
    /* the replay matches messages as it goes; the clock repair needs the whole matching */
    if ((repair && vt_trace_match(t, 0, &m, &verr)) || vt__clock_repair(t, m, repair, &fix, &verr)) {
        rc = vt__fail(&verr);
        goto out;
    }
    vt_replay_result res;
    if (vt_replay(t, NULL, &p, sc, nsc, &res, &verr)) {
        rc = vt__fail(&verr);
        goto out;
    }
    vt__clock_warn(&res, fix);
    int64_t measured = 0;
    for (uint32_t r = 0; r < res.nranks; r++)
        if (r == 0 || res.measured[r] > measured)
            measured = res.measured[r];
    for (size_t k = 0; k < nsc; k++) {
        int64_t pred = res.total[k] - res.start, meas = measured - res.start;
        if (json) {
            int first = 1;
            fputc('{', stdout);
            vt__json_key(stdout, &first, "scenario");
            vt__json_str(stdout, sc[k].text);
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
        } else {
            printf("scenario: %s\n", sc[k].text[0] ? sc[k].text : "(measured run)");
            printf("  predicted %.6f s, measured %.6f s, gain %.6f s (%.2f%%)\n", pred / 1e9, meas / 1e9,
                   (meas - pred) / 1e9, meas > 0 ? 100.0 * (double)(meas - pred) / (double)meas : 0.0);
            printf("  rank ends (s from start):");
            for (uint32_t r = 0; r < res.nranks; r++)
                printf(" %.6f", (res.ends[k * res.nranks + r] - res.start) / 1e9);
            printf("\n");
        }
    }
    vt_replay_result_free(&res);
    rc = VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    for (size_t i = 0; i < nsc; i++)
        vt_scenario_free(&sc[i]);
    free(sc);
    free(files);
    free(cs.v);
    vt_matches_free(m);
    vt_trace_close(t);
    vt_clockfix_free(fix);
    return rc;
}
