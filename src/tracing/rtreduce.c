/* The run-time reduction: this rank's model events from its own calls, through the
 * per-rank reducer of `vtrace reduce` (rankreduce.h); see rtreduce.h. The events are
 * built as the replay builds them from a full trace (replay.c: publish, message_in,
 * sync_sender, step), from what this rank knows and what the headers say. */
#include "vt_config.h"
#include "tracing/rtreduce.h"
#include "tracing/rtreduce_priv.h"
#include "format/blockio.h"
#include "tracing/buffer.h"
#include "tracing/callsites.h"
#include "mpid/piggyback.h"
#include "util/codec.h"
#include "tracing/log.h"
#include "model/model.h"
#include "model/rankreduce.h"
#include "format/rrec.h"
#include "mpi/vt_fn.h"
#include "util/sort.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

VT_HIDDEN int vt__rt;
_Alignas(16) VT_HIDDEN uint8_t vt__rt_recv_stage[VT_RT_RECV_STAGE];
VT_HIDDEN uint64_t vt__rt_recv_of;
VT_HIDDEN uint64_t vt__rt_sync_from[VT_NFN];

static struct {
    vt_rankreduce rr;
    vt_model_params p;
    uint32_t rank;
    int64_t offset;                 /* model clock = local + offset */
    int started;
    int64_t prev_exit;              /* the last recorded call's exit, local */
    uint64_t burst_of;              /* 1 + the callno whose burst went in already */
    uint8_t fkind[VT_NFN];
    /* staged for the call being made */
    rt_msg *msgs;
    size_t nmsgs, capmsgs;
    vt_obs_con *cons;               /* one call's contributors (scratch) */
    size_t capcons;
    /* d changes rarely: the last encoding sent and the last one received, decoded; the
     * encodings padded with zeros to the header's room. sent.enc is d's while
     * rr.d_version equals sent_version; sent.len its length where it fits the room (0
     * where not: the reduction stops), so that the header's last 32 bytes are a copy of
     * sent's first 32 (issue 18). */
    vt_poly sent_d, got_d;
    struct {
        uint8_t len;
        uint8_t enc[VT_POLY_ENC_MAX];
    } sent;
    uint8_t got_enc[VT_POLY_ENC_MAX];
    size_t sent_len, got_len;
    uint64_t sent_version;
    vt_obs_con *other;              /* SYNC_MSG and GATE contributors, in order */
    size_t nother, capother;
    int nbc;
    uint64_t nbc_comm, nbc_seq;
    uint32_t nbc_members;
    int probing;                    /* the call is a probe that found a message */
    /* The fast paths' one test (a 16-bit load): unusual, any of nother, probing, nprobed,
     * nbc set for the call being made; general, the reduction off or stopped, threads
     * (vt__mt), a test hook (stop_at) or no call yet (started): set until call_general
     * finds none of them, and set again by stop and vt_rt_finish. */
    union {
        struct {
            uint8_t unusual, general;
        } b;
        uint16_t any;
    } slow;
    rt_probe probe;                 /* ... its message's envelope */
    rt_probe *open;                 /* probes whose message is not received yet */
    size_t nopen, capopen;
    uint64_t probed_by[8];          /* probes whose messages the call receives */
    size_t nprobed;
    /* the reduced trace */
    char path[4200];
    int fd;
    vt_rrec_out out;
    int failed;
    uint64_t stop_at;
    int stale_d;
    volatile int writing;           /* a block is being written (the crash paths must not) */
} rt = {.fd = -1, .slow.b.general = 1};

static __attribute__((noinline, cold)) void stop(const char *why)
{
    if (!vt__rt)
        return;
    vt__rt = 0;
    vt_rec_special_set(VT_REC_RT, 0);
    rt.slow.b.general = 1;
    rt.failed = 1;
    if (vt_buffer_need_file() == -EPIPE)
        vt_warn("the run-time reduction stopped: %s; VTRACE_MODE=reduced has dropped the full trace already: "
                "this run leaves no trace (VTRACE_MODE=both keeps the full trace too)",
                why);
    else
        vt_warn("the run-time reduction stopped: %s; the full trace holds the run, `vtrace reduce` reduces it", why);
}

/* Under MPI_THREAD_MULTIPLE the reduction holds while one thread makes the MPI calls
 * (the program's order is then one stream, as the model needs); a second thread's call
 * stops it. */
static pthread_t owner;
static int have_owner;

static __attribute__((noinline)) int mine_mt(void)
{
    pthread_t me = pthread_self();
    if (!have_owner) {
        owner = me;
        have_owner = 1;
        return 1;
    }
    if (pthread_equal(owner, me))
        return 1;
    stop("MPI calls from a second thread (MPI_THREAD_MULTIPLE)");
    return 0;
}

static inline int mine(void)
{
    return !vt__mt || mine_mt();
}

void vt_rt_unsupported(const char *what)
{
    char why[160];
    snprintf(why, sizeof why, "%s is not handled by it in this version", what);
    stop(why);
}

/* ------------------------------------------------------------------ writing */

static void write_failed(int rc)
{
    char why[4400];
    snprintf(why, sizeof why, "writing %s failed (%s)", rt.path, strerror(-rc));
    stop(why);
}

