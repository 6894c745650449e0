/* Internals of vtrace patterns shared by patterns.c, patterns_agg.c and
 * patterns_stream.c. */
#ifndef VT_PATTERNS_PRIV_H
#define VT_PATTERNS_PRIV_H

#include "analysis/patterns.h"
#include "model/model.h"
#include "analysis/replay.h"

#include <stddef.h>
#include <stdint.h>

/* What a collective is to the patterns. */
enum vt__pat_ctype { C_NONE, C_BARRIER, C_NXN, C_TOROOT, C_FROMROOT, C_OTHER };

enum vt__pat_ctype vt__pat_coll_type(const char *name);
/* Cost category of a call: VT_PAT_P2P_COMM, _COLL_COMM, _SYNC, or -1 (not communication). */
int vt__pat_cost_of(enum vt_model_kind k, enum vt__pat_ctype c);

typedef struct entries {
    vt_pattern_result_entry *v;
    size_t n, cap;
} entries;

typedef struct syncp { /* a synchronous message's receive post, by its send */
    uint32_t src;
    uint64_t seq;
    int64_t P; /* global */
} syncp;

typedef struct rgent {
    uint64_t comm, collseq;
    uint32_t rank, nmembers;
    int64_t enter, exit;
    int32_t callsite;
    uint8_t ctype;
} rgent;

/* A parallel analysis of a reduced trace (patterns_rpar.c): the synchronous messages'
 * posts to the processes of their senders, every gate entry to every process. 0, or -1. */
int vt__pat_rshare(const vt_par_comm *pc, uint32_t nranks, syncp **sp, size_t *nsp, size_t *capsp, rgent **gv,
                   size_t *ng, size_t *capg, uint64_t *bytes);
/* Process 0 takes every process's entries; rank_wait summed (patterns_stream.c). */
int vt__pat_gather(const vt_par_comm *pc, entries *e, int64_t *rank_wait, uint32_t nranks);

int vt__pat_ent_add(entries *e, int pat, uint32_t rank, int64_t cs, int64_t sev, uint64_t count);
int vt__pat_cmp_key(const void *a, const void *b);
int vt__pat_cmp_sev(const void *a, const void *b);

/* Per rank: severity and count by (pattern, call site), call sites -1..ncs-1. */
typedef struct agg {
    size_t ncs;
    int64_t *sev;
    uint64_t *cnt;
} agg;

int vt__pat_agg_init(agg *a, size_t ncs);
void vt__pat_agg_add(agg *a, int pat, int64_t cs, int64_t sev);
/* Adds the rank's nonzero sums to E and frees A's arrays. */
int vt__pat_agg_flush(agg *a, uint32_t rank, entries *e);

/* The full-trace analysis streamed (patterns_stream.c): every record's waits and costs
 * summed into E and RANK_WAIT as patterns.c does with the trace in memory, with memory
 * for what is in flight only (the replay's unmatched messages and open collectives) and
 * Wrong Order's receives spilled to a temporary file. 0, or -1 with err. With PC, in
 * parallel (vt_replay_par_observe): each process its block of ranks, process 0 gets
 * every entry and every process RANK_WAIT; a trace the parallel replay cannot finish
 * is analysed again by process 0 alone (the serial answer or error; the others return
 * its status, with no entries). PAR_STATS: the rounds, bytes sent and events of the
 * parallel replay (zeros when serial). */
int vt__patterns_stream(const vt_trace *t, const vt_model_params *mp, entries *e, int64_t *rank_wait,
                        const vt_par_comm *pc, uint64_t *par_stats, vt_error *err);

/* After a parallel analysis that did not finish (an error in the trace): process 0
 * analyses alone with SERIAL(ARG, ...), for the serial answer or error, the others
 * return its status with no entries. */
typedef int (*vt__pat_serial_fn)(void *arg, entries *e, int64_t *rank_wait, uint64_t *par_stats, vt_error *err);
int vt__pat_serial_fallback(const vt_trace *t, const vt_par_comm *pc, entries *e, int64_t *rank_wait,
                            uint64_t *par_stats, vt_error *err, vt__pat_serial_fn serial, void *arg);

#endif
