/* Private to the OTF2 exporter (built with OTF2_CFLAGS, in libvtexport_otf2.la): its
 * state and what its two files share. export_otf2.c writes the definitions and the
 * archive and calls export_otf2_events.c, which writes each location's events and holds
 * the error reporting and the classification of MPI functions that both use. */
#ifndef VT_EXPORT_OTF2_H
#define VT_EXPORT_OTF2_H

#include "tools/export.h"
#include "tools/progress.h"
#include "util/ixhash.h"

#include <otf2/otf2.h>

typedef struct gcomm {
    uint64_t id;
    uint32_t size;
    const uint32_t *members;
    int64_t parent_id; /* -1 none */
    const char *how;
} gcomm;

typedef struct ex {
    const vt_trace *t;
    const vt__export_opts *o;
    vt_error *err;
    OTF2_Archive *ar;
    uint32_t nranks;
    int reduced;
    /* strings */
    char **strs;
    size_t nstrs, capstrs;
    vt_ixhash strs_ix;
    /* regions: name string refs, one per distinct name */
    const char **rnames;
    size_t nregions, capregions;
    vt_ixhash regions_ix;
    uint32_t **rank_region; /* [rank][fn] -> region ref */
    uint32_t r_flush, r_comp, r_aggr;
    /* call sites: attribute "vtrace:call site" (its name, string) and "vtrace:source"
     * (a source-code location, where debug information gave file and line) */
    uint32_t **rank_site; /* [rank][callsite] -> string ref + 1, 0 none */
    uint32_t **rank_scl;  /* [rank][callsite] -> source-code location ref + 1, 0 none */
    uint32_t *scl_file, *scl_line;
    size_t nscl, capscl;
    vt_ixhash scl_ix; /* by (file, line) */
    uint32_t s_attr_site, s_attr_site_desc, s_attr_src, s_attr_src_desc;
    OTF2_AttributeList *al;
    /* communicators */
    gcomm *comms;
    size_t ncomms, capcomms;
    vt_ixhash comms_ix; /* by id */
    uint32_t **rank_comm; /* [rank][comm index] -> comm ref */
    uint32_t world;       /* comm ref of MPI_COMM_WORLD, OTF2_UNDEFINED_COMM if none */
    /* time range (global ns) and per-location first/last local time */
    int64_t gmin, gmax;
    int64_t *first, *last;
    uint64_t *nevents;
    /* reduced traces: messages by sender, in a temporary file */
    vt__xrsends rs;
    int rs_open;
} ex;

/* A location (one rank) being written. */
typedef struct loc {
    ex *x;
    uint32_t rank;
    OTF2_EvtWriter *w;
    int64_t last; /* last local time written */
    int any;
} loc;

/* ------------------------------------------------------------------ export_otf2_events.c */

/* Installs the error callback that keeps libotf2's last message for vt__otf2_fail. */
void vt__otf2_errors_init(void);
/* "OUT: OTF2 error in WHAT: ..." in x->err; returns -1. */
int vt__otf2_fail(ex *x, const char *what, OTF2_ErrorCode rc);
int vt__otf2_oom(ex *x);

/* Returns the error of CALL (an OTF2 function) unless it succeeded. */
#define CHECK(x, what, call)                                                                                           \
    do {                                                                                                               \
        OTF2_ErrorCode rc_ = (call);                                                                                   \
        if (rc_ != OTF2_SUCCESS)                                                                                       \
            return vt__otf2_fail(x, what, rc_);                                                                        \
    } while (0)

/* Name without "MPI_" and the large-count "_c" suffix, for classification. */
void vt__otf2_base_name(const char *name, char *buf, size_t len);
/* The collective operation of an MPI function; *KNOWN 0 when it is none. */
OTF2_CollectiveOp vt__otf2_coll_op(const char *name, int *known);

/* Reduced traces, first pass: every message a COMP record keeps, by sender (sorted). */
int vt__otf2_collect_rsends(ex *x);
void vt__otf2_rsends_close(ex *x);
/* The attributes of a call's Enter: its call site (NULL when it has none). */
OTF2_AttributeList *vt__otf2_site_attrs(ex *x, uint32_t rank, int64_t callsite);
/* The events of location L (a full or a reduced trace); 0, or -1 with x->err. */
int vt__otf2_full_rank(ex *x, loc *l, vt__progress *p, uint64_t *done);
int vt__otf2_reduced_rank(ex *x, loc *l, vt__progress *p, uint64_t *done);

#endif