static int put_record(void *arg, const vt_rrec *rec)
{
    (void)arg;
    if (rt.failed)
        return 0;
    rt.writing = 1;
    int rc = vt_rrec_out_put(&rt.out, rec);
    rt.writing = 0;
    if (rc)
        write_failed(rc);
    return 0;
}
/* The writer's view of this rank's communicator table. */
static const uint64_t *comm_ids(void *arg, size_t *n)
{
    (void)arg;
    return vt_comms_gids(n);
}



int vt_rt_start(const char *dir, int rank, int nranks, int64_t offset, const char *config_text)
{
    (void)nranks;
    vt_model_defaults(&rt.p);
    char err[256];
    if (vt_model_params_parse(&rt.p, config_text, err, sizeof err)) {
        vt_warn("the run-time reduction cannot start: %s", err);
        return -1;
    }
    rt.rank = (uint32_t)rank;
    rt.offset = offset;
    for (unsigned f = 0; f < VT_NFN; f++) {
        rt.fkind[f] = (uint8_t)vt_model_kind_of(vt_fn_name[f]);
        vt__rt_sync_from[f] = vt_model_sync_from(vt_model_send_kind(vt_fn_name[f]), &rt.p);
    }
    vt_rr_sink sink = {put_record, NULL};
    /* test hook: a deliberately broken rule, so that the tests comparing with `vtrace
     * reduce` can be seen to fail (model.md §7.6) */
    const char *b = getenv("VTRACE_TEST_RT_BROKEN");
    /* test hook: the reduction stops at call number N (test/mpi/reduced_fallback.sh) */
    rt.stop_at = b && !strncmp(b, "stop:", 5) ? strtoull(b + 5, NULL, 10) : 0;
    /* test hook: headers keep the first d a rank sent, as if d_version never moved */
    rt.stale_d = b && !strcmp(b, "stale-d");
    enum vt_sym_broken broken = b && !strcmp(b, "noR3") ? VT_SYM_BROKEN_NOR3
                                : b && !strcmp(b, "nofold") ? VT_SYM_BROKEN_NOFOLD : VT_SYM_CORRECT;
    if (vt_rr_init(&rt.rr, (uint32_t)rank, (unsigned)rt.p.m, (unsigned)rt.p.K, broken, &sink, NULL)) {
        vt_warn("the run-time reduction cannot start: model limits m=%d, K=%d out of range", rt.p.m, rt.p.K);
        return -1;
    }
    vt_sym_set_room(&rt.rr.sym, (unsigned)rt.p.pbytes);
    snprintf(rt.path, sizeof rt.path, "%s/rank-%06d.vte", dir, rank);
    rt.fd = open(rt.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = rt.fd >= 0 ? vt_file_header_write(rt.fd, VT_MAGIC_RANK, (uint32_t)rank) : -errno;
    if (!rc)
        /* the trace's table in vtrace.defs (1.5) when the full trace's is there */
        rc = vt_rrec_out_init(&rt.out, rt.fd, VT_RREC_ZSTD_LEVEL, vt_buffer_functions_shared() ? NULL : vt_fn_name,
                              vt_fn_layout, VT_NFN);
    rt.out.comm_ids = comm_ids;
    if (rc) {
        vt_warn("the run-time reduction cannot write %s (%s)", rt.path, strerror(rc < 0 ? -rc : ENOMEM));
        return -1;
    }
    vt_rec_special_set(VT_REC_RT, 1);
    vt__rt = 1;
    return 0;
}

/* ------------------------------------------------------------------ events */

static int feed(const vt_obs_event *e, uint32_t nbc_members)
{
    vt_error err;
    if (vt_rr_event(&rt.rr, e, nbc_members, &err)) {
        stop(err.msg);
        return -1;
    }
    return 0;
}

/* The burst before the call entering at `enter` (local): a local event, once. */
/* The burst before call number callno as a model event (a candidate, or vt_rr_quiet
 * did not apply). */
static __attribute__((noinline)) void burst_event(const vt_call *c, uint64_t callno, int64_t start, int64_t end,
                                                   int64_t site)
{
    /* (static: zeroing these large structs at every event cost more than the event) */
    static vt_event rec;
    static vt_obs_event e;
    rec.callno = callno;
    rec.fn = c->fn;
    rec.enter = rec.exit = c->enter;
    e.rank = rt.rank;
    e.seq = 2 * callno;
    e.rec = &rec;
    e.fn = -1;
    /* a burst's call site is that of the call ending it (site: scenarios select by it) */
    if (site < 0)
        site = vt_callsite_index_locked(c->site);
    e.callsite = site;
    e.kind = VT_MK_LOCAL;
    e.start = start;
    e.end = end;
    e.candidate = end - start >= rt.p.theta;
    feed(&e, 0);
}

/* The burst before the call c (from the previous call's exit to c's enter): a local
 * event, once per call. SITE: the call site index of c, -1 when the caller does not hold
 * the buffer's lock (it is then looked up under it, if needed). */
static inline void burst(const vt_call *c, int64_t site)
{
    uint64_t callno = vt__calls;
    if (rt.burst_of == callno + 1)
        return;
    rt.burst_of = callno + 1;
    if (VT_UNLIKELY(!rt.started)) {
        rt.started = 1;
        rt.prev_exit = c->enter;
    }
    int64_t start = rt.prev_exit + rt.offset, end = c->enter + rt.offset;
    if (!vt_rr_quiet(&rt.rr, 2 * callno, 0, 0, end - start >= rt.p.theta))
        burst_event(c, callno, start, end, site);
}

/* The fast paths' burst before the call c: 1 where it is quiet (and now in) or in already;
 * 0 where it is not quiet, with nothing changed (the general path feeds it). R: c's
 * enter on the model clock. */
static inline int burst_quiet(uint64_t callno, int64_t R)
{
    if (rt.burst_of == callno + 1)
        return 1;
    int64_t start = rt.prev_exit + rt.offset;
    if (!vt_rr_quiet(&rt.rr, 2 * callno, 0, 0, R - start >= rt.p.theta))
        return 0;
    rt.burst_of = callno + 1;
    return 1;
}

/* Whether a call from R to E (model clock) is a candidate for the reduction. */
static inline int call_candidate(int64_t R, int64_t E)
{
    return E - R >= rt.p.theta && rt.p.cand_calls;
}

/* Staged messages whose difference is at `at` get their own copy (it is about to change). */
static void own_copies(enum rt_d_at at, const vt_poly *src)
{
    for (size_t i = 0; i < rt.nmsgs; i++)
        if (rt.msgs[i].d_at == at) {
            vt_poly_copy(&rt.msgs[i].D, src);
            rt.msgs[i].d_at = D_OWN;
        }
}

/* vt_rt_send_poly when its fast path does not apply. */
static __attribute__((noinline)) void send_poly_general(const vt_call *c, uint8_t out[1 + VT_RT_POLY_ROOM])
{
    if (!vt__rt || !mine()) {
        memset(out, 0, 1 + VT_RT_POLY_ROOM);
        return;
    }
    burst(c, -1);
    /* what vt_rr_publish gives, encoded again only when d changed */
    if (rt.sent_version != rt.rr.d_version && !(VT_UNLIKELY(rt.stale_d) && rt.sent_len)) {
        if (!rt.sent_len || !vt_poly_equal(&rt.rr.sym.d, &rt.sent_d)) {
            own_copies(D_SENT, &rt.sent_d);
            rt.sent_d = rt.rr.sym.d;
            rt.sent_len = vt_poly_encode(&rt.sent_d, rt.sent.enc);
            memset(rt.sent.enc + rt.sent_len, 0, sizeof rt.sent.enc - rt.sent_len);
            rt.sent.len = rt.sent_len <= VT_RT_POLY_ROOM ? (uint8_t)rt.sent_len : 0;
        }
        rt.sent_version = rt.rr.d_version;
    }
    if (rt.sent_len > VT_RT_POLY_ROOM) {
        /* the room rule (vt_sym_set_room) keeps every d within it after each event */
        stop("a difference longer than the header's room");
        memset(out, 0, 1 + VT_RT_POLY_ROOM);
        return;
    }
    /* the length and the whole room, a constant size: no library call */
    memcpy(out, &rt.sent, 1 + VT_RT_POLY_ROOM);
}

/* The common case of send_poly_general (one thread; d's encoding current; the burst
 * before c quiet or in already), with nothing called but in tail position: no frame.
 * A quiet burst leaves d and d_version as they are, so testing the encoding's version
 * before the burst is what testing it after would be; every other case starts over in
 * send_poly_general (nothing has changed when it does). An encoding longer than the
 * room stopped the reduction, which set slow.b.general: no test of its length. */
void vt_rt_send_poly(const vt_call *c, uint8_t out[1 + VT_RT_POLY_ROOM])
{
    uint64_t callno = vt__calls;
    if (VT_UNLIKELY(rt.slow.b.general) || rt.sent_version != rt.rr.d_version)
        return send_poly_general(c, out);
    if (!burst_quiet(callno, c->enter + rt.offset))
        return send_poly_general(c, out);
    memcpy(out, &rt.sent, 1 + VT_RT_POLY_ROOM);
}

/* Room for `need` elements of `size` bytes in *p (capacity *cap, doubled); 0, or -1
 * after stopping the reduction (out of memory). */
static int room_for(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : 8;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * size);
    if (!q) {
        stop("out of memory");
        return -1;
    }
    *p = q;
    *cap = nc;
    return 0;
}

