/* Internals of the piggyback transport shared by its files (src/mpid/). */
#ifndef VT_PB_PRIV_H
#define VT_PB_PRIV_H

#include "piggyback.h"

#include <stddef.h>

/* How a user buffer maps to bytes: contiguous ones are copied with memcpy. */
typedef struct pb_shape {
    MPI_Count bytes;        /* count * type size: the payload */
    MPI_Count size;         /* type size */
    MPI_Count lb;           /* contiguous: where the bytes start, from buf */
    int contiguous;
} pb_shape;

/* Fills *s. Returns 0, or -1 when MPI cannot describe the type (an invalid argument:
 * the caller passes the call to MPI unchanged, which reports it as plain MPI does). */
int vt_pb_shape(MPI_Datatype type, MPI_Count count, pb_shape *s);

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
    unsigned fn;            /* persistent sends: the *_init function (what the model sees) */
    uint8_t *stage;         /* [header | packed payload], or the header alone (struct way) */
    int packed;             /* stage holds the payload too */
    MPI_Count stage_bytes;  /* H + payload capacity (packed way) */
    void *ubuf;             /* user buffer (receives; persistent sends repack from it) */
    MPI_Count ucount;
    pb_shape shape;
    MPI_Datatype utype;     /* our duplicate, when unpacking or repacking needs the type */
    MPI_Comm comm;
    MPI_Count payload;      /* received payload bytes, once unpacked */
    vt_pb_header hdr;       /* ... and the header (have_hdr) */
    int have_hdr;
    int src;                /* receives: the source posted (Isendrecv's status has none) */
    uint64_t post_seq;      /* the call that posted the receive (the run-time reduction) */
    int64_t post_enter;
    uint64_t post_order;
    MPI_Message matched;    /* MPI_Imrecv: the message its probe matched */
    uint8_t *send_stage;    /* Isendrecv: the packed send half */
    struct pb_req *next;    /* orphans list */
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
extern size_t vt_pb_nreqs;

/* A handle MPI gives for a request that is complete already and shared by many. */
int vt_pb_handle_is_builtin(MPI_Request h);

/* Header: writes the VT_PB_H bytes for a send made by call c as function fn (the
 * *_init template for persistent sends). */
void vt_pb_header_write(uint8_t *h, const vt_call *c, unsigned fn, int mode, MPI_Count payload);
/* Reads one; returns 0, or -1 when it is not a vtrace header (a peer without the layer). */
int vt_pb_header_read(const uint8_t *h, vt_pb_header *out);
/* The model's kinds of every function, for the header (at the transport's start). */
void vt_pb_model_init(int64_t t_rdv);

/* Packs count elements of buf into out (s->bytes bytes). Returns an MPI error code. */
int vt_pb_pack(const void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out, MPI_Comm comm);
/* Unpacks n payload bytes from in into buf (n <= the capacity; a trailing partial
 * element too). Returns an MPI error code. */
int vt_pb_unpack(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s,
                 MPI_Comm comm);

/* The struct datatype [VT_PB_H bytes at hdr | count x type at buf] over MPI_BOTTOM. */
int vt_pb_struct_type(uint8_t *hdr, const void *buf, MPI_Count count, MPI_Datatype type, MPI_Datatype *out);

/* Thread-local scratch for blocking calls (slot 0 send, 1 receive); NULL when out of memory. */
uint8_t *vt_pb_scratch(int slot, size_t bytes);

/* A received message is in: check its header, unpack a packed payload, set the count
 * the user sees. stage: the header (and payload when packed). Statuses of cancelled
 * receives are left alone. */
int vt_pb_finish_recv(const uint8_t *stage, int packed, MPI_Count capacity_bytes, void *ubuf, MPI_Count ucount,
                      MPI_Datatype utype, const pb_shape *s, MPI_Comm comm, MPI_Status *st, int payload_in_header,
                      MPI_Count *payload_out, vt_pb_header *hdr_out);

/* The run-time reduction's part of a receive completion (rtreduce.h): the header and
 * where the receive was posted; src is the source in comm (MPI_ANY_SOURCE: unknown). */
void vt_pb_rt_in(const vt_pb_header *h, MPI_Comm comm, const MPI_Status *st, int src, uint64_t post_seq,
                 int64_t post_enter, uint64_t post_order, MPI_Message matched);


/* A status's byte count and cancelled flag. MPICH keeps them in two public fields
 * (mpi.h: count_lo, count_hi_and_cancelled); reading and writing them directly saves
 * three library calls per receive on the hot path. */
static inline MPI_Count vt_pb_status_bytes(const MPI_Status *st)
{
#if defined(MPICH)
    return (MPI_Count)(((uint64_t)(unsigned)st->count_lo) | ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32));
#else
    MPI_Count n = 0;
    PMPI_Get_count_c(st, MPI_BYTE, &n);
    return n;
#endif
}

static inline int vt_pb_status_cancelled(const MPI_Status *st)
{
#if defined(MPICH)
    return st->count_hi_and_cancelled & 1;
#else
    int c = 0;
    PMPI_Test_cancelled(st, &c);
    return c;
#endif
}

static inline void vt_pb_status_set_bytes(MPI_Status *st, MPI_Count n)
{
#if defined(MPICH)
    st->count_lo = (int)(unsigned)((uint64_t)n & 0xffffffffu);
    st->count_hi_and_cancelled = (st->count_hi_and_cancelled & 1) | (int)(((uint64_t)n >> 32) << 1);
#else
    PMPI_Status_set_elements_x(st, MPI_BYTE, n);
#endif
}

/* Requests freed by the user while active, finished later. */
void vt_pb_orphan(pb_req *r);

void vt_pb_lock(void);
void vt_pb_unlock(void);

#endif
