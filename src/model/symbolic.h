/* The run-time reduction's rules (model.md §4-5) on symbolic differences: what a rank
 * knows of its difference d as a min-plus polynomial of the scenario (poly.h), and the
 * aggregation decision R3 at each completion. One implementation, used by the tracer
 * at run time (every message carries the sender's polynomial) and by `vtrace reduce`
 * on a full trace, so both make the same decisions and the same atom names.
 *
 * A rank feeds its events in program order: vt_sym_local for local events,
 * vt_sym_complete for completions, vt_sym_probe / vt_sym_probe_resolve around probes.
 * A message carries vt_sym_state.d as it is when the sending call starts.
 *
 * When an exact result does not fit (model.md §4 overflow, or a probe's substitution
 * past the capacity), d becomes the overflow atom of the event: sound, only less
 * reduction. No allocation except the list of open probe windows. */
#ifndef VT_SYMBOLIC_H
#define VT_SYMBOLIC_H

#include <stddef.h>
#include <stdint.h>

#include "model/poly.h"

/* Deliberately broken rules, for the tests that must be able to fail (model.md §7.6). */
enum vt_sym_broken {
    VT_SYM_CORRECT = 0,
    VT_SYM_BROKEN_NOFOLD = 1,   /* merge without folding the ready time into R* */
    VT_SYM_BROKEN_NOR3 = 2,     /* merge eager messages even when D != d */
};

typedef struct vt_sym_window {
    uint64_t probe_seq;
    vt_poly before;     /* d before the probe */
    int64_t R, E;       /* the probe's enter and exit (global ns) */
    int cand;
} vt_sym_window;

typedef struct vt_sym_state {
    uint32_t rank;
    unsigned m, K;
    unsigned room;              /* bytes a message header has for d (0: no limit) */
    enum vt_sym_broken broken;
    vt_poly d;
    int invalid;                /* d is not known exactly until the end of this event */
    vt_sym_window *win;         /* open probe windows */
    size_t nwin, capwin;
    uint64_t overflows;         /* statistics */
} vt_sym_state;

/* Returns 0, or -1 when m, K are out of range (vt_poly_limits_ok). */
int vt_sym_init(vt_sym_state *s, uint32_t rank, unsigned m, unsigned K);
void vt_sym_free(vt_sym_state *s);
/* The header's room for the difference (model params `pbytes`): after every event, a d
 * whose encoding is longer becomes the event's overflow atom, as past m or K. 0: none. */
void vt_sym_set_room(vt_sym_state *s, unsigned bytes);

/* A local event: burst, call that waits for nobody, eager send, failed test.
 * A candidate adds its δ. Returns 0 or -1 (out of memory: never here). */
int vt_sym_local(vt_sym_state *s, uint64_t seq, int cand);

/* A message a completion receives. */
typedef struct vt_sym_msg {
    int64_t T;              /* ready time S + λ_m, global ns */
    const vt_poly *D;       /* the sender's difference at the send */
    int sync;               /* synchronous (never merged) */
    int adoptable;          /* synchronous, sent by a blocking send, posted by this very call */
    uint32_t src;
    uint64_t send_seq;
    int folded;             /* out: R3 held; merged into R*, not recorded */
} vt_sym_msg;

typedef struct vt_sym_completion {
    uint64_t seq;
    int64_t R, E;           /* enter and exit, global ns */
    int cand;
    int coll;               /* a blocking collective: d := atom(C, coll_comm, coll_n) */
    uint64_t coll_comm, coll_n;
    int nbc;                /* completes a non-blocking collective: a fresh atom */
    int ssend;              /* completes a synchronous send of this rank: atom(S, rank, seq) */
    vt_sym_msg *msgs;
    size_t nmsgs;
    /* out */
    int64_t Rstar;          /* local ready time after folding (R when nothing merged) */
    int record;             /* the completion must be recorded */
} vt_sym_completion;

/* The completion rule (§2), then the candidate rule and overflow. Decides R3 for each
 * eager message (msgs[i].folded), R* and whether the completion is recorded (§5). */
int vt_sym_complete(vt_sym_state *s, vt_sym_completion *c);

/* A probe that matched a message: until that message's receive, d is the probe's atom
 * (plus what happens meanwhile). Returns 0, or -1 out of memory. */
int vt_sym_probe(vt_sym_state *s, uint64_t seq, int64_t R, int64_t E, int cand);

/* The receive of a probed message (the call `at_seq`, before vt_sym_complete or
 * vt_sym_local of that call): the probe's decision with the message's T and D, the
 * probe's own d, substituted for its atom in d. *folded, *Rstar and *record describe
 * the probe's record. Returns 0, or -1 when no window of that probe is open. */
int vt_sym_probe_resolve(vt_sym_state *s, uint64_t probe_seq, vt_sym_msg *msg, int64_t *Rstar, int *record,
                         vt_poly *probe_after);

#endif
