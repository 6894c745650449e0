/* The critical path and the slack of every event (model.md §6: "remember which
 * contributor gave each min to walk back the critical path"), as an observer of the
 * what-if replay (replay.h). It keeps one node per model event and one edge per
 * contributor (a collective's gate is one node whose edges are its members, so a
 * collective costs O(members), not O(members^2)) in temporary files ($TMPDIR, else
 * /tmp; about 90 bytes an event and 24 a contributor on disk), and in memory O(ranks +
 * events in flight + candidates), not O(events).
 *
 * Usage: vt_critpath_new, install vt_critpath_observer's observer in
 * vt_replay_observe (or feed vt_critpath_event from any other source of observer
 * events), then vt_critpath_finish and read the result. Every time is global ns in the
 * predicted execution of one scenario (index `scen` of the replay's scenarios). */
#ifndef VT_CRITPATH_H
#define VT_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/replay.h"

typedef struct vt_critpath vt_critpath;

enum vt_cp_edge_kind {
    VT_CP_MESSAGE,    /* a received message: sender -> receiving completion */
    VT_CP_SYNC,       /* synchronous send: own send (S + λ_m) or the receiver's posting */
    VT_CP_COLLECTIVE, /* a collective's gate: the member that arrived last */
};

/* One stretch of the path on one rank: events first_seq..last_seq (model ids), from
 * predicted `start` to predicted `end`. */
typedef struct vt_cp_segment {
    uint32_t rank;
    uint64_t first_seq, last_seq;
    int64_t start, end;
    size_t first_step, nsteps;   /* its events: the path's events first_step .. + nsteps */
} vt_cp_segment;

/* What joins two segments: from event (from_rank:from_seq, the predecessor's last
 * event) to event (to_rank:to_seq, the completion), through the contributor's call
 * via_rank:via_seq (the send, the posting call, the member's collective call); `ns` is
 * the predicted time on the edge (λ_m for a message, 0 for a gate in a full trace). */
typedef struct vt_cp_edge {
    enum vt_cp_edge_kind kind;
    uint32_t from_rank, to_rank, via_rank;
    uint64_t from_seq, to_seq, via_seq;
    int64_t ns;
} vt_cp_edge;

/* A candidate with its slack: how much later it could end without T' growing. */
typedef struct vt_cp_cand {
    uint32_t rank;
    uint64_t seq;
    int64_t dur;          /* measured duration */
    int64_t slack;
    int on_path;
    const char *func;     /* NULL: computation */
} vt_cp_cand;

/* A share of the path's time: per function or per call site (name, symbol). */
typedef struct vt_cp_part {
    char name[192];
    char symbol[192];     /* call sites: "" unknown */
    int64_t ns;
    uint64_t events;
} vt_cp_part;

typedef struct vt_critpath_result {
    int64_t start;        /* earliest first enter of any rank */
    int64_t end;          /* T' (absolute): the largest predicted end of a rank */
    uint32_t end_rank;    /* the rank that ends last (the lowest on a tie) */
    int64_t length;       /* end - start */
    int64_t startup;      /* from start to the path's first event */
    int64_t seg_ns, edge_ns;  /* sums over segments and edges */
    int consistent;       /* startup + seg_ns + edge_ns == length, the segments' times equal
                           * the sum of their steps, every event on the path has slack 0 */
    size_t nsteps;        /* events on the path */
    size_t nsegments, nedges;  /* the path: see vt_critpath_path */
    vt_cp_segment *segments;   /* NULL until vt_critpath_load_path */
    vt_cp_edge *edges;    /* edges[i] joins segments[i] and segments[i + 1] */
    uint32_t nranks;
    int64_t *per_rank;    /* nranks: time of the path's events on each rank */
    size_t ncands;        /* candidates: see vt_critpath_cands */
} vt_critpath_result;

/* nranks: ranks of the trace; scen: which of the replay's scenarios to analyse. */
vt_critpath *vt_critpath_new(uint32_t nranks, size_t scen);
void vt_critpath_free(vt_critpath *cp);

/* The observer to pass to vt_replay_observe (it needs no message data). */
void vt_critpath_observer(vt_critpath *cp, vt_observer *obs);
/* The observer for vt_replay_par_observe (every process of PC): each process keeps
 * the graph of its own ranks; edges from another process's ranks name their
 * predecessor (critpath_par.c). After the replay, every process calls
 * vt_critpath_par_finish instead of vt_critpath_finish. */
void vt_critpath_par_observer(vt_critpath *cp, const vt_par_comm *pc, vt_observer *obs);
/* vt_critpath_finish over the processes of PC (each calls it): the backward sweep in the
 * replay's rounds backwards, the path handed between processes; process 0 then has the
 * whole result (the candidates: the first max; the path, the shares), the others their
 * part only. *bytes: what went between the processes (all of them). 0 on every
 * process, or -1 on every process (the message where it was found). */
int vt_critpath_par_finish(vt_critpath *cp, int64_t start, size_t max, const vt_par_comm *pc, uint64_t *bytes,
                           vt_error *err);
/* One model event (what the observer calls); 0, or -1 with a message. */
int vt_critpath_event(vt_critpath *cp, const vt_obs_event *ev, vt_error *err);

/* After the last event: walks the path back from the rank that ends last, computes
 * the slack of every candidate. start: the earliest first enter (vt_replay_result's
 * start). The result lives in cp until vt_critpath_free. 0, or -1 with a message. */
int vt_critpath_finish(vt_critpath *cp, int64_t start, vt_error *err);
const vt_critpath_result *vt_critpath_get(const vt_critpath *cp);

/* The path in chronological order, read back from its temporary file: fn gets every
 * segment with the edge that joins it to the one before (NULL for the first); a nonzero
 * return stops the walk and is returned. 0, or -1 with a message (an I/O error). */
typedef int (*vt_cp_path_fn)(void *arg, size_t i, const vt_cp_segment *s, const vt_cp_edge *e);
int vt_critpath_path(vt_critpath *cp, vt_cp_path_fn fn, void *arg, vt_error *err);
/* The first max candidates, least slack first (then longest, rank, seq): fn gets each;
 * a nonzero return stops and is returned. 0, or -1 with a message (an I/O error). */
typedef int (*vt_cp_cand_fn)(void *arg, const vt_cp_cand *c);
int vt_critpath_cands(vt_critpath *cp, size_t max, vt_cp_cand_fn fn, void *arg, vt_error *err);
/* The path's segments and edges into the result's arrays (O(segments) memory, for
 * vtrace report). 0, or -1 with a message. */
int vt_critpath_load_path(vt_critpath *cp, vt_error *err);

/* The path's time per MPI function ("(computation)" for bursts), largest first. */
int vt_critpath_per_function(const vt_critpath *cp, vt_cp_part **out, size_t *n);
/* ... per call site: name() writes the site's name and symbol ("" unknown) for a call
 * site of a rank; sites with the same name (on any rank) are one part. */
typedef void (*vt_cp_site_name_fn)(void *arg, uint32_t rank, int64_t callsite, char *name, size_t namelen,
                                   char *symbol, size_t symlen);
int vt_critpath_per_site(const vt_critpath *cp, vt_cp_site_name_fn name, void *arg, vt_cp_part **out, size_t *n);

#endif