static vt_obs_con *new_other(void)
{
    if (room_for((void **)&rt.other, &rt.capother, rt.nother + 1, sizeof *rt.other))
        return NULL;
    vt_obs_con *o = &rt.other[rt.nother++];
    rt.slow.b.unusual = 1;
    memset(o, 0, sizeof *o);
    return o;
}

/* The open probe whose message this receive takes: by handle for MPI_Mrecv/Imrecv; else
 * the first probe with the message's envelope that the receive was posted after (MPI
 * gives a probed message to the first receive posted after the probe that matches it). */
static size_t probe_of(uint32_t src, int tag, uint64_t comm, uint64_t post_order, MPI_Message matched)
{
    for (size_t i = 0; i < rt.nopen; i++) {
        const rt_probe *p = &rt.open[i];
        if (matched != MPI_MESSAGE_NULL ? p->matched == matched
                                        : p->matched == MPI_MESSAGE_NULL && p->src == src && p->tag == tag &&
                                              p->comm == comm && p->order <= post_order)
            return i;
    }
    return SIZE_MAX;
}

/* The probed message's contributor, as replay.c's message_in makes it for the probe:
 * T from the probe's exit, posted by the probe. */
static int fill_probe(const rt_probe *p, const uint8_t *h, const vt_poly *D)
{
    int64_t S_local = (int64_t)vt_rt_hdr_u64(h, VT_RT_HDR_START), S = S_local + rt.offset;
    uint64_t bytes = vt_rt_hdr_u64(h, VT_RT_HDR_BYTES);
    vt_obs_con k = {.kind = VT_CON_MSG, .T = S + vt_model_lambda(&rt.p, bytes, S, p->E), .rank = p->src,
                    .seq = vt_rt_hdr_u64(h, VT_RT_HDR_SEQ), .S = S, .S_local = S_local, .bytes = bytes,
                    .sync = (h[VT_RT_HDR_FLAGS] & VT_RT_FLAG_SYNC) != 0,
                    .blocking_send = (h[VT_RT_HDR_FLAGS] & VT_RT_FLAG_BLOCKING) != 0, .peer = rt.rank, .post_seq = p->seq, .P = p->R,
                    .P_local = p->enter, .probed = 1, .ext = D};
    return vt_rr_probe_fill(&rt.rr, p->seq, &k);
}

