/* Per-call logic behind the generated wrappers: each handler turns one MPI call into
 * one record (doc/format.md) or a profile count. */
#include "vt_config.h"
#include "tracing/handlers.h"
#include "tracing/buffer.h"
#include "tracing/callsites.h"
#include "tracing/comms.h"
#include "tracing/mpistatus.h"
#include "tracing/requests.h"
#include "tracing/period.h"
#include "mpid/piggyback.h"
#include "tracing/rtreduce.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

static inline uint64_t type_bytes(MPI_Count count, MPI_Datatype t)
{
    if (count <= 0 || t == MPI_DATATYPE_NULL)
        return 0;
#ifdef MPICH
    /* MPICH encodes the size of a predefined basic type in its handle. */
    if (((unsigned)t & 0xfc000000u) == 0x4c000000u)
        return (uint64_t)count * (((unsigned)t >> 8) & 0xffu);
#endif
    MPI_Count sz = 0;
    if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || sz < 0)
        return 0;
    return (uint64_t)count * (uint64_t)sz;
}

static inline uint64_t status_bytes(const MPI_Status *st)
{
    MPI_Count n = vt_status_bytes(st);
    return n > 0 ? (uint64_t)n : 0;
}

static inline vt_comm *comm_of(MPI_Comm h)
{
    vt_comm *c = vt_comm_get(h);
    return c ? c : vt_comm_invalid();
}

/* Opens the record of call c: code, enter, duration, call site. Holds the buffer lock
 * until rec_done. NULL when recording has stopped. */
static inline uint8_t *rec_call(const vt_call *c, int64_t exit, size_t extra)
{
    /* VTRACE_PERIODIC: iteration markers, and records of kept-enough iterations skipped
     * (never under MPI_THREAD_MULTIPLE) */
    if (VT_UNLIKELY(vt__period_on) && vt_period_step(c->fn, vt_callsite(c->site), c->enter))
        return NULL;
    uint8_t *p = vt_rec_begin(4 * VT_UVAR_MAX + extra);
    if (VT_UNLIKELY(!p))
        return NULL;
    /* under the buffer's lock: the call-site table is shared by the threads */
    uint64_t site = vt_callsite(c->site);
    p = vt_put_uvar(p, VT_CODE_FIRST_FN + c->fn);
    p = vt_put_svar(p, c->enter - vt__buf.prev_exit);
    p = vt_put_uvar(p, (uint64_t)(exit - c->enter));
    p = vt_put_uvar(p, site);
    return p;
}

static inline void profile_add(unsigned fn, int64_t dur, uint64_t bytes, int recorded)
{
    vt_profile_entry *e = &vt__profile[fn];
    e->calls++;
    e->time_ns += (uint64_t)dur;
    e->bytes += bytes;
    e->records += (uint64_t)recorded;
}

static inline void rec_done(const vt_call *c, uint8_t *p, int64_t exit, uint64_t bytes)
{
    if (VT_LIKELY(p != NULL)) {
        profile_add(c->fn, exit - c->enter, bytes, 1);
        if (VT_UNLIKELY(vt__rt))
            vt_rt_call(c, exit, vt_callsite(c->site));
        vt__calls++;
        vt_rec_end(p, exit);
    } else {
        vt_lock();
        profile_add(c->fn, exit - c->enter, bytes, 0);
        vt_unlock();
        if (VT_UNLIKELY(vt__rt))
            vt_rt_unrecorded(c);
    }
    vt__depth = 0;
}

/* A call that is counted in the profile but not written (it completed nothing). */
static void leave_counted(const vt_call *c, int64_t exit)
{
    vt_lock();
    profile_add(c->fn, exit - c->enter, 0, 0);
    vt_unlock();
    if (VT_UNLIKELY(vt__rt))
        vt_rt_discard();
    vt__depth = 0;
}

void vt_count(unsigned fn)
{
    if (!vt__active || vt__depth)
        return;
    if (vt__mt)
        __atomic_fetch_add(&vt__profile[fn].calls, 1, __ATOMIC_RELAXED);
    else
        vt__profile[fn].calls++;
}

/* ------------------------------------------------------------------ point to point */

