/* vtrace export --format=perfetto: Chrome trace-event JSON (the "Trace Event Format"
 * that the Perfetto UI and chrome://tracing open).
 *
 * One process per rank (pid rank + 1: Perfetto treats pid 0 as the kernel's swapper),
 * its MPI calls as complete events ("X") on one thread, each message as a flow from
 * the sending call to the call that completed its receive ("s" on the sender's slice,
 * "f" with "bp":"e" on the receiver's), MARKER records as instants. A reduced trace
 * shows its CAND, COMP and NBCINIT records as slices, the stretches between records as
 * "vtrace:aggregated" slices, and a flow for every message its COMP records name (from
 * the sender's slice that holds the send, at the send's start S when S is inside it;
 * the sends wait in a temporary file sorted by sender: vt__xrsends_open).
 *
 * Times are global ns (vt_global_time) minus the trace's first enter, written in
 * microseconds with three decimals. Records whose times overlap on a rank (calls of
 * several threads under MPI_THREAD_MULTIPLE) go to extra threads of the rank's process,
 * so the slices of every thread nest. The trace is streamed rank by rank; a full trace
 * has its messages from the replay (vt__xmsgs_stream), a reduced one from its COMP
 * records; both wait in temporary files, so memory does not grow with the messages. */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/export.h"
#include "tools/progress.h"
#include "util/codec.h"
#include "util/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct pf {
    const vt_trace *t;
    FILE *f;
    const char *path;
    vt_error *err;
    uint32_t nranks;
    int64_t t0;
    int first; /* no event written yet (comma placement) */
    /* lanes of the current rank: threads holding its overlapping slices */
    int64_t *lane_end;
    size_t nlanes, lanes_cap;
    vt__progress prog;
    uint64_t done;
    /* the record being written (full traces): its rank, lane and the time of its flows
     * (flows 0: none) */
    uint32_t rank;
    size_t lane;
    int flows;
    int64_t flow_ts;
    vt__xrsends rs; /* reduced traces: the recorded messages, by sender */
} pf;

static int oom(pf *p)
{
    snprintf(p->err->msg, sizeof p->err->msg, "%s: out of memory", p->path);
    return -1;
}

static int write_failed(pf *p)
{
    snprintf(p->err->msg, sizeof p->err->msg, "%s: cannot write: %s", p->path, strerror(errno ? errno : EIO));
    return -1;
}

static uint32_t pid_of(uint32_t r)
{
    return r + 1;
}

/* Thread ids are unique across processes: lane 0 of rank r is r + 1 (the process's
 * main thread), lane k is k * nranks + r + 1. */
static uint64_t tid_of(const pf *p, uint32_t r, size_t lane)
{
    return (uint64_t)lane * p->nranks + r + 1;
}

/* Microseconds with three decimals from ns. */
static void put_us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        putc('-', f);
        ns = ns == INT64_MIN ? INT64_MAX : -ns;
    }
    fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

static void ev_open(pf *p)
{
    fputs(p->first ? "\n" : ",\n", p->f);
    p->first = 0;
}

static int64_t gtime(const pf *p, uint32_t r, int64_t local)
{
    return vt_global_time(p->t, r, local) - p->t0;
}

static void meta_thread(pf *p, uint32_t r, size_t lane)
{
    ev_open(p);
    fprintf(p->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":",
            pid_of(r), tid_of(p, r, lane));
    char name[96];
    if (lane == 0)
        snprintf(name, sizeof name, "rank %" PRIu32, r);
    else
        snprintf(name, sizeof name, "rank %" PRIu32 " (overlapping calls %zu)", r, lane);
    vt__json_str(p->f, name);
    fputs("}}", p->f);
}

/* The lane of a slice [b, e] on the current rank: the first whose last slice ended. */
static int lane_for(pf *p, uint32_t r, int64_t b, int64_t e, size_t *lane)
{
    for (size_t i = 0; i < p->nlanes; i++)
        if (p->lane_end[i] <= b) {
            p->lane_end[i] = e;
            *lane = i;
            return 0;
        }
    if (vt__export_grow((void **)&p->lane_end, &p->lanes_cap, p->nlanes + 1, sizeof *p->lane_end))
        return oom(p);
    *lane = p->nlanes;
    p->lane_end[p->nlanes++] = e;
    meta_thread(p, r, *lane);
    return 0;
}

