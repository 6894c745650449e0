/* What-if replay (model.md §6) of a full trace: every rank's predicted end and the
 * predicted run time T' for scenarios that shorten candidate events. Several scenarios
 * are evaluated in one pass over the trace, which is streamed, not loaded. */
#ifndef VT_REPLAY_H
#define VT_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "model/event.h"
#include "model/model.h"
#include "analysis/symbols.h"

enum vt_sel_kind {
    VT_SEL_EVENT,   /* R:S, one event by its stable id */
    VT_SEL_RANK,    /* rank:R, every candidate of rank R */
    VT_SEL_FUNC,    /* fn:NAME, candidate calls of an MPI function */
    VT_SEL_SITE,    /* site:STRING, candidate bursts ending at a call site */
    VT_SEL_ALL,     /* all, every candidate */
};
enum vt_short_kind { VT_SHORT_ELIM, VT_SHORT_NS, VT_SHORT_PPM };

typedef struct vt_shorten {
    enum vt_sel_kind sel;
    int64_t rank;           /* -1: any rank (fn:, site:, all) */
    uint64_t seq;           /* VT_SEL_EVENT */
    const char *name;       /* VT_SEL_FUNC, VT_SEL_SITE: points into the scenario's text copy */
    enum vt_short_kind how;
    int64_t value;          /* ns (VT_SHORT_NS) or parts per million (VT_SHORT_PPM) */
    /* Filled by the replay: */
    uint64_t hits;          /* candidates it shortened */
    int seen;               /* VT_SEL_EVENT: the event exists */
    int64_t seen_dur;       /* ... and its duration */
} vt_shorten;

typedef struct vt_scenario {
    char *text;
    char *tokens;           /* the parsed copy of text */
    vt_shorten *items;
    size_t nitems;
} vt_scenario;

/* The names a site: selector matches for call site CS of RANK: "module+0xOFFSET"
 * (module basename) in BUF ("?" unknown) and, in *SYM, its symbol ("" or NULL unknown). */
void vt_site_key(const vt_trace *t, uint32_t rank, int64_t cs, char *buf, size_t len, const char **sym);

/* Whether call site CS of RANK is what a site: selector names: module+0xOFFSET or the
 * symbol (as above), or, from the debug information (symbols.h), the function, the
 * source file (path or its last components) or FILE:LINE. V starts zeroed for each site
 * and keeps what was looked up. */
typedef struct vt_site_view {   /* one site's names, made as a selector needs them */
    char key[256];
    const char *sym;
    vt_srcloc loc;
    int have_key, have_loc, loc_ok;
} vt_site_view;
int vt_site_matches(vt_site_view *v, const vt_trace *t, uint32_t rank, int64_t cs, const char *name);

/* Parses one scenario line (see vtrace-whatif(1)); returns 0 or -1 with a message. */
int vt_scenario_parse(const char *text, vt_scenario *out, char *err, size_t errlen);
void vt_scenario_free(vt_scenario *s);

typedef struct vt_replay_result {
    size_t nscen;
    uint32_t nranks;
    int64_t *ends;          /* nscen x nranks: predicted end of each rank (global ns) */
    int64_t *total;         /* nscen: T', the largest predicted end */
    int64_t *measured;      /* nranks: measured end of each rank */
    int64_t start;          /* earliest enter of any rank (global ns) */
    uint64_t events;        /* model events (bursts and calls) */
    uint64_t candidates;
    uint64_t messages;      /* messages completed (a full trace's) */
    uint64_t clock_violations; /* of them, received by a call that ended before the send
                             * started (clock condition; see clockfix.h) */
    /* An incomplete trace (a run cut short, vt_rank_status) is replayed up to where
     * every rank left waits for what the trace does not hold: the answers cover that
     * part. cut_ranks ranks stopped there with cut_records of their records unreplayed. */
    uint32_t cut_ranks;
    uint64_t cut_records;
    /* vt_replay_par: rounds of messages (0: replayed by process 0 alone) and the bytes
     * all processes sent */
    uint64_t par_rounds, par_bytes;
    /* a complete full trace replayed without a vt_matches: the sends of each rank
     * (nranks, as many as vt_matches_csends has), else NULL */
    uint64_t *sends;
} vt_replay_result;

/* Replays the trace for every scenario. Errors (a trace the replay cannot order, an
 * event a scenario names that is not in the trace or not a candidate) name the file,
 * record or event. M may be NULL: a full trace's messages are then matched during the
 * replay, in the same pass (vt_trace_match's rules and errors, the same results), with
 * memory for the messages in flight only; given M, the replay reads its pairs. */
int vt_replay(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              vt_replay_result *res, vt_error *err);
void vt_replay_result_free(vt_replay_result *res);

/* ------------------------------------------------------------------ parallel replay
 *
 * vt_replay over several processes (vtrace-whatif(1), PARALLEL): each process replays a
 * block of the ranks and sends what a rank of another process reads (a send's time and
 * differences, a synchronous receive's posting, a collective member's entry) as
 * messages. The transport is the caller's (vtrace-mpi: MPI); this library knows no MPI. */
typedef struct vt_par_comm {
    void *arg;
    int nproc, me;
    /* One round: out[q] (len[q] bytes, 0: nothing) to each process q; then deliver() for
     * each message the others sent this round, in order per sender. 0, or -1. */
    int (*exchange)(void *arg, uint8_t *const *out, const size_t *len,
                    int (*deliver)(void *darg, int from, const uint8_t *data, size_t len), void *darg);
    /* v[i] = the sum of v[i] over the processes, on every process. 0, or -1. */
    int (*sum)(void *arg, int64_t *v, size_t n);
} vt_par_comm;