/* Layout letters p t b: the send side, peer as a world rank. */
static inline uint8_t *put_send_side(uint8_t *p, const vt_comm *cm, int dest, int tag, uint64_t bytes)
{
    p = vt_put_svar(p, vt_comm_peer(cm, dest));
    p = vt_put_svar(p, tag);
    return vt_put_uvar(p, bytes);
}

/* Layout letters P T B: the receive side, from the status. */
static inline uint8_t *put_recv_side(uint8_t *p, const vt_comm *cm, const MPI_Status *st, uint64_t bytes)
{
    p = vt_put_svar(p, vt_comm_peer(cm, st->MPI_SOURCE));
    p = vt_put_svar(p, st->MPI_TAG);
    return vt_put_uvar(p, bytes);
}

void vt_leave_plain(vt_call *c, int rc)
{
    (void)rc;
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 0);
    rec_done(c, p, exit, 0);
}

/* The run-time reduction: a blocking send (or Sendrecv's send half) whose message is
 * synchronous to the model completes at this call (replay.c, sync_sender). */
static void rt_sync_send(const vt_call *c, const vt_comm *cm, int dest, uint64_t bytes)
{
    if (!vt_rt_is_sync(c->fn, bytes))
        return;
    int peer = dest == MPI_PROC_NULL ? -1 : vt_comm_peer(cm, dest);
    if (peer >= 0)
        vt_rt_ssend((uint32_t)peer, 2 * vt__calls + 1, c->enter, bytes);
}

void vt_leave_send(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 4 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        p = vt_put_uvar(p, cm->index);
        p = put_send_side(p, cm, dest, tag, bytes);
        if (VT_UNLIKELY(vt__rt))
            rt_sync_send(c, cm, dest, bytes);
    }
    rec_done(c, p, exit, bytes);
}

void vt_leave_isend(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type,
                    MPI_Request *req, int persistent)
{
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 5 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_SEND, persistent) : NULL;
        int peer = vt_comm_peer(cm, dest);
        if (r) {
            r->comm = (int32_t)cm->index;
            r->peer = peer;
            r->tag = tag;
            r->bytes = bytes;
            /* the run-time reduction: a synchronous message completes at the Wait (a
             * persistent one's sequence and start are its MPI_Start's) */
            r->rt_sync = peer >= 0 && vt_rt_is_sync(c->fn, bytes);
            r->rt_seq = 2 * vt__calls + 1;
            r->rt_start = c->enter;
        }
        p = vt_put_uvar(p, cm->index);
        p = put_send_side(p, cm, dest, tag, bytes);
        p = vt_put_uvar(p, r ? r->id : 0);
    }
    rec_done(c, p, exit, bytes);
}

void vt_leave_recv(vt_call *c, int rc, MPI_Comm comm, MPI_Status *st)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t bytes = status_bytes(st);
    uint8_t *p = rec_call(c, exit, 4 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        p = vt_put_uvar(p, cm->index);
        p = put_recv_side(p, cm, st, bytes);
    }
    rec_done(c, p, exit, bytes);
}

void vt_leave_irecv(vt_call *c, int rc, MPI_Comm comm, int source, int tag, MPI_Request *req, int persistent)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_RECV, persistent) : NULL;
        if (r) {
            r->comm = (int32_t)cm->index;
            r->peer = source;
            r->tag = tag;
        }
        p = vt_put_uvar(p, cm->index);
        p = vt_put_uvar(p, r ? r->id : 0);
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_sendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                       MPI_Datatype stype, MPI_Status *st)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t sbytes = type_bytes(scount, stype), rbytes = status_bytes(st);
    uint8_t *p = rec_call(c, exit, 7 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        p = vt_put_uvar(p, cm->index);
        p = put_send_side(p, cm, dest, stag, sbytes);
        p = put_recv_side(p, cm, st, rbytes);
        if (VT_UNLIKELY(vt__rt))
            rt_sync_send(c, cm, dest, sbytes);
    }
    rec_done(c, p, exit, sbytes + rbytes);
}

