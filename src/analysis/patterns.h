/* Wait-state patterns (Wolf & Mohr, EARL/EXPERT; doc/man/vtrace-patterns.1): the time
 * ranks lose in MPI calls waiting for each other, with global times (vt_global_time).
 *
 * vt_patterns_analyze() reads a trace (full or reduced) and returns severities summed by
 * (pattern, rank, call site), sorted by decreasing severity. A full trace is streamed
 * (patterns_stream.c: memory for the messages and collectives in flight, 32 bytes a
 * receiving call in a temporary file), except with a plug-in that sees events or an
 * incomplete trace: then one small entry per record is kept in memory (about 64 bytes).
 * Plug-ins (vtrace_pattern.h) see every call record of a full trace and add their
 * findings. VTRACE_TEST_PATTERNS_IN_MEMORY set in the environment forces the in-memory way
 * (tests compare the two). */
#ifndef VT_PATTERNS_H
#define VT_PATTERNS_H

#include "format/reader.h"
#include "analysis/vtrace_pattern.h"
#include "analysis/replay.h"

#include <stddef.h>
#include <stdint.h>

/* Built-in patterns. The Wrong Order instances are also counted in Late Sender (a
 * subset of it, as in EXPERT); every other pattern is disjoint from the others. */
enum vt_pattern_id {
    VT_PAT_LATE_SENDER,
    VT_PAT_WRONG_ORDER,
    VT_PAT_LATE_RECEIVER,
    VT_PAT_WAIT_BARRIER,
    VT_PAT_WAIT_NXN,
    VT_PAT_EARLY_REDUCE,
    VT_PAT_LATE_BCAST,
    VT_PAT_P2P_COMM,   /* time in point-to-point calls minus their wait states */
    VT_PAT_COLL_COMM,  /* time in collectives (not barriers) minus their wait states */
    VT_PAT_SYNC,       /* time in barriers minus Wait at Barrier */
    VT_PAT_NBUILTIN
};

/* How exact a figure is. */
enum vt_pattern_bound {
    VT_BOUND_EXACT = 0,
    VT_BOUND_LOWER = 1, /* at least this much (a reduced trace hides merged messages) */
    VT_BOUND_UPPER = 2, /* at most this much (costs of a reduced trace) */
};

/* The name of a built-in pattern ("Late Sender", ...); its parent ("Late Sender" for
 * Wrong Order) or NULL. */
const char *vt_pattern_name(enum vt_pattern_id id);
const char *vt_pattern_parent(enum vt_pattern_id id);
/* 1: a wait state (the pattern's time is lost waiting); 0: a cost. */
int vt_pattern_is_wait(enum vt_pattern_id id);

typedef struct vt_pattern_result_entry {
    int pattern;            /* enum vt_pattern_id, or VT_PAT_NBUILTIN + k for plug-in names */
    uint32_t rank;
    int64_t callsite;       /* call-site index of the rank, -1 unknown */
    int64_t severity_ns;
    uint64_t count;
} vt_pattern_result_entry;

typedef struct vt_patterns {
    int reduced;                     /* the trace is a reduced one */
    uint32_t nranks;
    int64_t total_ns;                /* sum over ranks of their duration (fini - init) */
    size_t nentries;
    vt_pattern_result_entry *entries; /* sorted: severity desc, then pattern, rank, site */
    size_t nnames;                    /* every pattern name: built-ins, then plug-ins' */
    char **names;
    int *bounds;                      /* per name: enum vt_pattern_bound */
    int64_t *totals_ns;               /* per name: the sum of its entries */
    uint64_t *counts;
    int64_t *rank_wait_ns;            /* per rank: the sum of its wait states */
    uint64_t par_stats[3];            /* parallel: the replay's rounds, bytes sent, events (0: serial) */
} vt_patterns;

/* Analyses T. PLUGINS (may be NULL when N is 0) are called as vtrace_pattern.h says.
 * Returns 0 and *out (free with vt_patterns_free), or -1 and err. */
int vt_patterns_analyze(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins, vt_patterns **out,
                        vt_error *err);
void vt_patterns_free(vt_patterns *p);

/* Whether the analysis of T streams (a full, complete trace and no plug-in that sees
 * events). */
int vt_patterns_streams(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins);
/* Whether vt_patterns_analyze_par runs in parallel: a reduced trace (its records, split
 * by ranks), or a trace whose analysis streams. */
int vt_patterns_parallel(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins);
/* vt_patterns_analyze over the processes of PC (vt_replay_par_observe; NULL: serial),
 * each calling it with the same arguments: each analyses its block of ranks and process
 * 0 gets the whole result (the others only the totals). A trace that does not stream
 * is analysed by every process alone (the caller runs it on process 0 only). */
int vt_patterns_analyze_par(const vt_trace *t, const vtrace_pattern *const *plugins, size_t nplugins,
                            const vt_par_comm *pc, vt_patterns **out, vt_error *err);

#endif
