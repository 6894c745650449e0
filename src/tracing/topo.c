#include "vt_config.h"
#include "tracing/topo.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

static cpu_set_t affinity;   /* when vt_placement_get ran */
static int have_affinity;

void vt_placement_refresh(vt_placement *pl)
{
    cpu_set_t now;
    if (have_affinity && sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &affinity))
        return;
    vt_placement_get(pl);
}

void vt_placement_get(vt_placement *pl)
{
    have_affinity = sched_getaffinity(0, sizeof affinity, &affinity) == 0;
    memset(pl, 0, sizeof *pl);
    pl->core = pl->numa = -1;
    if (gethostname(pl->host, sizeof pl->host - 1))
        strcpy(pl->host, "unknown");
#ifdef HAVE_HWLOC
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return;
    /* Only what the placement names: cores (PUs and NUMA nodes are always kept), no
     * caches, groups or I/O, and without the x86 backend, which binds the thread to each
     * CPU in turn to read its CPUID (3 sched_setaffinity calls on 2 CPUs). With MPICH's
     * topology loaded (hwloc's plugins stay loaded), the load then takes 0.35 ms of CPU
     * instead of 0.8-1.7 (issue 18). Cores and NUMA nodes come from the Linux backend
     * (sysfs) either way. */
    hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
#if HWLOC_API_VERSION >= 0x00020100
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#endif
    if (hwloc_topology_load(topo)) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && !hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS)) {
        char *list = NULL;
        if (hwloc_bitmap_list_asprintf(&list, set) >= 0 && list) {
            strncpy(pl->binding, list, sizeof pl->binding - 1);
            free(list);
        }
        hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
        if (!hwloc_bitmap_isequal(set, all)) {
            hwloc_obj_t core = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, NULL);
            if (!core)
                core = hwloc_get_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, 0);
            if (core)
                pl->core = (int)core->os_index;
        }
        hwloc_obj_t numa = NULL;
        while ((numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa))) {
            if (numa->cpuset && hwloc_bitmap_intersects(numa->cpuset, set)) {
                pl->numa = (int)numa->os_index;
                break;
            }
        }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
#endif
}
