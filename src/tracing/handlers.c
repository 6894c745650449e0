/* Per-call logic behind the generated wrappers: each handler turns one MPI call into
 * one record (doc/format.md) or a profile count. */
#include "vt_config.h"
#include "tracing/handlers_priv.h"
#include "tracing/handlers_p2p.h"
#include "tracing/callsites.h"
#include "tracing/crash.h"
#include "tracing/mpistatus.h"
#include "tracing/requests.h"
#include "mpid/piggyback.h"

#include <stdlib.h>
#include <string.h>

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
    /* calls before unrecorded: see vt_profile_records */
    if (vt__mt) {
        __atomic_fetch_add(&vt__profile[fn].calls, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&vt__profile[fn].unrecorded, 1, __ATOMIC_RELAXED);
    } else {
        vt__profile[fn].calls++;
        vt__profile[fn].unrecorded++;
    }
}

/* ------------------------------------------------------------------ point to point */

void vt_leave_plain(vt_call *c, int rc)
{
    (void)rc;
    int64_t exit = vt_now();
    uint8_t *p = rec_call_skip(c, exit, 0);
    rec_done_skip(c, p, exit, 0);
}

void vt_leave_abort(vt_call *c, int code)
{
    vt_leave_plain(c, MPI_SUCCESS);
    vt_crash_abort(code);
}

void vt__rec_none(const vt_call *c, int64_t exit, uint64_t bytes)
{
    vt_lock();
    profile_add(c->fn, exit - c->enter, bytes, 0);
    vt_unlock();
    /* a filtered call is part of the burst around it, for the reduction too */
    if (VT_UNLIKELY(vt__rt) && !(vt__filter_on && vt_filter_drop(c->fn, c->site)))
        vt_rt_unrecorded(c);
}

void vt_leave_send(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type)
{
    vt_leave_inline_send(c, c->fn, rc, comm, dest, tag, count, type);
}

/* PLAIN (a constant): vt__rec_special was 0, as in handlers_p2p.h (issue 18). */
static VT_ALWAYS_INLINE void leave_isend_body(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count,
                                              MPI_Datatype type, MPI_Request *req, int persistent, int plain)
{
    int64_t exit = plain ? vt_tsc_now() : vt_now();
    uint64_t bytes = type_bytes(count, type);
    uint8_t *p = rec_open(c, c->fn, exit, 5 * VT_UVAR_MAX, 1, plain);
    if (p || (!plain && rec_skipped())) {
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
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = put_send_side(p, cm, dest, tag, bytes);
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_close(c, c->fn, p, exit, bytes, 1, plain);
}

void vt_leave_isend(vt_call *c, int rc, MPI_Comm comm, int dest, int tag, MPI_Count count, MPI_Datatype type,
                    MPI_Request *req, int persistent)
{
    if (VT_LIKELY(!vt__rec_special))
        leave_isend_body(c, rc, comm, dest, tag, count, type, req, persistent, 1);
    else
        leave_isend_body(c, rc, comm, dest, tag, count, type, req, persistent, 0);
}

void vt_leave_recv(vt_call *c, int rc, MPI_Comm comm, MPI_Status *st)
{
    vt_leave_inline_recv(c, c->fn, rc, comm, st);
}

static VT_ALWAYS_INLINE void leave_irecv_body(vt_call *c, int rc, MPI_Comm comm, int source, int tag,
                                              MPI_Request *req, int persistent, int plain)
{
    int64_t exit = plain ? vt_tsc_now() : vt_now();
    uint8_t *p = rec_open(c, c->fn, exit, 2 * VT_UVAR_MAX, 1, plain);
    if (p || (!plain && rec_skipped())) {
        vt_comm *cm = comm_of(comm);
        vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_RECV, persistent) : NULL;
        if (r) {
            r->comm = (int32_t)cm->index;
            r->peer = source;
            r->tag = tag;
        }
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_close(c, c->fn, p, exit, 0, 1, plain);
}

void vt_leave_irecv(vt_call *c, int rc, MPI_Comm comm, int source, int tag, MPI_Request *req, int persistent)
{
    if (VT_LIKELY(!vt__rec_special))
        leave_irecv_body(c, rc, comm, source, tag, req, persistent, 1);
    else
        leave_irecv_body(c, rc, comm, source, tag, req, persistent, 0);
}

void vt_leave_sendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                       MPI_Datatype stype, MPI_Status *st)
{
    (void)rc;
    int64_t exit = vt_now();
    uint64_t sbytes = type_bytes(scount, stype), rbytes = status_bytes(st);
    uint8_t *p = rec_call_skip(c, exit, 7 * VT_UVAR_MAX);
    if (p || rec_skipped()) {
        vt_comm *cm = comm_of(comm);
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = put_send_side(p, cm, dest, stag, sbytes);
            p = put_recv_side(p, cm, st, rbytes);
        }
        if (VT_UNLIKELY(vt__rt))
            rt_sync_send(c, c->fn, MPI_COMM_NULL, cm, dest, sbytes);
    }
    rec_done_skip(c, p, exit, sbytes + rbytes);
}

