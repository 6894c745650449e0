/* Extrae's MPI event encoding for Paraver (paraver_mpi.h). Source: Extrae's
 * src/merger/paraver/MPI_EventEncoding.h (the MPIVal values 1-172, one per function) and
 * src/merger/paraver/mpi_prv_events.c (the type of each: point-to-point 50000001,
 * collective 50000002, other 50000003, one-sided 50000004, I/O 50000005). The names
 * below are listed in value order: the n-th name (from 1) has value n. */
#include "vt_config.h"
#include "tools/paraver_mpi.h"

#include <string.h>

static const char *const extrae_names[] = {
    "Send", "Recv", "Isend", "Irecv", "Wait", "Waitall", "Bcast", "Barrier", "Reduce", "Allreduce", /* 1-10 */
    "Alltoall", "Alltoallv", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
    "Comm_rank", "Comm_size", /* 11-20 */
    "Comm_create", "Comm_dup", "Comm_split", "Comm_group", "Comm_free", "Comm_remote_group",
    "Comm_remote_size", "Comm_test_inter", "Comm_compare", "Scan", /* 21-30 */
    "Init", "Finalize", "Bsend", "Ssend", "Rsend", "Ibsend", "Issend", "Irsend", "Test", "Cancel", /* 31-40 */
    "Sendrecv", "Sendrecv_replace", "Cart_create", "Cart_shift", "Cart_coords", "Cart_get", "Cart_map",
    "Cart_rank", "Cart_sub", "Cartdim_get", /* 41-50 */
    "Dims_create", "Graph_get", "Graph_map", "Graph_create", "Graph_neighbors", "Graphdims_get",
    "Graph_neighbors_count", "Topo_test", "Waitany", "Waitsome", /* 51-60 */
    "Probe", "Iprobe", "Win_create", "Win_free", "Put", "Get", "Accumulate", "Win_fence", "Win_start",
    "Win_complete", /* 61-70 */
    "Win_post", "Win_wait", "Win_test", "Win_lock", "Win_unlock", "Pack", "Unpack", "Op_create", "Op_free",
    "Reduce_scatter", /* 71-80 */
    "Attr_delete", "Attr_get", "Attr_put", "Group_difference", "Group_excl", "Group_free", "Group_incl",
    "Group_intersection", "Group_rank", "Group_range_excl", /* 81-90 */
    "Group_range_incl", "Group_size", "Group_translate_ranks", "Group_union", "Group_compare",
    "Intercomm_create", "Intercomm_merge", "Keyval_free", "Keyval_create", "Abort", /* 91-100 */
    "Error_class", "Errhandler_create", "Errhandler_free", "Errhandler_get", "Error_string",
    "Errhandler_set", "Get_processor_name", "Initialized", "Wtick", "Wtime", /* 101-110 */
    "Address", "Bsend_init", "Buffer_attach", "Buffer_detach", "Request_free", "Recv_init", "Send_init",
    "Get_count", "Get_elements", "Pack_size", /* 111-120 */
    "Rsend_init", "Ssend_init", "Start", "Startall", "Testall", "Testany", "Test_cancelled", "Testsome",
    "Type_commit", "Type_contiguous", /* 121-130 */
    "Type_extent", "Type_free", "Type_hindexed", "Type_hvector", "Type_indexed", "Type_lb", "Type_size",
    "Type_struct", "Type_ub", "Type_vector", /* 131-140 */
    "File_open", "File_close", "File_read", "File_read_all", "File_write", "File_write_all",
    "File_read_at", "File_read_at_all", "File_write_at", "File_write_at_all", /* 141-150 */
    "Comm_spawn", "Comm_spawn_multiple", "Request_get_status", "Ireduce", "Iallreduce", "Ibarrier",
    "Ibcast", "Ialltoall", "Ialltoallv", "Iallgather", /* 151-160 */
    "Iallgatherv", "Igather", "Igatherv", "Iscatter", "Iscatterv", "Ireduce_scatter", "Iscan",
    "Reduce_scatter_block", "Ireduce_scatter_block", "Alltoallw", /* 161-170 */
    "Ialltoallw", "Get_accumulate", /* 171-172 */
};

/* Extrae's point-to-point type holds these, its other type Test*, Start* and
 * Request_free, which one might expect with them. */
static const char *const p2p[] = {"Send", "Recv", "Isend", "Irecv", "Wait", "Waitall", "Bsend", "Ssend", "Rsend",
                                  "Ibsend", "Issend", "Irsend", "Cancel", "Sendrecv", "Sendrecv_replace",
                                  "Waitany", "Waitsome", "Probe", "Iprobe", "Bsend_init", "Recv_init",
                                  "Send_init", "Rsend_init", "Ssend_init",
                                  /* not in Extrae: of the same kind */
                                  "Mprobe", "Improbe", "Mrecv", "Imrecv", "Isendrecv", "Isendrecv_replace",
                                  "Psend_init", "Precv_init", "Pready", "Pready_range", "Pready_list",
                                  "Parrived", NULL};

static int in(const char *n, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(n, *list))
            return 1;
    return 0;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static uint32_t type_of(const char *n)
{
    static const char *const coll[] = {"bcast", "barrier", "reduce", "allreduce", "alltoall", "gather",
                                       "scatter", "allgather", "scan", "exscan", "neighbor_", NULL};
    if (in(n, p2p))
        return VT_PRV_MPI_P2P;
    if (starts(n, "File_"))
        return VT_PRV_MPI_IO;
    if (starts(n, "Win_") || !strcmp(n, "Put") || !strcmp(n, "Get") || !strcmp(n, "Accumulate") ||
        !strcmp(n, "Get_accumulate") || !strcmp(n, "Rput") || !strcmp(n, "Rget") || !strcmp(n, "Raccumulate") ||
        !strcmp(n, "Rget_accumulate") || !strcmp(n, "Fetch_and_op") || !strcmp(n, "Compare_and_swap"))
        return VT_PRV_MPI_RMA;
    /* collectives, blocking (Bcast), non-blocking (Ibcast) and persistent (Bcast_init) */
    char low[96];
    size_t k = 0;
    for (; n[k] && k + 1 < sizeof low; k++)
        low[k] = (char)(n[k] >= 'A' && n[k] <= 'Z' ? n[k] - 'A' + 'a' : n[k]);
    low[k] = '\0';
    for (const char *const *c = coll; *c; c++)
        if (starts(low, *c) || (low[0] == 'i' && starts(low + 1, *c)))
            return VT_PRV_MPI_COLLECTIVE;
    return VT_PRV_MPI_OTHER;
}

uint32_t vt__prv_mpi(const char *name, uint32_t *type)
{
    char base[96];
    const char *n = starts(name, "MPI_") ? name + 4 : name;
    size_t len = strlen(n);
    if (len > 2 && len < sizeof base && !strcmp(n + len - 2, "_c")) {
        memcpy(base, n, len - 2);
        base[len - 2] = '\0';
        n = base;
    }
    *type = type_of(n);
    for (size_t i = 0; i < sizeof extrae_names / sizeof extrae_names[0]; i++)
        if (!strcmp(n, extrae_names[i]))
            return (uint32_t)i + 1;
    return 0;
}

const char *vt__prv_mpi_type_label(uint32_t type)
{
    switch (type) {
    case VT_PRV_MPI_P2P: return "MPI Point-to-point";
    case VT_PRV_MPI_COLLECTIVE: return "MPI Collective Comm";
    case VT_PRV_MPI_RMA: return "MPI One-sided";
    case VT_PRV_MPI_IO: return "MPI I/O";
    default: return "MPI Other";
    }
}