/* Two encodings padded to the header's room are the same: four word compares (a call
 * to memcmp, or a byte loop over the common 25-byte difference, costs more). */
static int same_room(const uint8_t *a, const uint8_t *b)
{
    _Static_assert(VT_RT_POLY_ROOM > 24 && VT_RT_POLY_ROOM <= 32, "four overlapping words");
    uint64_t x[4], y[4];
    memcpy(&x[0], a, 8), memcpy(&y[0], b, 8);
    memcpy(&x[1], a + 8, 8), memcpy(&y[1], b + 8, 8);
    memcpy(&x[2], a + 16, 8), memcpy(&y[2], b + 16, 8);
    memcpy(&x[3], a + VT_RT_POLY_ROOM - 8, 8), memcpy(&y[3], b + VT_RT_POLY_ROOM - 8, 8);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}

/* The header's last 32 bytes (at h: the difference's length, then its room) are what
 * this rank sends (rt.sent's first 32): four word compares, the length in the first. */
static inline int same_sent(const uint8_t *h)
{
    _Static_assert(1 + VT_RT_POLY_ROOM == 32, "four words");
    uint64_t x[4], y[4];
    memcpy(x, h, 32);
    memcpy(y, &rt.sent, 32);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}

/* A message an open probe found (replay.c: the probe completed it; here it is local)
 * goes into the probe's window: returns 1. Else 0 (or 1 after stopping: an MPI_Mrecv
 * of a message no probe matched). */
static __attribute__((noinline)) int probed_in(rt_msg *m, const uint8_t *h, uint32_t src, int tag,
                                               uint64_t comm_id, uint64_t post_order, MPI_Message matched)
{
    size_t pi = rt.nopen ? probe_of(src, tag, comm_id, post_order, matched) : SIZE_MAX;
    if (pi != SIZE_MAX) {
        vt_poly_copy(&m->D, m->d_at == D_SENT ? &rt.sent_d : &rt.got_d);
        if (rt.nprobed == sizeof rt.probed_by / sizeof rt.probed_by[0] || fill_probe(&rt.open[pi], h, &m->D)) {
            stop("a probed message it cannot place");
            return 1;
        }
        rt.probed_by[rt.nprobed++] = rt.open[pi].seq;
        rt.slow.b.unusual = 1;
        rt.open[pi] = rt.open[--rt.nopen];
        return 1;
    }
    if (matched != MPI_MESSAGE_NULL) {
        stop("an MPI_Mrecv of a message no probe it saw matched");
        return 1;
    }
    return 0;
}

/* A staged message: the header's fixed fields as they came (two 16-byte copies) and
 * where the receive was posted. Its contributor (msg_con) is filled only where the call
 * becomes a model event: a folded receive reads its sync flag alone (issue 18). */
static inline void msg_staged(rt_msg *m, const uint8_t *h, uint32_t src, uint64_t post_seq, int64_t post_enter,
                              uint64_t post_order)
{
    rt.nmsgs++;
    m->order = post_order;
    memcpy(m->hdr, h, sizeof m->hdr);
    m->src = src;
    m->post_seq = post_seq;
    m->post_enter = post_enter;
}

/* Whether the message of header h is synchronous to the model. */
static inline int hdr_sync(const uint8_t *h)
{
    return (h[VT_RT_HDR_FLAGS] & VT_RT_FLAG_SYNC) != 0;
}

/* Whether a staged message is synchronous to the model. */
static inline int msg_sync(const rt_msg *m)
{
    return hdr_sync(m->hdr);
}

/* Whether header h carries the difference this rank last sent, with d current: nothing
 * to decode, nothing to compare later. Decided on the header's bytes where they are. */
static inline int carries_sent_d(const uint8_t *h)
{
    return h[VT_RT_HDR_POLY_LEN] && rt.sent_version == rt.rr.d_version && same_sent(h + VT_RT_HDR_POLY_LEN);
}

/* A staged message's contributor: every field the reducer reads, by hand (no memset of
 * the large struct). */
