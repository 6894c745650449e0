/* The hand-written handlers the generated wrappers (src/mpi/wrappers.c) call.
 * Each takes the call's return code and the arguments its class needs, records one
 * event (or counts it in the profile) and leaves the layer. */
#ifndef VT_HANDLERS_H
#define VT_HANDLERS_H

#include "tracing/state.h"

enum vt_coll_kind {
    VT_COLL_BARRIER, VT_COLL_BCAST, VT_COLL_GATHER, VT_COLL_GATHERV, VT_COLL_SCATTER,
    VT_COLL_SCATTERV, VT_COLL_ALLGATHER, VT_COLL_ALLGATHERV, VT_COLL_ALLTOALL,
    VT_COLL_ALLTOALLV, VT_COLL_ALLTOALLW, VT_COLL_REDUCE, VT_COLL_ALLREDUCE,
    VT_COLL_REDUCE_SCATTER, VT_COLL_REDUCE_SCATTER_BLOCK, VT_COLL_SCAN, VT_COLL_EXSCAN,
    VT_COLL_NEIGHBOR_ALLGATHER, VT_COLL_NEIGHBOR_ALLGATHERV, VT_COLL_NEIGHBOR_ALLTOALL,
    VT_COLL_NEIGHBOR_ALLTOALLV, VT_COLL_NEIGHBOR_ALLTOALLW,
};

/* Collective buffer arguments, by role; absent ones are zero. */
typedef struct vt_collargs {
    const void *sbuf, *rbuf;
    MPI_Count scount, rcount;
    const int *scounts_i, *rcounts_i;
    const MPI_Count *scounts_c, *rcounts_c;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
} vt_collargs;

#define VT_NO_ROOT (-1000000)
enum { VT_NEW_COLLECTIVE, VT_NEW_GROUP };

VT_HIDDEN int64_t vt_init_begin(void);
VT_HIDDEN void vt_init_end(unsigned fn, int64_t enter, const void *site, int rc, int provided);
VT_HIDDEN void vt_finalize_begin(unsigned fn, const void *site);
VT_HIDDEN void vt_finalize_end(int rc);
VT_HIDDEN void vt_count(unsigned fn);

static inline MPI_Status *vt_status(MPI_Status *user, MPI_Status *scratch)
{
    return user == MPI_STATUS_IGNORE ? scratch : user;
}

VT_HIDDEN void vt_leave_plain(vt_call *c, int rc);
/* MPI_Abort(code) is being called: its record, then the trace ends (crash.h). */
VT_HIDDEN void vt_leave_abort(vt_call *c, int code);
VT_HIDDEN void vt_leave_send(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type);
VT_HIDDEN void vt_leave_isend(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type,
                              MPI_Request *req, int persistent);
VT_HIDDEN void vt_leave_recv(vt_call *c, int rc, MPI_Comm comm, MPI_Status *st);
VT_HIDDEN void vt_leave_irecv(vt_call *c, int rc, MPI_Comm comm, int source, int tag, MPI_Request *req, int persistent);
VT_HIDDEN void vt_leave_sendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                                 MPI_Datatype stype, MPI_Status *st);
VT_HIDDEN void vt_leave_isendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                                  MPI_Datatype stype, int source, int rtag, MPI_Count rcount, MPI_Datatype rtype,
                                  MPI_Request *req);
VT_HIDDEN void vt_leave_probe(vt_call *c, int rc, MPI_Comm comm, int flag, MPI_Status *st, MPI_Message *msg);
VT_HIDDEN void vt_leave_mrecv(vt_call *c, int rc, MPI_Message msg, MPI_Status *st, MPI_Request *req);

/* Wait/Test family: one completion rule for every variant. Before the call the handles
 * are saved (MPI nulls those it frees) and the statuses to pass chosen (ours where the
 * user ignores them: a receive's come from its status); returns them. SINGLE (not NULL:
 * Wait, Test, Waitany, Testany) is our one status, STATUSES then the user's one status. */
VT_HIDDEN MPI_Status *vt__pre_reqs_any(vt_call *c, int n, MPI_Request *reqs, MPI_Status *statuses,
                                       MPI_Status *single);
