/* The piggyback transport (doc/piggyback.md): with VTRACE_MODE=reduced or both, every
 * point-to-point message travels as [header | payload], the payload packed as the
 * user's datatype describes it, and the application sees exactly what plain MPICH
 * gives it (data, status, counts, errors, matching order).
 *
 * The generated wrappers (maint/gen_wrappers.py) call these functions in place of the
 * PMPI_ call when vt__pb is set; the Wait/Test family reaches vt_pb_completed through
 * the one completion routine of handlers.c. Messages to and from MPI_PROC_NULL carry
 * no header. */
#ifndef VT_PIGGYBACK_H
#define VT_PIGGYBACK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tracing/buffer.h"
#include "tracing/rtreduce.h"
#include "tracing/state.h"

/* Header bytes on every message: fixed, so that sender and receiver choose their
 * strategy (pack or struct datatype) independently and agree on the bytes. */
#define VT_PB_H 64
/* ... of which the last VT_RT_POLY_ROOM hold the sender's difference */
_Static_assert(VT_PB_H == VT_RT_HDR_POLY + VT_RT_POLY_ROOM, "header layout: 33 bytes of fields, then the difference");

/* Payloads below this many bytes are packed with their header into one buffer; from
 * it on, a struct datatype [header | user buffer] goes over MPI_BOTTOM (doc/piggyback.md:
 * measured; it is the same-node eager limit of MPICH ch4:ucx). */
#define VT_PB_PACK_MAX 8256

enum vt_pb_mode { VT_PB_STANDARD = 0, VT_PB_SYNC = 1, VT_PB_BUFFERED = 2, VT_PB_READY = 3 };

/* Receives posted so far (the run-time reduction: the order a completion lists its
 * messages in, and which receive takes a probed message). */
extern VT_HIDDEN uint64_t vt_pb_post_order;

/* Nonzero from MPI_Init to MPI_Finalize in the modes that carry headers. */
extern VT_HIDDEN int vt__pb;

/* Called by MPI_Init's wrapper before PMPI_Init: moves the eager limit by the header
 * (UCX_RNDV_THRESH, unless the user set it) when VTRACE_MODE asks for headers. */
VT_HIDDEN void vt_pb_before_init(void);
/* After the configuration is agreed: turn the transport on (every rank the same);
 * t_rdv: the model's rendezvous threshold, for the header's synchronous bit. */
VT_HIDDEN void vt_pb_start_transport(int64_t t_rdv);
/* At MPI_Finalize, before the layer stops: finishes freed requests still in flight. */
VT_HIDDEN void vt_pb_finalize(void);

VT_HIDDEN int vt_pb_send_any(vt_call *c, int mode, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                             MPI_Comm comm);
VT_HIDDEN int vt_pb_isend(vt_call *c, int mode, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                          int tag, MPI_Comm comm, MPI_Request *req);
VT_HIDDEN int vt_pb_send_init(vt_call *c, int mode, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                              int tag, MPI_Comm comm, MPI_Request *req);
VT_HIDDEN int vt_pb_recv_any(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                         MPI_Status *st);
/* vt_pb_recv's call returned rc, not MPI_SUCCESS, into stage (VT_PB_H + bytes). */
VT_HIDDEN void vt_pb_recv_error(const vt_call *c, const uint8_t *stage, int rc, MPI_Count bytes, void *buf,
                                MPI_Count count, MPI_Datatype type, MPI_Comm comm, MPI_Status *st);
VT_HIDDEN int vt_pb_irecv(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                          MPI_Request *req);
VT_HIDDEN int vt_pb_recv_init(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag,
                              MPI_Comm comm, MPI_Request *req);
VT_HIDDEN int vt_pb_sendrecv(vt_call *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                             void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                             MPI_Status *st);
VT_HIDDEN int vt_pb_sendrecv_replace(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag,
                                     int src, int rtag, MPI_Comm comm, MPI_Status *st);
VT_HIDDEN int vt_pb_isendrecv(vt_call *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                              MPI_Request *req);
VT_HIDDEN int vt_pb_isendrecv_replace(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag,
                                      int src, int rtag, MPI_Comm comm, MPI_Request *req);
VT_HIDDEN int vt_pb_mrecv(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *msg,
                          MPI_Status *st);
VT_HIDDEN int vt_pb_imrecv(vt_call *c, void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *msg,
                           MPI_Request *req);

/* After a probe that found a message: the count the user sees is the payload's. */
VT_HIDDEN void vt_pb_probed(int rc, int flag, MPI_Status *st);

/* Persistent requests: refresh headers and payloads before PMPI_Start(all). */
VT_HIDDEN void vt_pb_start(vt_call *c, int n, MPI_Request *reqs);
/* MPI_Request_free: an active request stays ours until it completes. */
VT_HIDDEN int vt_pb_request_free(MPI_Request *req);
/* MPI_Request_get_status found h complete: unpack once, fix the count. */
VT_HIDDEN void vt_pb_peeked(MPI_Request h, int rc, int flag, MPI_Status *st);
/* Request h (its handle before the call) completed with status st (NULL: none):
 * unpack, fix the count, release what the layer held for it. Inline, the test whether
 * the transport holds anything at all (one thread: its count is ours to read; an eager
 * send's request is never held): a completion of nothing held makes no call. */
extern VT_HIDDEN size_t vt_pb_nreqs;
VT_HIDDEN void vt__pb_completed(MPI_Request h, MPI_Status *st);
static inline void vt_pb_completed(MPI_Request h, MPI_Status *st)
{
    if (h != MPI_REQUEST_NULL && (VT_UNLIKELY(vt__mt) || vt_pb_nreqs))
        vt__pb_completed(h, st);
}

/* Requests the user freed while active, finished at the next chance (pitfall 8). */
extern VT_HIDDEN struct pb_req *vt_pb_orphans;
VT_HIDDEN void vt_pb_poll_orphans(void);
static inline void vt_pb_poll(void)
{
    if (VT_UNLIKELY(vt_pb_orphans != NULL))
        vt_pb_poll_orphans();
}

VT_HIDDEN int vt_pb_buffer_attach(void *buf, MPI_Count size);
VT_HIDDEN int vt_pb_buffer_detach(void *addr, int *size);
VT_HIDDEN int vt_pb_buffer_detach_c(void *addr, MPI_Count *size);

/* vt_pb_send and vt_pb_recv, their common case inline in the wrappers: mpid/pb_fast.h */

#endif