static const vt_obs_con *msg_con(rt_msg *m)
{
    const uint8_t *h = m->hdr;
    vt_obs_con *k = &m->con;
    k->probed = 0;
    k->ext = NULL;
    k->kind = VT_CON_MSG;
    k->rank = m->src;
    k->seq = vt_rt_hdr_u64(h, VT_RT_HDR_SEQ);
    k->S_local = (int64_t)vt_rt_hdr_u64(h, VT_RT_HDR_START);
    k->bytes = vt_rt_hdr_u64(h, VT_RT_HDR_BYTES);
    k->sync = msg_sync(m);
    k->blocking_send = (h[VT_RT_HDR_FLAGS] & VT_RT_FLAG_BLOCKING) != 0;
    k->post_seq = m->post_seq;
    k->P_local = m->post_enter;
    k->P = m->post_enter + rt.offset;
    return k;
}

/* vt_rt_msg_in when its fast path does not apply. */
static __attribute__((noinline)) void msg_in_general(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id,
                                                     uint64_t post_seq, int64_t post_enter, uint64_t post_order,
                                                     MPI_Message matched)
{
    if (!vt__rt || !mine())
        return;
    if (room_for((void **)&rt.msgs, &rt.capmsgs, rt.nmsgs + 1, sizeof *rt.msgs))
        return;
    rt_msg *m = &rt.msgs[rt.nmsgs];
    size_t used;
    const uint8_t *poly = h + VT_RT_HDR_POLY;
    unsigned len = h[VT_RT_HDR_POLY_LEN];
    if (!len) {
        stop("a message came without its sender's difference (the sender's run-time reduction stopped)");
        return;
    }
    /* the header's room holds the encoding padded with zeros (vt_rt_send_poly) */
    m->d_equal = 0;
    if (len == rt.sent_len && rt.sent_version == rt.rr.d_version && same_room(poly, rt.sent.enc)) {
        /* this rank's own d, as it last sent it: no decoding, no comparison later */
        m->d_at = D_SENT;
        m->d_equal = rt.rr.d_version;
    } else {
        if (len != rt.got_len || !same_room(poly, rt.got_enc)) {
            own_copies(D_GOT, &rt.got_d);
            if (vt_poly_decode(&rt.got_d, poly, len, &used) != VT_POLY_OK || used != len) {
                rt.got_len = 0;
                stop("a header's difference does not decode");
                return;
            }
            memcpy(rt.got_enc, poly, VT_RT_POLY_ROOM);
            rt.got_len = len;
        }
        m->d_at = D_GOT;
    }
    if (VT_UNLIKELY(rt.nopen || matched != MPI_MESSAGE_NULL) && probed_in(m, h, src, tag, comm_id, post_order, matched))
        return;
    msg_staged(m, h, src, post_seq, post_enter, post_order);
}

/* Whether a message takes the common case of msg_in_general (one thread, room staged
 * already, no probe open, the difference this rank last sent), decided on the header's
 * bytes where they arrived, before anything is decoded. */
static inline int msg_in_fast(const uint8_t *h)
{
    return !VT_UNLIKELY(rt.slow.b.general || rt.nmsgs + 1 > rt.capmsgs || rt.nopen) && carries_sent_d(h);
}

/* ... and the common case itself, with no call: no frame. */
static inline void msg_in_folded(const uint8_t *h, uint32_t src, uint64_t post_seq, int64_t post_enter,
                                 uint64_t post_order)
{
    rt_msg *m = &rt.msgs[rt.nmsgs];
    /* this rank's own d, as it last sent it: no decoding, no comparison later */
    m->d_at = D_SENT;
    m->d_equal = rt.rr.d_version;
    msg_staged(m, h, src, post_seq, post_enter, post_order);
}

void vt_rt_msg_in(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id, uint64_t post_seq,
                  int64_t post_enter, uint64_t post_order, MPI_Message matched)
{
    if (VT_UNLIKELY(matched != MPI_MESSAGE_NULL) || !msg_in_fast(h)) {
        msg_in_general(h, src, tag, comm_id, post_seq, post_enter, post_order, matched);
        return;
    }
    msg_in_folded(h, src, post_seq, post_enter, post_order);
}

/* vt_rt_msg_now when its fast path does not apply: its own arguments, so that the fast
 * path calls it in tail position and keeps no frame or saved registers (msg_in_general's
 * eight arguments, two on the stack, made one). */
static __attribute__((noinline)) void msg_now_general(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id,
                                                      int64_t post_enter, uint64_t post_order)
{
    msg_in_general(h, src, tag, comm_id, 2 * vt__calls + 1, post_enter, post_order, MPI_MESSAGE_NULL);
}

void vt_rt_msg_now(const uint8_t *h, uint32_t src, int tag, uint64_t comm_id, int64_t post_enter,
                   uint64_t post_order)
{
    if (!msg_in_fast(h)) {
        msg_now_general(h, src, tag, comm_id, post_enter, post_order);
        return;
    }
    msg_in_folded(h, src, 2 * vt__calls + 1, post_enter, post_order);
}

void vt_rt_ssend(uint32_t peer, uint64_t seq, int64_t S_local, uint64_t bytes)
{
    if (!vt__rt || !mine())
        return;
    vt_obs_con *o = new_other();
    if (!o)
        return;
    o->kind = VT_CON_SYNC_MSG;
    o->rank = rt.rank;
    o->seq = seq;
    o->S_local = S_local;
    o->bytes = bytes;
    o->sync = 1;
    o->peer = peer;
}