void vt_leave_isendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                        MPI_Datatype stype, int source, int rtag, MPI_Count rcount, MPI_Datatype rtype,
                        MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(scount, stype);
    uint8_t *p = rec_call(c, exit, 5 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        /* One request; its completion reports the receive side, from what was posted:
         * MPICH 4.0.2 completes it with no usable status (piggyback-notes.md, pitfall 5). */
        vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_RECV, 0) : NULL;
        if (r) {
            r->comm = (int32_t)cm->index;
            r->peer = source;
            r->tag = rtag;
            r->bytes = type_bytes(rcount, rtype);
            r->status_unusable = 1;
        }
        p = vt_put_uvar(p, cm->index);
        p = put_send_side(p, cm, dest, stag, bytes);
        p = vt_put_uvar(p, r ? r->id : 0);
    }
    rec_done(c, p, exit, bytes);
}

/* Matched messages (MPI_Mprobe/Improbe) waiting for their MPI_Mrecv/Imrecv. */
static struct pending_msg { MPI_Message h; uint64_t id; int32_t comm; } *msgs;
static size_t nmsgs, capmsgs;
static uint64_t next_msg_id = 1;

void vt_leave_probe(vt_call *c, int rc, MPI_Comm comm, int flag, MPI_Status *st, MPI_Message *msg)
{
    int64_t exit = vt_now();
    if (rc != MPI_SUCCESS || !flag) {
        leave_counted(c, exit);
        return;
    }
    if (VT_UNLIKELY(vt__rt) && st->MPI_SOURCE != MPI_PROC_NULL) {
        vt_comm *cm = comm_of(comm);
        int src = vt_comm_peer(cm, st->MPI_SOURCE);
        if (src >= 0)
            vt_rt_probe((uint32_t)src, st->MPI_TAG, cm->gid, msg ? *msg : MPI_MESSAGE_NULL, vt_pb_post_order);
        else
            vt_rt_unsupported("a probe whose source is not known");
    }
    uint64_t bytes = status_bytes(st);
    uint8_t *p = rec_call(c, exit, 5 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        p = vt_put_uvar(p, cm->index);
        p = put_recv_side(p, cm, st, bytes);
        if (msg) {
            uint64_t id = 0;
            if (*msg != MPI_MESSAGE_NULL && *msg != MPI_MESSAGE_NO_PROC) {
                if (nmsgs == capmsgs) {
                    capmsgs = capmsgs ? capmsgs * 2 : 16;
                    msgs = realloc(msgs, capmsgs * sizeof *msgs);
                }
                id = next_msg_id++;
                msgs[nmsgs++] = (struct pending_msg){*msg, id, (int32_t)cm->index};
            }
            p = vt_put_uvar(p, id);
        }
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_mrecv(vt_call *c, int rc, MPI_Message msg, MPI_Status *st, MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = st ? status_bytes(st) : 0;
    uint8_t *p = rec_call(c, exit, 4 * VT_UVAR_MAX);
    if (p) {
        uint64_t id = 0;
        int32_t comm = -1;
        for (size_t i = 0; i < nmsgs; i++) {
            if (msgs[i].h == msg) {
                id = msgs[i].id;
                comm = msgs[i].comm;
                msgs[i] = msgs[--nmsgs];
                break;
            }
        }
        p = vt_put_uvar(p, id);
        if (st) {
            vt_comm *cm = comm >= 0 ? vt_comm_at((uint32_t)comm) : NULL;
            int src = st->MPI_SOURCE;
            p = vt_put_svar(p, src == MPI_PROC_NULL ? -2 : cm ? vt_comm_peer(cm, src) : -1);
            p = vt_put_svar(p, st->MPI_TAG);
            p = vt_put_uvar(p, bytes);
        } else {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_RECV, 0) : NULL;
            if (r)
                r->comm = comm;
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done(c, p, exit, bytes);
}

/* ------------------------------------------------------------------ completion */

MPI_Status *vt_pre_reqs(vt_call *c, int n, MPI_Request *reqs, MPI_Status *statuses, MPI_Status *single)
{
    if (n < 0)
        n = 0;
    c->nreq = n;
    c->live = reqs;
    c->own_statuses = 0;
    c->saved = n <= 4 ? c->inline_saved : malloc(sizeof(MPI_Request) * (size_t)n);
    if (!c->saved) {
        c->nreq = 0;
        c->saved = c->inline_saved;
    } else if (n) {
        memcpy(c->saved, reqs, sizeof(MPI_Request) * (size_t)n);
    }
    if (single) {
        c->statuses = statuses == MPI_STATUS_IGNORE ? single : statuses;
    } else if (statuses == MPI_STATUSES_IGNORE) {
        c->statuses = n <= 4 ? c->inline_statuses : malloc(sizeof(MPI_Status) * (size_t)n);
        c->own_statuses = c->statuses != c->inline_statuses;
        if (!c->statuses)
            c->statuses = MPI_STATUSES_IGNORE;
    } else {
        c->statuses = statuses;   /* NULL for Waitany/Testany: their status is separate */
    }
    return c->statuses;
}

static void release_reqs(vt_call *c)
{
    if (c->saved != c->inline_saved)
        free(c->saved);
    if (c->own_statuses)
        free(c->statuses);
    c->saved = NULL;
    c->own_statuses = 0;
}

#define ENTRY_MAX (4 * VT_UVAR_MAX + 1)

/* The one completion rule: record that the saved requests at pos[0..n) completed, with
 * statuses st[0..n) (NULL: no status, e.g. a send). */
static void record_completion(vt_call *c, int64_t exit, int rc, int n, const int *pos, MPI_Status *const *st)
{
    uint64_t bytes_total = 0;
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX + (size_t)n * ENTRY_MAX);
    if (p) {
        p = vt_put_uvar(p, (uint64_t)n);
        for (int j = 0; j < n; j++) {
            MPI_Request h = c->saved[pos[j]];
            vt_req *r = vt_req_find(h);
            const MPI_Status *s = st[j];
            unsigned flags = 0;
            int peer = -1, tag = -1;
            uint64_t bytes = 0;
            if (r && r->kind == VT_REQ_RECV) {
                flags |= VT_COMPL_RECV;
                vt_comm *cm = r->comm >= 0 ? vt_comm_at((uint32_t)r->comm) : NULL;
                if (r->peer == MPI_PROC_NULL) {
                    /* whatever the status says (MPICH 4.0.2 reports source 0 for some) */
                    peer = -2;
                    tag = MPI_ANY_TAG;
                } else if (r->status_unusable) {
                    peer = r->peer == MPI_ANY_SOURCE || !cm ? VT_PEER_UNKNOWN : vt_comm_peer(cm, r->peer);
                    tag = r->tag;
                    bytes = r->bytes;
                } else if (s) {
                    peer = s->MPI_SOURCE == MPI_PROC_NULL ? -2 : cm ? vt_comm_peer(cm, s->MPI_SOURCE) : -1;
                    tag = s->MPI_TAG;
                    bytes = status_bytes(s);
                } else {
                    peer = VT_PEER_UNKNOWN;
                }
            } else if (r) {
                peer = r->peer;
                tag = r->tag;
                bytes = r->bytes;
                if (s && r->kind == VT_REQ_IO)
                    bytes = status_bytes(s);
            }
            if (r && r->cancelled && s) {
                int cancelled = 0;
                PMPI_Test_cancelled(s, &cancelled);
                if (cancelled) {
                    flags |= VT_COMPL_CANCELLED;
                    bytes = 0;
                    if (flags & VT_COMPL_RECV)
                        peer = VT_PEER_UNKNOWN;
                }
            }
            if (rc == MPI_ERR_IN_STATUS && s && s->MPI_ERROR != MPI_SUCCESS)
                flags |= VT_COMPL_ERROR;
            else if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
                flags |= VT_COMPL_ERROR;
            if (r && r->persistent)
                flags |= VT_COMPL_PERSISTENT;
            if (VT_UNLIKELY(vt__rt) && r && !(flags & VT_COMPL_CANCELLED)) {
                if (r->kind == VT_REQ_SEND && r->rt_sync)
                    vt_rt_ssend((uint32_t)r->peer, r->rt_seq, r->rt_start, r->bytes);
                else if (r->kind == VT_REQ_COLL && !r->persistent && r->gate_members)
                    vt_rt_gate(r->gate_comm, r->gate_seq, r->gate_members, 1);
            }
            p = vt_put_uvar(p, r ? r->id : 0);
            p = vt_put_uvar(p, flags);
            p = vt_put_svar(p, peer);
            p = vt_put_svar(p, tag);
            p = vt_put_uvar(p, bytes);
            bytes_total += bytes;
            if (r) {
                r->cancelled = 0;
                r->active = 0;
                if (!r->persistent)
                    vt_req_remove(r);
            }
        }
    }
    rec_done(c, p, exit, bytes_total);
}

/* An inactive persistent request "completes" at once with an empty status: not an event. */
static int req_active(MPI_Request h)
{
    vt_req *r = vt_req_find(h);
    return !r || r->active;
}

/* Completes positions pos[0..n); statuses by position (`by_pos`) or by order. */
static void complete(vt_call *c, int64_t exit, int rc, int n, const int *pos, MPI_Status *statuses, int by_pos)
{
    MPI_Status *small[16] = {0};
    MPI_Status **st = n <= 16 ? small : malloc(sizeof(MPI_Status *) * (size_t)n);
    if (!st) {
        leave_counted(c, exit);
        return;
    }
    for (int j = 0; j < n; j++) {
        if (statuses == MPI_STATUSES_IGNORE || statuses == NULL)
            st[j] = NULL;
        else
            st[j] = &statuses[by_pos ? pos[j] : j];
    }
    record_completion(c, exit, rc, n, pos, st);
    if (st != small)
        free(st);
}

/* ------------------------------------------------------------------ the transport's completions */

/* The piggyback transport unpacks what completed before anything is recorded (the
 * counts the user and the trace see are the payload's). */
static void pb_post_all(vt_call *c, int rc, int flag)
{
    if (!flag)
        return;
    int uncertain = rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS && c->nreq > 1;
    for (int i = 0; i < c->nreq; i++) {
        MPI_Status *st = c->statuses == MPI_STATUSES_IGNORE ? NULL : &c->statuses[i];
        if (c->saved[i] == MPI_REQUEST_NULL)
            continue;
        if (rc == MPI_ERR_IN_STATUS && st && st->MPI_ERROR == MPI_ERR_PENDING)
            continue;
        /* an error that says nothing per request: those MPI freed are complete */
        if (uncertain && c->live[i] != MPI_REQUEST_NULL)
            continue;
        vt_pb_completed(c->saved[i], st);
    }
}

static void pb_post_some(vt_call *c, int outcount, const int *indices)
{
    if (outcount == MPI_UNDEFINED)
        return;
    for (int j = 0; j < outcount; j++)
        if (indices[j] >= 0 && indices[j] < c->nreq)
            vt_pb_completed(c->saved[indices[j]], c->statuses == MPI_STATUSES_IGNORE ? NULL : &c->statuses[j]);
}

void vt_post_all(vt_call *c, int rc, int flag)
{
    if (VT_UNLIKELY(vt__pb)) {
        pb_post_all(c, rc, flag);
        vt_pb_poll();
    }
    int64_t exit = vt_now();
    if (!flag || c->nreq == 0 || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS && c->nreq > 1)) {
        leave_counted(c, exit);
        release_reqs(c);
        return;
    }
    int small[16];
    int *pos = c->nreq <= 16 ? small : malloc(sizeof(int) * (size_t)c->nreq);
    int n = 0;
    for (int i = 0; pos && i < c->nreq; i++) {
        if (c->saved[i] == MPI_REQUEST_NULL || !req_active(c->saved[i]))
            continue;
        if (rc == MPI_ERR_IN_STATUS && c->statuses != MPI_STATUSES_IGNORE &&
            c->statuses[i].MPI_ERROR == MPI_ERR_PENDING)
            continue;
        pos[n++] = i;
    }
    if (n)
        complete(c, exit, rc, n, pos, c->statuses, 1);
    else
        leave_counted(c, exit);
    if (pos != small)
        free(pos);
    release_reqs(c);
}

void vt_post_any(vt_call *c, int rc, int index, int flag, MPI_Status *st)
{
    if (VT_UNLIKELY(vt__pb) && flag && index != MPI_UNDEFINED && index >= 0 && index < c->nreq)
        vt_pb_completed(c->saved[index], st);
    vt_pb_poll();
    int64_t exit = vt_now();
    if (!flag || index == MPI_UNDEFINED || index < 0 || index >= c->nreq || !req_active(c->saved[index])) {
        leave_counted(c, exit);
    } else {
        MPI_Status *one[1] = {st};
        record_completion(c, exit, rc, 1, &index, one);
    }
    release_reqs(c);
}

void vt_post_some(vt_call *c, int rc, int outcount, const int *indices)
{
    if (VT_UNLIKELY(vt__pb)) {
        pb_post_some(c, outcount, indices);
        vt_pb_poll();
    }
    int64_t exit = vt_now();
    if (outcount == MPI_UNDEFINED || outcount <= 0)
        leave_counted(c, exit);
    else
        complete(c, exit, rc, outcount, indices, c->statuses, 0);
    release_reqs(c);
}

void vt_leave_start(vt_call *c, int rc, int n, MPI_Request *reqs)
{
    (void)rc;
    int64_t exit = vt_now();
    if (n < 0)
        n = 0;
    uint8_t *p = rec_call(c, exit, (size_t)(n + 1) * VT_UVAR_MAX);
    if (p) {
        p = vt_put_uvar(p, (uint64_t)n);
        for (int i = 0; i < n; i++) {
            vt_req *r = vt_req_find(reqs[i]);
            if (r && rc == MPI_SUCCESS)
                r->active = 1;
            if (r && r->kind == VT_REQ_SEND) {
                r->rt_seq = 2 * vt__calls + 1;
                r->rt_start = c->enter;
            }
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done(c, p, exit, 0);
}

static void leave_one_request(vt_call *c, MPI_Request h, int forget, int cancel)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p) {
        vt_req *r = vt_req_find(h);
        p = vt_put_uvar(p, r ? r->id : 0);
        if (r && cancel)
            r->cancelled = 1;
        if (r && forget)
            vt_req_remove(r);
    }
    rec_done(c, p, exit, 0);
}

/* MPI_Request_free. A receive freed while active still takes a message (MPI completes it
 * later, unseen): its completion is recorded here, with the source and tag it was posted
 * with, so that the trace's matching stays whole; the model treats it as nobody waiting. */
void vt_leave_request_free(vt_call *c, int rc, MPI_Request req)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX + 1 + ENTRY_MAX);
    if (p) {
        vt_req *r = vt_req_find(req);
        p = vt_put_uvar(p, r ? r->id : 0);
        int freed_recv = r && rc == MPI_SUCCESS && r->kind == VT_REQ_RECV && r->active && !r->cancelled &&
                         r->peer != VT_REQ_NO_SOURCE;
        p = vt_put_uvar(p, freed_recv ? 1 : 0);
        if (freed_recv) {
            vt_comm *cm = r->comm >= 0 ? vt_comm_at((uint32_t)r->comm) : NULL;
            int peer = r->peer == MPI_PROC_NULL ? -2
                       : r->peer == MPI_ANY_SOURCE || !cm ? VT_PEER_UNKNOWN : vt_comm_peer(cm, r->peer);
            p = vt_put_uvar(p, r->id);
            p = vt_put_uvar(p, VT_COMPL_RECV | VT_COMPL_FREED | (r->persistent ? VT_COMPL_PERSISTENT : 0));
            p = vt_put_svar(p, peer);
            p = vt_put_svar(p, r->tag);
            p = vt_put_uvar(p, 0);
        }
        if (r && rc == MPI_SUCCESS)
            vt_req_remove(r);
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_cancel(vt_call *c, int rc, MPI_Request req)
{
    leave_one_request(c, req, 0, rc == MPI_SUCCESS);
}

void vt_leave_get_status(vt_call *c, int rc, MPI_Request req, int flag)
{
    if (rc != MPI_SUCCESS || !flag) {
        leave_counted(c, vt_now());
        return;
    }
    leave_one_request(c, req, 0, 0);
}

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
    uint8_t *p = rec_call(c, exit, 7 * VT_UVAR_MAX);
    if (p) {
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
        p = vt_put_uvar(p, cm->index);
        p = vt_put_svar(p, wroot);
        p = vt_put_uvar(p, seq);
        p = vt_put_uvar(p, sb);
        p = vt_put_uvar(p, rb);
        if (req) {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_COLL, persistent) : NULL;
            if (r) {
                r->comm = (int32_t)cm->index;
                r->bytes = rb;
                r->gate_comm = cm->gid;
                r->gate_seq = seq;
                r->gate_members = members;
            }
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done(c, p, exit, sb + rb);
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
            uint64_t gid = vt_comm_child_gid(pc, count, *newcomm, how == VT_NEW_GROUP, tag);
            vt_comm *nc = vt_comm_register(*newcomm, gid, (int)pc->index, vt_fn_name[c->fn]);
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
            uint64_t gid = vt_hash64(vt_hash64(vt_hash64(VT_HASH_INIT, pc->gid), count),
                                     (uint64_t)vt_comm_lowest(pc));
            vt_comm *nc = vt_comm_register_like(*newcomm, gid, pc, vt_fn_name[c->fn]);
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

void vt_leave_comm_free(vt_call *c, int rc, MPI_Comm comm)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        p = vt_put_uvar(p, cm->index);
        if (rc == MPI_SUCCESS)
            vt_comm_forget(comm);
    }
    rec_done(c, p, exit, 0);
}

