/* vtrace reduce: seed 002's postmortem aggregation of a full trace into a reduced one,
 * with the run-time reduction's own rules (reduce.h). */
#include "vt_config.h"
#include "tools/tools.h"
#include "tools/progress.h"
#include "model/model.h"
#include "analysis/reduce.h"
#include "format/rrec.h"
#include "util/settings.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_reduce(FILE *out)
{
    fprintf(out,
            "usage: vtrace reduce [OPTIONS] FULL OUT\n"
            "Writes the reduced trace of the full trace FULL into the directory OUT: only the events\n"
            "that can change a what-if prediction, decided as the run-time reduction\n"
            "(VTRACE_MODE=reduced) decides them: every analysis of OUT answers as of FULL. Prints\n"
            "the events and bytes before and after (vtrace-reduce(1)).\n\n"
            "      --threshold DUR    candidate threshold θ (default: the trace's)\n"
            "      --candidates all|bursts  which events θ applies to (default: the trace's)\n"
            "      --m N, --K N       limits of the symbolic difference (1-7 variables, 1-8 terms)\n"
            "      --header-bytes N   room for the difference in a message header (0: no limit;\n"
            "                         default: the trace's VTRACE_MODEL_PBYTES); a longer one is\n"
            "                         replaced by an opaque variable, as the run time does\n"
            "      --no-compress      raw blocks (default: zstd, when vtrace was built with it)\n"
            "      --no-store         write the reduced trace even when it is larger than FULL\n"
            "                         (default: OUT is then FULL's trace, marked stored)\n"
            "      --check            at every event, the symbolic difference evaluated at each\n"
            "                         scenario must equal the replay's (the reduction's own proof)\n"
            "  -s, --scenario TEXT    a scenario for --check (repeatable)\n"
            "  -f, --scenario-file F  scenarios for --check, one a line\n"
            "  -r, --random N         N random scenarios for --check (with --seed S)\n"
            "      --no-write         decide and check, write nothing (OUT not needed)\n"
            "      --polys FILE       write the symbolic difference after every event (RANK:SEQ POLY)\n"
            "      --json             the summary as one JSON object\n"
            "  -q, --quiet        no progress display on a terminal\n");
}

