/* Clock-condition repair (doc/clock-repair.md).
 *
 * With clocks of several hosts, a receive can appear to end before its send started:
 * the offsets measured at MPI_Init and MPI_Finalize (doc/format.md) do not follow the
 * clocks' real drift. vt_clockfix_compute() finds such receives and computes a
 * repair in the manner of the controlled logical clock (Becker, Rabenseifner, Wolf):
 * a forward pass in happened-before order moves each violating receive, and
 * everything after it on its rank, later by the amount needed, so that local interval
 * lengths after the jump are kept; a moved rank moves its later sends with it, and
 * the shift propagates through later messages when they need it.
 *
 * The result is, per rank, a sorted list of steps (local time from which, cumulative
 * shift). vt_trace_set_clockfix() installs it, and vt_global_time() (reader.h) then
 * adds vt_clockfix_shift() to every global time, so every tool sees repaired times.
 *
 * Condition checked, per matched message: the global exit of the record completing the
 * receive >= the global enter of the sending record + min_latency_ns. */
#ifndef VT_CLOCKFIX_H
#define VT_CLOCKFIX_H

#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vt_clockfix vt_clockfix;

/* From local time FROM_NS (inclusive) on, SHIFT_NS is added to the rank's global time
 * (until the next step). Steps of a rank are sorted by from_ns, strictly increasing,
 * and their shifts strictly increase (a forward pass only moves later). */
typedef struct vt_clockfix_step {
    int64_t from_ns;  /* local time: the exit of the record completing the receive(s) */
    int64_t shift_ns; /* cumulative shift (> 0) */
} vt_clockfix_step;

typedef struct vt_clockfix_stats {
    uint64_t messages;         /* matched receives checked */
    uint64_t violations;       /* of them, those breaking the condition in the unrepaired times */
    int64_t max_violation_ns;  /* largest amount by which an unrepaired receive broke it */
    uint64_t repaired;         /* receives the pass moved: breaking the condition with the
                                * shifts known at that point (original violations, and those
                                * caused by a sender's earlier jump) */
    uint64_t jumps;            /* records moved (steps; a Waitall completing several
                                * receives moves once) */
    uint64_t repaired_ranks;   /* ranks with at least one step */
    int64_t max_shift_ns;      /* largest cumulative shift of any rank */
    uint32_t max_shift_rank;   /* the rank that has it (0 when nothing moved) */
    uint64_t coincident;       /* jumps from a local time at or before the enter of a send of
                                * the same rank that was already passed on to its receiver
                                * (only when records of zero length hold a send and a
                                * violating receive at the same ns): the step moves that send
                                * too, and its receiver may then be short by up to the jump.
                                * 0 in traces whose calls last at least 1 ns. */
} vt_clockfix_stats;

/* Streams every rank of T once (one cursor per rank, one block each in memory) in an
 * order that respects happened-before: a rank advances until a receive needs a send its
 * sender has not reached, then another rank runs. M must be vt_trace_match() of T
 * (VT_MATCH_PARTIAL is fine: unmatched entries are skipped). Global times are read with
 * vt_global_time(), so a fix already installed on T is taken into account (the result
 * is then relative to it, and empty when the installed fix is complete).
 * MIN_LATENCY_NS >= 0 (0: a receive may end when its send starts; a model's L).
 * Memory: O(ranks + steps + messages in flight).
 * Returns 0 with *OUT (free with vt_clockfix_free) and *ST (ST may be NULL), or -1 and
 * ERR: bad arguments, matches that do not belong to T, a read error, or receives
 * that cannot be ordered (every unfinished rank waits for another: named). */
int vt_clockfix_compute(const vt_trace *t, const vt_matches *m, int64_t min_latency_ns, vt_clockfix **out,
                        vt_clockfix_stats *st, vt_error *err);

/* Ns to add to the global time of local time LOCAL_NS on RANK: the shift of the last
 * step with from_ns <= LOCAL_NS, 0 before the first step, for an unknown rank or for
 * F == NULL. Binary search; thread-safe. */
int64_t vt_clockfix_shift(const vt_clockfix *f, uint32_t rank, int64_t local_ns);

/* The steps of RANK (sorted); 0 and NULL for an unknown rank. */
size_t vt_clockfix_steps(const vt_clockfix *f, uint32_t rank, const vt_clockfix_step **steps);

uint32_t vt_clockfix_nranks(const vt_clockfix *f);

void vt_clockfix_free(vt_clockfix *f); /* NULL is fine */

/* Installs F in T: from then on vt_global_time() adds vt_clockfix_shift(F, rank,
 * local_ns), so every tool sees the repaired times. NULL removes it. F is not copied: it
 * must outlive its use. Install it before several threads read T. */
void vt_trace_set_clockfix(vt_trace *t, const vt_clockfix *f);

#ifdef __cplusplus
}
#endif

#endif
