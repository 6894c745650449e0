/* The report's data (vtrace report, cmd_report.c): what report_collect.c gathers from
 * the trace and its analyses, and report_write.c writes as the page. */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include "tools/tools.h"
#include "tools/progress.h"
#include "analysis/critpath.h"
#include "analysis/domino.h"
#include "analysis/aggregate.h"
#include "analysis/imbalance.h"
#include "analysis/patterns.h"
#include "analysis/replay.h"
#include "model/model.h"

typedef struct rev {     /* a call on the timeline */
    int64_t start, dur;  /* global ns */
    uint64_t seq;
    uint32_t rank;
    int32_t fn;          /* index in the report's function names */
    unsigned flags;      /* 1 on the critical path */
} rev;

typedef struct rmsg {
    int64_t s, r;        /* send enter, receive end (global ns) */
    uint64_t bytes;
    uint32_t src, dst;
} rmsg;

typedef struct rmark {
    int64_t t, value;
    uint64_t kind;
    uint32_t rank;
} rmark;

typedef struct ragg {
    int64_t start, dur;
    uint64_t nevents;
    uint32_t rank;
} ragg;

/* A bounded collection keeping the N items with the largest keys (a min-heap). */
typedef struct heap {
    char *v;
    int64_t *key;
    size_t n, cap, size, alloc;
    uint64_t total;
    uint64_t lost;       /* items left out for want of memory */
} heap;

/* The timeline at a fixed resolution (issue 15): per rank, NBINS bins of WIDTH ns from
 * ORIGIN (global ns; a grid common to all ranks, its width doubled when the run is
 * longer than it reaches), each with its time in MPI calls, its calls, the function with
 * the most time in it and a reduced trace's time in aggregated stretches. Memory is
 * ranks x bins, whatever the trace's length. */
typedef struct rbin {
    int64_t mpi, agg;    /* ns in calls, ns in aggregated stretches */
    int64_t dom_ns;      /* ns of the dominant function */
    uint32_t calls;      /* calls starting in the bin */
    int32_t dom;         /* dominant function (report's index), -1 none or unknown */
} rbin;

typedef struct rbins {
    uint32_t nbins;
    int64_t origin, width;
    rbin *b;             /* nranks x nbins */
    int64_t *acc;        /* the open bin: ns per function (nfn + 1, the last unknown) */
    int32_t *touched;    /* functions with acc != 0 */
    size_t ntouched;
    uint32_t rank, cur;  /* the open bin */
    int open;
    uint64_t clamped;    /* calls that started before ORIGIN (counted in bin 0) */
} rbins;

typedef struct want {    /* an event whose times the page needs (domino, what-if) */
    uint32_t rank;
    uint64_t seq;
    int64_t start, end;  /* global ns; start > end: not found */
} want;

typedef struct report {
    const char *dir;
    vt_trace *t;
    uint32_t nranks;
    int reduced;
    vt_model_params p;
    uint32_t max_events, top, nwhatif, maxc;
    vt__progress prog;
    uint64_t done;
    /* function names (across ranks) */
    char **fnames;
    size_t nfn, fncap;
    int32_t **fnmap;     /* per rank: function id -> name index */
    /* critical path */
    vt_critpath *cp;
    const vt_critpath_result *cpr;
    vt_cp_part *cpfn;
    size_t ncpfn;
    char cp_error[VT_ERROR_MAX];
    int64_t rstart;      /* replay's start (global ns) */
    int64_t measured;    /* measured run time (ns), -1 unknown */
    uint64_t clock_violations;
    /* candidates, domino, what-if (domino.h) */
    vt_domino dom;       /* after the analysis, only the candidates shown (what-if rows, then steps) */
    size_t ncand, nwk;   /* candidates considered, what-if rows */
    /* what to fix first by rank and by function (aggregate.h; empty when it failed) */
    vt_agg fix_rank, fix_fn;
    /* ... and the load imbalance removed (imbalance.h; bal_ok 0: not computed) */
    int bal_ok;
    int64_t bal_pred;
    vt_imbalance_stats bal;
    /* wait-state patterns (patterns.h) */
    vt_patterns *pat;
    char pat_error[VT_ERROR_MAX];
    char an_error[VT_ERROR_MAX];
    want *wants;
    size_t nwants;
    /* timeline: the bins, and every call in the detail window [w0, w1) (global ns) */
    rbins bins;
    rev *ev;
    size_t nev, evcap, evalloc;
    uint64_t ev_total;
    int64_t w0, w1;
    int64_t detail_from; /* --detail-from: offset of w0 from the run's start (ns) */
    heap msg, mark, agg;
    int64_t tmin, tmax;
    int have_t;
} report;

/* ------------------------------------------------------------------ report_timeline.c */

/* The bounded collection H of CAP items of SIZE bytes; 0, or -1 when out of memory. */
int vt__report_heap_init(heap *h, size_t cap, size_t size);
void vt__report_heap_free(heap *h);
/* Adds ITEM with KEY when it is among the CAP largest keys so far (counted in total). */
void vt__report_heap_push(heap *h, const void *item, int64_t key);

/* The timeline's collections (bins, detail, messages, markers, aggregated stretches),
 * sized from R's trace and options; 0, or -1 when out of memory. */
int vt__report_timeline_init(report *R);
/* Reads every rank's stream once: the bins, the calls of the detail window, markers, a
 * reduced trace's aggregated stretches and messages, the times of the wanted events. */
int vt__report_timeline(report *R, vt_error *err);
/* OBS, which the critical path's replay runs, also hands a full trace's messages in the
 * detail window to R (TEE holds both; it lives as long as the replay). */
typedef struct vt__report_tee {
    vt_observer inner;
    report *R;
} vt__report_tee;
void vt__report_tee_install(vt__report_tee *tee, report *R, vt_observer *obs);
/* Marks the detail's calls on the critical path (R->cpr). */
int vt__report_mark_path(report *R);
void vt__report_timeline_free(report *R);

/* ------------------------------------------------------------------ report_collect.c */

/* Everything the page shows, for R (its trace open, its parameters and options set):
 * function names, the critical path, the domino path and what-if gains, the wait-state
 * patterns (each of these three missing with a warning when the trace cannot give it)
 * and the timeline. VT_EXIT_OK, or VT_EXIT_ERROR after saying why. */
int vt__report_collect(report *R, int quiet);
/* The wanted event RANK:SEQ (domino and what-if rows), NULL when not one. */
const want *vt__report_find_want(const report *R, uint32_t rank, uint64_t seq);
void vt__report_free(report *R);

/* ------------------------------------------------------------------ report_write.c */

/* The HTML page: CSS, the data as JSON, JavaScript. */
void vt__report_write_page(report *R, FILE *o);

#endif
