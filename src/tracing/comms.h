/* Communicators seen by the layer: global ids every member derives without
 * communication (doc/format.md), world-rank translation, collective counters. */
#ifndef VT_COMMS_H
#define VT_COMMS_H

#include <stdint.h>

#include "format/commid.h"
#include "tracing/state.h"

typedef struct vt_comm {
    MPI_Comm handle;
    uint64_t gid;
    uint32_t index;          /* position in this rank's communicator table */
    int size;
    int myrank;              /* this rank in it (local group), -1 invalid */
    int *world;              /* world rank of each rank; NULL: identity (MPI_COMM_WORLD) */
    int inter;
    int rsize;
    int *rworld;             /* intercommunicators: world ranks of the remote group */
    int parent;              /* index, -1 none */
    uint64_t ncreated;       /* communicators created from this one so far */
    uint64_t next_count;     /* one more than the count of its last child in the table
                              * stored as made over it (vt_comm_origin's count_base) */
    uint64_t collseq;        /* collective calls made on it so far */
    const char *how;
    int alive;
    vt_comm_origin origin;   /* what the trace stores of gid (format 2.0): checked to give it */
} vt_comm;

VT_HIDDEN void vt_comms_init(int world_rank, int world_size);
/* The record of a live handle; an unknown one (made before we started, or by a call we
 * do not wrap) is registered on first sight. */
VT_HIDDEN vt_comm *vt__comm_get_slow(MPI_Comm h);
extern VT_HIDDEN vt_comm *vt__world;
/* vt__world's size (0 before it is registered) and index: a rank r of MPI_COMM_WORLD
 * with 0 <= r < vt__world_size is world rank r (the handlers of MPI_Send and MPI_Recv,
 * issue 18). */
extern VT_HIDDEN int vt__world_size;
extern VT_HIDDEN uint32_t vt__world_index;
static inline vt_comm *vt_comm_get(MPI_Comm h)
{
    if (VT_LIKELY(h == MPI_COMM_WORLD && vt__world))
        return vt__world;
    return vt__comm_get_slow(h);
}
/* O: what GID is derived from (vt_comm_id_derive); stored as the id itself where the
 * members the trace holds do not give it (another MPI world's). */
VT_HIDDEN vt_comm *vt_comm_register(MPI_Comm h, uint64_t gid, int parent, const char *how, const vt_comm_origin *o);
VT_HIDDEN void vt_comm_forget(MPI_Comm h);
/* World rank of rank r of c (the remote group of an intercommunicator); -2 for
 * MPI_PROC_NULL, -1 for other negative values. */
static inline int vt_comm_peer(const vt_comm *c, int r)
{
    if (VT_UNLIKELY(r < 0))
        return r == MPI_PROC_NULL ? -2 : r == MPI_ROOT ? -4 : -1;
    if (c->inter)
        return r < c->rsize ? c->rworld[r] : -1;
    if (!c->world)
        return r;
    return r < c->size ? c->world[r] : -1;
}
/* Lowest world rank among the members (both groups of an intercommunicator). */
VT_HIDDEN int vt_comm_lowest(const vt_comm *c);
VT_HIDDEN uint32_t vt_comms_count(void);
VT_HIDDEN vt_comm *vt_comm_at(uint32_t index);
/* vt_comms_gids (the table's ids) is declared in rtreduce.h, its one caller. */


/* Id of `child`, made by the `count`-th creation call over `parent`, or (group_only)
 * by a call over the new group only with `tag`; *O: what it is derived from. */
VT_HIDDEN uint64_t vt_comm_child_gid(const vt_comm *parent, uint64_t count, MPI_Comm child, int group_only, int tag,
                                     vt_comm_origin *o);
/* A communicator with the members of `like` (MPI_Comm_idup: usable only later). */
VT_HIDDEN vt_comm *vt_comm_register_like(MPI_Comm h, uint64_t gid, const vt_comm *like, const char *how,
                                         const vt_comm_origin *o);
/* Placeholder for a handle MPI rejected (the call returned an error). */
VT_HIDDEN vt_comm *vt_comm_invalid(void);

#endif
