/* Handlers of collective calls (bytes moved per rank, neighbourhood collectives by their
 * topology) and of the calls that create and free communicators. */
#include "vt_config.h"
#include "tracing/handlers_priv.h"
#include "tracing/requests.h"
#include "mpid/piggyback.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ collectives */

/* Bytes of blocks 0..n-1 with counts ci or cc and type t (or types ts); real, when
 * given, marks the blocks that move data (a neighbourhood collective's MPI_PROC_NULL
 * neighbours of a Cartesian topology move none). */
static uint64_t sum_counts(const int *ci, const MPI_Count *cc, int n, MPI_Datatype t, const uint8_t *real)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        if (!real || real[i])
            s += type_bytes(ci ? ci[i] : cc ? cc[i] : 0, t);
    return s;
}

static uint64_t sum_counts_w(const int *ci, const MPI_Count *cc, const MPI_Datatype *ts, int n, const uint8_t *real)
{
    uint64_t s = 0;
    for (int i = 0; ts && i < n; i++)
        if (!real || real[i])
            s += type_bytes(ci ? ci[i] : cc ? cc[i] : 0, ts[i]);
    return s;
}

static int count_real(const uint8_t *real, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += !real || real[i];
    return k;
}

/* A neighbourhood collective's blocks (MPI 4.0 §8.6): nin receive blocks, nout send
 * blocks, in the order of the buffers; for a Cartesian topology in_real/out_real (room
 * for VT_NBR_MAX) mark the neighbours that exist, NULL elsewhere (every neighbour
 * exists). Returns 0, or -1 when comm has no topology. */
#define VT_NBR_MAX 64
static int neighbor_blocks(MPI_Comm comm, int *nin, int *nout, uint8_t *in_real, uint8_t *out_real, int *masked)
{
    int topo = MPI_UNDEFINED, me = 0;
    *masked = 0;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return -1;
    if (topo == MPI_CART) {
        int ndims = 0;
        if (PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS)
            return -1;
        *nin = *nout = 2 * ndims;
        if (2 * ndims > VT_NBR_MAX)
            return 0;
        /* per dimension: the source at -1, then the one at +1 (MPI 4.0 §8.6) */
        for (int d = 0; d < ndims; d++) {
            int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
            if (PMPI_Cart_shift(comm, d, 1, &lo, &hi) != MPI_SUCCESS)
                return -1;
            in_real[2 * d] = out_real[2 * d] = lo != MPI_PROC_NULL;
            in_real[2 * d + 1] = out_real[2 * d + 1] = hi != MPI_PROC_NULL;
        }
        *masked = 1;
        return 0;
    }
    if (topo == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &me);
        if (PMPI_Graph_neighbors_count(comm, me, nin) != MPI_SUCCESS)
            return -1;
        *nout = *nin;
        return 0;
    }
    if (topo == MPI_DIST_GRAPH) {
        int weighted = 0;
        return PMPI_Dist_graph_neighbors_count(comm, nin, nout, &weighted) == MPI_SUCCESS ? 0 : -1;
    }
    return -1;
}

/* Bytes a neighbourhood collective sends and receives, counted as for the other
 * collectives: the buffer blocks the call moves (an allgather's one send buffer once;
 * blocks to and from MPI_PROC_NULL move nothing). */
static void neighbor_bytes(int kind, MPI_Comm comm, const vt_collargs *a, uint64_t *sb, uint64_t *rb)
{
    int nin = 0, nout = 0, masked = 0;
    uint8_t in_mask[VT_NBR_MAX], out_mask[VT_NBR_MAX];
    *sb = *rb = 0;
    if (neighbor_blocks(comm, &nin, &nout, in_mask, out_mask, &masked))
        return;
    const uint8_t *in_real = masked ? in_mask : NULL, *out_real = masked ? out_mask : NULL;
    switch (kind) {
    case VT_COLL_NEIGHBOR_ALLGATHER:
        *sb = count_real(out_real, nout) ? type_bytes(a->scount, a->stype) : 0;
        *rb = type_bytes(a->rcount, a->rtype) * (uint64_t)count_real(in_real, nin);
        break;
    case VT_COLL_NEIGHBOR_ALLGATHERV:
        *sb = count_real(out_real, nout) ? type_bytes(a->scount, a->stype) : 0;
        *rb = sum_counts(a->rcounts_i, a->rcounts_c, nin, a->rtype, in_real);
        break;
    case VT_COLL_NEIGHBOR_ALLTOALL:
        *sb = type_bytes(a->scount, a->stype) * (uint64_t)count_real(out_real, nout);
        *rb = type_bytes(a->rcount, a->rtype) * (uint64_t)count_real(in_real, nin);
        break;
    case VT_COLL_NEIGHBOR_ALLTOALLV:
        *sb = sum_counts(a->scounts_i, a->scounts_c, nout, a->stype, out_real);
        *rb = sum_counts(a->rcounts_i, a->rcounts_c, nin, a->rtype, in_real);
        break;
    case VT_COLL_NEIGHBOR_ALLTOALLW:
        *sb = sum_counts_w(a->scounts_i, a->scounts_c, a->stypes, nout, out_real);
        *rb = sum_counts_w(a->rcounts_i, a->rcounts_c, a->rtypes, nin, in_real);
        break;
    }
}