/* vt_replay (a full trace, messages matched while replaying) over the processes of PC,
 * each calling it with the same arguments: every process gets the whole result. A
 * trace the parallel replay cannot finish (an error) is replayed by process 0 alone, so
 * that the answer and the error are the serial ones; the others then return its return
 * code with an empty err. */
int vt_replay_par(const vt_trace *t, const vt_model_params *p, vt_scenario *sc, size_t nsc, const vt_par_comm *pc,
                  vt_replay_result *res, vt_error *err);

/* ------------------------------------------------------------------ observers
 *
 * The replay reports every model event (model/event.h) to an observer, in program order
 * on each rank and in happened-before order across ranks. vtrace reduce and the critical
 * path are observers: the ordering, matching and numbers stay in one place. */

typedef struct vt_observer {
    void *arg;
    /* Bytes of observer data kept with every message between its send and its receive
     * (0: none). publish() fills them at the send, before the sending call's event. */
    size_t ext_size;
    void (*publish)(void *arg, uint32_t rank, uint64_t send_seq, void *ext);
    /* The parallel replay sends ext to the receiver's process: as it is (NULL), or as
     * ext_pack writes it (at most ext_wire_max bytes; returns how many) and ext_unpack
     * reads it back (0, or -1 for bytes it does not take). */
    size_t ext_wire_max;
    size_t (*ext_pack)(const void *ext, uint8_t *out);
    int (*ext_unpack)(const uint8_t *in, size_t n, void *ext);
    /* Every model event; nonzero stops the replay (the observer's message in err). */
    int (*event)(void *arg, const vt_obs_event *ev, vt_error *err);
    /* Full traces (NULL: none): every record of a rank, special ones (FLUSH, MARKER,
     * STOPPED) too, as the replay takes it: in order on the rank, a call's before its
     * publish() and its event, after the events of the calls before it. */
    int (*record)(void *arg, uint32_t rank, const vt_event *rec, vt_error *err);
    /* The parallel replay (vt_replay_par_observe), for an analysis that needs every
     * rank's events in one place (NULL: each process's observer sees its own ranks'
     * only). On the processes other than 0, event() keeps what process 0 needs; held()
     * says how many bytes it keeps (a round's stepping stops past VT_PAR_HELD_MAX / P),
     * take() hands them over after a round's stepping (copied: the observer empties its
     * buffer). On process 0, give() takes in another process's bytes of a round after
     * every process's of the rounds before it, and its own events come in between: a
     * topological order of every event (a dependency between processes crosses a
     * round). */
    size_t (*held)(void *arg);
    void (*take)(void *arg, const uint8_t **data, size_t *len);
    int (*give)(void *arg, int from, const uint8_t *data, size_t len, vt_error *err);
    /* The parallel replay, on every process (NULL: none): after each round's stepping
     * (the events of a round depend on other processes' of earlier rounds only). */
    void (*round)(void *arg);
} vt_observer;

#define VT_PAR_HELD_MAX ((size_t)64 << 20)

/* Progress of the replays this thread runs from now on: fn is called every 65536 records
 * with the records replayed so far (NULL: none). For a progress display. */
void vt_replay_progress(void (*fn)(void *arg, uint64_t records), void *arg);

/* The model parameters of t's configuration text (defaults where it says nothing).
 * Returns 0, or -1 with err naming the configuration's file and offset. */
int vt_replay_params(const vt_trace *t, vt_model_params *p, vt_error *err);

/* vt_replay with an observer (NULL: none). */
int vt_replay_observe(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                      const vt_observer *obs, vt_replay_result *res, vt_error *err);

/* vt_replay_observe (a full trace, messages matched while replaying) over the processes
 * of PC, each calling it with the same arguments. The observer sees the events of this
 * process's ranks only (vt_replay_par splits them into blocks: rank r is process
 * vt_replay_par_owner's), each rank's in the serial order; a message from a rank of
 * another process brings the sender's ext_size bytes of publish(). Every process gets
 * the whole result. 0 on every process, or -1 on every process (a reduced trace with
 * a forwarding observer (take), an error anywhere: err says it where it was found, and
 * may be empty elsewhere); the caller then runs the serial analysis on process 0 for
 * the serial answer or error. */
int vt_replay_par_observe(const vt_trace *t, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                          const vt_observer *obs, const vt_par_comm *pc, vt_replay_result *res, vt_error *err);

/* The process of PC that replays rank r of a trace of nranks ranks (blocks of ranks). */
static inline uint32_t vt_replay_par_owner(const vt_par_comm *pc, uint32_t nranks, uint32_t r)
{
    return (uint32_t)(((uint64_t)(r + 1) * (uint64_t)pc->nproc - 1) / nranks);
}

/* Calls fn for each candidate event (rank, seq, duration, function name or NULL for a
 * burst, the call site of the call or of the call that ends the burst, -1 unknown), in
 * rank order; used for --random, --list-candidates and the domino path's aggregates. */
typedef void (*vt_candidate_fn)(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname,
                                int64_t callsite);
int vt_replay_candidates(const vt_trace *t, const vt_model_params *p, vt_candidate_fn fn, void *arg, vt_error *err);

#endif
