/* Clustering of computation bursts (seed 003: on-line trace reduction by clustering
 * the computation bursts, tracking the clusters' stability over time and selecting a
 * representative stable region), offline on a trace.
 *
 * A burst is the time between two consecutive call records of a rank (doc/format.md:
 * sequence number 2 callno; it belongs to the call site of the call that ends it). The
 * seed clusters bursts on hardware counters (instructions completed, IPC); vtrace
 * traces carry none, so the features are the burst's call site (categorical: bursts of
 * different call sites are never in one cluster) and log10 of its duration. With one
 * numeric feature, the log is the normalisation: distances are duration ratios, the
 * same in every trace, unit and time window (eps = 0.05 means a factor 10^0.05 = 1.12).
 * Durations below a floor (1 us) count as the floor: a call site's bursts of a few
 * nanoseconds, apart by factors of 2 at the timer's resolution, make one cluster.
 *
 * The algorithm is DBSCAN (eps, min-points), exact: in one dimension a point's
 * eps-neighbourhood is a range of the sorted values, a point is a core point when that
 * range holds at least min-points points (itself included), a cluster is a maximal run
 * of sorted core points whose consecutive gaps are at most eps, and a non-core point
 * within eps of a core point is a border point of the nearest one's cluster; the rest is
 * noise. Cost: one sort, O(n log n), on disk: the bursts and their points go to
 * temporary files, sorted there (clusters_scan.c), so that memory does not grow with
 * the bursts; no sampling.
 *
 * Stability (seed 003's tracking): the run is split into windows by time; each window's
 * bursts (by start) are clustered alike; a cluster of a window is matched when a cluster
 * of the previous window has the same call site and a duration range overlapping its
 * own widened by a tolerance; a window is stable when its matched clusters hold more
 * than a threshold of its computation time (noise included in the total). The
 * representative region is the first run of at least min_stable consecutive stable
 * windows. */
#ifndef VT_CLUSTERS_H
#define VT_CLUSTERS_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"

typedef struct vt_cl_params {
    double eps;          /* DBSCAN radius on log10(duration ns), > 0 */
    uint32_t min_points; /* core point: at least this many points within eps, itself included */
    uint32_t windows;    /* stability windows (>= 2) */
    uint32_t timeline;   /* timeline windows (>= 1) */
    double threshold;    /* stable: matched share of a window's computation time > threshold (0..1) */
    double tolerance;    /* matching margin, a fraction of the duration (0.1: 10%) */
    uint32_t min_stable; /* consecutive stable windows of the region (>= 1) */
    uint32_t floor_ns;   /* durations below it count as it in the feature (default 1000) */
    void (*progress)(void *arg, uint64_t records); /* optional, called while reading */
    void *progress_arg;
} vt_cl_params;

void vt_cl_defaults(vt_cl_params *p);

typedef struct vt_cl_burst {
    int64_t start;   /* global ns */
    int64_t dur;     /* ns (buffer flushes inside it subtracted) */
    uint32_t rank;
    uint32_t key;    /* call-site key (vt_cl_key) */
    int32_t cluster; /* 1.. (clusters[cluster - 1]), 0 noise */
    uint32_t pad;
} vt_cl_burst;

/* What bursts of one key end at: a call site (same module and offset, or address, on
 * every rank), or when the rank records no call sites the function of the ending call
 * (full traces), or nothing known (callsite and fn -1). */
typedef struct vt_cl_key {
    uint32_t rank;    /* the first rank seen with it: look the call site up there */
    int64_t callsite; /* index on that rank, -1 none */
    int64_t fn;       /* function id on that rank of the ending call, -1 unknown */
} vt_cl_key;

typedef struct vt_cl_cluster {
    uint32_t id;     /* 1.., by computation time, largest first */
    uint32_t key;
    uint64_t bursts;
    uint32_t ranks;  /* ranks with bursts in it */
    int64_t time;    /* ns */
    double mean, stddev; /* ns */
    int64_t min, max;    /* ns */
} vt_cl_cluster;

typedef struct vt_cl_window {
    int64_t start, end;  /* global ns */
    uint64_t bursts;     /* bursts starting in it */
    int64_t time;        /* their computation time */
    uint32_t clusters;   /* clusters found in it */
    uint64_t noise;      /* noise bursts */
    int64_t matched;     /* time of the clusters matched with the previous window's */
    int stable;          /* matched > threshold * time (never for the first window) */
} vt_cl_window;

typedef struct vt_cl_region {
    int found;
    uint32_t first, last;      /* representative windows: first .. first + min_stable - 1 */
    uint32_t stretch_last;     /* the stable run goes on to this window */
    int64_t start, end;        /* global ns of the representative windows */
    uint32_t longest, longest_first; /* the longest stable run (also when not found) */
    /* iterations in the representative windows, when detectable: from MARKER records
     * (kind 1) of iter_rank, or the period (in bursts) of iter_rank's sequence of
     * (call site, cluster) found by seed 000's detector (dpd.h) */
    int iter_source; /* 0 not detected, 1 markers, 2 period */
    uint32_t iter_rank;
    uint64_t iterations;
    uint32_t period;
} vt_cl_region;

typedef struct vt_cl_result {
    int reduced;          /* a reduced trace: only the candidate bursts are seen */
    uint32_t nranks;
    size_t nbursts;
    int64_t time;         /* total computation time of the bursts */
    int64_t t0, t1;       /* global ns: first burst start, last burst end */
    size_t nkeys;
    vt_cl_key *keys;
    size_t nclusters;
    vt_cl_cluster *clusters; /* clusters[i].id == i + 1 */
    uint64_t noise;
    int64_t noise_time;
    uint32_t ntimeline;
    int64_t tl_width;     /* ns per timeline window (the last one ends at t1) */
    int32_t *dominant;    /* nranks x ntimeline: cluster with the most time, 0 noise, -1 none */
    uint32_t nwindows;
    vt_cl_window *windows;
    vt_cl_region region;
} vt_cl_result;

/* Reads every rank of T, clusters its bursts and tracks their stability. Returns 0, or
 * -1 with err (trace errors, "out of memory"). */
int vt_clusters_run(const vt_trace *t, const vt_cl_params *p, vt_cl_result *res, vt_error *err);
void vt_clusters_free(vt_cl_result *res);

#endif
