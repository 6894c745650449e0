/* The model's events (model.md §2-6): a computation burst or a call of one rank, with the
 * contributors of its completion and the difference of each scenario before and after.
 * The replay builds them from a trace and reports them to its observers (vtrace reduce,
 * the critical path), in program order on each rank and in happened-before order across
 * ranks (a completion after every event it depends on); the run time builds the same
 * events from its own calls and the message headers, for one rank's reduction
 * (rankreduce.h). */
#ifndef VT_MODEL_EVENT_H
#define VT_MODEL_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "format/reader.h"
#include "model/model.h"

enum vt_con_kind {
    VT_CON_LOCAL,    /* the completing rank's own (R, d(R)); rank/seq: itself, this call */
    VT_CON_MSG,      /* a message received: (S + λ_m, D); rank/seq: the sender, its send call */
    VT_CON_SYNC_MSG, /* sender side of a synchronous message: (S + λ_m, D of this rank at the send);
                      * rank/seq: this rank, its send call */
    VT_CON_SYNC_POST,/* sender side: the receiver's (P_q, d_q(P_q)); rank/seq: the receiver, the
                      * posting call */
    VT_CON_GATE,     /* a collective's gate (M, base): see members */
};

/* A gate member: its (enter, d before its collective call). */
typedef struct vt_obs_member {
    int64_t T;
    const int64_t *D;   /* nsc */
    uint32_t rank;
    uint64_t seq;       /* its collective call (blocking) or initiating call (non-blocking) */
} vt_obs_member;

/* One contributor. D is the difference of `rank` before its event `seq` (for LOCAL: of
 * this rank before this call), one value per scenario. */
typedef struct vt_obs_con {
    enum vt_con_kind kind;
    int64_t T;
    const int64_t *D;       /* nsc */
    uint32_t rank;
    uint64_t seq;
    /* MSG, SYNC_MSG: the message */
    int64_t S;              /* the send call's enter, global ns */
    int64_t S_local;        /* ... on the sender's clock */
    int64_t S_exit;         /* MSG of a full trace: the send call's exit, global ns */
    uint64_t bytes;
    int sync;               /* synchronous message (model.md §3) */
    int blocking_send;      /* sent by a blocking MPI_Send/Ssend/Rsend (not Sendrecv, not Isend) */
    uint32_t peer;          /* MSG: the receiver (this rank); SYNC_MSG: the receiver */
    int64_t tag;
    uint64_t comm_id;
    uint64_t post_seq;      /* MSG: the call that posted the receive (sync messages matter) */
    uint64_t send_pos;      /* MSG of a full trace: the send's place among the sender's sends
                             * (vt_matches_csends) */
    int64_t P;              /* ... its enter, global ns */
    int64_t P_local;
    int probed;             /* MSG: completed by a probe (this event is the probe) */
    const void *ext;        /* MSG: the sender's observer data of vt_observer.publish */
    /* GATE */
    int nonblocking;        /* 1: a non-blocking collective completed by this Wait/Test */
    uint64_t gate_comm, gate_seq;   /* communicator id and collective sequence number */
    const vt_obs_member *members;
    size_t nmembers;
    size_t members_at;      /* (the replay's own bookkeeping) */
} vt_obs_con;

typedef struct vt_obs_event {
    uint32_t rank;
    uint64_t seq;           /* model sequence number: 2 callno (burst), 2 callno + 1 (call) */
    int is_call;
    const vt_event *rec;    /* the call's record (for a burst: the call that ends it); NULL
                             * when the trace is a reduced one */
    const char *func;       /* function name, NULL for a burst */
    int64_t fn;             /* function id on this rank, -1 for a burst */
    int64_t callsite;       /* call-site index of the call (for a burst: of the call that ends
                             * it), -1 unknown */
    enum vt_model_kind kind;
    int64_t start, end;     /* global ns: burst [previous exit, enter], call [enter, exit] */
    int candidate;
    const int64_t *delta;   /* nsc: δ of each scenario (0s when not a candidate) */
    const int64_t *d_before, *d_after;   /* nsc */
    /* A completion (ncons > 0): M = max T_k and base = the completion rule's result
     * before the candidate rule. A call that completes nothing has ncons == 0 and is a
     * local event. */
    const vt_obs_con *cons;
    size_t ncons;
    int64_t M;
    const int64_t *base;    /* nsc */
    /* Receives this call completes whose message a probe completed earlier (they are
     * local here): the probes' sequence numbers. */
    const uint64_t *probed_by;
    size_t nprobed;
    int initiates_nbc;      /* a non-blocking collective's initiation (it joins a gate) */
    int gap;                /* a reduced trace's implicit stretch between two records: merged
                             * events of fixed length, never a candidate (func "(merged)") */
    uint64_t nbc_comm, nbc_seq;
} vt_obs_event;

#endif
