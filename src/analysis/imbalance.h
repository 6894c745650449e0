/* Load imbalance as a what-if scenario (issue 16): what the run would take if no rank's
 * computation between two collectives on MPI_COMM_WORLD took longer than the mean of
 * the ranks' in that interval. Ranks above the mean have each candidate burst of the
 * interval shortened by the same fraction, so that their candidate computation there
 * equals the mean; ranks below it are left as they are (the model shortens events, it
 * does not lengthen them; with the collective as the meeting point the ranks below the
 * mean would only wait less). Candidate bursts (at least the threshold θ) are what a
 * scenario can shorten: shorter bursts count for no rank. One replay collects them. */
#ifndef VT_IMBALANCE_H
#define VT_IMBALANCE_H

#include "analysis/replay.h"

typedef struct vt_imbalance_stats {
    uint64_t intervals;      /* between collectives on MPI_COMM_WORLD (and the run's ends) */
    uint64_t shortened;      /* candidate bursts the scenario shortens */
    int64_t above_ns;        /* the computation above the mean, summed over ranks and intervals */
    int64_t candidate_ns;    /* all candidate computation, summed over ranks */
} vt_imbalance_stats;

/* Builds the scenario into *SC (its text TEXT; free with vt_scenario_free). 0, or -1
 * with the reason in ERR. */
int vt_imbalance_scenario(const vt_trace *t, const vt_model_params *p, const char *text, vt_scenario *sc,
                          vt_imbalance_stats *st, vt_error *err);

#endif
