/* Overhead compensation of a full trace (seed 001: Wolf, Malony, Shende, Morris,
 * "Trace-based parallel performance overhead compensation"): writes a trace in which
 * every rank's timestamps no longer hold the layer's per-event overhead (measured at
 * MPI_Init, format 1.2, or given) nor its buffer flushes, without breaking
 * happened-before: a receive never ends before its send started (plus a minimal
 * latency), no n-to-n collective member leaves before the last member entered, no
 * non-root of a 1-to-n collective leaves before the root entered. compensate.c explains
 * the rules and which bound of the paper's m.2 case is used. */
#ifndef VT_COMPENSATE_H
#define VT_COMPENSATE_H

#include "format/reader.h"

#include <stdint.h>

typedef struct vt_comp_opts {
    int64_t overhead_ps; /* per recorded call; < 0: each rank's measured value (RANKDEFS) */
    int64_t latency_ns;  /* minimal message latency; < 0: the trace's VTRACE_MODEL_L, else 0 */
    int zstd_level;      /* 0: raw blocks */
    int m2_upper;        /* case m.2: the paper's upper bound instead of the lower one */
} vt_comp_opts;

typedef struct vt_comp_rank {
    uint64_t overhead_ps;      /* per call, as used */
    uint64_t calls, flushes;
    int64_t removed_ps;        /* overhead and flush time subtracted (before dependences) */
    int64_t measured_ns;       /* first enter to last exit, measured */
    int64_t compensated_ns;    /* the same in the written trace */
} vt_comp_rank;

typedef struct vt_comp_stats {
    uint32_t nranks;
    vt_comp_rank *ranks;       /* malloc'ed; vt_comp_stats_free */
    uint64_t m1, m2;           /* messages (and 1-to-n pairs) in the paper's cases */
    uint64_t m2_upper_wider;   /* m.2 cases whose upper bound lay after the lower bound */
    uint64_t delayed;          /* receives / collective exits moved later by a dependence */
    uint64_t collectives;      /* collective instances handled */
    int64_t latency_ns;        /* the minimal latency used */
    /* An incomplete trace is compensated up to where every rank left waits for what the
     * trace does not hold (as the replay stops at its cut): cut_ranks ranks stopped there,
     * cut_records of their records are left out of the output, which is incomplete too. */
    uint32_t cut_ranks;
    uint64_t cut_records;
} vt_comp_stats;

/* Compensates the full trace T into the directory OUT (created). M NULL: streamed, with
 * memory for what is in flight (compensate_stream.c; a trace that ended well); else T
 * matched as M is held in memory, about 60 bytes a record (an incomplete trace). Returns
 * 0, or -1 with ERR (a reduced trace, an inconsistent trace, or an I/O error). */
int vt_compensate(const vt_trace *t, const vt_matches *m, const char *out, const vt_comp_opts *o,
                  vt_comp_stats *st, vt_error *err);
void vt_comp_stats_free(vt_comp_stats *st);

#endif
