/* The common case of the blocking point-to-point calls with the piggyback header, inline
 * in their wrappers (src/mpi/wrappers.c includes this file): MPI_Send (Bsend, Ssend, Rsend)
 * and MPI_Recv of a built-in type with at most VT_PB_LOCAL_STAGE - VT_PB_H payload bytes,
 * staged on the wrapper's stack. As a call of its own it cost a frame, six saved
 * registers and its arguments passed again (doc/piggyback.md, "fast paths"); every
 * other case is the out-of-line vt_pb_send_any / vt_pb_recv_any of pb_p2p.c. */
#ifndef VT_PB_FAST_H
#define VT_PB_FAST_H

#include "mpid/pb_priv.h"

/* Blocking calls stage small messages on the stack (the thread-local scratch costs a
 * call on the hot path): header and payload up to this many bytes. */
#define VT_PB_LOCAL_STAGE (VT_PB_H + 2048)
_Static_assert(VT_PB_LOCAL_STAGE == VT_RT_RECV_STAGE, "the reduction's receive stage holds what the stack's does");

static VT_ALWAYS_INLINE int vt_pb_send_mode(int mode, const void *b, MPI_Count n, MPI_Datatype t, int dest, int tag,
                                            MPI_Comm comm)
{
    switch (mode) {
    case VT_PB_SYNC: return PMPI_Ssend_c(b, n, t, dest, tag, comm);
    case VT_PB_BUFFERED: return PMPI_Bsend_c(b, n, t, dest, tag, comm);
    case VT_PB_READY: return PMPI_Rsend_c(b, n, t, dest, tag, comm);
    default: return PMPI_Send_c(b, n, t, dest, tag, comm);
    }
}

/* A blocking receive's message for the run-time reduction: posted by this very call. */
static VT_ALWAYS_INLINE void vt_pb_rt_in_now(const vt_call *c, const uint8_t *h, MPI_Comm comm,
                                             const MPI_Status *st, MPI_Message matched)
{
    if (!vt__rt)
        return;
    /* MPI_COMM_WORLD's ranks are world ranks: no lookup (as the receive's handler) */
    if (VT_LIKELY(comm == MPI_COMM_WORLD && matched == MPI_MESSAGE_NULL &&
                  (unsigned)st->MPI_SOURCE < (unsigned)vt__world_size)) {
        vt_rt_msg_now(h, (uint32_t)st->MPI_SOURCE, st->MPI_TAG, vt__world->gid, c->enter, vt_pb_post_order++);
        return;
    }
    const vt_comm *cm = vt_comm_get(comm);
    int w = matched == MPI_MESSAGE_NULL && cm ? vt_comm_peer(cm, st->MPI_SOURCE) : -1;
    if (VT_LIKELY(w >= 0))
        vt_rt_msg_now(h, (uint32_t)w, st->MPI_TAG, cm->gid, c ? c->enter : 0, vt_pb_post_order++);
    else
        vt_pb_rt_in(h, cm, st, st->MPI_SOURCE, 2 * vt__calls + 1, c ? c->enter : 0, vt_pb_post_order++, matched);
}

/* Whether count elements of type take the common case; *size: the type's size, *bytes:
 * the payload bytes. */
static VT_ALWAYS_INLINE int vt_pb_small(MPI_Datatype type, MPI_Count count, MPI_Count *size, MPI_Count *bytes)
{
    *size = vt_pb_builtin_size(type);
    return VT_LIKELY(*size >= 0 && (uint64_t)count <= VT_PB_LOCAL_STAGE - VT_PB_H) &&
           (*bytes = count * *size) <= VT_PB_LOCAL_STAGE - VT_PB_H;
}

/* FN: c->fn, a constant in the generated wrappers (c->fn is loaded again otherwise: the
 * enter's slow path has c's address). */
static VT_ALWAYS_INLINE int vt_pb_send(vt_call *c, unsigned fn, int mode, const void *buf, MPI_Count count,
                                       MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    MPI_Count size, bytes;
    if (!vt_pb_small(type, count, &size, &bytes) || dest == MPI_PROC_NULL)
        return vt_pb_send_any(c, mode, buf, count, type, dest, tag, comm);
    _Alignas(16) uint8_t local[VT_PB_LOCAL_STAGE];
    vt_pb_header_write(local, c, fn, mode, bytes);
    vt_pb_copy(local + VT_PB_H, buf, (size_t)bytes);
    int rc = vt_pb_send_mode(mode, local, VT_PB_H + bytes, MPI_BYTE, dest, tag, comm);
    vt_pb_poll();
    return rc;
}

static VT_ALWAYS_INLINE int vt_pb_recv(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag,
                                       MPI_Comm comm, MPI_Status *st)
{
    MPI_Count size, bytes;
    if (!vt_pb_small(type, count, &size, &bytes) || src == MPI_PROC_NULL)
        return vt_pb_recv_any(c, buf, count, type, src, tag, comm, st);
    _Alignas(16) uint8_t own[VT_PB_LOCAL_STAGE];
    /* the reduction's own modes (one thread): its stage, read again at the call's exit */
    int rt_own = (vt__rec_special & ~(unsigned)VT_REC_SKIP) == VT_REC_RT;
    uint8_t *local = rt_own ? vt__rt_recv_stage : own;
    int rc = PMPI_Recv_c(local, VT_PB_H + bytes, MPI_BYTE, src, tag, comm, st);
    if (VT_UNLIKELY(rc != MPI_SUCCESS)) {
        vt_pb_recv_error(c, local, rc, bytes, buf, count, type, comm, st);
    } else {
        const pb_shape s = {.bytes = bytes, .size = size, .lb = 0, .contiguous = 1};
        if (vt_pb_finish_recv(local, 1, bytes, buf, count, type, &s, st, 0, NULL)) {
            if (VT_LIKELY(rt_own && comm == MPI_COMM_WORLD && (unsigned)st->MPI_SOURCE < (unsigned)vt__world_size))
            {
                vt__rt_recv_of = vt__calls + 1;    /* vt_rt_recv_call at the exit */
                vt_pb_post_order++;                /* this receive's order is the one before */
            }
            else
                vt_pb_rt_in_now(c, local, comm, st, MPI_MESSAGE_NULL);
        }
    }
    vt_pb_poll();
    return rc;
}

#endif