/* Its common case inline in the wrappers (no call, no memcpy): one to four requests, one
 * thread (under MPI_THREAD_MULTIPLE the entries are claimed first). */
static inline __attribute__((always_inline)) MPI_Status *vt_pre_reqs(vt_call *c, int n, MPI_Request *reqs,
                                                                     MPI_Status *statuses, MPI_Status *single)
{
    if (VT_UNLIKELY((unsigned)n - 1u >= 4 || (vt__rec_special & VT_REC_MT)))
        return vt__pre_reqs_any(c, n, reqs, statuses, single);
    c->nreq = n;
    c->live = reqs;
    c->own_statuses = 0;
    c->reqs = NULL;
    c->saved = c->inline_saved;
    for (int i = 0; i < n; i++)
        c->inline_saved[i] = reqs[i];
    if (single)
        return c->statuses = statuses == MPI_STATUS_IGNORE ? single : statuses;
    return c->statuses = statuses == MPI_STATUSES_IGNORE ? c->inline_statuses : statuses;
}
/* Before MPI_Request_free: saves REQ (claimed under MPI_THREAD_MULTIPLE, as
 * vt_pre_reqs does) for vt_leave_request_free. */
VT_HIDDEN void vt_pre_free(vt_call *c, MPI_Request req);
VT_HIDDEN void vt_post_all(vt_call *c, int rc, int flag);
/* Test hook (VTRACE_TEST_POST_HOOK=1, MPI_THREAD_MULTIPLE): called by vt_post_all after
 * the MPI call returned, before the layer looks at its requests; a test program that
 * defines vtrace_test_post_hook makes threads interleave there (test/mpi/threads_reuse.c). */
extern VT_HIDDEN void (*vt__test_post)(void);
extern void vtrace_test_post_hook(void) __attribute__((weak, visibility("default")));
VT_HIDDEN void vt_post_any(vt_call *c, int rc, int index, int flag, MPI_Status *st);
VT_HIDDEN void vt_post_some(vt_call *c, int rc, int outcount, const int *indices);

VT_HIDDEN void vt_leave_start(vt_call *c, int rc, int n, MPI_Request *reqs);
VT_HIDDEN void vt_leave_request_free(vt_call *c, int rc);
VT_HIDDEN void vt_leave_cancel(vt_call *c, int rc, MPI_Request req);
VT_HIDDEN void vt_leave_get_status(vt_call *c, int rc, MPI_Request req, int flag);

VT_HIDDEN void vt_leave_coll(vt_call *c, int rc, int kind, MPI_Comm comm, int root, const vt_collargs *a,
                             MPI_Request *req, int persistent);
VT_HIDDEN void vt_leave_comm_new(vt_call *c, int rc, MPI_Comm parent, MPI_Comm *newcomm, int how, int tag);
VT_HIDDEN void vt_leave_comm_idup(vt_call *c, int rc, MPI_Comm parent, MPI_Comm *newcomm, MPI_Request *req);
VT_HIDDEN struct vt_comm *vt_enter_comm_free(MPI_Comm comm);
VT_HIDDEN void vt_leave_comm_free(vt_call *c, int rc, struct vt_comm *comm);

VT_HIDDEN void vt_leave_io(vt_call *c, int rc, MPI_File fh, MPI_Offset offset, MPI_Count count, MPI_Datatype type,
                           MPI_Status *st, MPI_Request *req);
VT_HIDDEN void vt_leave_file_open(vt_call *c, int rc, MPI_Comm comm, const char *name, MPI_File *fh);
VT_HIDDEN void vt_leave_file_close(vt_call *c, int rc, MPI_File fh);
VT_HIDDEN void vt_leave_file_local(vt_call *c, int rc, MPI_File fh);
VT_HIDDEN void vt_leave_rma(vt_call *c, int rc, int target, MPI_Count count, MPI_Datatype type);

/* Files opened so far, for the definitions. */
VT_HIDDEN uint32_t vt_files_count(void);
VT_HIDDEN const char *vt_file_name(uint32_t i, int32_t *comm);

#endif
