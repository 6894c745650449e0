/* What the analysis commands do before a replay: the trace opened with a progress
 * display, the model's parameters (the trace's configuration, --threshold), and the
 * clock-condition check and repair
 * (doc/clock-repair.md): the replay counts receives that end before their send started
 * (for free, it sees both times); --clock-repair computes and installs the repair before
 * the replay. */
#include "vt_config.h"
#include "tools/tools.h"
#include "tools/progress.h"
#include "format/clockfix.h"
#include "model/model.h"
#include "util/codec.h"
#include "util/settings.h"

#include <inttypes.h>
#include <string.h>

int vt__model_params(const vt_trace *t, const char *dir, const char *threshold, void (*usage)(FILE *),
                     vt_model_params *p)
{
    vt_error err;
    (void)dir;
    if (vt_replay_params(t, p, &err))
        return vt__fail(&err);
    if (threshold && vt_parse_duration(threshold, &p->theta))
        return vt__usage_error(usage, "--threshold takes a duration such as 500us, not '%s'", threshold);
    return VT_ARGS_GO;
}

int vt__replay_open(const char *dir, const char *threshold, int quiet, void (*usage)(FILE *), vt_trace **t,
                    vt__progress *pr, vt_model_params *p)
{
    vt_error err;
    if (vt_trace_open(dir, t, &err))
        return vt__fail(&err);
    vt__note_incomplete(*t);
    vt__progress_start(pr, "replay", vt_trace_nrecords(*t), quiet);
    vt__progress_replays(pr);
    return vt__model_params(*t, dir, threshold, usage, p);
}

int vt__clock_repair(vt_trace *t, int enabled, vt_matches **m, vt_clockfix **fix, vt_error *err)
{
    *fix = NULL;
    /* the replay matches messages as it goes; the repair needs the whole matching */
    if (enabled && vt_trace_match(t, vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE ? VT_MATCH_PARTIAL : 0, m, err))
        return -1;
    /* a reduced trace lacks the merged messages, and its run-time decisions were made
     * with the raw times: it is replayed as it is */
    if (!enabled || vt_trace_is_reduced(t))
        return 0;
    vt_clockfix_stats st;
    if (vt_clockfix_compute(t, *m, 0, fix, &st, err))
        return -1;
    if (!st.violations) {
        vt_clockfix_free(*fix);
        *fix = NULL;
        return 0;
    }
    fprintf(stderr,
            "vtrace: %" PRIu64 " of %" PRIu64 " receives ended before their send started (clock condition, by up "
            "to %" PRId64 " ns): repaired %" PRIu64 " receives with a controlled logical clock, %" PRIu64
            " ranks shifted, by up to %" PRId64 " ns (rank %" PRIu32 ")\n",
            st.violations, st.messages, st.max_violation_ns, st.repaired, st.repaired_ranks, st.max_shift_ns,
            st.max_shift_rank);
    vt_trace_set_clockfix(t, *fix);
    return 0;
}

void vt__note_incomplete(const vt_trace *t)
{
    if (!(vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE))
        return;
    uint32_t n = 0, first = 0;
    for (uint32_t r = vt_trace_nranks(t); r-- > 0;)
        if (vt_rank_status(t, r, NULL, 0)) {
            n++;
            first = r;
        }
    char why[600] = "the run wrote no end";
    if (n) {
        int k = snprintf(why, sizeof why, "rank %u: ", first);
        vt_rank_status(t, first, why + k, sizeof why - (size_t)k);
        if (n > 1)
            snprintf(why + strlen(why), sizeof why - strlen(why), "; %u more ranks", n - 1);
    }
    fprintf(stderr, "vtrace: note: %s is incomplete (%s): the answers cover its readable part only; `vtrace info` "
                    "says how each rank ended\n", vt_trace_dir(t), why);
}

void vt__clock_warn(const vt_replay_result *res, const vt_clockfix *fix)
{
    if (res->cut_ranks)
        fprintf(stderr,
                "vtrace: note: the replay stopped where %u of the ranks wait for what the incomplete trace does not "
                "hold: the predictions cover the run up to there (%" PRIu64 " of their records come later)\n",
                res->cut_ranks, res->cut_records);
    if (fix || !res->clock_violations)
        return;
    fprintf(stderr,
            "vtrace: warning: %" PRIu64 " of %" PRIu64 " receives end before their send started (clock condition); "
            "predicting from the raw times, as a reduced trace of the run would; --clock-repair repairs them first\n",
            res->clock_violations, res->messages);
}
