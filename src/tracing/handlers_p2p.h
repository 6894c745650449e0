/* The blocking send's and receive's handlers as always-inline functions: handlers.c's
 * vt_leave_send and vt_leave_recv are these, and the generated MPI_Send and MPI_Recv
 * (maint/gen_wrappers.py, INLINE_LEAVE) inline them, so the ping-pong's calls make no
 * second call with its frame and arguments and fold their function id (issue 18). Not an
 * API. */
#ifndef VT_HANDLERS_P2P_H
#define VT_HANDLERS_P2P_H

#include "tracing/handlers_priv.h"

#include <string.h>

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

/* Layout letters c p t b or c P T B: the communicator's index and a side. Where all four
 * fit a byte each (a small communicator table, ranks and tags from 0 to 63, fewer than
 * 128 bytes), one 4-byte store instead of four varint loops (issue 18); the same bytes
 * (the zigzag code of 0 <= v < 64 is 2 v). */
static VT_ALWAYS_INLINE uint8_t *put_comm_side(uint8_t *p, uint32_t index, int peer, int tag, uint64_t bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (VT_LIKELY(((uint64_t)((unsigned)peer | (unsigned)tag) << 1 | index | bytes) < 0x80)) {
        uint32_t w = index | (uint32_t)peer << 9 | (uint32_t)tag << 17 | (uint32_t)bytes << 24;
        memcpy(p, &w, 4);
        return p + 4;
    }
#endif
    uint64_t zp = vt_zigzag(peer), zt = vt_zigzag(tag);
    p = vt_put_uvar(p, index);
    p = vt_put_uvar(p, zp);
    p = vt_put_uvar(p, zt);
    return vt_put_uvar(p, bytes);
}

/* The run-time reduction: a blocking send (or Sendrecv's send half) whose message is
 * synchronous to the model completes at this call (replay.c, sync_sender). The
 * communicator's record is looked up only then (COMM's, or CM where not NULL). */
static VT_ALWAYS_INLINE void rt_sync_send(const vt_call *c, unsigned fn, MPI_Comm comm, const vt_comm *cm, int dest,
                                          uint64_t bytes)
{
    if (!vt_rt_is_sync(fn, bytes))
        return;
    if (!cm)
        cm = comm_of(comm);
    int peer = dest == MPI_PROC_NULL ? -1 : vt_comm_peer(cm, dest);
    if (peer >= 0)
        vt_rt_ssend((uint32_t)peer, 2 * vt__calls + 1, c->enter, bytes);
}

/* The handlers' bodies, PLAIN a constant: nonzero on the path where vt__rec_special has
 * at most the clock's bit (rec_open: nothing of the filter, skip, threads or reduction is
 * tested); 1 reads the TSC, VT_PLAIN_MONO clock_gettime (vt__use_tsc known 0);
 * VT_PLAIN_RT and VT_PLAIN_RT_SKIP the TSC, where vt__rec_special is VT_REC_RT and
 * VT_REC_RT | VT_REC_SKIP (rec_open_rt: the reduction's modes, fixed at initialisation,
 * not tested again). */
enum { VT_PLAIN_MONO = 2, VT_PLAIN_RT = 3, VT_PLAIN_RT_SKIP = 4 };
static VT_ALWAYS_INLINE int64_t plain_now(int plain)
{
    return plain == 1 || plain >= VT_PLAIN_RT ? vt_tsc_now() : plain == VT_PLAIN_MONO ? vt_mono_now() : vt_now();
}

/* The blocking call's own site cache where FN is known to be the generated MPI_Send's or
 * MPI_Recv's constant (handlers.c's vt_leave_send and vt_leave_recv, for the other
 * functions, pass c->fn: the shared cache, no test of fn). */
static VT_ALWAYS_INLINE vt_site_one *site_one(unsigned fn, unsigned mine, vt_site_one *one)
{
    return __builtin_constant_p(fn) && fn == mine ? one : NULL;
}

/* The record's start, by PLAIN (rec_open_rt or rec_open_site); VT_REC_SKIPPED where
 * PLAIN is VT_PLAIN_RT_SKIP and the record is not encoded. */
static VT_ALWAYS_INLINE uint8_t *p2p_open(const vt_call *c, unsigned fn, int64_t exit, int plain, vt_site_one *one)
{
    if (plain >= VT_PLAIN_RT)
        return rec_open_rt(c, fn, exit, 4 * VT_UVAR_MAX, plain == VT_PLAIN_RT_SKIP, one);
    return rec_open_site(c, fn, exit, 4 * VT_UVAR_MAX, 1, plain, one);
}

/* Whether P (p2p_open's) is room to encode the record into. */
static VT_ALWAYS_INLINE int p2p_encodes(uint8_t *p, int plain)
{
    return p != NULL && !(plain == VT_PLAIN_RT_SKIP && p == VT_REC_SKIPPED);
}

/* Whether the reduction is to see the call: its record encoded (ENCODED) or counted. */
static VT_ALWAYS_INLINE int p2p_rt_sees(uint8_t *p, int encoded, int plain)
{
    if (plain >= VT_PLAIN_RT)
        return (encoded || (plain == VT_PLAIN_RT_SKIP && p == VT_REC_SKIPPED)) && VT_LIKELY(vt__rt);
    if (plain)
        return 0;
    return encoded ? VT_UNLIKELY(vt__rt) : rec_skipped() && vt__rt;
}

