/* Private to the clustering (clusters.c): DBSCAN over a temporary file of points
 * (clusters_scan.c), so that memory does not grow with the bursts. */
#ifndef VT_CLUSTERS_PRIV_H
#define VT_CLUSTERS_PRIV_H

#include <stdint.h>

#include "analysis/spill.h"

typedef struct vt__cl_ent {
    double x;       /* log10(duration ns) */
    uint64_t group; /* key, or window * nkeys + key */
    int64_t dur;    /* the burst's duration */
    uint32_t idx;   /* burst */
    int32_t label;  /* -1 noise, 0.. cluster (numbered across the groups in their order) */
} vt__cl_ent;

typedef struct vt__cl_visit {
    void *arg;
    int (*start)(void *arg, uint32_t nclusters); /* before the points */
    int (*point)(void *arg, const vt__cl_ent *e); /* each point labelled, in (group, x, idx) order */
} vt__cl_visit;

/* Exact DBSCAN (eps, minpts) on every group of the points in IN (closed by it), the
 * same labels as in memory: the points sorted on disk (vt_spill_sort), core points found
 * with two forward readers at the ends of each point's eps-range, border points given to
 * the nearest core point (the left one on a tie) in a backward pass. Returns 0, or -1
 * with errno (a temporary file failed), or what V's callbacks returned. */
int vt__cl_dbscan(vt_spill *in, double eps, uint32_t minpts, const vt__cl_visit *v);

#endif
