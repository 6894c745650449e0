/* libFuzzer target for the analyses (test/analysis/run-fuzz.sh builds and runs it): the
 * input is a whole trace as for test/reader/fuzz_reader.c (the files concatenated, cut
 * before every "VTRACE\0"); a trace the reader opens then goes through what the
 * commands run on it: the what-if replay (the measured run, every candidate eliminated,
 * a random scenario), the candidates list, the critical path, the domino path and its
 * aggregates (by rank, site, function, MPI function), vtrace
 * reduce without writing, the wait-state patterns and the burst clusters. Each may
 * refuse the trace with a message; none may crash, hang or read out of bounds.
 * Built with -DVT_FUZZ_STANDALONE it runs the files given (a corpus, a crash). */
#include "analysis/aggregate.h"
#include "analysis/clusters.h"
#include "analysis/critpath.h"
#include "analysis/domino.h"
#include "analysis/patterns.h"
#include "analysis/reduce.h"
#include "analysis/symbols.h"
#include "analysis/replay.h"
#include "format/reader.h"
#include "fuzz_input.h"
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname, int64_t callsite)
{
    (void)rank, (void)seq, (void)dur, (void)fname, (void)callsite;
    ++*(uint64_t *)arg;
}

static void analyses(const vt_trace *t)
{
    vt_error err;
    vt_model_params p;
    char msg[512];
    vt_model_defaults(&p);
    if (vt_model_params_parse(&p, vt_trace_config(t), msg, sizeof msg))
        return;
    p.theta = 1; /* every event a candidate: the most work for every analysis */
    uint64_t ncand = 0;
    (void)vt_replay_candidates(t, &p, count, &ncand, &err);

    vt_scenario sc[3];
    size_t nsc = 0;
    static const char *const text[] = {"", "all=elim", "rank:0=-50% fn:MPI_Recv=-1us"};
    for (size_t i = 0; i < 3; i++)
        if (!vt_scenario_parse(text[i], &sc[nsc], msg, sizeof msg))
            nsc++;
    vt_replay_result res;
    if (!vt_replay(t, NULL, &p, sc, nsc, &res, &err))
        vt_replay_result_free(&res);

    vt_critpath *cp = vt_critpath_new(vt_trace_nranks(t), 0);
    if (cp) {
        vt_observer obs;
        vt_critpath_observer(cp, &obs);
        if (!vt_replay_observe(t, NULL, &p, sc, 1, &obs, &res, &err)) {
            (void)vt_critpath_finish(cp, res.start, &err);
            vt_replay_result_free(&res);
        }
        vt_critpath_free(cp);
    }

    vt_domino d = {0};
    if (!vt_domino_run(t, &p, 2, 8, &d, &err))
        vt_domino_free(&d);
    for (int by = VT_AGG_RANK; by <= VT_AGG_MPI; by++) {
        vt_agg a;
        if (!vt_agg_run(t, &p, (enum vt_agg_by)by, by % 2 ? "elim" : "-50%", 8, &a, &err))
            vt_agg_free(&a);
    }

    vt_matches *m = NULL;
    if (!vt_trace_is_reduced(t) && !vt_trace_match(t, VT_MATCH_PARTIAL, &m, &err)) {
        vt_reduce_opts o = {.out_dir = NULL, .check = 1};
        vt_reduce_stats st;
        memset(&st, 0, sizeof st);
        (void)vt_reduce(t, m, &p, sc, nsc, &o, &st, &err);
        vt_matches_free(m);
    }

    vt_patterns *pat = NULL;
    if (!vt_patterns_analyze(t, NULL, 0, &pat, &err))
        vt_patterns_free(pat);

    vt_cl_params cl;
    vt_cl_defaults(&cl);
    vt_cl_result cr;
    memset(&cr, 0, sizeof cr);
    if (!vt_clusters_run(t, &cl, &cr, &err))
        vt_clusters_free(&cr);

    for (size_t i = 0; i < nsc; i++)
        vt_scenario_free(&sc[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_files in;
    fuzz_split(data, size, &in);
    vt_trace *t;
    vt_error err;
    if (vt_trace_open_mem(in.f, in.n, &t, &err))
        return 0;
    analyses(t);
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    return 0;
}

#ifdef VT_FUZZ_STANDALONE
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        static uint8_t buf[1 << 24];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        printf("%s: done\n", argv[i]);
    }
    return 0;
}
#endif