static void coll_bytes(int kind, const vt_comm *cm, int me_root, int my_rank, const vt_collargs *a,
                       uint64_t *sb, uint64_t *rb)
{
    int n = cm->inter ? cm->rsize : cm->size;
    int in_place = a->sbuf == MPI_IN_PLACE;
    uint64_t s = 0, r = 0;
    switch (kind) {
    case VT_COLL_BARRIER:
        break;
    case VT_COLL_BCAST:
        if (me_root)
            s = type_bytes(a->scount, a->stype);
        else
            r = type_bytes(a->scount, a->stype);
        break;
    case VT_COLL_GATHER:
        s = in_place ? 0 : type_bytes(a->scount, a->stype);
        r = me_root ? type_bytes(a->rcount, a->rtype) * (uint64_t)n : 0;
        break;
    case VT_COLL_GATHERV:
        s = in_place ? 0 : type_bytes(a->scount, a->stype);
        r = me_root ? sum_counts(a->rcounts_i, a->rcounts_c, n, a->rtype, NULL) : 0;
        break;
    case VT_COLL_SCATTER:
        s = me_root ? type_bytes(a->scount, a->stype) * (uint64_t)n : 0;
        r = a->rbuf == MPI_IN_PLACE ? 0 : type_bytes(a->rcount, a->rtype);
        break;
    case VT_COLL_SCATTERV:
        s = me_root ? sum_counts(a->scounts_i, a->scounts_c, n, a->stype, NULL) : 0;
        r = a->rbuf == MPI_IN_PLACE ? 0 : type_bytes(a->rcount, a->rtype);
        break;
    case VT_COLL_ALLGATHER:
        s = in_place ? 0 : type_bytes(a->scount, a->stype);
        r = type_bytes(a->rcount, a->rtype) * (uint64_t)n;
        break;
    case VT_COLL_ALLGATHERV:
        s = in_place ? 0 : type_bytes(a->scount, a->stype);
        r = sum_counts(a->rcounts_i, a->rcounts_c, n, a->rtype, NULL);
        break;
    case VT_COLL_ALLTOALL:
        s = type_bytes(a->scount, a->stype) * (uint64_t)n;
        r = type_bytes(a->rcount, a->rtype) * (uint64_t)n;
        break;
    case VT_COLL_ALLTOALLV:
        s = in_place ? 0 : sum_counts(a->scounts_i, a->scounts_c, n, a->stype, NULL);
        r = sum_counts(a->rcounts_i, a->rcounts_c, n, a->rtype, NULL);
        break;
    case VT_COLL_ALLTOALLW:
        s = in_place ? 0 : sum_counts_w(a->scounts_i, a->scounts_c, a->stypes, n, NULL);
        r = sum_counts_w(a->rcounts_i, a->rcounts_c, a->rtypes, n, NULL);
        break;
    case VT_COLL_REDUCE:
        s = type_bytes(a->scount, a->stype);
        r = me_root ? s : 0;
        break;
    case VT_COLL_ALLREDUCE:
    case VT_COLL_SCAN:
    case VT_COLL_EXSCAN:
        s = r = type_bytes(a->scount, a->stype);
        break;
    case VT_COLL_REDUCE_SCATTER_BLOCK:
        r = type_bytes(a->rcount, a->stype);
        s = r * (uint64_t)n;
        break;
    case VT_COLL_REDUCE_SCATTER:
        s = sum_counts(a->rcounts_i, a->rcounts_c, n, a->stype, NULL);
        if (my_rank >= 0 && my_rank < n)
            r = a->rcounts_i ? type_bytes(a->rcounts_i[my_rank], a->stype)
                             : a->rcounts_c ? type_bytes(a->rcounts_c[my_rank], a->stype) : 0;
        break;
    }
    *sb = s;
    *rb = r;
}

