/* What to fix first, by aggregate: the predicted gain of shortening every candidate of
 * one rank, one call site, one function of the program or one MPI function at once, each
 * aggregate one scenario of a single replay pass, ranked by gain. A row's scenario is the
 * one `vtrace whatif -s` takes, and gives the same prediction. Used by `vtrace domino
 * --by` and `vtrace report`. */
#ifndef VT_AGGREGATE_H
#define VT_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "model/model.h"

enum vt_agg_by {
    VT_AGG_RANK,        /* rank:R, every candidate of the rank */
    VT_AGG_SITE,        /* site:NAME, the computation before one call site */
    VT_AGG_FUNCTION,    /* site:SYMBOL, the computation before the calls of one function of
                         * the program (a call site without symbol: that site alone) */
    VT_AGG_MPI,         /* fn:NAME, the candidate calls of one MPI function (MPI_Init left out) */
};

typedef struct vt_agg_row {
    char *selector;     /* "rank:1", "site:NAME", "fn:MPI_Recv" */
    char *scenario;     /* selector=SHORTENING */
    char *label;        /* for people: "rank 1", "main@prog+0x1234", "MPI_Recv" */
    uint64_t count;     /* candidates it covers */
    int64_t dur;        /* their summed duration (ns) */
    int64_t comp;       /* of it, computation bursts (ns) */
    int64_t pred;       /* predicted run time (from the start) with them shortened */
    uint32_t site_rank; /* site and function rows: a call site of it (vt_trace_callsite), */
    int64_t site;       /* -1 for the other rows */
} vt_agg_row;

typedef struct vt_agg {
    vt_agg_row *rows;   /* best first: the shortest predicted run, then the longest duration */
    size_t n, cap;
    size_t ngroups;     /* aggregates found (n: the MAXG with the longest duration replayed) */
    int64_t measured;   /* the measured run (from the start), as the replay reproduces it */
    uint64_t messages, clock_violations;   /* of the replay */
} vt_agg;

/* Parses "rank", "site", "function" or "mpi"; -1 for anything else. */
int vt_agg_by_parse(const char *s);
const char *vt_agg_by_name(enum vt_agg_by by);

/* The aggregates of kind BY, each with SHORTENING ("elim", "-50%", "-2ms"; as in a
 * scenario), over at most MAXG aggregates. 0, or -1 with err. */
int vt_agg_run(const vt_trace *t, const vt_model_params *p, enum vt_agg_by by, const char *shortening, size_t maxg,
               vt_agg *a, vt_error *err);
void vt_agg_free(vt_agg *a);

#endif
