/* The report's data (vtrace report, cmd_report.c): what report_collect.c gathers from
 * the trace and its analyses, and report_write.c writes as the page. */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include "tools/tools.h"
#include "tools/progress.h"
#include "analysis/critpath.h"
#include "analysis/domino.h"
#include "analysis/aggregate.h"
#include "analysis/patterns.h"
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
    size_t n, cap, size;
    uint64_t total;
} heap;

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
    vt_domino dom;
    /* what to fix first by rank and by function (aggregate.h; empty when it failed) */
    vt_agg fix_rank, fix_fn;
    /* wait-state patterns (patterns.h) */
    vt_patterns *pat;
    char pat_error[VT_ERROR_MAX];
    char an_error[VT_ERROR_MAX];
    want *wants;
    size_t nwants;
    /* timeline */
    heap ev, msg, mark, agg;
    int64_t tmin, tmax;
    int have_t;
} report;

/* ------------------------------------------------------------------ report_collect.c */

/* The bounded collection H of CAP items of SIZE bytes; 0, or -1 when out of memory. */
int vt__report_heap_init(heap *h, size_t cap, size_t size);
void vt__report_heap_free(heap *h);
/* Adds ITEM with KEY when it is among the CAP largest keys so far (counted in total). */
void vt__report_heap_push(heap *h, const void *item, int64_t key);

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
