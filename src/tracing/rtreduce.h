/* The run-time reduction (issue 4, doc/piggyback.md): this rank's model events, built
 * from its own calls and from the headers of the messages it receives, go through the
 * per-rank reducer that `vtrace reduce` runs on full traces (rankreduce.h), and its
 * records are written as this rank's reduced trace. Same events, same code, same
 * records.
 *
 * The handlers stage what a call completes (vt_rt_msg_in, vt_rt_ssend, vt_rt_gate,
 * vt_rt_nbc) before its record is written; vt_rt_call then makes the burst before the
 * call and the call itself two model events. */
#ifndef VT_RTREDUCE_H
#define VT_RTREDUCE_H

#include <stdint.h>
#include <string.h>

#include "model/model.h"
#include "tracing/state.h"

/* The ids of this rank's communicator table as it is now (comms.c; declared here, as
 * comms.h's vt_comm is not the reader's, which the reduced writer's header brings):
 * the reduced writer names communicators by their place in it. NULL, *n 0: no memory. */
VT_HIDDEN const uint64_t *vt_comms_gids(size_t *n);
/* MPI_COMM_WORLD's id (after it is registered). */
VT_HIDDEN uint64_t vt_comms_world_gid(void);

/* Nonzero while the run-time reduction decides (VTRACE_MODE=reduced or both). */
extern VT_HIDDEN int vt__rt;

/* A message's header where it arrived (doc/piggyback.md, "Wire format"), read in place:
 * no copy of its fields is made, each is one load at a fixed offset (vt_rt_hdr_u64). */
#define VT_RT_HDR_FLAGS 3       /* bits 0-1 send mode, VT_RT_FLAG_BLOCKING, VT_RT_FLAG_SYNC */
#define VT_RT_HDR_BYTES 8       /* the payload bytes */
#define VT_RT_HDR_SEQ 16        /* the sending call's model sequence number */
#define VT_RT_HDR_START 24      /* its enter, on the sender's clock */
#define VT_RT_HDR_POLY_LEN 32   /* the sender's difference: its length, */
#define VT_RT_HDR_POLY 33       /* ... its encoding, padded with zeros to VT_RT_POLY_ROOM */
#define VT_RT_FLAG_BLOCKING 4u  /* a blocking send (Send, Ssend, Bsend) */
#define VT_RT_FLAG_SYNC 8u      /* synchronous to the model */

static inline uint64_t vt_rt_hdr_u64(const uint8_t *h, unsigned at)
{
    uint64_t x;
    memcpy(&x, h + at, 8);
    return x;
}

/* Starts it (after the clock synchronisation at MPI_Init): DIR the reduced trace's
 * directory, offset this rank's clock offset there (model clock = local + offset).
 * Returns 0, or -1 with a warning (the run goes on without it). */
VT_HIDDEN int vt_rt_start(const char *dir, int rank, int nranks, int64_t offset, const char *config_text);

/* Bytes of a message header that hold the sender's difference (doc/piggyback.md). */
#define VT_RT_POLY_ROOM 31

/* The difference a send made by call c carries: the burst before c goes in first.
 * Writes the header's last 1 + VT_RT_POLY_ROOM bytes (at VT_RT_HDR_POLY_LEN): its
 * length (0: none, the reduction is off or stopped), then its encoding padded with
 * zeros. */
VT_HIDDEN void vt_rt_send_poly(const vt_call *c, uint8_t out[1 + VT_RT_POLY_ROOM]);

/* A message the call being made completes: its header, its source (world rank; with a
 * matched-message handle, the probe's), tag and communicator id, the receive's posting
 * call (sequence number, enter) and posting order, and for MPI_Mrecv/Imrecv the handle
 * the matching probe returned (MPI_MESSAGE_NULL otherwise). */
VT_HIDDEN void vt_rt_msg_in(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id, uint64_t post_seq,
                            int64_t post_enter, uint64_t post_order, MPI_Message matched);
/* vt_rt_msg_in for a receive the call being made posted (a blocking one, no matched
 * message): its posting call is that call, entered at post_enter (local). */
VT_HIDDEN void vt_rt_msg_now(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id, int64_t post_enter,
                             uint64_t post_order);
/* The call is a probe that found a message from src (world rank) with this tag on
 * communicator comm_id; matched: MPI_Mprobe/Improbe's handle, or MPI_MESSAGE_NULL;
 * post_order: receives posted so far (the probed message goes to a later one). */
