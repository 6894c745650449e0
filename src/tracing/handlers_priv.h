/* Helpers of the handlers (handlers.c, handlers_coll.c, handlers_io.c): bytes of a
 * count of a datatype or of a status, the communicator of a handle, and a call's record
 * opened and closed. Inline: every MPI call goes through them. Not an API. */
#ifndef VT_HANDLERS_PRIV_H
#define VT_HANDLERS_PRIV_H

#include "tracing/handlers.h"
#include "tracing/buffer.h"
#include "tracing/callsites.h"
#include "tracing/comms.h"
#include "tracing/filter.h"
#include "tracing/mpistatus.h"
#include "tracing/period.h"
#include "tracing/rtreduce.h"
#include "mpid/piggyback.h"

static inline uint64_t type_bytes(MPI_Count count, MPI_Datatype t)
{
#ifdef MPICH
    /* MPICH encodes the size of a predefined basic type in its handle (not
     * MPI_DATATYPE_NULL's). */
    if (((unsigned)t & 0xfc000000u) == 0x4c000000u)
        return count > 0 ? (uint64_t)count * (((unsigned)t >> 8) & 0xffu) : 0;
#endif
    if (count <= 0 || t == MPI_DATATYPE_NULL)
        return 0;
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

/* A record's start: code, enter, duration, call site, at p. FN is c->fn (a constant where
 * the caller knows it: one byte stored, no varint loop). ONE: the caller's own site cache
 * (vt_callsite_index_one), or NULL (a constant). */
static VT_ALWAYS_INLINE uint8_t *rec_head(const vt_call *c, unsigned fn, int64_t exit, uint8_t *p, vt_site_one *one)
{
    /* under the buffer's lock: the call-site table is shared by the threads */
    uint64_t site = one ? vt_callsite_index_one(one, c->site) : vt_callsite_index(c->site);
    p = vt_put_uvar(p, VT_CODE_FIRST_FN + fn);
    p = vt_put_uvar_2(p, vt_zigzag(c->enter - vt__buf.prev_exit));
    p = vt_put_uvar_2(p, (uint64_t)(exit - c->enter));
    return vt_put_uvar(p, site);
}

/* Opens the record of call c (function FN, c->fn): code, enter, duration, call site.
 * Holds the buffer lock until rec_done. NULL when recording has stopped, or (CAN_SKIP, a
 * constant: the caller keeps its bookkeeping apart from its encoding) when the record is
 * not to be encoded (VT_REC_SKIP, buffer.h): rec_skipped() then says so, and the caller
 * does its bookkeeping, encodes nothing and closes with rec_done_skip. PLAIN (a
 * constant): the caller found vt__rec_special 0 (no filter, periodicity detector, skip,
 * threads or reduction), so nothing of them is tested. Always inline (see rec_done). */
static VT_ALWAYS_INLINE uint8_t *rec_open_site(const vt_call *c, unsigned fn, int64_t exit, size_t extra,
                                               int can_skip, int plain, vt_site_one *one)
{
    uint8_t *p;
    if (plain) {
        p = vt_rec_room(4 * VT_UVAR_MAX + extra);
        return VT_LIKELY(p != NULL) ? rec_head(c, fn, exit, p, one) : NULL;
    }
    /* one word for the filter, the periodicity detector and VT_REC_SKIP */
    if (VT_UNLIKELY(vt__rec_special & VT_REC_RECORD)) {
        unsigned special = vt__rec_special;
        /* VTRACE_FILTER: left out, counted in the profile (rec_done) */
        if ((special & VT_REC_FILTER) && vt_filter_drop(fn, c->site))
            return NULL;
        /* VTRACE_PERIODIC: iteration markers, and records of kept-enough iterations
         * skipped (never under MPI_THREAD_MULTIPLE) */
        if ((special & VT_REC_PERIOD) && vt_period_step(fn, vt_callsite_index(c->site), c->enter))
            return NULL;
        if (can_skip && (special & VT_REC_SKIP)) {
            p = vt_rec_skip_begin(4 * VT_UVAR_MAX + extra);
            if (p == VT_REC_SKIPPED) {
                vt__rec_skipped = 1;
                return NULL;
            }
            return p ? rec_head(c, fn, exit, p, one) : NULL;
        }
    }
    p = vt_rec_begin(4 * VT_UVAR_MAX + extra);
    if (VT_UNLIKELY(!p))
        return NULL;
    return rec_head(c, fn, exit, p, one);
}

/* rec_open_site with the shared site cache. */
static VT_ALWAYS_INLINE uint8_t *rec_open(const vt_call *c, unsigned fn, int64_t exit, size_t extra, int can_skip,
                                          int plain)
{
    return rec_open_site(c, fn, exit, extra, can_skip, plain, NULL);
}

/* After rec_call_skip returned NULL: whether the record is counted but not encoded. */
static inline int rec_skipped(void)
{
    return VT_UNLIKELY(vt__rec_skipped);
}

/* The record of a handler that always encodes. */
static VT_ALWAYS_INLINE uint8_t *rec_call(const vt_call *c, int64_t exit, size_t extra)
{
    return rec_open(c, c->fn, exit, extra, 0, 0);
}

static inline void profile_add(unsigned fn, int64_t dur, uint64_t bytes, int recorded)
{
    vt_profile_entry *e = &vt__profile[fn];
#if defined(__x86_64__)
    /* one add to memory each: GCC's vectoriser adds two neighbouring counters as one
     * 16-byte vector, six instructions where two adds do (issue 18) */
    __asm__("addq $1, %0" : "+m"(e->calls));
    __asm__("addq %1, %0" : "+m"(e->time_ns) : "er"((uint64_t)dur));
    __asm__("addq %1, %0" : "+m"(e->bytes) : "er"(bytes));
#else
    e->calls++;
    e->time_ns += (uint64_t)dur;
    e->bytes += bytes;
#endif
    /* RECORDED a constant where it is 1: nothing more (vt_profile_records) */
    if (!recorded)
        e->unrecorded++;
}

/* rec_done of a call not recorded (filtered, skipped, recording stopped): out of line. */
VT_HIDDEN void vt__rec_none(const vt_call *c, int64_t exit, uint64_t bytes);

static VT_ALWAYS_INLINE void rec_count(const vt_call *c, unsigned fn, int64_t exit, uint64_t bytes, int plain)
{
    profile_add(fn, exit - c->enter, bytes, 1);
    if (!plain && VT_UNLIKELY(vt__rt))
        vt_rt_call(c, exit);
    vt__calls++;
}

/* rec_count in the reduction's own modes (rec_close_rt): RT_ON is vt__rt as the caller
 * read it, and the reduction is on unless it stopped, so its call is laid out in line,
 * not as a cold branch (issue 18). */
static VT_ALWAYS_INLINE void rec_count_rt(const vt_call *c, unsigned fn, int64_t exit, uint64_t bytes, int rt_on,
                                          const MPI_Status *recv_st)
{
    profile_add(fn, exit - c->enter, bytes, 1);
    if (VT_LIKELY(rt_on)) {
        if (!recv_st)
            vt_rt_send_call(c, exit);
        else if (vt__rt_recv_of == vt__calls + 1)
            /* nothing posts a receive between the stage's and the exit (one thread) */
            vt_rt_recv_call(c, exit, recv_st, vt_pb_post_order - 1);
        else
            vt_rt_call(c, exit);
    }
    vt__calls++;
}

/* Closes the record rec_open opened (p NULL: none, or not encoded: rec_skipped()),
 * counts the call in the profile and gives it to the run-time reduction. Inline in every
 * handler, as rec_open: as calls of their own they cost 80 instructions per Send/Recv
 * pair (issue 18). FN and PLAIN as rec_open's. */
static VT_ALWAYS_INLINE void rec_close(const vt_call *c, unsigned fn, uint8_t *p, int64_t exit, uint64_t bytes,
                                       int can_skip, int plain)
{
    if (VT_LIKELY(p != NULL)) {
        rec_count(c, fn, exit, bytes, plain);
        if (plain)
            vt_rec_put(p, exit);
        else
            vt_rec_end(p, exit);
    } else if (!plain && can_skip && rec_skipped()) {
        /* no rec_head: the call site numbered here, in the order of first use, as an
         * encoded record numbers it */
        if (VT_UNLIKELY(vt__rt))
            (void)vt_callsite_index(c->site);
        rec_count(c, fn, exit, bytes, 0);
        vt_rec_skip_end(exit);
    } else {
        vt__rec_none(c, exit, bytes);
    }
    vt__depth = 0;
}

/* rec_open_site and rec_close where vt__rec_special is VT_REC_RT, or VT_REC_RT |
 * VT_REC_SKIP where SKIP (a constant): VTRACE_MODE=reduced on one thread, with the TSC
 * clock, no filter and no periodicity detector, modes fixed at initialisation (the skip
 * once the first block was dropped). No lock, no test of those modes, and a record not
 * encoded is said by VT_REC_SKIPPED, not by vt__rec_skipped (issue 18). */
static VT_ALWAYS_INLINE uint8_t *rec_open_rt(const vt_call *c, unsigned fn, int64_t exit, size_t extra, int skip,
                                             vt_site_one *one)
{
    uint8_t *p = skip ? vt_rec_skip_room(4 * VT_UVAR_MAX + extra) : vt_rec_room(4 * VT_UVAR_MAX + extra);
    if (skip && p == VT_REC_SKIPPED)
        return p;
    return VT_LIKELY(p != NULL) ? rec_head(c, fn, exit, p, one) : NULL;
}

/* P: rec_open_rt's answer, or where a record was encoded its end. RECV_ST: a blocking
 * MPI_Recv's status (its message may wait in vt__rt_recv_stage), else NULL: a blocking
 * send (handlers_p2p.h's two bodies are the only callers). */
static VT_ALWAYS_INLINE void rec_close_rt(const vt_call *c, unsigned fn, uint8_t *p, int64_t exit, uint64_t bytes,
                                          int skip, vt_site_one *one, const MPI_Status *recv_st)
{
    if (skip && p == VT_REC_SKIPPED) {
        /* read once: numbering a call site never stops the reduction (rtreduce.c does) */
        int rt_on = vt__rt;
        /* as rec_close's record not encoded: the call site numbered in order of first use */
        if (VT_LIKELY(rt_on))
            (void)(one ? vt_callsite_index_one(one, c->site) : vt_callsite_index(c->site));
        rec_count_rt(c, fn, exit, bytes, rt_on, recv_st);
        vt_rec_skip_put(exit);
    } else if (VT_LIKELY(p != NULL)) {
        rec_count_rt(c, fn, exit, bytes, vt__rt, recv_st);
        vt_rec_put(p, exit);
    } else {
        vt__rec_none(c, exit, bytes);
    }
    vt__depth = 0;
}

static VT_ALWAYS_INLINE void rec_done(const vt_call *c, uint8_t *p, int64_t exit, uint64_t bytes)
{
    rec_close(c, c->fn, p, exit, bytes, 0, 0);
}

/* rec_open and rec_close of a handler with a path that does not encode: its bookkeeping
 * runs where p is not NULL or rec_skipped(), its encoding only where p is not NULL. */
static VT_ALWAYS_INLINE uint8_t *rec_call_skip(const vt_call *c, int64_t exit, size_t extra)
{
    return rec_open(c, c->fn, exit, extra, 1, 0);
}

static VT_ALWAYS_INLINE void rec_done_skip(const vt_call *c, uint8_t *p, int64_t exit, uint64_t bytes)
{
    rec_close(c, c->fn, p, exit, bytes, 1, 0);
}

#endif
