/* vtrace compensate: a full trace with the layer's per-event overhead removed (Wolf et al.;
 * the rules are in src/analysis/compensate.c). */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/compensate.h"
#include "util/codec.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_compensate(FILE *out)
{
    fprintf(out,
            "usage: vtrace compensate [OPTIONS] DIR OUT\n"
            "Writes into the directory OUT the full trace DIR with the layer's overhead removed\n"
            "(after Wolf et al., vtrace-compensate(1)): every call's timestamps move earlier by the overhead accumulated before\n"
            "it (per recorded call: the value measured at MPI_Init, shown by 'vtrace info') and\n"
            "by the buffer flushes before it; a receive never ends before its send started plus\n"
            "the minimal latency, collective members never leave before the last entry (the\n"
            "root's, for Bcast/Scatter). Prints the dilation removed on each rank.\n\n"
            "      --overhead NS   per-event overhead in ns (decimals allowed), instead of the\n"
            "                      measured one\n"
            "      --latency NS    minimal message latency (default: the trace's VTRACE_MODEL_L)\n"
            "      --m2 lower|upper  which bound a message received after its send ended takes\n"
            "                      (default lower: see vtrace-compensate(1))\n"
            "Reduced traces are refused.\n");
}

/* --m2 lower|upper */
static int m2_bound(void *dest, const char *val, char *msg, size_t len)
{
    if (strcmp(val, "lower") && strcmp(val, "upper"))
        return -1;
    *(int *)dest = !strcmp(val, "upper");
    return 0;
}

int vt__cmd_compensate(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    vt_comp_opts o = {.overhead_ps = -1, .latency_ns = -1, .zstd_level = 0};
    double overhead = -1, latency = -1; /* ns */
    const vt__opt opts[] = {
        {NULL, "--overhead", VT_OPT_NUMBER, .dest = &overhead, .what = "a duration in ns from 0 to 1000000",
         .hi = 1e6, .flags = VT_OPT_MISSING_EMPTY},
        {NULL, "--latency", VT_OPT_NUMBER, .dest = &latency, .what = "a duration in ns from 0 to 1000000000",
         .hi = 1e9, .flags = VT_OPT_MISSING_EMPTY},
        {NULL, "--m2", VT_OPT_CALL, .dest = &o.m2_upper, .what = "lower or upper", .call = m2_bound},
        {0},
    };
    const vt__args args = {.usage = vt__usage_compensate, .opts = opts, .pos = {&in, &out},
                           .missing = "missing trace directory",
                           .extra = "one trace directory and one output directory only", .extra_plain = 1};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (!out)
        return vt__usage_error(vt__usage_compensate, "missing output directory OUT");
    if (overhead >= 0)
        o.overhead_ps = (int64_t)llround(overhead * 1000.0);
    if (latency >= 0)
        o.latency_ns = (int64_t)llround(latency);
    vt_error err;
    vt_trace *t = NULL;
    vt_matches *m = NULL;
    vt_comp_stats st = {0};
    int rc = VT_EXIT_ERROR;
    if (vt_trace_open(in, &t, &err)) {
        rc = vt__fail(&err);
        goto done;
    }
    vt__note_incomplete(t);
    if (vt_trace_is_reduced(t)) {
        fprintf(stderr, "vtrace: compensate: %s is a reduced trace: it keeps only the events that can change a "
                        "prediction, so the overhead of the calls between them cannot be placed; compensate the "
                        "full trace\n", in);
        goto done;
    }
    if (vt__make_room(out))
        goto done;
    /* a trace that ended well streams; an incomplete one is matched as a whole (the
     * replay stops where it is cut); VTRACE_TEST_COMPENSATE_IN_MEMORY for tests comparing both */
    int whole = (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE) || getenv("VTRACE_TEST_COMPENSATE_IN_MEMORY");
    if (whole && vt_trace_match(t, vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE ? VT_MATCH_PARTIAL : 0, &m, &err)) {
        rc = vt__fail(&err);
        goto done;
    }
    if (vt_compensate(t, m, out, &o, &st, &err)) {
        rc = vt__fail(&err);
        goto done;
    }
    printf("compensated %s into %s (minimal latency %" PRId64 " ns)\n", in, out, st.latency_ns);
    printf("%6s %14s %8s %16s %16s %16s %8s\n", "rank", "overhead/event", "flushes", "removed_ns", "measured_ns",
           "compensated_ns", "dilation");
    for (uint32_t r = 0; r < st.nranks; r++) {
        const vt_comp_rank *k = &st.ranks[r];
        printf("%6" PRIu32 " %11.3f ns %8" PRIu64 " %16.3f %16" PRId64 " %16" PRId64 " %7.3f%%\n", r,
               (double)k->overhead_ps / 1000.0, k->flushes, (double)k->removed_ps / 1000.0, k->measured_ns,
               k->compensated_ns,
               k->compensated_ns > 0 ? 100.0 * (double)(k->measured_ns - k->compensated_ns) / (double)k->compensated_ns
                                     : 0.0);
    }
    printf("messages: %" PRIu64 " the receiver waited for, %" PRIu64 " there before the receive (lower bound used; %"
           PRIu64 " had a later upper bound); %" PRIu64 " collectives; %" PRIu64 " exits moved later by a dependence\n",
           st.m1, st.m2, st.m2_upper_wider, st.collectives, st.delayed);
    if (st.cut_ranks)
        printf("incomplete: %" PRIu32 " ranks stopped where they wait for what the trace does not hold; their %" PRIu64
               " later records are not in %s, which is incomplete too\n", st.cut_ranks, st.cut_records, out);
    rc = VT_EXIT_OK;
done:
    vt_comp_stats_free(&st);
    vt_matches_free(m);
    vt_trace_close(t);
    return rc;
}
