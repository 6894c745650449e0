/* Requests the layer knows: what a later Wait/Test completes. Handles are not unique
 * (MPICH returns one built-in handle for every request that completed at once), so
 * the table tolerates duplicates: a lookup returns the oldest entry for a handle.
 * Under MPI_THREAD_MULTIPLE a call that may free its requests claims their entries
 * before it calls MPI (vt_req_claim): MPI may give a freed handle to another thread's
 * new request before this call has recorded, and lookups then pass over the claimed
 * entry. The caller holds the buffer's lock (vt_lock) for all of these. */
#ifndef VT_REQUESTS_H
#define VT_REQUESTS_H

#include <stdint.h>

#include "tracing/state.h"

enum vt_req_kind { VT_REQ_SEND, VT_REQ_RECV, VT_REQ_COLL, VT_REQ_IO, VT_REQ_OTHER };

/* A receive whose posted source the layer does not know (matched receives) */
#define VT_REQ_NO_SOURCE INT32_MIN

typedef struct vt_req {
    MPI_Request handle;
    uint64_t id;
    uint8_t kind;
    uint8_t persistent;
    uint8_t cancelled;
    uint8_t active;          /* persistent requests: started and not yet completed */
    uint8_t claimed;         /* held by a Wait/Test family call or Request_free (vt_req_claim) */
    int32_t comm;            /* communicator index */
    int32_t peer, tag;       /* send side; receives: as posted (MPI_ANY_SOURCE, MPI_ANY_TAG,
                              * MPI_PROC_NULL kept as MPI gives them), their status has the real ones */
    uint64_t bytes;          /* send side; receives: the capacity posted */
    uint8_t status_unusable; /* MPI_Isendrecv(_replace): MPICH 4.0.2 fills no status for it */
    /* the run-time reduction (rtreduce.h): sends, whether the model's message is
     * synchronous and the sending call's sequence and enter; non-blocking collectives,
     * their gate */
    uint8_t rt_sync;
    uint64_t rt_seq;
    int64_t rt_start;
    uint64_t gate_comm, gate_seq;
    uint32_t gate_members;
    struct vt_req *next;
} vt_req;

/* Persistent entries in the table: while there is none, every entry is active (a
 * non-blocking request's entry lives from its start to its completion), and a
 * completion need not look its requests up to know it. */
extern VT_HIDDEN uint32_t vt__req_persistent;

VT_HIDDEN vt_req *vt_req_add(MPI_Request h, uint8_t kind, int persistent);
/* The oldest entry for h not claimed, else the oldest claimed (MPI_Cancel from another
 * thread of a request a Wait holds); where nothing is claimed (one thread), the oldest. */
VT_HIDDEN vt_req *vt_req_get(MPI_Request h);
/* A completion's lookup and removal in one walk (one thread: nothing claimed): the oldest
 * entry for h not claimed, NULL when none; a non-persistent one is removed, and stays
 * readable (and writable) until the next vt_req_add. */
VT_HIDDEN vt_req *vt_req_take(MPI_Request h);
/* The oldest entry for h not claimed, claimed now; NULL when none. */
VT_HIDDEN vt_req *vt_req_claim(MPI_Request h);
VT_HIDDEN void vt_req_remove(vt_req *r);

#endif