void vt_leave_coll(vt_call *c, int rc, int kind, MPI_Comm comm, int root, const vt_collargs *a,
                   MPI_Request *req, int persistent)
{
    vt_pb_poll();   /* a collective is how a program learns a freed receive is in */
    int64_t exit = vt_now();
    uint64_t sb = 0, rb = 0;
    uint8_t *p = rec_call_skip(c, exit, 7 * VT_UVAR_MAX);
    if (p || rec_skipped()) {
        vt_comm *cm = comm_of(comm);
        int my_rank = cm->myrank;
        int me_root = cm->inter ? root == MPI_ROOT : root == my_rank;
        /* after an error the arguments may not describe buffers (MPI said so; our own
         * queries of an invalid datatype would raise MPI's error handler) */
        if (rc != MPI_SUCCESS)
            sb = rb = 0;
        else if (kind >= VT_COLL_NEIGHBOR_ALLGATHER)
            neighbor_bytes(kind, comm, a, &sb, &rb);
        else
            coll_bytes(kind, cm, me_root, my_rank, a, &sb, &rb);
        int wroot = root == VT_NO_ROOT ? -1 : cm->inter ? vt_comm_peer(cm, root)
                                                        : root >= 0 && root < cm->size
                                                              ? (cm->world ? cm->world[root] : root) : -1;
        uint64_t seq = cm->collseq++;
        uint32_t members = cm->myrank >= 0 ? (uint32_t)(cm->size + (cm->inter ? cm->rsize : 0)) : 0;
        if (VT_UNLIKELY(vt__rt) && members && !persistent) {
            if (!req)
                vt_rt_gate(cm->gid, seq, members, 0);
            else
                vt_rt_nbc(cm->gid, seq, members);
        }
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = vt_put_svar(p, wroot);
            p = vt_put_uvar(p, seq);
            p = vt_put_uvar(p, sb);
            p = vt_put_uvar(p, rb);
        }
        if (req) {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_COLL, persistent) : NULL;
            if (r) {
                r->comm = (int32_t)cm->index;
                r->bytes = rb;
                r->gate_comm = cm->gid;
                r->gate_seq = seq;
                r->gate_members = members;
            }
            if (p)
                p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done_skip(c, p, exit, sb + rb);
}

/* ------------------------------------------------------------------ communicators */

void vt_leave_comm_new(vt_call *c, int rc, MPI_Comm parent, MPI_Comm *newcomm, int how, int tag)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        vt_comm *pc = comm_of(parent);
        /* Every member of the parent counts the call, whether it gets a communicator. */
        uint64_t count = how == VT_NEW_COLLECTIVE ? pc->ncreated++ : 0;
        int64_t idx = -1;
        if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
            vt_comm_origin o;
            uint64_t gid = vt_comm_child_gid(pc, count, *newcomm, how == VT_NEW_GROUP, tag, &o);
            vt_comm *nc = vt_comm_register(*newcomm, gid, (int)pc->index, vt_fn_name[c->fn], &o);
            if (nc)
                idx = nc->index;
        }
        p = vt_put_uvar(p, pc->index);
        p = vt_put_svar(p, idx);
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_comm_idup(vt_call *c, int rc, MPI_Comm parent, MPI_Comm *newcomm, MPI_Request *req)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 3 * VT_UVAR_MAX);
    if (p) {
        vt_comm *pc = comm_of(parent);
        uint64_t count = pc->ncreated++;
        int64_t idx = -1;
        vt_req *r = NULL;
        if (rc == MPI_SUCCESS) {
            /* Same members as the parent; the group may not be queried before completion. */
            uint64_t gid = vt_comm_id_parent(pc->gid, count, (uint64_t)vt_comm_lowest(pc));
            vt_comm_origin o = {.kind = VT_CID_PARENT, .count = count};
            vt_comm *nc = vt_comm_register_like(*newcomm, gid, pc, vt_fn_name[c->fn], &o);
            if (nc)
                idx = nc->index;
            r = vt_req_add(*req, VT_REQ_OTHER, 0);
        }
        p = vt_put_uvar(p, pc->index);
        p = vt_put_svar(p, idx);
        p = vt_put_uvar(p, r ? r->id : 0);
    }
    rec_done(c, p, exit, 0);
}

vt_comm *vt_enter_comm_free(MPI_Comm comm)
{
    return comm_of(comm);
}

void vt_leave_comm_free(vt_call *c, int rc, vt_comm *cm)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p) {
        p = vt_put_uvar(p, cm->index);
        if (rc == MPI_SUCCESS)
            vt_comm_forget(cm->handle);
    }
    rec_done(c, p, exit, 0);
}