void vt_rt_gate(uint64_t comm_id, uint64_t coll_seq, uint32_t nmembers, int nonblocking)
{
    if (!vt__rt || !mine())
        return;
    vt_obs_con *o = new_other();
    if (!o)
        return;
    o->kind = VT_CON_GATE;
    o->gate_comm = comm_id;
    o->gate_seq = coll_seq;
    o->nmembers = nmembers;
    o->nonblocking = nonblocking;
}

void vt_rt_nbc(uint64_t comm_id, uint64_t coll_seq, uint32_t nmembers)
{
    if (!vt__rt || !mine())
        return;
    rt.nbc = 1;
    rt.slow.b.unusual = 1;
    rt.nbc_comm = comm_id;
    rt.nbc_seq = coll_seq;
    rt.nbc_members = nmembers;
}


void vt_rt_probe(uint32_t src, int tag, uint64_t comm_id, MPI_Message matched, uint64_t post_order)
{
    if (!vt__rt || !mine())
        return;
    rt.probing = 1;
    rt.slow.b.unusual = 1;
    rt.probe = (rt_probe){.src = src, .tag = tag, .comm = comm_id, .matched = matched, .order = post_order};
}

void vt_rt_discard(void)
{
    rt.nmsgs = rt.nother = 0;
    rt.nbc = 0;
    rt.probing = 0;
    rt.nprobed = 0;
    rt.slow.b.unusual = 0;
}

void vt_rt_unrecorded(const vt_call *c)
{
    (void)c;
    vt_rt_discard();
    stop("the full trace stopped recording");
}

static const vt_poly *msg_D(const rt_msg *m)
{
    return m->d_at == D_GOT ? &rt.got_d : m->d_at == D_SENT ? &rt.sent_d : &m->D;
}

