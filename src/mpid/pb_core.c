/* The piggyback transport's shared pieces: headers, datatype shapes, packing, the
 * request table and the scratch buffers. */
#include "vt_config.h"
#include "mpid/pb_priv.h"
#include "tracing/buffer.h"
#include "tracing/log.h"
#include "tracing/comms.h"
#include "tracing/rtreduce.h"
#include "model/model.h"
#include "mpi/vt_fn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

VT_HIDDEN int vt__pb;

static pthread_mutex_t pb_mutex = PTHREAD_MUTEX_INITIALIZER;

void vt_pb_mutex_lock(void)
{
    pthread_mutex_lock(&pb_mutex);
}

void vt_pb_mutex_unlock(void)
{
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

int vt_pb_shape_derived(MPI_Datatype type, MPI_Count count, pb_shape *s)
{
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

/* Packing and unpacking name MPI_COMM_SELF, not the message's communicator: the user
 * may free that while a request is pending (a persistent send's later MPI_Start, a
 * receive completing after MPI_Comm_free), and the representation is this node's either
 * way. */
/* A user buffer of MPI_BOTTOM (an absolute-address datatype) is legal for MPI_Pack and
 * MPI_Unpack, but MPICH 4.0.2 refuses their NULL buffer ("Null pointer in parameter
 * inbuf"). The same bytes, described from a base that is not NULL: *base is the type's
 * true lower bound and *moved the count elements as one block moved down by it (free it).
 * Only MPI_BOTTOM takes this way; other buffers cost the caller a pointer compare. */
static int from_bottom(MPI_Count count, MPI_Datatype type, void **base, MPI_Datatype *moved)
{
    MPI_Count tlb, textent;
    int rc = PMPI_Type_get_true_extent_c(type, &tlb, &textent);
    if (rc != MPI_SUCCESS)
        return rc;
    if (tlb == 0)
        tlb = 1;        /* data at address 0 is no user's; any base that is not NULL will do */
    MPI_Count disp = -tlb;
    rc = PMPI_Type_create_hindexed_c(1, &count, &disp, type, moved);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(moved)) != MPI_SUCCESS)
        PMPI_Type_free(moved);
    *base = (void *)(uintptr_t)tlb;
    return rc;
}

static int pack_bottom(MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out)
{
    void *base;
    MPI_Datatype moved;
    int rc = from_bottom(count, type, &base, &moved);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count pos = 0;
    rc = PMPI_Pack_c(base, 1, moved, out, s->bytes, &pos, MPI_COMM_SELF);
    PMPI_Type_free(&moved);
    return rc;
}

static int unpack_bottom(const uint8_t *in, MPI_Count n, MPI_Count count, MPI_Datatype type)
{
    void *base;
    MPI_Datatype moved;
    int rc = from_bottom(count, type, &base, &moved);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count pos = 0;
    rc = PMPI_Unpack_c(in, n, &pos, base, 1, moved, MPI_COMM_SELF);
    PMPI_Type_free(&moved);
    return rc;
}

int vt_pb_pack_derived(const void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out)
{
    if (VT_UNLIKELY(buf == MPI_BOTTOM))
        return pack_bottom(count, type, s, out);
    MPI_Count pos = 0;
    return PMPI_Pack_c(buf, count, type, out, s->bytes, &pos, MPI_COMM_SELF);
}

static int unpack_whole(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type)
{
    if (VT_UNLIKELY(buf == MPI_BOTTOM))
        return unpack_bottom(in, n, count, type);
    MPI_Count pos = 0;
    return PMPI_Unpack_c(in, n, &pos, buf, count, type, MPI_COMM_SELF);
}

#ifdef OPEN_MPI
/* The rem bytes of a trailing partial element (element at of buf): plain Open MPI's
 * receive writes them where the first rem bytes of the element's packed form go. The
 * element is packed as it is, its first rem bytes replaced, and unpacked whole: the
 * other bytes of the element are written back unchanged. */