int vt__cmd_reduce(int argc, char **argv)
{
    const char *in = NULL, *outdir = NULL, *threshold = NULL, *cands_opt = NULL, *broken = NULL, *polys_path = NULL;
    FILE *polys = NULL;
    int json = 0, check = 0, nowrite = 0, nocompress = 0, nostore = 0, m_opt = 0, k_opt = 0, room_opt = -1;
    int quiet = 0;
    vt__progress pr = {0};
    uint32_t nrandom = 0, seed = 1;
    vt__scenarios sc = {0};
    char err[1024];
    int rc = VT_EXIT_ERROR;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt__cands cs = {0};
    vt_error verr;
    const vt__opt opts[] = {
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {"-q", "--quiet", VT_OPT_FLAG, .dest = &quiet},
        {NULL, "--check", VT_OPT_FLAG, .dest = &check},
        {NULL, "--no-write", VT_OPT_FLAG, .dest = &nowrite},
        {NULL, "--no-compress", VT_OPT_FLAG, .dest = &nocompress},
        {NULL, "--no-store", VT_OPT_FLAG, .dest = &nostore},
        {NULL, "--threshold", VT_OPT_STRING, .dest = &threshold},
        {NULL, "--candidates", VT_OPT_STRING, .dest = &cands_opt},
        {NULL, "--m", VT_OPT_INT, .dest = &m_opt, .lo = 1, .hi = 7},
        {NULL, "--K", VT_OPT_INT, .dest = &k_opt, .lo = 1, .hi = 8},
        {NULL, "--header-bytes", VT_OPT_INT, .dest = &room_opt, .lo = 0, .hi = 4096},
        {NULL, "--polys", VT_OPT_STRING, .dest = &polys_path},
        /* for the tests that prove the checks can fail (model.md §7.6) */
        {NULL, "--broken-rule", VT_OPT_STRING, .dest = &broken},
        {"-s", "--scenario", VT_OPT_CALL, .dest = &sc, .call = vt__opt_scenario},
        {"-f", "--scenario-file", VT_OPT_CALL, .dest = &sc, .call = vt__opt_scenario_file},
        {"-r", "--random", VT_OPT_COUNT, .dest = &nrandom},
        {NULL, "--seed", VT_OPT_COUNT, .dest = &seed, .what = "a number"},
        {0},
    };
    const vt__args args = {.usage = vt__usage_reduce, .opts = opts, .pos = {&in, &outdir},
                           .extra = "too many arguments"};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    if (!in || (!outdir && !nowrite)) {
        rc = vt__usage_error(vt__usage_reduce, "expected FULL and OUT directories");
        goto out;
    }
    vt_reduce_opts o = {.out_dir = nowrite ? NULL : outdir, .check = check, .zstd_level = nocompress ? 0 : VT_RREC_ZSTD_LEVEL,
                         .no_store = nostore};
    if (broken) {
        if (!strcmp(broken, "nofold"))
            o.broken = VT_SYM_BROKEN_NOFOLD;
        else if (!strcmp(broken, "noR3"))
            o.broken = VT_SYM_BROKEN_NOR3;
        else {
            rc = vt__usage_error(vt__usage_reduce, "--broken-rule takes nofold or noR3, not '%s'", broken);
            goto out;
        }
    }
    /* parallel under vtrace-mpi, except the check (its atoms span the ranks): process 0
     * runs it alone; the polynomial stream goes to process 0, which writes it */
    const vt_par_comm *par = vt__par();
    if (par && check) {
        if (par->me != 0) {
            rc = VT_EXIT_OK;
            goto out;
        }
        fprintf(stderr, "vtrace: reduce --check does not run in parallel: process 0 runs it alone\n");
        par = NULL;
    }
    o.par = par;
    int64_t nofile = 0;
    if (polys_path && (!par || par->me == 0) && !(polys = fopen(polys_path, "w"))) {
        fprintf(stderr, "vtrace: %s: cannot create the polynomial file\n", polys_path);
        nofile = 1;
    }
    if ((par && par->sum(par->arg, &nofile, 1)) || nofile)
        goto out;
    o.polys = polys;
    o.polys_on_0 = polys_path && par && par->me != 0;
    if (vt_trace_open(in, &t, &verr)) {
        rc = vt__fail(&verr);
        goto out;
    }
    vt__note_incomplete(t);
    vt__progress_start(&pr, "replay", vt_trace_nrecords(t), quiet);
    vt__progress_replays(&pr);
    if (!nowrite && !strcmp(in, outdir)) {
        rc = vt__usage_error(vt__usage_reduce, "OUT must differ from FULL");
        goto out;
    }
    if (!nowrite) {
        int64_t bad = (!par || par->me == 0) && vt__make_room(outdir);   /* (one process moves it) */
        if ((par && par->sum(par->arg, &bad, 1)) || bad)
            goto out;
    }
    vt_model_params p;
    if ((go = vt__model_params(t, in, threshold, vt__usage_reduce, &p)) != VT_ARGS_GO) {
        rc = go;
        goto out;
    }
    if (cands_opt) {
        if (strcmp(cands_opt, "all") && strcmp(cands_opt, "bursts")) {
            rc = vt__usage_error(vt__usage_reduce, "--candidates takes all or bursts, not '%s'", cands_opt);
            goto out;
        }
        p.cand_calls = !strcmp(cands_opt, "all");
    }
    if (m_opt)
        p.m = m_opt;
    if (k_opt)
        p.K = k_opt;
    if (room_opt >= 0)
        p.pbytes = room_opt;
    if (nrandom) {
        if (vt_replay_candidates(t, &p, vt__cand_collect, &cs, &verr)) {
            rc = vt__fail(&verr);
            goto out;
        }
        if (vt__scenario_random(&cs, nrandom, seed, &sc, err, sizeof err)) {
            fprintf(stderr, "vtrace: %s\n", err);
            goto out;
        }
    }
    if (check && sc.n == 0 && vt__scenario_add(&sc, "", err, sizeof err))
        goto out;
    vt_imbalance_stats ist;
    if (vt__scenarios_expand(&sc, t, &p, &ist, &verr) < 0) {
        rc = vt__fail(&verr);
        goto out;
    }
    /* m stays NULL: the replay under vt_reduce matches messages as it goes */
    vt_reduce_stats st;
    if (vt_reduce(t, m, &p, sc.v, sc.n, &o, &st, &verr)) {
        rc = par && par->me != 0 ? VT_EXIT_ERROR : vt__fail(&verr);
        goto out;
    }
    if (par && par->me != 0) {   /* process 0 writes the answers */
        rc = VT_EXIT_OK;
        goto out;
    }
    vt__par_stats(par, st.par_rounds, st.par_bytes, st.events);
    if (json) {
        int first = 1;
        fputc('{', stdout);
#define JU(k, v) \
    do { \
        vt__json_key(stdout, &first, k); \
        printf("%" PRIu64, (uint64_t)(v)); \
    } while (0)
        JU("events", st.events);
        JU("records_in", st.records_in);
        JU("records_out", st.records_out);
        JU("records_stored", st.records_stored);
        JU("bytes_in", st.bytes_in);
        JU("bytes_out", st.bytes_out);
        JU("bytes_reduced", st.bytes_reduced);
        JU("stored", st.stored);
        JU("messages", st.messages);
        JU("messages_recorded", st.messages_kept);
        JU("messages_merged", st.folded);
        JU("completions", st.completions);
        JU("completions_recorded", st.completions_kept);
        JU("overflows", st.overflows);
        if (check) {
            JU("checked", st.checked);
            JU("check_failures", st.check_failures);
            vt__json_key(stdout, &first, "first_failure");
            vt__json_str(stdout, st.first_failure);
        }
#undef JU
        fputs("}\n", stdout);
    } else {
        if (nowrite)
            printf("records  %" PRIu64 " calls -> %" PRIu64 " reduced records, of %" PRIu64
                   " model events (bursts and calls)\n", st.records_in, st.records_out, st.events);
        else
            printf("records  %" PRIu64 " calls -> %" PRIu64 " reduced records stored (%.1f%%; %" PRIu64
                   " as read, START, END and bursts unfolded), of %" PRIu64 " model events (bursts and calls)\n",
                   st.records_in, st.records_stored,
                   st.records_in ? 100.0 * (double)st.records_stored / (double)st.records_in : 0.0, st.records_out,
                   st.events);
        if (!nowrite)
            printf("bytes    %" PRIu64 " -> %" PRIu64 " (%.1f%%)", st.bytes_in, st.bytes_out,
                   st.bytes_in ? 100.0 * (double)st.bytes_out / (double)st.bytes_in : 0.0);
        if (!nowrite && st.stored)
            printf(": stored, the reduced trace took %" PRIu64 " bytes: OUT holds the full trace, marked stored\n",
                   st.bytes_reduced);
        else if (!nowrite)
            putchar('\n');
        printf("messages %" PRIu64 " received, %" PRIu64 " merged (they change no prediction), %" PRIu64
               " recorded\n", st.messages, st.folded, st.messages_kept);
        printf("completions %" PRIu64 ", recorded %" PRIu64 "; differences too long to carry (overflows) %" PRIu64 "\n",
               st.completions, st.completions_kept, st.overflows);
        if (check)
            printf("check    %" PRIu64 " (event, scenario) pairs over %zu scenarios: %s%s\n", st.checked, sc.n,
                   st.check_failures ? "FAILED: " : "all equal", st.check_failures ? st.first_failure : "");
    }
    rc = check && st.check_failures ? VT_EXIT_ERROR : VT_EXIT_OK;
out:
    vt__progress_end(&pr);
    if (polys && fclose(polys) && rc == VT_EXIT_OK) {
        fprintf(stderr, "vtrace: %s: cannot write the polynomial file\n", polys_path);
        rc = VT_EXIT_ERROR;
    }
    vt__scenarios_free(&sc);
    free(cs.v);
    vt_matches_free(m);
    vt_trace_close(t);
    return rc;
}
