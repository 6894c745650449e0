/* vtrace reduce: seed 002's postmortem aggregation (Fig. 6) of a full trace, with the
 * run time's own rules (symbolic.h): the same R3 decisions, atom names and records as
 * a run with VTRACE_MODE=reduced would make. Optionally checks, at every event, that
 * the symbolic difference evaluated at each scenario equals the replay's numeric one
 * (model.md §7.4). */
#ifndef VT_REDUCE_H
#define VT_REDUCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "format/reader.h"
#include "analysis/replay.h"
#include "model/symbolic.h"

typedef struct vt_reduce_opts {
    const char *out_dir;        /* where to write the reduced trace; NULL: write nothing */
    enum vt_sym_broken broken;  /* a deliberately broken rule (tests) */
    int check;                  /* model.md §7.4 over the scenarios given */
    int zstd_level;             /* 0: raw blocks */
    int no_store;               /* write the reduced trace even when larger than the full one */
    FILE *polys;                /* when set: "RANK:SEQ POLYNOMIAL" after every event, rank by rank
                                 * (each rank's lines in the order of its events) */
    int polys_on_0;             /* parallel, on the processes but 0: process 0 has polys (its
                                 * lines go there) */
    /* Parallel (vt_replay_par_observe; NULL: serial): each process reduces its block of
     * ranks and writes their files, process 0 vtrace.defs; every process gets the
     * whole statistics. Not with check (its atoms span the ranks): the caller runs it
     * serially. A trace the parallel replay cannot finish is
     * reduced again by process 0 alone (the serial answer or error; the others return
     * its status with an empty err). */
    const vt_par_comm *par;
} vt_reduce_opts;

typedef struct vt_reduce_stats {
    uint64_t events;            /* model events of the full trace */
    uint64_t records_in;        /* full trace records */
    uint64_t records_out;       /* reduced records given to the writer (as readers give them back) */
    uint64_t records_stored;    /* ... stored in the files (doc/format.md: fewer, some fold others) */
    uint64_t messages;          /* messages received (probed ones once) */
    uint64_t messages_kept;     /* ... recorded */
    uint64_t folded;            /* ... merged by R3 */
    uint64_t completions, completions_kept;
    uint64_t overflows;         /* polynomials replaced by an overflow atom */
    uint64_t bytes_in, bytes_out;   /* the full trace's, OUT's */
    uint64_t bytes_reduced;     /* the reduced trace's; when more than bytes_in (or records_stored
                                 * more than the full trace's), OUT holds the full trace instead,
                                 * marked stored (format/stored.h) */
    int stored;
    uint64_t checked;           /* (event, scenario) pairs checked */
    uint64_t check_failures;
    char first_failure[512];
    uint64_t par_rounds, par_bytes;   /* parallel: the replay's rounds and bytes sent (0: serial) */
} vt_reduce_stats;

/* Reduces T (matched as M) with the model parameters P (those written into the reduced
 * trace's configuration). SC/NSC: scenarios for the check (may be 0). Returns 0 (check
 * failures are counted, not errors) or -1 with err. */
int vt_reduce(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              const vt_reduce_opts *o, vt_reduce_stats *st, vt_error *err);

/* The configuration text of a trace with P's model parameters in place of its own. */
char *vt_reduce_config_text(const char *config, const vt_model_params *p);

#endif
