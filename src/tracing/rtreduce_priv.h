/* The run-time reduction's own types (rtreduce.c): a message staged for the call being
 * made, and a probe whose message is not received yet. */
#ifndef VT_TRACING_RTREDUCE_PRIV_H
#define VT_TRACING_RTREDUCE_PRIV_H

#include "model/event.h"
#include "model/poly.h"
#include "tracing/rtreduce.h"

#include <mpi.h>
#include <stdint.h>

/* Where a staged message's difference is: copied only when its source changes. */
enum rt_d_at { D_OWN, D_GOT, D_SENT };

typedef struct rt_msg {
    vt_obs_con con;         /* filled from what follows only where the call is an event (msg_con) */
    uint8_t hdr[VT_RT_HDR_POLY_LEN];    /* the header's bytes 0-31: flags, bytes, seq, start */
    uint32_t src;
    uint64_t post_seq;
    int64_t post_enter;
    vt_poly D;              /* the sender's difference when d_at is D_OWN */
    uint8_t d_at;           /* enum rt_d_at: D_GOT rt.got_d, D_SENT rt.sent_d */
    uint64_t d_equal;       /* nonzero: D equals this rank's d while rr.d_version is this */
    uint64_t order;
} rt_msg;

/* A probe that found a message whose receive has not come yet (model.md §4: a window). */
typedef struct rt_probe {
    uint64_t seq;
    int64_t R, E, enter;            /* global, global, local */
    uint32_t src;
    int tag;
    uint64_t comm;
    MPI_Message matched;
    uint64_t order;                 /* receives posted before it */
} rt_probe;

#endif
