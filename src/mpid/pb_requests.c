/* Requests of the piggyback transport: completion, persistent starts, requests the
 * user frees while active, MPI_Request_get_status; and the transport's start and end
 * (the environment it sets before MPI_Init: pb_env.c). */
#include "vt_config.h"
#include "mpid/pb_priv.h"
#include "tracing/log.h"
#include "tracing/rtreduce.h"

#include <stdlib.h>
#include <string.h>

pb_req *vt_pb_orphans;

static VT_ALWAYS_INLINE void finish(pb_req *r, MPI_Status *st)
{
    if (r->kind != PB_RECV)
        return;
    if (r->unpacked) {
        if (st && st != MPI_STATUS_IGNORE && !vt_status_cancelled(st))
            vt_status_set_bytes(st, r->payload);
        return;
    }
    r->have_hdr = vt_pb_finish_recv(r->stage, r->packed, r->shape.bytes, r->ubuf, r->ucount, r->utype, &r->shape, st,
                                    r->payload_in_header, &r->payload);
}

void vt__pb_completed(MPI_Request h, MPI_Status *st)
{
    vt_pb_lock();
    pb_req *r = vt_pb_req_complete(h);
    vt_pb_unlock();
    if (!r)
        return;
    if (r->persistent && !r->active)
        return;     /* an inactive persistent request: nothing arrived */
    finish(r, st);
    if (r->kind == PB_RECV && r->have_hdr && vt__rt) {
        /* MPI_Isendrecv's status has no source: the one posted */
        int src = r->payload_in_header ? r->src : st && st != MPI_STATUS_IGNORE ? st->MPI_SOURCE : MPI_ANY_SOURCE;
        vt_pb_rt_in(r->stage, r->cm, st, src, r->post_seq, r->post_enter, r->post_order, r->matched);
    }
    r->active = 0;
    r->unpacked = 0;
    r->have_hdr = 0;
    if (!r->persistent)
        vt_pb_req_free(r);
}

void vt_pb_peeked(MPI_Request h, int rc, int flag, MPI_Status *st)
{
    if (rc != MPI_SUCCESS || !flag || h == MPI_REQUEST_NULL)
        return;
    vt_pb_lock();
    pb_req *r = vt_pb_req_get(h);
    vt_pb_unlock();
    if (!r || r->kind != PB_RECV || (r->persistent && !r->active))
        return;
    finish(r, st);
    r->unpacked = 1;
}

void vt_pb_start(vt_call *c, int n, MPI_Request *reqs)
{
    for (int i = 0; i < n; i++) {
        vt_pb_lock();
        pb_req *r = vt_pb_req_get(reqs[i]);
        vt_pb_unlock();
        if (!r)
            continue;
        r->active = 1;
        r->unpacked = 0;
        if (r->kind != PB_SEND) {
            r->post_seq = 2 * vt__calls + 1;
            r->post_enter = c ? c->enter : 0;
            r->post_order = vt_pb_post_order++;
            continue;
        }
        vt_pb_header_write(r->stage, c, r->fn, r->mode, r->shape.bytes);
        if (r->packed)
            vt_pb_pack(r->ubuf, r->ucount, r->utype, &r->shape, r->stage + VT_PB_H);
    }
}

/* ------------------------------------------------------------------ freed while active */

void vt_pb_orphan(pb_req *r)
{
    vt_pb_lock();
    r->next = vt_pb_orphans;
    vt_pb_orphans = r;
    vt_pb_unlock();
}

int vt_pb_request_free(MPI_Request *req)
{
    MPI_Request h = *req;
    vt_pb_lock();
    pb_req *r = h == MPI_REQUEST_NULL ? NULL : vt_pb_req_take(h);
    vt_pb_unlock();
    if (!r)
        return PMPI_Request_free(req);
    if (r->persistent && !r->active) {
        vt_pb_req_free(r);
        return PMPI_Request_free(req);
    }
    /* MPI completes it later, unseen: the request stays ours so that its payload still
     * reaches the user's buffer (piggyback-notes.md, pitfall 8) */
    vt_pb_orphan(r);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

/* Tests the orphans; finished ones are unpacked and released. */
static void poll_orphans(int cancel_receives)
{
    vt_pb_lock();
    pb_req *list = vt_pb_orphans;
    vt_pb_orphans = NULL;
    vt_pb_unlock();
    pb_req *keep = NULL;
    while (list) {
        pb_req *r = list;
        list = r->next;
        if (cancel_receives && r->kind == PB_RECV)
            PMPI_Cancel(&r->h);
        int flag = 0;
        MPI_Status st;
        MPI_Request h = r->h;
        if (PMPI_Test(&h, &flag, &st) != MPI_SUCCESS || !flag) {
            r->next = keep;
            keep = r;
            continue;
        }
        finish(r, &st);
        if (r->persistent)
            PMPI_Request_free(&h);
        vt_pb_req_free(r);
    }
    if (keep) {
        vt_pb_lock();
        pb_req *last = keep;
        while (last->next)
            last = last->next;
        last->next = vt_pb_orphans;
        vt_pb_orphans = keep;
        vt_pb_unlock();
    }
}

void vt_pb_poll_orphans(void) { poll_orphans(0); }

/* ------------------------------------------------------------------ start and end */

void vt_pb_start_transport(int64_t t_rdv)
{
    vt_pb_model_init(t_rdv);
    vt__pb = 1;
}

void vt_pb_finalize(void)
{
    if (!vt__pb)
        return;
    poll_orphans(0);
    /* receives freed while active that nothing matched: MPI_Finalize must not wait */
    poll_orphans(1);
    vt__pb = 0;
}

/* ------------------------------------------------------------------ MPI_Bsend's buffer */

/* Each buffered message carries VT_PB_H bytes more than the user sized the buffer for,
 * and every message takes at least MPI_BSEND_OVERHEAD bytes of it: the layer attaches a
 * buffer larger by H per possible message and gives the user's back at detach. */
static void *user_buf, *own_buf;
static MPI_Count user_size;

int vt_pb_buffer_attach(void *buf, MPI_Count size)
{
    if (own_buf || size < 0)
        return PMPI_Buffer_attach_c(buf, size);
    MPI_Count grown = size + (size / MPI_BSEND_OVERHEAD + 1) * VT_PB_H;
    void *p = malloc((size_t)grown);
    if (!p)
        return PMPI_Buffer_attach_c(buf, size);
    int rc = PMPI_Buffer_attach_c(p, grown);
    if (rc != MPI_SUCCESS) {
        free(p);
        return rc;
    }
    own_buf = p;
    user_buf = buf;
    user_size = size;
    return MPI_SUCCESS;
}

static int detach(void *addr, MPI_Count *size)
{
    if (!own_buf)
        return PMPI_Buffer_detach_c(addr, size);
    void *p;
    MPI_Count n;
    int rc = PMPI_Buffer_detach_c(&p, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    free(own_buf);
    own_buf = NULL;
    memcpy(addr, &user_buf, sizeof user_buf);
    *size = user_size;
    return MPI_SUCCESS;
}

int vt_pb_buffer_detach(void *addr, int *size)
{
    MPI_Count n = 0;
    int rc = detach(addr, &n);
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}

int vt_pb_buffer_detach_c(void *addr, MPI_Count *size) { return detach(addr, size); }
