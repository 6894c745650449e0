/* The piggyback transport's per-message work, inline (included by pb_priv.h): writing
 * and reading the header, copying a contiguous payload, finishing a receive and handing
 * its header to the run-time reduction. Every message of every call goes through these;
 * as calls with many arguments, their argument passing and frames cost as much as the
 * work itself (doc/piggyback.md, "Where the time of an 8-byte message goes"). */
#ifndef VT_PB_HOT_H
#define VT_PB_HOT_H

#include "tracing/comms.h"
#include "tracing/rtreduce.h"

#include <string.h>

/* memcpy, with the few bytes of the commonest messages copied inline (the library call
 * costs more than they do) */
static inline void vt_pb_copy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *p = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = p[i];
    } else {
        memcpy(d, p, n);
    }
}

/* Where a contiguous buffer's bytes start: buf + lb, computed on integers because buf may
 * be MPI_BOTTOM (NULL) with lb an absolute address (no arithmetic on a null pointer). */
static inline void *vt_pb_at(const void *buf, MPI_Count lb)
{
    return (void *)((uintptr_t)buf + (uintptr_t)lb);
}

/* Packs count elements of buf into out (s->bytes bytes). Returns an MPI error code.
 * buf may be MPI_BOTTOM (absolute-address datatypes). */
static inline int vt_pb_pack(const void *buf, MPI_Count count, MPI_Datatype type, const pb_shape *s, uint8_t *out)
{
    if (!s->contiguous)
        return vt_pb_pack_derived(buf, count, type, s, out);
    vt_pb_copy(out, vt_pb_at(buf, s->lb), (size_t)s->bytes);
    return MPI_SUCCESS;
}

/* Unpacks n payload bytes from in into buf (n <= the capacity; a trailing partial
 * element too; buf may be MPI_BOTTOM). Returns an MPI error code. */
static inline int vt_pb_unpack(const uint8_t *in, MPI_Count n, void *buf, MPI_Count count, MPI_Datatype type,
                               const pb_shape *s)
{
    if (n <= 0)
        return MPI_SUCCESS;
    if (!s->contiguous)
        return vt_pb_unpack_derived(in, n, buf, count, type);
    vt_pb_copy(vt_pb_at(buf, s->lb), in, (size_t)n);
    return MPI_SUCCESS;
}

/* The header's first three bytes, 'V' 'P' and the version 1, as a little-endian number */
#define VT_PB_MAGIC ((uint64_t)'V' | (uint64_t)'P' << 8 | (uint64_t)1 << 16)