/* A new rank: lane 0 only (named in write_metadata). */
static int lanes_reset(pf *p)
{
    if (vt__export_grow((void **)&p->lane_end, &p->lanes_cap, 1, sizeof *p->lane_end))
        return oom(p);
    p->lane_end[0] = INT64_MIN;
    p->nlanes = 1;
    return 0;
}

/* Starts a complete event; the caller writes args members after "args":{ and closes
 * with slice_close(). */
static void slice_open(pf *p, uint32_t r, size_t lane, const char *name, const char *cat, int64_t b, int64_t e)
{
    ev_open(p);
    fputs("{\"ph\":\"X\",\"name\":", p->f);
    vt__json_str(p->f, name);
    fprintf(p->f, ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu64 ",\"ts\":", cat, pid_of(r),
            tid_of(p, r, lane));
    put_us(p->f, b);
    fputs(",\"dur\":", p->f);
    put_us(p->f, e - b);
    fputs(",\"args\":{", p->f);
}

static void slice_close(pf *p)
{
    fputs("}}", p->f);
}

/* A flow event: 's' (start, bound to the slice enclosing ts) or 'f' (finish, bound
 * to the enclosing slice too). Perfetto pairs them by (id, cat, name). */
static void flow(pf *p, char ph, uint32_t r, size_t lane, int64_t ts, uint64_t id)
{
    ev_open(p);
    fprintf(p->f, "{\"ph\":\"%c\",\"name\":\"message\",\"cat\":\"mpi\",\"id\":%" PRIu64 ",\"pid\":%" PRIu32
                  ",\"tid\":%" PRIu64 ",\"ts\":",
            ph, id, pid_of(r), tid_of(p, r, lane));
    put_us(p->f, ts);
    if (ph == 'f')
        fputs(",\"bp\":\"e\"", p->f);
    putc('}', p->f);
}

static int64_t mid(int64_t b, int64_t e)
{
    return b + (e - b) / 2;
}

static void arg_sep(FILE *f, int *first)
{
    if (!*first)
        putc(',', f);
    *first = 0;
}

static void arg_i64(FILE *f, int *first, const char *k, int64_t v)
{
    arg_sep(f, first);
    fprintf(f, "\"%s\":%" PRId64, k, v);
}

static void arg_str(FILE *f, int *first, const char *k, const char *v)
{
    arg_sep(f, first);
    fprintf(f, "\"%s\":", k);
    vt__json_str(f, v);
}

static void arg_comm(pf *p, int *first, uint32_t r, const char *k, int64_t index)
{
    const vt_comm *c = vt_trace_comm(p->t, r, index);
    char buf[32];
    if (c)
        snprintf(buf, sizeof buf, "0x%" PRIx64, c->id);
    else
        snprintf(buf, sizeof buf, "null");
    arg_str(p->f, first, k, buf);
}

static void arg_site(pf *p, int *first, uint32_t r, int64_t index)
{
    const vt_callsite *cs = vt_trace_callsite(p->t, r, index);
    if (!cs)
        return;
    arg_str(p->f, first, "call site", vt_site_name(p->t, r, index));
}

static void arg_event_id(pf *p, int *first, uint32_t r, uint64_t seq)
{
    char id[48];
    snprintf(id, sizeof id, "%" PRIu32 ":%" PRIu64, r, seq);
    arg_str(p->f, first, "event", id);
}