/* ------------------------------------------------------------------ MPI-IO */

static struct open_file { MPI_File h; int open; } *files;
static uint32_t nfiles, capfiles;
static char **file_names;
static int32_t *file_comms;

static int64_t file_index(MPI_File fh)
{
    for (uint32_t i = nfiles; i-- > 0;)
        if (files[i].open && files[i].h == fh)
            return i;
    return -1;
}

void vt_leave_file_open(vt_call *c, int rc, MPI_Comm comm, const char *name, MPI_File *fh)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        vt_comm *cm = comm_of(comm);
        if (nfiles == capfiles) {
            capfiles = capfiles ? capfiles * 2 : 8;
            files = realloc(files, capfiles * sizeof *files);
            file_names = realloc(file_names, capfiles * sizeof *file_names);
            file_comms = realloc(file_comms, capfiles * sizeof *file_comms);
        }
        files[nfiles] = (struct open_file){rc == MPI_SUCCESS ? *fh : MPI_FILE_NULL, rc == MPI_SUCCESS};
        file_names[nfiles] = strdup(name ? name : "");
        file_comms[nfiles] = (int32_t)cm->index;
        p = vt_put_uvar(p, cm->index);
        p = vt_put_uvar(p, nfiles++);
    }
    rec_done(c, p, exit, 0);
}

