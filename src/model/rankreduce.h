/* One rank's reduction (seed 002, model.md §4-5): fed the rank's model events in
 * program order, it keeps the symbolic difference (symbolic.h), decides which events
 * are recorded and hands their reduced records (vt_rrec) to a sink, in sequence order.
 * `vtrace reduce` runs one per rank of a full trace, as an observer of the replay
 * (reduce.c); the run time is to run one per process on the events of its own calls,
 * so that both write the same records.
 *
 * Only plain types of event.h (vt_obs_event), reader.h (vt_rrec, vt_error) and
 * symbolic.h are used: no trace file. Times of the records are on the rank's clock;
 * the event's own call record (vt_obs_event.rec) gives its local enter and exit. */
#ifndef VT_RANKREDUCE_H
#define VT_RANKREDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/poly.h"
#include "format/reader.h"
#include "model/event.h"
#include "model/symbolic.h"

/* Where the records go: record() is called for each, in order (START first, END last);
 * nonzero stops the reduction (the sink reports its own error). NULL: records are only
 * counted. */
typedef struct vt_rr_sink {
    int (*record)(void *arg, const vt_rrec *r);
    void *arg;
} vt_rr_sink;

/* Optional observation (vtrace reduce's check and polynomial stream); NULL functions
 * are not called. event(): after every event, with d after it and, for a completion
 * whose base is an atom (collective, non-blocking collective, synchronous send, an
 * adopted synchronous message), that atom. probe(): when a probe's message arrives,
 * with the probe's own d (known only then). Nonzero stops the reduction. */
typedef struct vt_rr_hooks {
    int (*event)(void *arg, const vt_obs_event *e, const vt_poly *d, const vt_poly *base_atom);
    int (*probe)(void *arg, uint32_t rank, uint64_t probe_seq, const vt_poly *after);
    void *arg;
} vt_rr_hooks;

/* What vt_rr_event counted (not vt_rr_quiet and vt_rr_folded_receive, the run time's). */
typedef struct vt_rr_stats {
    uint64_t events;            /* model events */
    uint64_t calls;             /* ... of them calls */
    uint64_t records_out;       /* records given to the sink */
    uint64_t messages;          /* messages received (probed ones once) */
    uint64_t messages_kept;     /* ... recorded */
    uint64_t folded;            /* ... merged by R3 */
    uint64_t completions, completions_kept;
    uint64_t overflows;         /* polynomials replaced by an overflow atom (vt_rr_finish) */
} vt_rr_stats;

typedef struct vt_rr_held vt_rr_held;
typedef struct vt_rr_window vt_rr_window;

typedef struct vt_rankreduce {
    vt_sym_state sym;
    vt_rr_sink sink;
    vt_rr_hooks hooks;
    int started;                /* the START record is out */
    int64_t prev_exit_local;    /* the previous call's exit (a burst's start) */
    int64_t last_exit_local;    /* the last call's exit and sequence number (END) */
    uint64_t last_seq;
    vt_rr_held *held;           /* records behind open probe windows */
    size_t nheld, capheld;
    vt_rr_window *win;          /* open probe windows */
    size_t nwin, capwin;
    vt_sym_msg *msgs;           /* scratch for one completion */
    vt_rmsg *rmsgs;
    vt_rssend *rssends;
    vt_rgate *rgates;
    size_t capmsgs;
    vt_rr_stats stats;
    /* moves whenever sym.d may have changed (each vt_rr_event, vt_rr_probe_fill): the
     * run time keeps d's encoding and knows it is current while this stays */
    uint64_t d_version;
    /* the fast paths' precondition, kept by vt_rr_event and vt_rr_probe_fill (one load
     * on every call of the run time in place of four): quiet_ok = started and sym.d valid
     * and no event hook; fold_ok = quiet_ok and R3 not deliberately broken */
    int quiet_ok, fold_ok;
} vt_rankreduce;