static int by_order(const void *a, const void *b)
{
    const rt_msg *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* The call's staged contributors are in its event: the next call starts afresh. */
static void call_done(int64_t exit)
{
    rt.nmsgs = rt.nother = 0;
    rt.nbc = 0;
    rt.probing = 0;
    rt.nprobed = 0;
    rt.slow.b.unusual = 0;
    rt.prev_exit = exit;
}

/* The call as a model event with its contributors (the fast paths of vt_rt_call did not
 * apply). R, E: its enter and exit on the model clock. */
static __attribute__((noinline)) void call_event(const vt_call *c, int64_t exit, uint64_t site, uint64_t callno,
                                                 int64_t R, int64_t E, int candidate)
{
    enum vt_model_kind k = (enum vt_model_kind)rt.fkind[c->fn];
    /* contributors in the replay's order: received messages by posting, then the
     * synchronous sends and gates as the call completed them, then the local one */
    if (room_for((void **)&rt.cons, &rt.capcons, rt.nmsgs + rt.nother + 1, sizeof *rt.cons))
        return;
    vt_obs_con *cons = rt.cons;
    static const vt_poly unknown;   /* the probe's message: filled at its receive */
    if (rt.probing) {
        rt.probe.seq = 2 * callno + 1;
        rt.probe.R = R;
        rt.probe.E = E;
        rt.probe.enter = c->enter;
    }
    if (rt.nmsgs > 1)
        vt_sort(rt.msgs, rt.nmsgs, sizeof *rt.msgs, by_order);
    size_t nc = 0;
    int local = 1;
    for (size_t i = 0; i < rt.nmsgs; i++) {
        rt_msg *m = &rt.msgs[i];
        const vt_obs_con *mc = msg_con(m);
        cons[nc] = *mc;
        int64_t S = mc->S_local + rt.offset;  /* one node: the offsets agree (doc/piggyback.md) */
        cons[nc].S = S;
        cons[nc].T = S + vt_model_lambda(&rt.p, mc->bytes, S, E);
        cons[nc].peer = rt.rank;
        cons[nc].ext = msg_D(m);
        if (!mc->sync) {
            cons[nc].post_seq = 2 * callno + 1;
            cons[nc].P = R;
            cons[nc].P_local = c->enter;
        }
        nc++;
    }
    for (size_t i = 0; i < rt.nother; i++) {
        cons[nc] = rt.other[i];
        if (cons[nc].kind == VT_CON_SYNC_MSG) {
            int64_t S = cons[nc].S_local + rt.offset;
            cons[nc].S = S;
            cons[nc].T = S;   /* the reducer takes the pair's atom, not T */
            if (k != VT_MK_SENDRECV && k != VT_MK_COMPLETION)
                local = 0;    /* a blocking synchronous send: no local contributor */
        } else if (cons[nc].kind == VT_CON_GATE && !cons[nc].nonblocking) {
            local = 0;        /* its own (enter, d) is in the gate */
        }
        nc++;
    }
    if (rt.probing)
        cons[nc++] = (vt_obs_con){.kind = VT_CON_MSG, .rank = rt.probe.src, .peer = rt.rank, .probed = 1,
                                  .post_seq = 2 * callno + 1, .P = R, .P_local = c->enter, .ext = &unknown};
    if ((nc || rt.nprobed) && local) {
        /* field by field: zeroing the large struct (rep stos) cost a quarter of a call */
        vt_obs_con *l = &cons[nc++];
        l->kind = VT_CON_LOCAL;
        l->T = R;
        l->D = NULL;
        l->rank = rt.rank;
        l->seq = 2 * callno + 1;
        l->S = l->S_local = l->P = l->P_local = 0;
        l->bytes = 0;
        l->sync = l->blocking_send = l->probed = l->nonblocking = 0;
        l->peer = 0;
        l->tag = 0;
        l->comm_id = l->post_seq = l->gate_comm = l->gate_seq = 0;
        l->ext = NULL;
        l->members = NULL;
        l->nmembers = l->members_at = 0;
    }
    static vt_event rec;
    static vt_obs_event e;
    rec.callno = callno;
    rec.fn = c->fn;
    rec.enter = c->enter;
    rec.exit = exit;
    rec.callsite = (int64_t)site;
    e.rank = rt.rank;
    e.seq = 2 * callno + 1;
    e.is_call = 1;
    e.rec = &rec;
    e.func = vt_fn_name[c->fn];
    e.fn = c->fn;
    e.callsite = (int64_t)site;
    e.kind = k;
    e.start = R;
    e.end = E;
    e.candidate = candidate;
    e.cons = nc ? cons : NULL;
    e.ncons = nc;
    e.probed_by = rt.nprobed ? rt.probed_by : NULL;
    e.nprobed = rt.nprobed;
    e.initiates_nbc = rt.nbc;
    e.nbc_comm = rt.nbc_comm;
    e.nbc_seq = rt.nbc_seq;
    feed(&e, rt.nbc_members);
    if (rt.probing && vt__rt && !room_for((void **)&rt.open, &rt.capopen, rt.nopen + 1, sizeof *rt.open))
        rt.open[rt.nopen++] = rt.probe;
    call_done(exit);
}

/* vt_rt_call when its fast path below does not apply. */
static __attribute__((noinline)) void call_general(const vt_call *c, int64_t exit)
{
    uint64_t site = vt_callsite_index(c->site);
    if (!vt__rt || !mine()) {
        vt_rt_discard();
        return;
    }
    burst(c, (int64_t)site);
    /* nothing of the general flag holds any more (vt__mt is set before the reduction
     * starts): the fast paths from here on */
    rt.slow.b.general = !vt__rt || vt__mt || rt.stop_at || !rt.started;
    uint64_t callno = vt__calls;
    if (VT_UNLIKELY(rt.stop_at) && callno == rt.stop_at) {
        vt_rt_discard();
        stop("VTRACE_TEST_RT_BROKEN=stop (a test)");
        return;
    }
    int64_t R = c->enter + rt.offset, E = exit + rt.offset;
    int candidate = call_candidate(R, E);
    if (!rt.slow.b.unusual &&
        (rt.nmsgs == 0   ? vt_rr_quiet(&rt.rr, 2 * callno + 1, 1, exit, candidate)
         : rt.nmsgs == 1 ? vt_rr_folded_receive(&rt.rr, 2 * callno + 1, exit,
                                                rt.msgs[0].d_equal == rt.rr.d_version ? NULL : msg_D(&rt.msgs[0]),
                                                msg_sync(&rt.msgs[0]), candidate)
                         : 0)) {
        call_done(exit);
        return;
    }
    call_event(c, exit, site, callno, R, E, candidate);
}

/* The common case of call_general (one thread; the burst quiet or in already; the call
 * quiet or a folded receive whose difference is the one this rank sent), with nothing
 * called but in tail position, so that it needs no frame: every other case goes to
 * call_general, which starts over (nothing below has changed any state when it does). */
void vt_rt_call(const vt_call *c, int64_t exit)
{
    uint64_t callno = vt__calls;
    if (VT_UNLIKELY(rt.slow.any || rt.nmsgs > 1))
        goto general;
    int64_t R = c->enter + rt.offset, E = exit + rt.offset;
    int candidate = call_candidate(R, E);
    int fold = rt.nmsgs == 1;
    if (fold ? rt.msgs[0].d_equal != rt.rr.d_version || !rt.rr.fold_ok || candidate || msg_sync(&rt.msgs[0])
             : !vt_rr_quiet_allowed_(&rt.rr, candidate))
        goto general;
    if (!burst_quiet(callno, R))
        goto general;
    if (fold)
        vt_rr_folded_receive(&rt.rr, 2 * callno + 1, exit, NULL, 0, 0);
    else
        vt_rr_quiet(&rt.rr, 2 * callno + 1, 1, exit, 0);
    /* call_done: nother, nbc, probing and nprobed are 0 already (unusual is clear) */
    rt.nmsgs = 0;
    rt.prev_exit = exit;
    return;
general:
    call_general(c, exit);
}

/* vt_rt_call's quiet case without its tests of a fold: a blocking send stages no
 * message (any other case goes to call_general, as vt_rt_call's). */
void vt_rt_send_call(const vt_call *c, int64_t exit)
{
    uint64_t callno = vt__calls;
    int64_t R = c->enter + rt.offset, E = exit + rt.offset;
    if (VT_UNLIKELY(rt.slow.any || rt.nmsgs) || !vt_rr_quiet_allowed_(&rt.rr, call_candidate(R, E)) ||
        !burst_quiet(callno, R))
        return call_general(c, exit);
    vt_rr_quiet(&rt.rr, 2 * callno + 1, 1, exit, 0);
    rt.prev_exit = exit;
}

/* vt_rt_recv_call when its fast path does not apply (out of line: the fast path calls
 * it in tail position and keeps no frame). */
static __attribute__((noinline)) void recv_call_general(const vt_call *c, int64_t exit, const MPI_Status *st,
                                                        uint64_t post_order)
{
    vt_rt_msg_now(vt__rt_recv_stage, (uint32_t)st->MPI_SOURCE, st->MPI_TAG, vt_comms_world_gid(), c->enter,
                  post_order);
    vt_rt_call(c, exit);
}

/* The common case: one thread, nothing else staged for the call, the message's difference
 * the one this rank last sent and d current (msg_in_fast), R3 allowed, not synchronous,
 * not a candidate, the burst quiet or in already: the folded receive of vt_rt_call
 * without staging the message. Every other case is vt_rt_msg_now and vt_rt_call, in
 * that order (nothing has changed any state when it comes to them). */
void vt_rt_recv_call(const vt_call *c, int64_t exit, const MPI_Status *st, uint64_t post_order)
{
    const uint8_t *h = vt__rt_recv_stage;
    uint64_t callno = vt__calls;
    int64_t R = c->enter + rt.offset, E = exit + rt.offset;
    /* msg_in_fast's test without the room to stage (nothing is staged) */
    if (VT_UNLIKELY(rt.slow.any || rt.nmsgs || rt.nopen) || !carries_sent_d(h) || !rt.rr.fold_ok ||
        hdr_sync(h) || call_candidate(R, E) || !burst_quiet(callno, R))
        return recv_call_general(c, exit, st, post_order);
    vt_rr_folded_receive(&rt.rr, 2 * callno + 1, exit, NULL, 0, 0);
    rt.prev_exit = exit;
}

static uint64_t rt_stored;   /* records the reduced trace stored (vt_rt_finish) */

uint64_t vt_rt_records_stored(void) { return rt_stored; }

int vt_rt_finish(const uint8_t *rankdefs, size_t len, const uint8_t *dict, size_t dict_len)
{
    if (rt.fd < 0)
        return -1;
    if (vt__rt && vt_rr_finish(&rt.rr, INT64_MIN))
        stop("its last records could not be written");
    int rc = -1;
    /* the profile's functions are named before RANKDEFS, as vtrace reduce names them */
    for (unsigned fn = 0; fn < VT_NFN; fn++)
        if (vt__profile[fn].calls > 0)
            vt_rrec_out_name(&rt.out, fn);
    if (!rt.failed && (rc = vt_rrec_out_flush(&rt.out)))
        write_failed(rc);
    if (!rc)
        rc = vt_block_write_dict(rt.fd, VT_BLOCK_RANKDEFS, rankdefs, len, 0, vt_rrec_zstd_level(VT_RREC_ZSTD_LEVEL, len),
                                 dict_len ? dict : NULL, dict_len);
    if (!rc)
        rc = vt_block_write(rt.fd, VT_BLOCK_END, "", 0, 0, 0);
    if (close(rt.fd) && !rc)
        rc = -errno;
    rt.fd = -1;
    vt__rt = 0;
    vt_rec_special_set(VT_REC_RT, 0);
    rt.slow.b.general = 1;
    rt_stored = rt.out.index;
    vt_rr_free(&rt.rr);
    vt_rrec_out_free(&rt.out);
    free(rt.msgs);
    free(rt.other);
    free(rt.cons);
    free(rt.open);
    if (rt.failed) {
        unlink(rt.path);
        return -1;
    }
    return rc ? -1 : 0;
}

int vt_rt_flush_in_signal(uint8_t *scratch, size_t cap)
{
    if (rt.fd < 0 || rt.writing || rt.failed)
        return -1;
    /* the profile's functions are named with the last records */
    for (unsigned fn = 0; fn < VT_NFN; fn++)
        if (vt__profile[fn].calls > 0)
            vt_rrec_out_name(&rt.out, fn);
    rt.writing = 1;
    int rc = vt_rrec_out_write_raw(&rt.out, scratch, cap);
    rt.writing = rc != 0;
    return rc ? -1 : 0;
}

int vt_rt_end_in_signal(const uint8_t *rankdefs, size_t len)
{
    if (rt.fd < 0 || rt.writing || rt.failed)
        return -1;
    /* raw blocks, write(2) only: the records the reducer still held undecided are lost */
    int rc = vt_block_write(rt.fd, VT_BLOCK_RANKDEFS, rankdefs, len, 0, 0);
    if (!rc)
        rc = vt_block_write(rt.fd, VT_BLOCK_END, "", 0, 0, 0);
    rt.fd = -1;
    return rc ? -1 : 0;
}

int vt_rt_snapshot(const uint8_t *rankdefs, size_t len)
{
    if (rt.fd < 0 || rt.writing || rt.failed || !vt__rt)
        return -1;
    /* the RANKDEFS profiles every function called: each is named */
    uint8_t called[VT_NFN];
    for (unsigned fn = 0; fn < VT_NFN; fn++)
        called[fn] = vt__profile[fn].calls > 0;
    rt.writing = 1;
    int rc = vt_rrec_out_provisional(&rt.out, called, rankdefs, len);
    rt.writing = 0;
    return rc ? -1 : 0;
}

const char *vt_rt_path(void) { return rt.fd >= 0 ? rt.path : NULL; }

int vt_rt_fn_named(unsigned fn) { return fn < VT_NFN && rt.out.named && rt.out.named[fn]; }
