/* Where a rank runs: host, core and NUMA node of its binding (hwloc). */
#ifndef VT_TOPO_H
#define VT_TOPO_H

#include "tracing/state.h"

typedef struct vt_placement {
    char host[256];
    int core;          /* OS index of the first core of the binding, -1 unknown or unbound */
    int numa;          /* OS index of the NUMA node holding the binding, -1 unknown */
    char binding[256]; /* cpuset list, "" unknown */
} vt_placement;

VT_HIDDEN void vt_placement_get(vt_placement *pl);
/* PL (vt_placement_get's at MPI_Init) again at MPI_Finalize: loading hwloc's topology
 * takes 0.35 ms of CPU (topo.c), so it is done again only when the calling thread's CPU
 * affinity changed since vt_placement_get. */
VT_HIDDEN void vt_placement_refresh(vt_placement *pl);

#endif
