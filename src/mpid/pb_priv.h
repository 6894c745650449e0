/* Internals of the piggyback transport shared by its files (src/mpid/). */
#ifndef VT_PB_PRIV_H
#define VT_PB_PRIV_H

#include "mpid/piggyback.h"
#include "mpid/pb_compat.h"
#include "tracing/mpistatus.h"
#include "tracing/comms.h"
#include "model/model.h"
#include "mpi/vt_fn.h"

#include <stddef.h>

/* How a user buffer maps to bytes: contiguous ones are copied with memcpy. */
typedef struct pb_shape {
    MPI_Count bytes;        /* count * type size: the payload */
    MPI_Count size;         /* type size */
    MPI_Count lb;           /* contiguous: where the bytes start, from buf */
    int contiguous;
} pb_shape;

int vt_pb_shape_derived(MPI_Datatype type, MPI_Count count, pb_shape *s);

/* A built-in type's size (contiguous, no lower bound), or -1 for any other type. */
static inline MPI_Count vt_pb_builtin_size(MPI_Datatype type)
{
#if defined(MPICH)
    /* Built-in MPICH types are contiguous and carry their size in bits 8-15. */
    if ((((unsigned)type >> 30) & 3u) == 1u)
        return ((unsigned)type >> 8) & 0xffu;
#endif
    (void)type;
    return -1;
}

/* Fills *s. Returns 0, or -1 when MPI cannot describe the type (an invalid argument:
 * the caller passes the call to MPI unchanged, which reports it as plain MPI does). */
static inline int vt_pb_shape(MPI_Datatype type, MPI_Count count, pb_shape *s)
{
    if (count < 0 || type == MPI_DATATYPE_NULL)
        return -1;
    MPI_Count size = vt_pb_builtin_size(type);
    if (size >= 0) {
        s->size = size;
        s->lb = 0;
        s->bytes = count * size;
        s->contiguous = 1;
        return 0;
    }
    return vt_pb_shape_derived(type, count, s);
}

/* What the layer holds for a request until it completes. */
enum pb_kind { PB_SEND, PB_RECV };

typedef struct pb_req {
    MPI_Request h;
    unsigned owner;         /* the thread that made it (vt_pb_req_put) */
    uint64_t birth;         /* order of making */
    uint8_t kind;           /* enum pb_kind */
    uint8_t persistent, active;
    uint8_t unpacked;       /* Request_get_status already unpacked it */
    uint8_t payload_in_header; /* Isendrecv: MPICH 4.0.2 leaves no usable count */
    uint8_t mode;           /* sends: enum vt_pb_mode */
    uint8_t small;          /* its stage has room for PB_SMALL_STAGE bytes: reused (pb_core.c) */
    unsigned fn;            /* persistent sends: the *_init function (what the model sees) */
    uint8_t *stage;         /* [header | packed payload], or the header alone (struct way) */
    int packed;             /* stage holds the payload too */
    MPI_Count stage_bytes;  /* H + payload capacity (packed way) */
    void *ubuf;             /* user buffer (receives; persistent sends repack from it) */
    MPI_Count ucount;
    pb_shape shape;
    MPI_Datatype utype;     /* our duplicate, when unpacking or repacking needs the type */
    vt_comm *cm;            /* receives: comm's record when posted (the handle may be freed and
                             * given to another communicator before the receive completes) */
    MPI_Count payload;      /* received payload bytes, once unpacked */
    int have_hdr;           /* ... and its header is at stage (rtreduce.h reads it there) */
    int src;                /* receives: the source posted (Isendrecv's status has none) */
    uint64_t post_seq;      /* the call that posted the receive (the run-time reduction) */
    int64_t post_enter;
    uint64_t post_order;
    MPI_Message matched;    /* MPI_Imrecv: the message its probe matched */
    uint8_t *send_stage;    /* Isendrecv: the packed send half */
    struct pb_req *next;    /* orphans list; pb_core.c's spare requests */
} pb_req;

pb_req *vt_pb_req_new(size_t stage_bytes);
void vt_pb_req_free(pb_req *r);
/* Table by handle. Handles of requests MPI completed at once may be shared (a built-in
 * handle): those never enter the table. Under MPI_THREAD_MULTIPLE, MPI may give a handle
 * it freed in one thread's Wait to another thread's new request before the first thread
 * has looked its request up: a handle can be in the table twice. A lookup takes the
 * calling thread's own entry first, else the oldest. */
void vt_pb_req_put(pb_req *r);
pb_req *vt_pb_req_take(MPI_Request h);   /* removes and returns, or NULL */
pb_req *vt_pb_req_get(MPI_Request h);    /* leaves it in */
pb_req *vt_pb_req_complete(MPI_Request h); /* one lookup: takes it unless persistent */

/* A handle MPI gives for a request that is complete already and shared by many. */
int vt_pb_handle_is_builtin(MPI_Request h);

/* What the header says of every function, for the header (at the transport's start):
 * its first 8 bytes as a number (vt_pb_header_write: VT_PB_MAGIC and the flags' byte
 * with VT_PB_FLAG_BLOCKING where it is a blocking send; the send mode and
 * VT_PB_FLAG_SYNC are added per message) and the payload bytes from which its messages
 * are synchronous to the model (0: always, UINT64_MAX: never; vt_model_is_sync as a
 * table). Index VT_NFN: a send no call is known for. */
void vt_pb_model_init(int64_t t_rdv);
#define VT_PB_FLAG_BLOCKING VT_RT_FLAG_BLOCKING
#define VT_PB_FLAG_SYNC VT_RT_FLAG_SYNC
extern uint64_t vt_pb_hdr_w0[VT_NFN + 1];
extern uint64_t vt_pb_sync_from[VT_NFN + 1];

/* Out of line, for pb_hot.h: packing and unpacking of non-contiguous types, and a
 * receive whose header is missing (a warning; the run-time reduction stops). */
int vt_pb_pack_derived(const void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out);
int vt_pb_unpack_derived(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type);
void vt_pb_no_header(MPI_Count n);


/* The struct datatype [VT_PB_H bytes at hdr | count x type at buf] over MPI_BOTTOM. */
int vt_pb_struct_type(uint8_t *hdr, const void *buf, MPI_Count count, MPI_Datatype type, MPI_Datatype *out);

/* Thread-local scratch for blocking calls (slot 0 send, 1 receive); NULL when out of memory. */
uint8_t *vt_pb_scratch(int slot, size_t bytes);




/* Requests freed by the user while active, finished later. */
void vt_pb_orphan(pb_req *r);

/* The transport's lock, taken under MPI_THREAD_MULTIPLE only: the test inline (as calls
 * of their own, the two cost 8 instructions on every request's lookup; issue 18). */
void vt_pb_mutex_lock(void);
void vt_pb_mutex_unlock(void);
static inline void vt_pb_lock(void)
{
    if (VT_UNLIKELY(vt__mt))
        vt_pb_mutex_lock();
}
static inline void vt_pb_unlock(void)
{
    if (VT_UNLIKELY(vt__mt))
        vt_pb_mutex_unlock();
}

/* The per-message work, inline */
#include "mpid/pb_hot.h"

#endif