VT_HIDDEN void vt_rt_probe(uint32_t src, int tag, uint64_t comm_id, MPI_Message matched, uint64_t post_order);
/* A synchronous send the call completes (its own or a request's). */
VT_HIDDEN void vt_rt_ssend(uint32_t peer, uint64_t seq, int64_t S_local, uint64_t bytes);
/* A collective's gate the call completes (blocking: the call is the collective). */
VT_HIDDEN void vt_rt_gate(uint64_t comm_id, uint64_t coll_seq, uint32_t nmembers, int nonblocking);
/* The call initiates a non-blocking collective. */
VT_HIDDEN void vt_rt_nbc(uint64_t comm_id, uint64_t coll_seq, uint32_t nmembers);
/* The call is one the reduction does not handle yet: it stops, with a warning. */
VT_HIDDEN void vt_rt_unsupported(const char *what);

/* From how many bytes each function's messages are synchronous to the model
 * (vt_model_sync_from of its send kind, set at vt_rt_start): one compare per send. */
extern VT_HIDDEN uint64_t vt__rt_sync_from[VT_NFN];

/* Whether a message of `bytes` sent by function fn is synchronous to the model. */
static inline int vt_rt_is_sync(unsigned fn, uint64_t bytes)
{
    return fn < VT_NFN && bytes >= vt__rt_sync_from[fn];
}
/* The call being made is not recorded (it completed nothing): forget what was staged. */
VT_HIDDEN void vt_rt_discard(void);
/* A call that should have been recorded was not (recording stopped): the reduction stops. */
VT_HIDDEN void vt_rt_unrecorded(const vt_call *c);

/* A blocking MPI_Recv's message, kept until the call's exit in the reduction's own
 * modes (one thread: VT_REC_RT), so that its staging and the call are one step
 * (vt_rt_recv_call, issue 18): the wrapper receives into vt__rt_recv_stage (header and
 * payload, VT_RT_RECV_STAGE bytes) and sets vt__rt_recv_of to 1 + vt__calls where the
 * reduction is to take the header from there at the call's exit. */
#define VT_RT_RECV_STAGE (64 + 2048)
extern VT_HIDDEN uint8_t vt__rt_recv_stage[VT_RT_RECV_STAGE];
extern VT_HIDDEN uint64_t vt__rt_recv_of;

/* vt_rt_msg_now of the message in vt__rt_recv_stage (received on MPI_COMM_WORLD, its
 * source and tag in st, posted by c as receive number post_order: the transport's last)
 * and then vt_rt_call(c, exit), in one step: the ping-pong's folded receive stages
 * nothing, and reads neither the status nor the communicator. */
VT_HIDDEN void vt_rt_recv_call(const vt_call *c, int64_t exit, const MPI_Status *st, uint64_t post_order);

/* vt_rt_call of a blocking send (MPI_Send, Ssend, Bsend, Rsend), which completes no
 * received message. */
VT_HIDDEN void vt_rt_send_call(const vt_call *c, int64_t exit);

/* The call c (function c->fn) was recorded with this exit: its burst and itself are
 * model events. Called with the record (under the buffer's lock, c's call site numbered
 * already: its index is looked up only where an event needs it), before vt__calls moves. */
VT_HIDDEN void vt_rt_call(const vt_call *c, int64_t exit);

/* At the end: the reducer's last records and the reduced trace's files. RANKDEFS
 * payload: the same as the full trace's (profile, communicators, clock), compressed
 * against DICT (vtrace.defs' DICT, 1.5) when DICT_LEN > 0. Returns 0. */
VT_HIDDEN int vt_rt_finish(const uint8_t *rankdefs, size_t len, const uint8_t *dict, size_t dict_len);
/* After vt_rt_finish: the records the reduced rank file stores (as vt_trace_nrecords
 * counts them). */
VT_HIDDEN uint64_t vt_rt_records_stored(void);
/* In a signal handler (crash.h): the records written so far (the open block, raw), with
 * the names of the profile's functions; SCRATCH: memory for their encoding. Returns 0,
 * or -1 when nothing may be written. */
VT_HIDDEN int vt_rt_flush_in_signal(uint8_t *scratch, size_t cap);
/* The end in a signal handler (crash.h): RANKDEFS and END as they are, write(2) only;
 * the records the reducer still holds are lost. Returns 0, or -1 when nothing may be
 * written (a block was being written, no file). */
VT_HIDDEN int vt_rt_end_in_signal(const uint8_t *rankdefs, size_t len);
/* The reduced rank file while it is open, or NULL. */
/* During the run, after a block of the full trace was flushed (or would have been, in
 * VTRACE_MODE=reduced): the reduced file made readable up to its last decided record,
 * with RANKDEFS (a snapshot, every called function named) at its end, provisionally
 * (vt_rrec_out_provisional): its bytes at the end stay those of vtrace reduce. Returns
 * 0, or -1 (nothing written: a block is being written, or the reduction stopped). */
VT_HIDDEN int vt_rt_snapshot(const uint8_t *rankdefs, size_t len);
VT_HIDDEN const char *vt_rt_path(void);
/* Whether a FUNCS block of the reduced file names function fn already. */
VT_HIDDEN int vt_rt_fn_named(unsigned fn);

#endif
