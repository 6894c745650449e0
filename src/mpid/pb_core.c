/* The piggyback transport's shared pieces: headers, datatype shapes, packing, the
 * request table and the scratch buffers. */
#include "vt_config.h"
#include "pb_priv.h"
#include "buffer.h"
#include "log.h"
#include "comms.h"
#include "rtreduce.h"
#include "model.h"
#include "vt_fn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

VT_HIDDEN int vt__pb;

static pthread_mutex_t pb_mutex = PTHREAD_MUTEX_INITIALIZER;

void vt_pb_lock(void)
{
    if (VT_UNLIKELY(vt__mt))
        pthread_mutex_lock(&pb_mutex);
}

void vt_pb_unlock(void)
{
    if (VT_UNLIKELY(vt__mt))
        pthread_mutex_unlock(&pb_mutex);
}

/* ------------------------------------------------------------------ handles */

int vt_pb_handle_is_builtin(MPI_Request h)
{
#if defined(MPICH)
    /* MPICH handles: bits 30-31 are the kind, 1 = built-in (mpir_objects.h). */
    return (((unsigned)h >> 30) & 3u) == 1u;
#else
    (void)h;
    return 0;
#endif
}

/* ------------------------------------------------------------------ shapes */

int vt_pb_shape(MPI_Datatype type, MPI_Count count, pb_shape *s)
{
    if (count < 0 || type == MPI_DATATYPE_NULL)
        return -1;
#if defined(MPICH)
    /* Built-in MPICH types are contiguous and carry their size in bits 8-15. */
    if ((((unsigned)type >> 30) & 3u) == 1u) {
        s->size = ((unsigned)type >> 8) & 0xffu;
        s->lb = 0;
        s->bytes = count * s->size;
        s->contiguous = 1;
        return 0;
    }
#endif
    MPI_Count size, lb, extent, tlb, textent;
    if (PMPI_Type_size_c(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent_c(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_c(type, &tlb, &textent) != MPI_SUCCESS)
        return -1;
    s->size = size;
    s->bytes = count * size;
    s->lb = tlb;
    s->contiguous = textent == size && (count <= 1 || extent == size);
    return 0;
}

int vt_pb_pack(const void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out, MPI_Comm comm)
{
    if (s->contiguous) {
        if (s->bytes)
            memcpy(out, (const char *)buf + s->lb, (size_t)s->bytes);
        return MPI_SUCCESS;
    }
    MPI_Count pos = 0;
    return PMPI_Pack_c(buf, count, type, out, s->bytes, &pos, comm);
}

int vt_pb_unpack(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s,
                 MPI_Comm comm)
{
    if (n <= 0)
        return MPI_SUCCESS;
    if (s->contiguous) {
        memcpy((char *)buf + s->lb, in, (size_t)n);
        return MPI_SUCCESS;
    }
    /* MPICH's unpack stops where the bytes end, a trailing partial element included,
     * as a receive of a short message does */
    MPI_Count pos = 0;
    return PMPI_Unpack_c(in, n, &pos, buf, count, type, comm);
}

int vt_pb_struct_type(uint8_t *hdr, const void *buf, MPI_Count count, MPI_Datatype type, MPI_Datatype *out)
{
    MPI_Aint a0, a1;
    PMPI_Get_address(hdr, &a0);
    PMPI_Get_address(buf, &a1);
    MPI_Count bl[2] = {VT_PB_H, count}, disp[2] = {(MPI_Count)a0, (MPI_Count)a1};
    MPI_Datatype ty[2] = {MPI_BYTE, type};
    int rc = PMPI_Type_create_struct_c(2, bl, disp, ty, out);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(out);
    return rc;
}

/* ------------------------------------------------------------------ headers */

/* What the model makes of each function's messages (model.h), set when the transport
 * starts: its send kind, and whether it is a blocking send. */
static uint8_t send_kind[VT_NFN], blocking_send[VT_NFN];
static int64_t model_trdv = 8256;

void vt_pb_model_init(int64_t t_rdv)
{
    model_trdv = t_rdv;
    for (unsigned f = 0; f < VT_NFN; f++) {
        enum vt_model_kind k = vt_model_kind_of(vt_fn_name[f]);
        send_kind[f] = (uint8_t)vt_model_send_kind(vt_fn_name[f]);
        blocking_send[f] = k == VT_MK_SEND || k == VT_MK_SSEND || k == VT_MK_BSEND;
    }
}

void vt_pb_header_write(uint8_t *h, const vt_call *c, unsigned fn, int mode, MPI_Count payload)
{
    vt_model_params p = {.T_rdv = model_trdv};
    uint64_t pl = (uint64_t)payload, seq = 2 * vt__calls + 1;
    int64_t start = c ? c->enter : 0;
    int sync = fn < VT_NFN && vt_model_is_sync((enum vt_model_kind)send_kind[fn], pl, &p);
    h[0] = 'V';
    h[1] = 'P';
    h[2] = 1;
    h[3] = (uint8_t)((mode & 3) | (fn < VT_NFN && blocking_send[fn] ? 4 : 0) | (sync ? 8 : 0));
    memset(h + 4, 0, 4);
    memcpy(h + 8, &pl, 8);
    memcpy(h + 16, &seq, 8);
    memcpy(h + 24, &start, 8);
    /* the sender's difference: the run-time reduction's (rtreduce.h); empty without it */
    h[32] = (uint8_t)vt_rt_send_poly(c, h + 33, VT_PB_H - 33);
}

int vt_pb_header_read(const uint8_t *h, vt_pb_header *out)
{
    if (h[0] != 'V' || h[1] != 'P' || h[2] != 1)
        return -1;
    out->mode = h[3] & 3;
    out->blocking = (h[3] >> 2) & 1;
    out->sync = (h[3] >> 3) & 1;
    memcpy(&out->payload, h + 8, 8);
    memcpy(&out->send_seq, h + 16, 8);
    memcpy(&out->send_start, h + 24, 8);
    out->poly_len = h[32];
    if (out->poly_len > sizeof out->poly)
        return -1;
    memcpy(out->poly, h + 33, out->poly_len);
    return 0;
}

/* ------------------------------------------------------------------ receive side */

uint64_t vt_pb_post_order;

void vt_pb_rt_in(const vt_pb_header *h, MPI_Comm comm, const MPI_Status *st, int src, uint64_t post_seq,
                 int64_t post_enter, uint64_t post_order, MPI_Message matched)
{
    if (!vt__rt)
        return;
    vt_rt_header rh = {h->send_seq, h->send_start, h->payload, h->sync, h->blocking, h->poly, h->poly_len};
    int tag = st && st != MPI_STATUS_IGNORE ? st->MPI_TAG : -1;
    if (matched != MPI_MESSAGE_NULL) {
        /* MPI_Mrecv/Imrecv: the source and communicator are the probe's */
        vt_rt_msg_in(&rh, UINT32_MAX, tag, 0, post_seq, post_enter, post_order, matched);
        return;
    }
    vt_comm *cm = vt_comm_get(comm);
    int w = cm && src >= 0 ? vt_comm_peer(cm, src) : -1;
    if (w < 0) {
        vt_rt_unsupported("a message whose source cannot be known (MPI_Isendrecv from MPI_ANY_SOURCE)");
        return;
    }
    vt_rt_msg_in(&rh, (uint32_t)w, tag, cm->gid, post_seq, post_enter, post_order, MPI_MESSAGE_NULL);
}

int vt_pb_finish_recv(const uint8_t *stage, int packed, MPI_Count capacity_bytes, void *ubuf, MPI_Count ucount,
                      MPI_Datatype utype, const pb_shape *s, MPI_Comm comm, MPI_Status *st, int payload_in_header,
                      MPI_Count *payload_out, vt_pb_header *hdr_out)
{
    if (st && st != MPI_STATUS_IGNORE && vt_pb_status_cancelled(st))
        return 0;
    MPI_Count n = 0;
    vt_pb_header h;
    int have_header;
    if (payload_in_header) {
        have_header = vt_pb_header_read(stage, &h) == 0;
        n = have_header ? VT_PB_H + (MPI_Count)h.payload : 0;
        if (n > VT_PB_H + capacity_bytes)
            n = VT_PB_H + capacity_bytes;
    } else {
        if (!st || st == MPI_STATUS_IGNORE)
            return 0;
        n = vt_pb_status_bytes(st);
        have_header = n >= VT_PB_H && vt_pb_header_read(stage, &h) == 0;
    }
    static int warned;
    if (!have_header) {
        /* shorter than a header: MPICH ch4:ucx reports a truncated receive with a count
         * of 1 and nothing written; that status is the user's as it is */
        if (n >= VT_PB_H && !warned++)
            vt_warn("a message of %lld bytes arrived without vtrace's header: every rank must run with the same "
                    "VTRACE_MODE and the layer; its data and count are not reliable",
                    (long long)n);
        /* a truncated receive (MPICH ch4:ucx writes nothing) loses the sender's side */
        vt_rt_unsupported("a receive whose header did not arrive (MPI_ERR_TRUNCATE)");
        return 0;
    }
    MPI_Count payload = n - VT_PB_H;
    if (packed)
        vt_pb_unpack(stage + VT_PB_H, payload, ubuf, ucount, utype, s, comm);
    if (st && st != MPI_STATUS_IGNORE)
        vt_pb_status_set_bytes(st, payload);
    if (payload_out)
        *payload_out = payload;
    if (hdr_out)
        *hdr_out = h;
    return 1;
}

/* ------------------------------------------------------------------ scratch */

static __thread uint8_t *scratch[2];
static __thread size_t scratch_cap[2];

uint8_t *vt_pb_scratch(int slot, size_t bytes)
{
    if (bytes > scratch_cap[slot]) {
        size_t cap = scratch_cap[slot] ? scratch_cap[slot] : 256;
        while (cap < bytes)
            cap *= 2;
        uint8_t *p = realloc(scratch[slot], cap);
        if (!p)
            return NULL;
        scratch[slot] = p;
        scratch_cap[slot] = cap;
    }
    return scratch[slot];
}

/* ------------------------------------------------------------------ requests */

pb_req *vt_pb_req_new(size_t stage_bytes)
{
    pb_req *r = calloc(1, sizeof *r + stage_bytes);
    if (!r)
        return NULL;
    r->stage = (uint8_t *)(r + 1);
    r->utype = MPI_DATATYPE_NULL;
    r->matched = MPI_MESSAGE_NULL;
    return r;
}

void vt_pb_req_free(pb_req *r)
{
    if (!r)
        return;
    if (r->utype != MPI_DATATYPE_NULL)
        PMPI_Type_free(&r->utype);
    free(r->send_stage);
    free(r);
}

/* Open addressing by handle; deletion by backward shift. */
static pb_req **tab;
static size_t tabcap;
size_t vt_pb_nreqs;

static size_t slot_of(MPI_Request h)
{
    uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 17) & (tabcap - 1);
}

static unsigned next_thread;
static __thread unsigned this_thread;
static uint64_t births;

static unsigned thread_id(void)
{
    if (!this_thread)
        this_thread = __atomic_add_fetch(&next_thread, 1, __ATOMIC_RELAXED);
    return this_thread;
}

void vt_pb_req_put(pb_req *r)
{
    r->owner = thread_id();
    r->birth = births++;
    if ((vt_pb_nreqs + 1) * 2 > tabcap) {
        size_t nc = tabcap ? tabcap * 2 : 256;
        pb_req **old = tab;
        size_t oc = tabcap;
        pb_req **nt = calloc(nc, sizeof *nt);
        if (!nt) {
            vt_warn("out of memory for the piggyback's requests: the application's data may be lost");
            return;
        }
        tab = nt;
        tabcap = nc;
        for (size_t i = 0; i < oc; i++) {
            if (!old[i])
                continue;
            size_t j = slot_of(old[i]->h);
            while (tab[j])
                j = (j + 1) & (tabcap - 1);
            tab[j] = old[i];
        }
        free(old);
    }
    size_t j = slot_of(r->h);
    while (tab[j])
        j = (j + 1) & (tabcap - 1);
    tab[j] = r;
    vt_pb_nreqs++;
}

static size_t find(MPI_Request h)
{
    if (!vt_pb_nreqs)
        return (size_t)-1;
    unsigned me = thread_id();
    size_t best = (size_t)-1;
    for (size_t j = slot_of(h);; j = (j + 1) & (tabcap - 1)) {
        if (!tab[j])
            return best;
        if (tab[j]->h != h)
            continue;
        if (tab[j]->owner == me)
            return j;
        if (best == (size_t)-1 || tab[j]->birth < tab[best]->birth)
            best = j;
    }
}

pb_req *vt_pb_req_get(MPI_Request h)
{
    size_t j = find(h);
    return j == (size_t)-1 ? NULL : tab[j];
}

pb_req *vt_pb_req_take(MPI_Request h)
{
    size_t j = find(h);
    if (j == (size_t)-1)
        return NULL;
    pb_req *r = tab[j];
    tab[j] = NULL;
    vt_pb_nreqs--;
    for (size_t k = (j + 1) & (tabcap - 1); tab[k]; k = (k + 1) & (tabcap - 1)) {
        size_t want = slot_of(tab[k]->h);
        /* move tab[k] back to j when j lies cyclically in [want, k) */
        if ((k > j && (want <= j || want > k)) || (k < j && want <= j && want > k)) {
            tab[j] = tab[k];
            tab[k] = NULL;
            j = k;
        }
    }
    return r;
}