/* Returns 0, or -1 when m, K are out of range (vt_poly_limits_ok). SINK and HOOKS may
 * be NULL; they are copied. */
int vt_rr_init(vt_rankreduce *rr, uint32_t rank, unsigned m, unsigned K, enum vt_sym_broken broken,
               const vt_rr_sink *sink, const vt_rr_hooks *hooks);
void vt_rr_free(vt_rankreduce *rr);

/* What a message sent now carries (vt_observer.publish): the current d, a vt_poly. */
void vt_rr_publish(const vt_rankreduce *rr, void *ext);

/* The run time learns a probed message's header only at its receive: before the event
 * that resolves probe PROBE_SEQ, this fills its window with the message (a MSG
 * contributor as the replay makes it: T from the probe's exit, ext the sender's d).
 * Returns 0, or -1 when no window of that probe is open. */
int vt_rr_probe_fill(vt_rankreduce *rr, uint64_t probe_seq, const vt_obs_con *msg);

/* The rank's next model event. NBC_MEMBERS: when e initiates a non-blocking collective,
 * the size of its communicator (both groups of an intercommunicator), 0 unknown.
 * Returns 0, or -1 with err (out of memory, a probe without window) or after a sink or
 * hook stopped it. */
int vt_rr_event(vt_rankreduce *rr, const vt_obs_event *e, uint32_t nbc_members, vt_error *err);

/* The run time's two commonest events, without building them: each returns 1 when it
 * applied, with exactly the effect vt_rr_event would have had on the reduction, else 0
 * (build the event). Neither makes a record, nor counts in `stats`: only `vtrace reduce`
 * reports them, and the run time's nine counts a ping-pong pair cost as many
 * instructions (issue 18). `vtrace reduce` always takes vt_rr_event, so the equivalence
 * tests (run-time reduced trace == `vtrace reduce` of the full one) check these too.
 * - vt_rr_quiet: a burst (is_call 0) or a call without contributors, not a candidate:
 *   d does not change (vt_sym_local).
 * - vt_rr_folded_receive: a call completed by one received message, not synchronous,
 *   and nothing else, not a candidate, whose sender's difference D equals this rank's d:
 *   R3 folds it (vt_sym_complete's all_folded), d does not change. D NULL: the caller
 *   knows D equals d (the encoding it sent while d_version has not moved).
 * (Inline: they are taken on nearly every call of the run time.) */
static inline int vt_rr_quiet_allowed_(const vt_rankreduce *rr, int candidate)
{
    return rr->quiet_ok && !candidate;
}

static inline void vt_rr_quiet_call_(vt_rankreduce *rr, uint64_t seq, int64_t exit_local)
{
    rr->prev_exit_local = rr->last_exit_local = exit_local;
    rr->last_seq = seq;
}

static inline int vt_rr_quiet(vt_rankreduce *rr, uint64_t seq, int is_call, int64_t exit_local, int candidate)
{
    if (!vt_rr_quiet_allowed_(rr, candidate))
        return 0;
    if (is_call)
        vt_rr_quiet_call_(rr, seq, exit_local);
    return 1;
}

static inline int vt_rr_folded_receive(vt_rankreduce *rr, uint64_t seq, int64_t exit_local, const vt_poly *D, int sync,
                                       int candidate)
{
    if (!rr->fold_ok || candidate || sync || (D && !vt_poly_equal(D, &rr->sym.d)))
        return 0;
    vt_rr_quiet_call_(rr, seq, exit_local);
    return 1;
}

/* After the rank's last event: probes whose message never arrived keep their records
 * as placeholders; the END record, at the last exit or, for a rank of an incomplete
 * trace that stopped waiting in a call, at STOP_LOCAL (that call's enter; INT64_MIN:
 * none); stats.overflows. Returns 0, or -1 when the sink stopped it. */
int vt_rr_finish(vt_rankreduce *rr, int64_t stop_local);

#endif
