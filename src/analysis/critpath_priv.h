/* The critical path's state, shared by its intake (critpath.c: one node per model event
 * and one edge per contributor, written to temporary files as they come) and its
 * backward sweep (critpath_walk.c: the walk back, the slack, the path's shares). In
 * memory: per rank a window of its last nodes and a checkpoint every CP_CKPT nodes, the
 * gates not yet completed by all their members, and during the sweep the latest ends of
 * the nodes whose successors have been swept but not they themselves: O(ranks + events in
 * flight), not O(events). In parallel (critpath_par.c) each process keeps its own
 * ranks' part. */
#ifndef VT_CRITPATH_PRIV_H
#define VT_CRITPATH_PRIV_H

#include "analysis/critpath.h"
#include "analysis/spill.h"

#define CP_NONE UINT32_MAX
/* A predecessor on a rank of another process (the distributed walk, critpath_par.c):
 * the edge's via_rank:via_seq names it (the rank's last event before via_seq) and its
 * weight is absolute (the predecessor's pend + w). */
#define CP_REMOTE (UINT32_MAX - 1)
#define CP_CKPT 256

enum { CK_NONE, CK_LOCAL, CK_MSG, CK_SYNC_MSG, CK_SYNC_POST, CK_GATE };
/* NF_GAP: a reduced trace's merged stretch before a record (vt_obs_event's gap). It is
 * never the predecessor through a message, a posting or a gate: the replay publishes
 * those at the record's read, before the stretch's event, which comes when the record
 * completes, so whether it exists at the successor's event depends on the order of the
 * replay's steps (serial, or rounds in parallel). Without it the predecessor is the
 * rank's last record before the sequence number, the same in every order. */
enum { NF_CALL = 1, NF_CAND = 2, NF_GATE = 4, NF_PARTIAL = 8, NF_GAP = 16 };

/* A node as spilled (one per model event and one per gate). */
typedef struct cp_node {
    int64_t pend;           /* predicted end: end - d_after */
    int64_t low;            /* where the event's own share starts: the critical
                             * contributor's predicted ready time T - D */
    int64_t dur;            /* measured duration */
    uint64_t seq, via_seq, e0;
    int64_t callsite;
    const char *func;
    uint32_t rank, ne;      /* rank (CP_NONE: a gate), its edges e0 .. e0 + ne */
    uint32_t crit, via_rank;/* critical predecessor (a gate node for CK_GATE), CP_NONE: none */
    uint32_t prev;          /* the rank's previous node (CP_NONE: none) */
    uint8_t flags, ck;
} cp_node;

typedef struct cp_edge {
    int64_t w;
    uint64_t via_seq;
    uint32_t pred, via_rank;
} cp_edge;

/* A node of a rank's window: enough to be a predecessor. */
typedef struct cp_ref {
    uint64_t seq;
    int64_t pend;
    uint32_t idx;
    uint32_t gap;           /* NF_GAP */
} cp_ref;

typedef struct cp_ckpt {
    uint64_t seq;
    uint32_t idx;
} cp_ckpt;

typedef struct cp_rank {
    uint64_t n;             /* nodes so far */
    uint64_t first;         /* the first node that is not a gap: its seq + 1 (0: none yet) */
    cp_ckpt *ck;            /* ordinal k * CP_CKPT */
    size_t nck, capck;
} cp_rank;

typedef struct cp_gslot {
    uint64_t comm, seq, m0seq;
    int64_t pend;
    uint32_t m0rank, node;  /* node CP_NONE: empty */
    uint32_t left;          /* completions still to come */
    uint8_t partial;
} cp_gslot;

/* An aggregate of the path's time: by function (a: the name's pointer) or by call site
 * (a: rank, b: call site). */
typedef struct cp_agg {
    uint64_t a, b;
    int64_t ns;
    uint64_t events;
} cp_agg;

typedef struct cp_aggmap {
    cp_agg *v;
    size_t n, cap;          /* cap: a power of two, slots with events == 0 empty */
} cp_aggmap;

/* The path as spilled by the sweep, last segment first. */
typedef struct cp_pathrec {
    vt_cp_segment seg;
    vt_cp_edge e;           /* the edge before seg (has_edge) */
    int has_edge;
} cp_pathrec;

