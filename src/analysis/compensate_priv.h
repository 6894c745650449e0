/* Internals of vtrace compensate (compensate.c, compensate_io.c, compensate_stream.c). */
#ifndef VT_COMPENSATE_PRIV_H
#define VT_COMPENSATE_PRIV_H

#include "analysis/compensate.h"

#include <stdint.h>

enum { K_CALL = 0, K_FLUSH = 1, K_SPECIAL = 2 };
enum { C_NONE = 0, C_NTON, C_1TON, C_NTO1 };

/* The collective kind of an MPI function's name: C_NTON, C_1TON, C_NTO1 or C_NONE. */
int vt__comp_collective_kind(const char *name);

typedef struct vt__comp_rules {
    int64_t L_ps, copy_ps;   /* minimal latency; copy cost per byte */
    int m2_upper;
    vt_comp_stats *st;       /* m1, m2, m2_upper_wider counted */
} vt__comp_rules;

/* The bound a message (or a 1-to-n pair) sent at SEND_A (compensated; measured
 * SEND_ME .. SEND_MX) puts on the exit of the receiving call (measured RME .. RMX,
 * compensated enter RAE); *waited = 1 in case m.1. Global ps. */
int64_t vt__comp_msg_bound(const vt__comp_rules *C, int64_t rme, int64_t rmx, int64_t rae, int64_t send_a,
                           int64_t send_me, int64_t send_mx, uint64_t bytes, int *waited);

/* Nanoseconds of global picoseconds, rounded. */
int64_t vt__comp_ns_of(int64_t ps);
int64_t vt__comp_config_latency_ns(const char *cfg);

/* The written times (ns) of record IDX of rank R, asked in record order; 0 or -1 with err. */
typedef int (*vt__comp_times)(void *arg, uint32_t r, uint64_t idx, int64_t *enter, int64_t *exit, vt_error *err);
/* Writes rank R's file into DIR: T's first NREC records (UINT64_MAX: all) with TIMES'
 * times. A rank of an incomplete trace with no readable record gets a file cut before
 * its definitions, as the run left it. 0 or -1 with err. */
int vt__comp_write_rank(const vt_trace *t, const char *dir, uint32_t r, int level, uint64_t nrec,
                        vt__comp_times times, void *arg, vt_error *err);
/* vtrace.defs and config.txt. */
int vt__comp_write_defs(const vt_trace *t, const char *dir, const vt_comp_opts *o, vt_error *err);

/* The compensation streamed: an observer of the replay (memory for what is in flight),
 * the written times spilled and sorted by rank, then every rank written. Fills ST as
 * vt_compensate does. 0 or -1 with err. */
int vt__compensate_stream(const vt_trace *t, const char *out, const vt_comp_opts *o, const vt__comp_rules *rules,
                          vt_comp_stats *st, vt_error *err);

#endif