/* The first enter of the trace: the origin of the times. */
static int find_t0(pf *p)
{
    int have = 0;
    int64_t t0 = 0;
    for (uint32_t r = 0; r < p->nranks; r++) {
        vt_cursor *c;
        if (vt_cursor_open(p->t, r, &c, p->err))
            return -1;
        int got;
        int64_t enter = 0;
        if (vt_trace_rank(p->t, r)->reduced) {
            vt_rrec rr;
            got = vt_cursor_next_reduced(c, &rr, p->err);
            enter = rr.enter;
        } else {
            vt_event ev;
            got = vt_cursor_next(c, &ev, p->err);
            enter = ev.enter;
        }
        vt_cursor_close(c);
        if (got < 0)
            return -1;
        if (got == 1) {
            int64_t g = vt_global_time(p->t, r, enter);
            if (!have || g < t0)
                t0 = g;
            have = 1;
        }
    }
    p->t0 = t0;
    return 0;
}

static void write_metadata(pf *p)
{
    for (uint32_t r = 0; r < p->nranks; r++) {
        char name[320];
        snprintf(name, sizeof name, "rank %" PRIu32 " (%s)", r, vt__export_host(p->t, r));
        ev_open(p);
        fprintf(p->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"args\":{\"name\":", pid_of(r));
        vt__json_str(p->f, name);
        fputs("}}", p->f);
        ev_open(p);
        fprintf(p->f,
                "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRIu32
                ",\"args\":{\"sort_index\":%" PRIu32 "}}",
                pid_of(r), r);
        meta_thread(p, r, 0);
    }
}

/* ------------------------------------------------------------------ full traces */

static void call_args(pf *p, uint32_t r, const vt_event *ev)
{
    int first = 1;
    FILE *f = p->f;
    unsigned fl = ev->fields;
    arg_event_id(p, &first, r, 2 * ev->callno + 1);
    if (fl & VT_F_COMM)
        arg_comm(p, &first, r, "communicator", ev->comm);
    if (fl & VT_F_NEWCOMM)
        arg_comm(p, &first, r, "new communicator", ev->newcomm);
    if (fl & VT_F_PEER)
        arg_i64(f, &first, "peer", ev->peer);
    if (fl & VT_F_TAG)
        arg_i64(f, &first, "tag", ev->tag);
    if (fl & VT_F_BYTES)
        arg_i64(f, &first, "bytes", (int64_t)ev->bytes);
    if (fl & VT_F_RPEER)
        arg_i64(f, &first, "source", ev->rpeer);
    if (fl & VT_F_RTAG)
        arg_i64(f, &first, "receive tag", ev->rtag);
    if (fl & VT_F_RBYTES)
        arg_i64(f, &first, "received bytes", (int64_t)ev->rbytes);
    if (fl & VT_F_ROOT)
        arg_i64(f, &first, "root", ev->root);
    if (fl & VT_F_COLLSEQ)
        arg_i64(f, &first, "collective seq", (int64_t)ev->collseq);
    if (fl & VT_F_REQUEST)
        arg_i64(f, &first, "request", (int64_t)ev->request);
    if (fl & VT_F_FILE) {
        const vt_file *file = vt_trace_file(p->t, r, ev->file);
        arg_str(f, &first, "file", file ? file->name : "");
    }
    if (fl & VT_F_OFFSET)
        arg_i64(f, &first, "offset", ev->offset);
    if (fl & VT_F_DONE) {
        /* peer, tag and bytes of every completed request (the receive's are the status's) */
        arg_sep(f, &first);
        fputs("\"completed\":[", f);
        for (size_t i = 0; i < ev->ndone; i++) {
            const vt_completion *d = &ev->done[i];
            fprintf(f, "%s{\"request\":%" PRIu64 ",\"%s\":%" PRId64 ",\"tag\":%" PRId64 ",\"bytes\":%" PRIu64 "}",
                    i ? "," : "", d->request, (d->flags & 1) ? "source" : "peer", d->peer, d->tag, d->bytes);
        }
        putc(']', f);
    }
    if (fl & VT_F_CALLSITE)
        arg_site(p, &first, r, ev->callsite);
}

/* A record of a full trace: an instant (MARKER, STOPPED) or a slice on a lane, then the
 * flows of the messages it starts and completes (vt__xmsgs_walk). */