struct vt_critpath {
    uint32_t nranks;
    size_t scen;
    int open;               /* the spills exist */
    vt_spill nodes, edges, path;
    uint64_t nn;
    cp_rank *ranks;
    cp_ref *win;            /* nranks x wsize, a ring per rank */
    uint64_t wsize;         /* a power of two */
    cp_gslot *gt;
    size_t gcap, gn;
    cp_ref *scratch;        /* per contributor of the current event: its gate */
    uint8_t *scratch_partial;
    size_t capscratch;
    cp_aggmap by_func, by_site;
    vt_cp_cand *cbuf;       /* candidates not yet in a run (critpath_cands.c) */
    size_t ncbuf, capcbuf, crun;
    int copen;              /* the runs' spill exists */
    vt_spill cands;
    int finished;
    vt_critpath_result res;
    /* The distributed walk (critpath_par.c): this process's ranks lo .. hi (serial: all),
     * the local node count at the end of each round of the replay, the seq + 1 of every
     * rank's first node that is not a gap (0: none), and per own rank the contributions
     * of other processes' nodes waiting for their predecessor in the sweep. */
    uint32_t lo, hi;
    uint64_t *rmark;
    size_t nrmark, caprmark;
    int rmark_lost;         /* out of memory for a mark */
    uint64_t *first;
    struct cp_heap *pend;
    char **names;           /* process 0: the functions' names other processes sent */
    size_t nnames, capnames;
};

/* Contributions waiting for their predecessor: a max-heap on seq. */
typedef struct cp_pitem {
    uint64_t seq;
    int64_t v;
} cp_pitem;

struct cp_heap {
    cp_pitem *v;
    size_t n, cap;
};

/* The backward sweep's state (critpath_walk.c), driven over all nodes at once (serial)
 * or round by round (critpath_par.c). */
typedef struct cp_lmap {
    struct cp_lslot *s;
    size_t cap, n;
} cp_lmap;

typedef struct cp_sweep {
    cp_lmap L;
    int ok, inseg;
    uint32_t cur;           /* the path's next node here (CP_NONE: none) */
    uint32_t trank;         /* else CP_NONE, or the path continues at this own rank's last */
    uint64_t tseq;          /*   node before tseq, with the segment tseg to close there */
    cp_pathrec seg, tseg;
    int64_t segsum;
    uint64_t eat, next;     /* the edges' and nodes' next index down */
    uint64_t pathk;         /* segments written so far (in the whole walk) */
    /* remote edges' contributions and the path's hand-over (NULL: serial, none) */
    int (*remote)(void *arg, uint32_t rank, uint64_t seq, int64_t v);
    int (*handover)(void *arg, uint32_t rank, uint64_t seq, const cp_pathrec *pr);
    /* the least of the waiting contributions (+ pend) to node rank:seq; INT64_MAX: none */
    int64_t (*pending)(void *arg, uint32_t rank, uint64_t seq, int64_t pend);
    void *rarg;
} cp_sweep;

int vt__cp_sweep_begin(vt_critpath *cp, cp_sweep *sw, int64_t start, vt_error *err);
/* The nodes from sw->next down to lo. 0, or -1 with a message. */
int vt__cp_sweep(vt_critpath *cp, cp_sweep *sw, uint64_t lo, vt_error *err);
void vt__cp_sweep_free(cp_sweep *sw);
/* The path's aggregates of one node (critpath_walk.c). */
int vt__cp_agg_add(cp_aggmap *m, uint64_t a, uint64_t b, int64_t ns, uint64_t events);

/* The windows of ranks lo .. hi only (critpath.c); 0, or -1 (no memory). */
int vt__cp_window(vt_critpath *cp, uint32_t lo, uint32_t hi);
int vt__cp_err(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vt__cp_grow(void **v, size_t *cap, size_t need, size_t size);
/* A candidate with its slack, during the sweep; after it, the last run. 0 or -1. */
int vt__cp_cand_add(vt_critpath *cp, const vt_cp_cand *c, vt_error *err);
int vt__cp_cand_end(vt_critpath *cp, vt_error *err);


#endif