void vt_leave_isendrecv(vt_call *c, int rc, MPI_Comm comm, int dest, int stag, MPI_Count scount,
                        MPI_Datatype stype, int source, int rtag, MPI_Count rcount, MPI_Datatype rtype,
                        MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = type_bytes(scount, stype);
    uint8_t *p = rec_call_skip(c, exit, 5 * VT_UVAR_MAX);
    if (p || rec_skipped()) {
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
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = put_send_side(p, cm, dest, stag, bytes);
            p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done_skip(c, p, exit, bytes);
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
    uint8_t *p = rec_call_skip(c, exit, 5 * VT_UVAR_MAX);
    if (p || rec_skipped()) {
        vt_comm *cm = comm_of(comm);
        if (p) {
            p = vt_put_uvar(p, cm->index);
            p = put_recv_side(p, cm, st, bytes);
        }
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
            if (p)
                p = vt_put_uvar(p, id);
        }
    }
    rec_done_skip(c, p, exit, 0);
}

void vt_leave_mrecv(vt_call *c, int rc, MPI_Message msg, MPI_Status *st, MPI_Request *req)
{
    int64_t exit = vt_now();
    uint64_t bytes = st ? status_bytes(st) : 0;
    uint8_t *p = rec_call_skip(c, exit, 4 * VT_UVAR_MAX);
    if (p || rec_skipped()) {
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
        if (p)
            p = vt_put_uvar(p, id);
        if (st) {
            vt_comm *cm = comm >= 0 ? vt_comm_at((uint32_t)comm) : NULL;
            int src = st->MPI_SOURCE;
            if (p) {
                p = vt_put_svar(p, src == MPI_PROC_NULL ? -2 : cm ? vt_comm_peer(cm, src) : -1);
                p = vt_put_svar(p, st->MPI_TAG);
                p = vt_put_uvar(p, bytes);
            }
        } else {
            vt_req *r = rc == MPI_SUCCESS ? vt_req_add(*req, VT_REQ_RECV, 0) : NULL;
            if (r)
                r->comm = comm;
            if (p)
                p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done_skip(c, p, exit, bytes);
}

/* ------------------------------------------------------------------ completion */

/* MPI_THREAD_MULTIPLE: the entries of the saved requests, claimed before the call.
 * Looked up by handle after the call, they could be another thread's: MPI frees a
 * completed request's handle in the call and may give it at once to another thread's
 * new request (MPICH hands out the handle freed last first), whose entry, and even its
 * completion, can come before this call records (test/mpi/threads_reuse.c). */
static __attribute__((noinline)) void claim_reqs(vt_call *c)
{
    int n = c->nreq;
    c->reqs = n <= 4 ? c->inline_reqs : malloc(sizeof *c->reqs * (size_t)n);
    if (!c->reqs) {
        c->nreq = 0;   /* as when the handles cannot be saved: no completions recorded */
        return;
    }
    vt_lock();
    for (int i = 0; i < n; i++)
        c->reqs[i] = vt_req_claim(c->saved[i]);
    vt_unlock();
}

/* The claimed entries not completed go back to the table's lookups. */
static __attribute__((noinline)) void unclaim_reqs(vt_call *c)
{
    vt_lock();
    for (int i = 0; i < c->nreq; i++)
        if (c->reqs[i])
            c->reqs[i]->claimed = 0;
    vt_unlock();
    if (c->reqs != c->inline_reqs)
        free(c->reqs);
    c->reqs = NULL;
}

/* The entry of saved request I (NULL: none): CLAIMED (a constant: c->reqs is set,
 * threads), or looked up (one thread, where nothing is claimed). The functions below
 * are made twice from it, so that one thread's path tests nothing more than before. */
static VT_ALWAYS_INLINE vt_req *req_at(const vt_call *c, int i, int claimed)
{
    return claimed ? c->reqs[i] : vt_req_get(c->saved[i]);
}

MPI_Status *vt__pre_reqs_any(vt_call *c, int n, MPI_Request *reqs, MPI_Status *statuses, MPI_Status *single)
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
        c->statuses = statuses;
    }
    c->reqs = NULL;
    if (VT_UNLIKELY(vt__mt) && c->nreq)
        claim_reqs(c);
    return c->statuses;
}