static VT_ALWAYS_INLINE void p2p_close(const vt_call *c, unsigned fn, uint8_t *p, int64_t exit, uint64_t bytes,
                                       int plain, vt_site_one *one, const MPI_Status *recv_st)
{
    if (plain >= VT_PLAIN_RT)
        rec_close_rt(c, fn, p, exit, bytes, plain == VT_PLAIN_RT_SKIP, one, recv_st);
    else
        rec_close(c, fn, p, exit, bytes, 1, plain);
}

static VT_ALWAYS_INLINE void leave_send_body(vt_call *c, unsigned fn, MPI_Comm comm, int dest, int tag,
                                             MPI_Count count, MPI_Datatype type, int plain)
{
    int64_t exit = plain_now(plain);
    uint64_t bytes = type_bytes(count, type);
    vt_site_one *one = site_one(fn, VT_FN_MPI_Send, &vt__site_send);
    uint8_t *p = p2p_open(c, fn, exit, plain, one);
    int encoded = p2p_encodes(p, plain);
    if (encoded) {
        /* MPI_COMM_WORLD's ranks are world ranks: no lookup */
        if (VT_LIKELY(comm == MPI_COMM_WORLD && (unsigned)dest < (unsigned)vt__world_size)) {
            p = put_comm_side(p, vt__world_index, dest, tag, bytes);
        } else {
            vt_comm *cm = comm_of(comm);
            p = put_comm_side(p, cm->index, vt_comm_peer(cm, dest), tag, bytes);
        }
    }
    if (p2p_rt_sees(p, encoded, plain))
        rt_sync_send(c, fn, comm, NULL, dest, bytes);
    p2p_close(c, fn, p, exit, bytes, plain, one, NULL);
}

static VT_ALWAYS_INLINE void leave_recv_body(vt_call *c, unsigned fn, MPI_Comm comm, MPI_Status *st, int plain)
{
    int64_t exit = plain_now(plain);
    uint64_t bytes = status_bytes(st);
    vt_site_one *one = site_one(fn, VT_FN_MPI_Recv, &vt__site_recv);
    uint8_t *p = p2p_open(c, fn, exit, plain, one);
    if (!p2p_encodes(p, plain)) {
    } else if (VT_LIKELY(comm == MPI_COMM_WORLD && (unsigned)st->MPI_SOURCE < (unsigned)vt__world_size)) {
        p = put_comm_side(p, vt__world_index, st->MPI_SOURCE, st->MPI_TAG, bytes);
    } else {
        vt_comm *cm = comm_of(comm);
        p = put_comm_side(p, cm->index, vt_comm_peer(cm, st->MPI_SOURCE), st->MPI_TAG, bytes);
    }
    p2p_close(c, fn, p, exit, bytes, plain, one, st);
}

/* FN is c->fn: the generated MPI_Send and MPI_Recv pass their constant. With
 * vt__rec_special 0 (full mode, one thread, the TSC clock, no filter) one test decides
 * what the general path tests five times after the call (issue 18); with the clock's bit
 * alone (clock_gettime: a clock source other than the TSC, kvm-clock on many virtual
 * machines) a second test, on that path only, takes the same body reading the other clock;
 * with the reduction's bit alone, or with the skip's (VTRACE_MODE=reduced past its first
 * block), a third and a fourth. */
static VT_ALWAYS_INLINE void vt_leave_inline_send(vt_call *c, unsigned fn, int rc, MPI_Comm comm, int dest, int tag,
                                                  MPI_Count count, MPI_Datatype type)
{
    (void)rc;
    unsigned special = vt__rec_special;
    if (VT_LIKELY(!special))
        leave_send_body(c, fn, comm, dest, tag, count, type, 1);
    else if (special == VT_REC_CLOCK)
        leave_send_body(c, fn, comm, dest, tag, count, type, VT_PLAIN_MONO);
    else if (special == (VT_REC_RT | VT_REC_SKIP))
        leave_send_body(c, fn, comm, dest, tag, count, type, VT_PLAIN_RT_SKIP);
    else if (special == VT_REC_RT)
        leave_send_body(c, fn, comm, dest, tag, count, type, VT_PLAIN_RT);
    else
        leave_send_body(c, fn, comm, dest, tag, count, type, 0);
}

static VT_ALWAYS_INLINE void vt_leave_inline_recv(vt_call *c, unsigned fn, int rc, MPI_Comm comm, MPI_Status *st)
{
    (void)rc;
    unsigned special = vt__rec_special;
    if (VT_LIKELY(!special))
        leave_recv_body(c, fn, comm, st, 1);
    else if (special == VT_REC_CLOCK)
        leave_recv_body(c, fn, comm, st, VT_PLAIN_MONO);
    else if (special == (VT_REC_RT | VT_REC_SKIP))
        leave_recv_body(c, fn, comm, st, VT_PLAIN_RT_SKIP);
    else if (special == VT_REC_RT)
        leave_recv_body(c, fn, comm, st, VT_PLAIN_RT);
    else
        leave_recv_body(c, fn, comm, st, 0);
}

#endif