static int full_record(void *arg, const vt_event *ev)
{
    pf *p = arg;
    uint32_t r = p->rank;
    int64_t b = gtime(p, r, ev->enter), e = gtime(p, r, ev->exit);
    if (e < b)
        e = b;
    p->flows = 0;
    if (ev->code == VT_CODE_MARKER || ev->code == VT_CODE_STOPPED) {
        ev_open(p);
        fprintf(p->f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"cat\":\"vtrace\",\"pid\":%" PRIu32
                      ",\"tid\":%" PRIu64 ",\"ts\":",
                ev->code == VT_CODE_MARKER ? "MARKER" : "vtrace:stopped", pid_of(r), tid_of(p, r, 0));
        put_us(p->f, b);
        if (ev->code == VT_CODE_MARKER)
            fprintf(p->f, ",\"args\":{\"kind\":%" PRIu64 ",\"value\":%" PRId64 "}}", ev->marker_kind,
                    ev->marker_value);
        else
            fprintf(p->f, ",\"args\":{\"reason\":%" PRIu64 "}}", ev->stop_reason);
        return 0;
    }
    if (lane_for(p, r, b, e, &p->lane))
        return -1;
    if (ev->code == VT_CODE_FLUSH) {
        slice_open(p, r, p->lane, "vtrace:flush", "vtrace", b, e);
    } else {
        const vt_function *fn = vt_trace_function(p->t, r, ev->fn);
        slice_open(p, r, p->lane, fn ? fn->name : "MPI_?", "mpi", b, e);
        call_args(p, r, ev);
    }
    slice_close(p);
    p->flows = 1;
    p->flow_ts = mid(b, e);
    return 0;
}

static int full_sent(void *arg, const vt_event *ev, size_t pos, uint64_t id)
{
    pf *p = arg;
    if (p->flows && id)
        flow(p, 's', p->rank, p->lane, p->flow_ts, id);
    return 0;
}

static int full_completed(void *arg, const vt_event *ev, size_t pos, uint64_t id)
{
    pf *p = arg;
    if (p->flows && id)
        flow(p, 'f', p->rank, p->lane, p->flow_ts, id);
    return 0;
}

static int full_done(void *arg, const vt_event *ev)
{
    pf *p = arg;
    vt__progress_update(&p->prog, ++p->done);
    return ferror(p->f) ? write_failed(p) : 0;
}

static int export_full(pf *p)
{
    static const vt__xcall_ops ops = {full_record, full_sent, full_completed, full_done};
    vt__xmsgs x;
    if (vt__xmsgs_stream(&x, p->t, p->path, p->err))
        return -1;
    int rc = 0;
    for (uint32_t r = 0; r < p->nranks && !rc; r++) {
        p->rank = r;
        rc = lanes_reset(p) || vt__xmsgs_walk(&x, p->t, r, &ops, p, p->path, p->err) ? -1 : 0;
    }
    vt__xmsgs_close(&x);
    return rc;
}

/* ------------------------------------------------------------------ reduced traces */