void vt_pre_free(vt_call *c, MPI_Request req)
{
    c->nreq = 1;
    c->saved = c->inline_saved;
    c->saved[0] = req;
    c->own_statuses = 0;
    c->reqs = NULL;
    if (VT_UNLIKELY(vt__mt))
        claim_reqs(c);
}

static inline void release_reqs(vt_call *c)
{
    if (VT_UNLIKELY(c->reqs != NULL))
        unclaim_reqs(c);
    if (c->saved != c->inline_saved)
        free(c->saved);
    if (c->own_statuses)
        free(c->statuses);
    c->saved = NULL;
    c->own_statuses = 0;
}

#define ENTRY_MAX (4 * VT_UVAR_MAX + 1)

/* A completion entry's fields (doc/format.md, completion records) from the layer's entry
 * of the request (R; NULL: one it does not know) and its status (S; NULL: none, e.g. a
 * send): *peer, *tag, *bytes; returns the flags. */
static VT_ALWAYS_INLINE unsigned entry_fields(const vt_req *r, const MPI_Status *s, int rc, int *peer_out,
                                              int *tag_out, uint64_t *bytes_out)
{
    unsigned flags = 0;
    int peer = -1, tag = -1;
    uint64_t bytes = 0;
    if (r && r->kind == VT_REQ_RECV) {
        flags |= VT_COMPL_RECV;
        if (r->peer == MPI_PROC_NULL) {
            /* whatever the status says (MPICH 4.0.2 reports source 0 for some) */
            peer = -2;
            tag = MPI_ANY_TAG;
        } else if (r->status_unusable) {
            vt_comm *cm = r->comm >= 0 ? vt_comm_at((uint32_t)r->comm) : NULL;
            peer = r->peer == MPI_ANY_SOURCE || !cm ? VT_PEER_UNKNOWN : vt_comm_peer(cm, r->peer);
            tag = r->tag;
            bytes = r->bytes;
        } else if (s && r->comm == (int32_t)vt__world_index && (unsigned)s->MPI_SOURCE < (unsigned)vt__world_size) {
            peer = s->MPI_SOURCE;   /* MPI_COMM_WORLD's: a world rank, no lookup */
            tag = s->MPI_TAG;
            bytes = status_bytes(s);
        } else if (s) {
            vt_comm *cm = r->comm >= 0 ? vt_comm_at((uint32_t)r->comm) : NULL;
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
    if (VT_UNLIKELY(r && r->cancelled) && s) {
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
    *peer_out = peer;
    *tag_out = tag;
    *bytes_out = bytes;
    return flags;
}

/* One completed request (R, S as entry_fields'): its entry encoded at p (NULL: not
 * encoded, the bookkeeping only), the run-time reduction told (PLAIN, a constant: it is
 * off), its bytes added to *total; the entry is not active any more. Returns p past it. */
static VT_ALWAYS_INLINE uint8_t *put_entry(uint8_t *p, vt_req *r, const MPI_Status *s, int rc, uint64_t *total,
                                           int plain)
{
    int peer, tag;
    uint64_t bytes;
    unsigned flags = entry_fields(r, s, rc, &peer, &tag, &bytes);
    if (!plain && VT_UNLIKELY(vt__rt) && r && !(flags & VT_COMPL_CANCELLED)) {
        if (r->kind == VT_REQ_SEND && r->rt_sync)
            vt_rt_ssend((uint32_t)r->peer, r->rt_seq, r->rt_start, r->bytes);
        else if (r->kind == VT_REQ_COLL && !r->persistent && r->gate_members)
            vt_rt_gate(r->gate_comm, r->gate_seq, r->gate_members, 1);
    }
    if (p) {
        p = vt_put_uvar(p, r ? r->id : 0);
        p = vt_put_uvar_4(p, flags, vt_zigzag(peer), vt_zigzag(tag), bytes);
    }
    *total += bytes;
    if (r) {
        r->cancelled = 0;
        r->active = 0;
    }
    return p;
}

/* The one completion rule: record that the saved requests at pos[0..n) completed, with
 * statuses st[0..n) (NULL: no status, e.g. a send). */
static VT_ALWAYS_INLINE void record_entries(vt_call *c, int64_t exit, int rc, int n, const int *pos,
                                            MPI_Status *const *st, int claimed)
{
    uint64_t bytes_total = 0;
    uint8_t *p = rec_call_skip(c, exit, VT_UVAR_MAX + (size_t)n * ENTRY_MAX);
    if (p || rec_skipped()) {
        if (p)
            p = vt_put_uvar(p, (uint64_t)n);
        for (int j = 0; j < n; j++) {
            /* one thread: looked up and (not persistent) removed in one walk */
            vt_req *r = claimed ? c->reqs[pos[j]] : vt_req_take(c->saved[pos[j]]);
            p = put_entry(p, r, st[j], rc, &bytes_total, 0);
            if (claimed && r && !r->persistent) {
                vt_req_remove(r);
                c->reqs[pos[j]] = NULL;   /* not ours to unclaim any more */
            }
        }
    }
    rec_done_skip(c, p, exit, bytes_total);
}

static __attribute__((noinline)) void record_claimed(vt_call *c, int64_t exit, int rc, int n, const int *pos,
                                                    MPI_Status *const *st)
{
    record_entries(c, exit, rc, n, pos, st, 1);
}

static void record_completion(vt_call *c, int64_t exit, int rc, int n, const int *pos, MPI_Status *const *st)
{
    if (VT_UNLIKELY(c->reqs != NULL))
        record_claimed(c, exit, rc, n, pos, st);
    else
        record_entries(c, exit, rc, n, pos, st, 0);
}

/* An inactive persistent request "completes" at once with an empty status: not an event. */
static VT_ALWAYS_INLINE int req_active(const vt_call *c, int i, int claimed)
{
    if (!claimed && VT_LIKELY(vt__req_persistent == 0))
        return 1;
    vt_req *r = req_at(c, i, claimed);
    return !r || r->active;
}

/* Positions of the saved requests vt_post_all records as completed, into pos; how many. */
static VT_ALWAYS_INLINE int completed_all(const vt_call *c, int rc, int *pos, int claimed)
{
    int n = 0;
    for (int i = 0; i < c->nreq; i++) {
        if (c->saved[i] == MPI_REQUEST_NULL || !req_active(c, i, claimed))
            continue;
        if (rc == MPI_ERR_IN_STATUS && c->statuses != MPI_STATUSES_IGNORE &&
            c->statuses[i].MPI_ERROR == MPI_ERR_PENDING)
            continue;
        pos[n++] = i;
    }
    return n;
}

static __attribute__((noinline)) int completed_claimed(const vt_call *c, int rc, int *pos)
{
    return completed_all(c, rc, pos, 1);
}

/* Completes positions pos[0..n); statuses by position (`by_pos`) or by order. */
static void complete(vt_call *c, int64_t exit, int rc, int n, const int *pos, MPI_Status *statuses, int by_pos)
{
    /* filled below for j < n, all that is read (not cleared first: 16 stores a call) */
    MPI_Status *small[16];
    small[0] = NULL;
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

VT_HIDDEN void (*vt__test_post)(void);

/* The completion calls' common case: one thread (nothing claimed), success and no
 * persistent request in the table (every entry active). What completed is known without
 * positions or status pointers gathered first, and each entry is looked up and removed in
 * one walk. HOW says where the N completed requests are:
 *   FEW_ALL   (Wait, Waitall, Test, Testall of one to four requests): every saved request
 *             not MPI_REQUEST_NULL, with the status at its position (the call's own
 *             arrays: never MPI_STATUSES_IGNORE); N is their number, below 128;
 *   FEW_ANY   (Waitany, Testany): the saved request at *IDX, with status ST;
 *   FEW_SOME  (Waitsome, Testsome): those at IDX[0..N), with the statuses in that order.
 * PLAIN (a constant): no filter, periodicity, skip or reduction (vt__rec_special has at
 * most the clock's bit). The record is the one record_entries writes, byte for byte. */
enum { FEW_ALL, FEW_ANY, FEW_SOME };

static VT_ALWAYS_INLINE void post_few(vt_call *c, int64_t exit, int how, int n, const int *idx, MPI_Status *st,
                                      int plain)
{
    uint64_t bytes_total = 0;
    uint8_t *p = rec_open(c, c->fn, exit, VT_UVAR_MAX + (size_t)n * ENTRY_MAX, 1, plain);
    if (p || (!plain && rec_skipped())) {
        if (p && how == FEW_SOME)
            p = vt_put_uvar(p, (uint64_t)n);
        else if (p)
            *p++ = (uint8_t)n;   /* the count's varint: n < 128 */
        if (how == FEW_ALL) {
            for (int i = 0; i < c->nreq; i++)
                if (c->saved[i] != MPI_REQUEST_NULL)
                    p = put_entry(p, vt_req_take(c->saved[i]), &c->statuses[i], MPI_SUCCESS, &bytes_total, plain);
        } else {
            for (int j = 0; j < n; j++)
                p = put_entry(p, vt_req_take(c->saved[idx[j]]), how == FEW_ANY ? st : &c->statuses[j], MPI_SUCCESS,
                              &bytes_total, plain);
        }
    }
    rec_close(c, c->fn, p, exit, bytes_total, 1, plain);
}

/* Whether a completion call that returned RC may take post_few (SPECIAL: vt__rec_special). */
static VT_ALWAYS_INLINE int few_ok(int rc, unsigned special)
{
    return rc == MPI_SUCCESS && !vt__req_persistent && !(special & VT_REC_MT);
}

/* post_few, the plain way where nothing special is on; then the call's saved requests go. */
static VT_ALWAYS_INLINE void post_few_release(vt_call *c, int64_t exit, unsigned special, int how, int n,
                                              const int *idx, MPI_Status *st)
{
    if (VT_LIKELY(!(special & ~VT_REC_CLOCK)))
        post_few(c, exit, how, n, idx, st, 1);
    else
        post_few(c, exit, how, n, idx, st, 0);
    release_reqs(c);
}

void vt_post_all(vt_call *c, int rc, int flag)
{
    if (VT_UNLIKELY(c->reqs != NULL) && vt__test_post)
        vt__test_post();
    if (VT_UNLIKELY(vt__pb)) {
        pb_post_all(c, rc, flag);
        vt_pb_poll();
    }
    int64_t exit = vt_now();
    unsigned special = vt__rec_special;
    if (VT_LIKELY(flag && (unsigned)c->nreq - 1u < 4 && few_ok(rc, special))) {
        int n = 0;
        for (int i = 0; i < c->nreq; i++)
            n += c->saved[i] != MPI_REQUEST_NULL;
        if (n) {
            post_few_release(c, exit, special, FEW_ALL, n, NULL, NULL);
            return;
        }
    }
    if (!flag || c->nreq == 0 || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS && c->nreq > 1)) {
        leave_counted(c, exit);
        release_reqs(c);
        return;
    }
    int small[16];
    int *pos = c->nreq <= 16 ? small : malloc(sizeof(int) * (size_t)c->nreq);
    int n = !pos ? 0 : VT_UNLIKELY(c->reqs != NULL) ? completed_claimed(c, rc, pos) : completed_all(c, rc, pos, 0);
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
    unsigned special = vt__rec_special;
    if (VT_LIKELY(flag && (unsigned)index < (unsigned)c->nreq && few_ok(rc, special))) {
        post_few_release(c, exit, special, FEW_ANY, 1, &index, st);
        return;
    }
    if (!flag || index == MPI_UNDEFINED || index < 0 || index >= c->nreq ||
        !(c->reqs ? req_active(c, index, 1) : req_active(c, index, 0))) {
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
    unsigned special = vt__rec_special;
    /* c->statuses is MPI_STATUSES_IGNORE only where no array could be had for them */
    if (VT_LIKELY(outcount > 0 && c->statuses != MPI_STATUSES_IGNORE && few_ok(rc, special))) {
        post_few_release(c, exit, special, FEW_SOME, outcount, indices, NULL);
        return;
    }
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
    uint8_t *p = rec_call_skip(c, exit, (size_t)(n + 1) * VT_UVAR_MAX);
    if (p || rec_skipped()) {
        int encode = p != NULL;
        if (encode)
            p = vt_put_uvar(p, (uint64_t)n);
        for (int i = 0; i < n; i++) {
            vt_req *r = vt_req_get(reqs[i]);
            if (r && rc == MPI_SUCCESS)
                r->active = 1;
            if (r && r->kind == VT_REQ_SEND) {
                r->rt_seq = 2 * vt__calls + 1;
                r->rt_start = c->enter;
            }
            if (encode)
                p = vt_put_uvar(p, r ? r->id : 0);
        }
    }
    rec_done_skip(c, p, exit, 0);
}

static void leave_one_request(vt_call *c, MPI_Request h, int forget, int cancel)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call_skip(c, exit, VT_UVAR_MAX);
    if (p || rec_skipped()) {
        vt_req *r = vt_req_get(h);
        if (p)
            p = vt_put_uvar(p, r ? r->id : 0);
        if (r && cancel)
            r->cancelled = 1;
        if (r && forget)
            vt_req_remove(r);
    }
    rec_done_skip(c, p, exit, 0);
}

/* MPI_Request_free. A receive freed while active still takes a message (MPI completes it
 * later, unseen): its completion is recorded here, with the source and tag it was posted
 * with, so that the trace's matching stays whole; the model treats it as nobody waiting. */
void vt_leave_request_free(vt_call *c, int rc)
{
    int64_t exit = vt_now();
    uint8_t *p = rec_call_skip(c, exit, VT_UVAR_MAX + 1 + ENTRY_MAX);
    if (p || rec_skipped()) {
        vt_req *r = c->reqs ? req_at(c, 0, 1) : req_at(c, 0, 0);
        int freed_recv = r && rc == MPI_SUCCESS && r->kind == VT_REQ_RECV && r->active && !r->cancelled &&
                         r->peer != VT_REQ_NO_SOURCE;
        if (p) {
            p = vt_put_uvar(p, r ? r->id : 0);
            p = vt_put_uvar(p, freed_recv ? 1 : 0);
        }
        if (freed_recv && p) {
            vt_comm *cm = r->comm >= 0 ? vt_comm_at((uint32_t)r->comm) : NULL;
            int peer = r->peer == MPI_PROC_NULL ? -2
                       : r->peer == MPI_ANY_SOURCE || !cm ? VT_PEER_UNKNOWN : vt_comm_peer(cm, r->peer);
            p = vt_put_uvar(p, r->id);
            p = vt_put_uvar(p, VT_COMPL_RECV | VT_COMPL_FREED | (r->persistent ? VT_COMPL_PERSISTENT : 0));
            p = vt_put_svar(p, peer);
            p = vt_put_svar(p, r->tag);
            p = vt_put_uvar(p, 0);
        }
        if (r && rc == MPI_SUCCESS) {
            vt_req_remove(r);
            if (c->reqs)
                c->reqs[0] = NULL;
        }
    }
    rec_done_skip(c, p, exit, 0);
    release_reqs(c);
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