static int unpack_partial(const uint8_t *in, MPI_Count rem, void *buf, MPI_Count at, MPI_Datatype type,
                          MPI_Count size)
{
    MPI_Count lb, extent;
    int rc = PMPI_Type_get_extent_c(type, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    void *base = buf;
    MPI_Datatype one = type, moved = MPI_DATATYPE_NULL;
    if (buf == MPI_BOTTOM) {
        if ((rc = from_bottom(1, type, &base, &moved)) != MPI_SUCCESS)
            return rc;
        one = moved;
    }
    char *elem = (char *)base + at * extent;
    uint8_t small[256];
    uint8_t *tmp = size <= (MPI_Count)sizeof small ? small : malloc((size_t)size);
    rc = MPI_ERR_NO_MEM;
    if (tmp) {
        MPI_Count pos = 0;
        rc = PMPI_Pack_c(elem, 1, one, tmp, size, &pos, MPI_COMM_SELF);
        if (rc == MPI_SUCCESS) {
            memcpy(tmp, in, (size_t)rem);
            pos = 0;
            rc = PMPI_Unpack_c(tmp, size, &pos, elem, 1, one, MPI_COMM_SELF);
        }
        if (tmp != small)
            free(tmp);
    }
    if (moved != MPI_DATATYPE_NULL)
        PMPI_Type_free(&moved);
    return rc;
}
#endif

int vt_pb_unpack_derived(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type)
{
    /* MPICH's unpack stops where the bytes end, a trailing partial element included,
     * as a receive of a short message does */
#ifdef OPEN_MPI
    /* Open MPI's unpack refuses input shorter than count elements (MPI_ERR_TRUNCATE, fatal
     * under the default error handler): the whole elements that came, then the partial
     * one as Open MPI's receive writes it */
    MPI_Count size = 0;
    if (PMPI_Type_size_c(type, &size) == MPI_SUCCESS && size > 0 && n < count * size) {
        MPI_Count whole = n / size, rem = n - whole * size;
        int rc = unpack_whole(in, whole * size, buf, whole, type);
        if (rc != MPI_SUCCESS || rem == 0)
            return rc;
        return unpack_partial(in + whole * size, rem, buf, whole, type, size);
    }
#endif
    return unpack_whole(in, n, buf, count, type);
}

int vt_pb_struct_type(uint8_t *hdr, const void *buf, MPI_Count count, MPI_Datatype type, MPI_Datatype *out)
{
    /* the struct lies over MPI_BOTTOM: the user's part starts at buf's address, which
     * for buf == MPI_BOTTOM is 0 (the type's displacements are absolute addresses) */
    MPI_Aint a0, a1 = 0;
    PMPI_Get_address(hdr, &a0);
    if (buf != MPI_BOTTOM)
        PMPI_Get_address(buf, &a1);
    MPI_Count bl[2] = {VT_PB_H, count}, disp[2] = {(MPI_Count)a0, (MPI_Count)a1};
    MPI_Datatype ty[2] = {MPI_BYTE, type};
    int rc = PMPI_Type_create_struct_c(2, bl, disp, ty, out);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(out);
    return rc;
}

/* ------------------------------------------------------------------ headers */

/* What the header says of each function's messages (pb_priv.h), set when the transport
 * starts: its first word with whether it is a blocking send, and from how many payload
 * bytes the model takes its messages as synchronous (model.h). */
uint64_t vt_pb_hdr_w0[VT_NFN + 1];
uint64_t vt_pb_sync_from[VT_NFN + 1];

void vt_pb_model_init(int64_t t_rdv)
{
    vt_model_params p = {.T_rdv = t_rdv};
    for (unsigned f = 0; f <= VT_NFN; f++) {
        if (f == VT_NFN) {
            /* no function known (VT_NFN): no flags, never synchronous */
            vt_pb_hdr_w0[f] = VT_PB_MAGIC;
            vt_pb_sync_from[f] = UINT64_MAX;
            continue;
        }
        enum vt_model_kind k = vt_model_kind_of(vt_fn_name[f]);
        enum vt_model_kind sk = vt_model_send_kind(vt_fn_name[f]);
        uint64_t flags = k == VT_MK_SEND || k == VT_MK_SSEND || k == VT_MK_BSEND ? VT_PB_FLAG_BLOCKING : 0;
        vt_pb_hdr_w0[f] = VT_PB_MAGIC | flags << 24;
        vt_pb_sync_from[f] = vt_model_sync_from(sk, &p);
    }
}

/* ------------------------------------------------------------------ receive side */

uint64_t vt_pb_post_order;

void vt_pb_no_header(MPI_Count n)
{
    static int warned;
    /* shorter than a header: MPICH ch4:ucx reports a truncated receive with a count of 1
     * and nothing written; that status is the user's as it is */
    if (n >= VT_PB_H && !warned++)
        vt_warn("a message of %lld bytes arrived without vtrace's header: every rank must run with the same "
                "VTRACE_MODE and the layer; its data and count are not reliable",
                (long long)n);
    /* a truncated receive (MPICH ch4:ucx writes nothing) loses the sender's side */
    vt_rt_unsupported("a receive whose header did not arrive (MPI_ERR_TRUNCATE)");
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

/* Requests whose stage is small (a header and a small packed payload) are kept for
 * reuse: calloc and free cost some 290 instructions a request, a halo exchange's every
 * message (issue 18). A reused one is zeroed as far as its asker sees it. */
#define PB_SMALL_STAGE (VT_PB_H + 448)
#define PB_SPARE_MAX 64
static pb_req *spare;
static unsigned nspare;

pb_req *vt_pb_req_new(size_t stage_bytes)
{
    int small = stage_bytes <= PB_SMALL_STAGE;
    pb_req *r = NULL;
    if (small) {
        vt_pb_lock();
        if ((r = spare) != NULL) {
            spare = r->next;
            nspare--;
        }
        vt_pb_unlock();
        if (r)
            memset(r, 0, sizeof *r + stage_bytes);
    }
    if (!r && !(r = calloc(1, sizeof *r + (small ? PB_SMALL_STAGE : stage_bytes))))
        return NULL;
    r->small = (uint8_t)small;
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
    if (r->send_stage)   /* Isendrecv's only: no call to free(NULL) on every request */
        free(r->send_stage);
    if (r->small) {
        vt_pb_lock();
        int kept = nspare < PB_SPARE_MAX;
        if (kept) {
            r->next = spare;
            spare = r;
            nspare++;
        }
        vt_pb_unlock();
        if (kept)
            return;
    }
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

static VT_ALWAYS_INLINE size_t find(MPI_Request h)
{
    if (!vt_pb_nreqs)
        return (size_t)-1;
    /* one thread: every entry is its own, the first match is the one (no thread-local
     * look-up of who is asking) */
    unsigned me = VT_UNLIKELY(vt__mt) ? thread_id() : 1;
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

/* Removes tab[j] (backward shift) and returns it. */
static VT_ALWAYS_INLINE pb_req *remove_at(size_t j)
{
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

pb_req *vt_pb_req_take(MPI_Request h)
{
    size_t j = find(h);
    return j == (size_t)-1 ? NULL : remove_at(j);
}

pb_req *vt_pb_req_complete(MPI_Request h)
{
    size_t j = find(h);
    if (j == (size_t)-1)
        return NULL;
    return tab[j]->persistent ? tab[j] : remove_at(j);
}