/* The sends of a sender in the order of their sequence numbers, then of their ids. */
static int cmp_rsend(const void *a, const void *b)
{
    const vt__xrsend *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void rrec_args(pf *p, uint32_t r, const vt_rrec *rr)
{
    static const char *const kinds[] = {"?", "START", "CAND", "COMP", "NBCINIT", "END"};
    int first = 1;
    FILE *f = p->f;
    arg_str(f, &first, "record", kinds[rr->kind <= VT_RREC_END ? rr->kind : 0]);
    arg_event_id(p, &first, r, rr->seq);
    if (rr->kind == VT_RREC_COMP) {
        arg_i64(f, &first, "flags", (int64_t)rr->flags);
        arg_i64(f, &first, "candidate", (rr->flags & VT_RREC_F_CAND) != 0);
        if (rr->rstar != rr->enter) {
            arg_sep(f, &first);
            fputs("\"ready time R* (us)\":", f);
            put_us(f, gtime(p, r, rr->rstar));
        }
        arg_i64(f, &first, "messages", (int64_t)rr->nmsgs);
        if (rr->nmsgs) {
            arg_sep(f, &first);
            fputs("\"received\":[", f);
            for (size_t i = 0; i < rr->nmsgs; i++) {
                const vt_rmsg *msg = &rr->msgs[i];
                fprintf(f, "%s{\"source\":%" PRIu32 ",\"send event\":\"%" PRIu32 ":%" PRIu64 "\",\"bytes\":%" PRIu64
                           ",\"sync\":%d}",
                        i ? "," : "", msg->src, msg->src, msg->send_seq, msg->bytes, msg->sync);
            }
            putc(']', f);
        }
        if (rr->nssends) {
            arg_sep(f, &first);
            fputs("\"synchronous sends\":[", f);
            for (size_t i = 0; i < rr->nssends; i++)
                fprintf(f, "%s{\"dest\":%" PRIu32 ",\"bytes\":%" PRIu64 "}", i ? "," : "", rr->ssends[i].dst,
                        rr->ssends[i].bytes);
            putc(']', f);
        }
    }
    if (rr->ngates) {
        arg_sep(f, &first);
        fputs("\"collectives\":[", f);
        for (size_t i = 0; i < rr->ngates; i++)
            fprintf(f, "%s{\"communicator\":\"0x%" PRIx64 "\",\"collective seq\":%" PRIu64 ",\"members\":%" PRIu32 "}",
                    i ? "," : "", rr->gates[i].comm, rr->gates[i].collseq, rr->gates[i].nmembers);
        putc(']', f);
    }
    if (rr->fn >= 0)
        arg_site(p, &first, r, rr->callsite);
}

/* The flow start of a send held by the slice [b, e] of lane LANE: at S when S is
 * strictly inside, else in the middle (a boundary would be ambiguous between two
 * slices). */
static void send_flow(pf *p, uint32_t r, size_t lane, int64_t b, int64_t e, const vt__xrsend *s)
{
    int64_t S = gtime(p, r, s->S);
    flow(p, 's', r, lane, S > b && S < e ? S : mid(b, e), s->id);
}

/* The flows of rank R's sends before sequence number UPTO (all: every one left), from
 * slice [b, e] of LANE. 0, or -1 with err. */
static int send_flows(pf *p, uint32_t r, uint64_t upto, int all, size_t lane, int64_t b, int64_t e)
{
    vt__xrsend s;
    int got;
    while ((got = vt__xrsends_peek(&p->rs, r, &s, p->path, p->err)) == 1 && (all || s.seq < upto)) {
        vt__xrsends_take(&p->rs);
        if (all) /* unbound, but every flow keeps its two ends */
            flow(p, 's', r, 0, gtime(p, r, s.S), s.id);
        else
            send_flow(p, r, lane, b, e, &s);
    }
    return got < 0 ? -1 : 0;
}

static int reduced_rank(pf *p, uint32_t r, uint64_t *next_id)
{
    vt_cursor *c;
    if (vt_cursor_open(p->t, r, &c, p->err))
        return -1;
    if (lanes_reset(p))
        goto fail;
    int have_prev = 0;
    int64_t prev_exit = 0;
    uint64_t prev_seq = 0;
    vt_rrec rr;
    int got;
    while ((got = vt_cursor_next_reduced(c, &rr, p->err)) == 1) {
        int64_t b = gtime(p, r, rr.enter), e = gtime(p, r, rr.exit);
        if (e < b)
            e = b;
        /* the events between the previous record and this one (this one's too for END:
         * its sequence number is the last call's) */
        uint64_t upto = rr.kind == VT_RREC_END ? rr.seq + 1 : rr.seq;
        if (have_prev && b > prev_exit) {
            size_t lane;
            if (lane_for(p, r, prev_exit, b, &lane))
                goto fail;
            slice_open(p, r, lane, "vtrace:aggregated", "vtrace", prev_exit, b);
            int first = 1;
            char from[48], to[48];
            snprintf(from, sizeof from, "%" PRIu32 ":%" PRIu64, r, prev_seq + 1);
            snprintf(to, sizeof to, "%" PRIu32 ":%" PRIu64, r, upto ? upto - 1 : 0);
            arg_str(p->f, &first, "first event", from);
            arg_str(p->f, &first, "last event", to);
            slice_close(p);
            if (send_flows(p, r, upto, 0, lane, prev_exit, b))
                goto fail;
        }
        if (rr.kind == VT_RREC_CAND || rr.kind == VT_RREC_COMP || rr.kind == VT_RREC_NBCINIT) {
            size_t lane;
            if (lane_for(p, r, b, e, &lane))
                goto fail;
            const vt_function *fn = rr.fn >= 0 ? vt_trace_function(p->t, r, rr.fn) : NULL;
            const char *name = rr.fn >= 0 ? (fn ? fn->name : "MPI_?") : "computation";
            slice_open(p, r, lane, name, rr.fn >= 0 ? "mpi" : "vtrace", b, e);
            rrec_args(p, r, &rr);
            slice_close(p);
            /* the record's own call, and sends left at a boundary without a gap */
            if (send_flows(p, r, rr.seq + 1, 0, lane, b, e))
                goto fail;
            if (rr.kind == VT_RREC_COMP)
                for (size_t i = 0; i < rr.nmsgs; i++)
                    flow(p, 'f', r, lane, mid(b, e), ++*next_id);
        }
        if (!have_prev || e > prev_exit)
            prev_exit = e;
        prev_seq = rr.seq;
        have_prev = 1;
        vt__progress_update(&p->prog, ++p->done);
        if (ferror(p->f)) {
            write_failed(p);
            goto fail;
        }
    }
    if (got < 0)
        goto fail;
    /* sends past the rank's last record (not expected) */
    if (send_flows(p, r, 0, 1, 0, 0, 0))
        goto fail;
    vt_cursor_close(c);
    return 0;
fail:
    vt_cursor_close(c);
    return -1;
}

static int export_reduced(pf *p)
{
    if (vt__xrsends_open(&p->rs, p->t, cmp_rsend, p->path, p->err))
        return -1;
    uint64_t next_id = 0;
    int rc = 0;
    for (uint32_t r = 0; r < p->nranks && !rc; r++)
        rc = reduced_rank(p, r, &next_id);
    vt__xrsends_close(&p->rs);
    return rc;
}

int vt__export_perfetto(const vt_trace *t, const vt__export_opts *o, vt_error *err)
{
    pf p = {.t = t, .path = o->out, .err = err, .nranks = vt_trace_nranks(t), .first = 1};
    if (find_t0(&p))
        return -1;
    errno = 0;
    p.f = fopen(o->out, "w");
    if (!p.f) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot create: %s", o->out, strerror(errno));
        return -1;
    }
    static char buf[1 << 16];
    setvbuf(p.f, buf, _IOFBF, sizeof buf);
    int reduced = vt_trace_is_reduced(t);
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"vtrace export\",\"trace\":", p.f);
    vt__json_str(p.f, vt_trace_dir(t));
    fputs(",\"version\":", p.f);
    vt__json_str(p.f, vt_trace_version(t));
    fputs(",\"mpi\":", p.f);
    vt__json_str(p.f, vt_trace_mpi_version(t));
    fprintf(p.f, ",\"kind\":\"%s\",\"origin_ns\":%" PRId64 "},\n\"traceEvents\":[", reduced ? "reduced" : "full", p.t0);
    write_metadata(&p);
    vt__progress_start(&p.prog, "export perfetto", vt_trace_nrecords(t), o->quiet);
    int rc = reduced ? export_reduced(&p) : export_full(&p);
    vt__progress_end(&p.prog);
    free(p.lane_end);
    if (!rc) {
        fputs("\n]}\n", p.f);
        errno = 0;
        if (fflush(p.f) || ferror(p.f))
            rc = write_failed(&p);
    }
    errno = 0;
    if (fclose(p.f) && !rc)
        rc = write_failed(&p);
    return rc;
}