/* A 64-bit word as little-endian bytes (the header's byte order). */
static inline uint64_t vt_pb_le64(uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

static inline uint32_t vt_pb_le32(uint32_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(x);
#else
    return x;
#endif
}

/* Writes the VT_PB_H header bytes of a send made by call c as function fn (the *_init
 * template for persistent sends); doc/piggyback.md has the layout. */
static VT_ALWAYS_INLINE void vt_pb_header_write(uint8_t *h, const vt_call *c, unsigned fn, int mode, MPI_Count payload)
{
    uint64_t pl = (uint64_t)payload, seq = 2 * vt__calls + 1;
    int64_t start = c ? c->enter : 0;
    if (fn > VT_NFN)
        fn = VT_NFN;
    /* bytes 0-7: 'V' 'P' version flags, then four zero bytes (one store): the function's
     * word with the mode and the sync flag or'ed in */
    uint64_t w0 = vt_pb_hdr_w0[fn] | (uint64_t)((unsigned)mode & 3) << 24;
    if (pl >= vt_pb_sync_from[fn])
        w0 |= (uint64_t)VT_PB_FLAG_SYNC << 24;
    w0 = vt_pb_le64(w0);
    memcpy(h, &w0, 8);
    memcpy(h + VT_RT_HDR_BYTES, &pl, 8);
    memcpy(h + VT_RT_HDR_SEQ, &seq, 8);
    memcpy(h + VT_RT_HDR_START, &start, 8);
    /* the sender's difference: the run-time reduction's (rtreduce.h); empty without it */
    vt_rt_send_poly(c, h + VT_RT_HDR_POLY_LEN);
}

/* Whether h starts a vtrace header (not: a peer without the layer). Its fields are read
 * where they are, when needed (rtreduce.h): nothing is copied out. */
static inline int vt_pb_header_ok(const uint8_t *h)
{
    /* the first four bytes in one load, the flags' byte masked off */
    uint32_t w0;
    memcpy(&w0, h, 4);
    return (vt_pb_le32(w0) & 0xffffffu) == VT_PB_MAGIC && h[VT_RT_HDR_POLY_LEN] <= VT_RT_POLY_ROOM;
}

/* A received message is in: check its header (at stage), unpack a packed payload, set the count the user sees. stage: the header (and
 * payload when packed). Statuses of cancelled receives are left alone. Returns 1 when
 * the header is there. */
static VT_ALWAYS_INLINE int vt_pb_finish_recv(const uint8_t *stage, int packed, MPI_Count capacity_bytes, void *ubuf,
                                              MPI_Count ucount, MPI_Datatype utype, const pb_shape *s, MPI_Status *st,
                                              int payload_in_header, MPI_Count *payload_out)
{
    int have_status = st && st != MPI_STATUS_IGNORE;
    if (have_status && vt_status_cancelled(st))
        return 0;
    MPI_Count n = 0;
    int have_header;
    if (payload_in_header) {
        have_header = vt_pb_header_ok(stage);
        n = have_header ? VT_PB_H + (MPI_Count)vt_rt_hdr_u64(stage, VT_RT_HDR_BYTES) : 0;
        if (n > VT_PB_H + capacity_bytes)
            n = VT_PB_H + capacity_bytes;
    } else {
        if (!have_status)
            return 0;
        n = vt_status_bytes(st);
        have_header = n >= VT_PB_H && vt_pb_header_ok(stage);
    }
    if (VT_UNLIKELY(!have_header)) {
        vt_pb_no_header(n);
        return 0;
    }
    MPI_Count payload = n - VT_PB_H;
    /* the count first: the status is not loaded again after the user's buffer is written */
    if (have_status)
        vt_status_set_bytes(st, payload);
    if (packed)
        vt_pb_unpack(stage + VT_PB_H, payload, ubuf, ucount, utype, s);
    if (payload_out)
        *payload_out = payload;
    return 1;
}

/* The run-time reduction's part of a receive completion (rtreduce.h): the header and
 * where the receive was posted; src is the source in the communicator whose record is cm
 * (as it was when the receive was posted; MPI_ANY_SOURCE: unknown). */
static VT_ALWAYS_INLINE void vt_pb_rt_in(const uint8_t *h, const vt_comm *cm, const MPI_Status *st, int src,
                                        uint64_t post_seq, int64_t post_enter, uint64_t post_order,
                                        MPI_Message matched)
{
    if (!vt__rt)
        return;
    int tag = st && st != MPI_STATUS_IGNORE ? st->MPI_TAG : -1;
    if (matched != MPI_MESSAGE_NULL) {
        /* MPI_Mrecv/Imrecv: the source and communicator are the probe's */
        vt_rt_msg_in(h, UINT32_MAX, tag, 0, post_seq, post_enter, post_order, matched);
        return;
    }
    int w = cm && src >= 0 ? vt_comm_peer(cm, src) : -1;
    if (VT_UNLIKELY(w < 0)) {
        vt_rt_unsupported("a message whose source cannot be known (MPI_Isendrecv from MPI_ANY_SOURCE)");
        return;
    }
    vt_rt_msg_in(h, (uint32_t)w, tag, cm->gid, post_seq, post_enter, post_order, MPI_MESSAGE_NULL);
}

#endif