static uint8_t *put_file(uint8_t *p, MPI_File fh)
{
    int64_t i = file_index(fh);
    if (i < 0) {
        /* Opened before we started: give it an unnamed entry. */
        if (nfiles == capfiles) {
            capfiles = capfiles ? capfiles * 2 : 8;
            files = realloc(files, capfiles * sizeof *files);
            file_names = realloc(file_names, capfiles * sizeof *file_names);
            file_comms = realloc(file_comms, capfiles * sizeof *file_comms);
        }
        files[nfiles] = (struct open_file){fh, 1};
        file_names[nfiles] = strdup("");
        file_comms[nfiles] = 0;
        i = nfiles++;
    }
    return vt_put_uvar(p, (uint64_t)i);
}

void vt_leave_file_close(vt_call *c, int rc, MPI_File fh)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p) {
        p = put_file(p, fh);
        int64_t i = file_index(fh);
        if (rc == MPI_SUCCESS && i >= 0)
            files[i].open = 0;
    }
    rec_done(c, p, exit, 0);
}

void vt_leave_file_local(vt_call *c, int rc, MPI_File fh)
{
    (void)rc;
    int64_t exit = vt_now();
    uint8_t *p = rec_call(c, exit, VT_UVAR_MAX);
    if (p)
        p = put_file(p, fh);
    rec_done(c, p, exit, 0);
}

void vt_leave_io(vt_call *c, int rc, MPI_File fh, MPI_Offset offset, MPI_Count count, MPI_Datatype type,
                 MPI_Status *st, MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = st && rc == MPI_SUCCESS ? status_bytes(st) : type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 4 * VT_UVAR_MAX);
    if (p) {
        p = put_file(p, fh);
        p = vt_put_svar(p, offset);
        p = vt_put_uvar(p, bytes);
        if (req) {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_IO, 0) : NULL;
            if (r)
                r->bytes = bytes;
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done(c, p, exit, bytes);
}

void vt_leave_rma(vt_call *c, int rc, int target, MPI_Count count, MPI_Datatype type)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(count, type);
    uint8_t *p = rec_call(c, exit, 2 * VT_UVAR_MAX);
    if (p) {
        p = vt_put_svar(p, target);
        p = vt_put_uvar(p, bytes);
    }
    rec_done(c, p, exit, bytes);
}

uint32_t vt_files_count(void) { return nfiles; }

const char *vt_file_name(uint32_t i, int32_t *comm)
{
    *comm = file_comms[i];
    return file_names[i];
}
