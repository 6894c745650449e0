/* pb_transparency: everything an application can observe of point-to-point
 * communication, written per rank to pbt.RANK.log in the current directory. The
 * test (testlist: RUN_COMPARE) runs it untraced (VTRACE_MODE=off: MPICH as it is)
 * and traced (VTRACE_MODE=reduced: every point-to-point message carries the layer's
 * header) and wants the logs byte for byte the same: return codes, received data
 * (a checksum of the whole receive buffer with its gaps and guard bytes, the first
 * and last 8 bytes received), status source, tag and error, MPI_Get_count and
 * MPI_Get_elements (also _c, and in bytes), flags, indices and outcounts.
 *
 * The program also checks itself (exit status 1, the reason on standard error):
 * received data, sources, tags and sizes against what was sent. Every message's
 * data is a pseudo-random byte stream of its seed, written into the send buffer
 * through the send datatype (MPI_Unpack) and expected in the receive buffer
 * through the receive datatype, gaps and guard bytes untouched.
 *
 * An even number of ranks: ranks 2k (the sender, "lo") and 2k+1 (the receiver)
 * are partners; items with several senders or two groups use all ranks. Nothing
 * printed depends on timing: a Test* or Wait* whose answer could depend on what
 * has arrived is called only after MPI_Request_get_status has seen the requests
 * it must find complete (settle()), and messages it must not find are sent only
 * after it returned. Each item has 60 s (SIGALRM ends the program naming it).
 *
 * What MPICH 4.0.2 (ch4:ucx) gives, and the layer must give too: a truncated receive
 * writes nothing into the buffer, and its status counts 1 byte (MPI_Get_count:
 * MPI_UNDEFINED); MPI_Waitall stops at the failed request: the ones after it get
 * MPI_ERR_PENDING, an untouched status, and stay active even when complete; the status
 * of an MPI_Irecv from MPI_PROC_NULL says source 0, tag 0 (MPI_Recv's says
 * MPI_PROC_NULL, MPI_ANY_TAG); MPI_Isendrecv gives no usable status. The items are in
 * items[] before main. */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITEMLOG_PROGRAM "pb_transparency"
#include "itemlog.h"
/* VT_LACKS_MPI_<name>: MPI-4 functions this mpi.h lacks (configure; Open MPI 4.1) */
#include "vt_mpi_lacks.h"

#define W MPI_COMM_WORLD
#define GUARD 16    /* bytes after every receive buffer that must stay untouched */
#define UNSET (-77) /* status fields before the call */
#define ITEM_SECONDS 60

/* message sizes in ints: small, around the eager limit of ch4:ucx (8255 bytes on one
 * node) and large */
enum { N_SMALL = 10, N_8100 = 2025, N_8192 = 2048, N_8240 = 2060, N_8260 = 2065, N_8300 = 2075, N_256K = 65536 };

static int np, peer, lo;
static MPI_Comm pcomm; /* the two partners */
static MPI_Comm tcomm; /* a duplicate of MPI_COMM_WORLD for the truncation errors */

/* ------------------------------------------------------------------ output */

static void stuck(int sig)
{
    char msg[200] = "pb_transparency: rank ";
    char num[16];
    int n = 0, v = me;
    (void)sig;
    do
        num[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 15);
    size_t len = strlen(msg);
    while (n > 0)
        msg[len++] = num[--n];
    msg[len] = 0;
    strncat(msg, ": no progress for 60 s in item ", sizeof msg - strlen(msg) - 1);
    strncat(msg, item, sizeof msg - strlen(msg) - 2);
    strcat(msg, "\n");
    if (write(2, msg, strlen(msg)) < 0) {
    }
    _exit(3);
}

/* Rotating buffers for the small strings of one line. */
static char *sbuf(void)
{
    static char b[16][32];
    static int k;
    return b[k++ % 16];
}

static const char *num(long long v)
{
    char *s = sbuf();
    if (v == MPI_UNDEFINED)
        return "UNDEFINED";
    snprintf(s, 32, "%lld", v);
    return s;
}

static const char *src_name(int s)
{
    if (s == MPI_PROC_NULL)
        return "PROC_NULL";
    if (s == MPI_ANY_SOURCE)
        return "ANY_SOURCE";
    return num(s);
}

static const char *tag_name(int t)
{
    return t == MPI_ANY_TAG ? "ANY_TAG" : num(t);
}

static int eclass(int code)
{
    int c = -1;
    if (code == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (MPI_Error_class(code, &c) != MPI_SUCCESS)
        return -1;
    return c;
}

/* An error code as its class. */
static const char *ecls(int code)
{
    if (code == UNSET)
        return "unset";
    switch (eclass(code)) {
    case MPI_SUCCESS: return "ok";
    case MPI_ERR_TRUNCATE: return "ERR_TRUNCATE";
    case MPI_ERR_IN_STATUS: return "ERR_IN_STATUS";
    case MPI_ERR_PENDING: return "ERR_PENDING";
    case MPI_ERR_BUFFER: return "ERR_BUFFER";
    case MPI_ERR_COUNT: return "ERR_COUNT";
    case MPI_ERR_TYPE: return "ERR_TYPE";
    case MPI_ERR_TAG: return "ERR_TAG";
    case MPI_ERR_RANK: return "ERR_RANK";
    case MPI_ERR_REQUEST: return "ERR_REQUEST";
    case MPI_ERR_COMM: return "ERR_COMM";
    case MPI_ERR_ARG: return "ERR_ARG";
    case MPI_ERR_OTHER: return "ERR_OTHER";
    case MPI_ERR_INTERN: return "ERR_INTERN";
    case -1: {
        char *s = sbuf();
        snprintf(s, 32, "not-a-code(%d)", code);
        return s;
    }
    default: {
        char *s = sbuf();
        snprintf(s, 32, "class%d", eclass(code));
        return s;
    }
    }
}

/* Logs a call's return code; anything but MPI_SUCCESS fails. */
static int call(const char *what, int rc)
{
    out("%s rc=%s", what, ecls(rc));
    if (rc != MPI_SUCCESS)
        fail("%s returned %s", what, ecls(rc));
    return rc;
}
#define C(what, expr) call(what, (expr))

static MPI_Status fresh(void)
{
    MPI_Status s;
    memset(&s, 0xA5, sizeof s);
    s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = UNSET;
    return s;
}

/* ------------------------------------------------------------------ typed buffers */

/* The data of a message: byte I of the stream SEED. */
static unsigned char pat(int seed, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + (uint32_t)seed * 0x9E3779B9u + 0x7f4a7c15u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (unsigned char)(x >> 8);
}

static size_t tsize(MPI_Datatype t)
{
    int s = 0;
    MPI_Type_size(t, &s);
    return (size_t)s;
}

static MPI_Aint textent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Writes the first NBYTES of the stream SEED into BUF as up to COUNT items of T: the
 * complete items, then the part of the next one (a partial element). */
static void put(unsigned char *buf, MPI_Datatype t, int count, int seed, size_t nbytes)
{
    size_t ts = tsize(t), full, rem;
    if (ts == 0)
        return;
    full = nbytes / ts;
    rem = nbytes % ts;
    if (full >= (size_t)count) {
        full = (size_t)count;
        rem = 0;
    }
    unsigned char *s = malloc(nbytes + 1);
    for (size_t i = 0; i < nbytes; i++)
        s[i] = pat(seed, i);
    int pos = 0;
    MPI_Unpack(s, (int)(full * ts), &pos, buf, (int)full, t, MPI_COMM_SELF);
    if (rem) {
        unsigned char *at = buf + (MPI_Aint)full * textent(t), *tmp = malloc(ts);
        pos = 0;
        MPI_Pack(at, 1, t, tmp, (int)ts, &pos, MPI_COMM_SELF);
        memcpy(tmp, s + full * ts, rem);
        pos = 0;
        MPI_Unpack(tmp, (int)ts, &pos, at, 1, t, MPI_COMM_SELF);
        free(tmp);
    }
    free(s);
}

/* A buffer for COUNT items of TYPE, filled with 0xEE (and GUARD bytes more). */
typedef struct {
    MPI_Datatype type;
    int count;
    size_t span;
    unsigned char *buf;
} tbuf;

/* SEED >= 0: the buffer holds the message SEED (a send buffer). */
static void tb_new(tbuf *b, MPI_Datatype t, int count, int seed)
{
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(t, &tlb, &text);
    b->type = t;
    b->count = count;
    b->span = count > 0 ? (size_t)(tlb + (MPI_Aint)(count - 1) * textent(t) + text) : 0;
    b->buf = malloc(b->span + GUARD);
    memset(b->buf, 0xEE, b->span + GUARD);
    if (seed >= 0)
        put(b->buf, t, count, seed, tsize(t) * (size_t)count);
}

static void tb_clear(tbuf *b)
{
    memset(b->buf, 0xEE, b->span + GUARD);
}

static void tb_free(tbuf *b)
{
    free(b->buf);
    b->buf = NULL;
}

static long nbytes_of(MPI_Datatype t, long count)
{
    return (long)tsize(t) * count;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void hex(char *o, const unsigned char *p, size_t n)
{
    if (n == 0)
        strcpy(o, "-");
    for (size_t i = 0; i < n; i++)
        sprintf(o + 2 * i, "%02x", p[i]);
}

/* ------------------------------------------------------------------ what a receive gave */

/* What a receive must give; fl: */
enum {
    F_ERR = 1,      /* print status.MPI_ERROR */
    F_NOSTATUS = 2, /* the status is not usable (MPICH 4.0.2's MPI_Isendrecv) */
    F_TRUNC = 4,    /* a truncated receive: MPI_ERR_TRUNCATE, data not checked */
    F_ANYSRC = 8,   /* source and tag not checked (printed) */
    F_PROBE = 16,   /* a probe's status: MPI_Test_cancelled is not defined */
};
typedef struct {
    int src, tag;
    long bytes; /* sent */
    int seed;
    unsigned fl;
} want;
#define WANT(...) ((want){__VA_ARGS__})

static void status_str(char *o, size_t len, const MPI_Status *st, MPI_Datatype t, unsigned fl)
{
    int c = UNSET, e = UNSET, by = UNSET, cancelled = UNSET;
    MPI_Count cc = UNSET, ec = UNSET;
    MPI_Test_cancelled(st, &cancelled);
    MPI_Get_count(st, t, &c);
    MPI_Get_elements(st, t, &e);
#ifndef VT_LACKS_MPI_Send_c
    MPI_Get_count_c(st, t, &cc);
    MPI_Get_elements_c(st, t, &ec);
#else
    MPI_Get_elements_x(st, t, &ec);
#endif
    MPI_Get_count(st, MPI_BYTE, &by);
    int n = snprintf(o, len, "src=%s tag=%s", src_name(st->MPI_SOURCE), tag_name(st->MPI_TAG));
    if (fl & F_ERR)
        n += snprintf(o + n, len - (size_t)n, " err=%s", ecls(st->MPI_ERROR));
    n += snprintf(o + n, len - (size_t)n, " count=%s elements=%s count_c=%s elements_c=%s bytes=%s", num(c), num(e),
                  num(cc), num(ec), num(by));
    if (!(fl & F_PROBE))
        snprintf(o + n, len - (size_t)n, " cancelled=%d", cancelled);
}

/* The line of a completed receive into B (with status ST, or NULL), and its checks. */
static void recvd_line(char *line, size_t len, const char *what, int rc, const MPI_Status *st, const tbuf *b, want w)
{
    int n = snprintf(line, len, "%s rc=%s", what, ecls(rc));
    int want_rc = (w.fl & F_TRUNC) ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if (eclass(rc) != want_rc)
        fail("%s: rc %s, expected %s", what, ecls(rc), ecls(want_rc));
    if (st && !(w.fl & F_NOSTATUS)) {
        char s[256];
        int by = UNSET;
        status_str(s, sizeof s, st, b->type, w.fl);
        n += snprintf(line + n, len - (size_t)n, " %s", s);
        MPI_Get_count(st, MPI_BYTE, &by);
        if (!(w.fl & F_ANYSRC) && (st->MPI_SOURCE != w.src || st->MPI_TAG != w.tag))
            fail("%s: source %d tag %d, expected %d %d", what, st->MPI_SOURCE, st->MPI_TAG, w.src, w.tag);
        if (!(w.fl & F_TRUNC) && by != w.bytes)
            fail("%s: %d bytes received, expected %ld", what, by, w.bytes);
        if ((w.fl & F_TRUNC) && st->MPI_ERROR != UNSET && eclass(st->MPI_ERROR) != MPI_ERR_TRUNCATE)
            fail("%s: status error %s", what, ecls(st->MPI_ERROR));
    }
    /* a truncated receive's buffer holds what MPI leaves there, which the standard does
     * not say (MPICH 4.0.2 leaves it as it was, 4.2.1 writes part of the message into a
     * strided one): only the bytes after it must stay as they were */
    if (w.fl & F_TRUNC) {
        for (size_t i = 0; i < GUARD; i++)
            if (b->buf[b->span + i] != 0xEE) {
                fail("%s: byte %zu after the receive buffer written (%02x)", what, i, b->buf[b->span + i]);
                break;
            }
        snprintf(line + n, len - (size_t)n, " data=undefined");
        return;
    }
    /* the data: a checksum of the whole buffer, the first and last bytes received */
    size_t ts = tsize(b->type), cap = ts * (size_t)b->count;
    size_t got = (size_t)w.bytes < cap ? (size_t)w.bytes : cap, full = ts ? got / ts : 0;
    char first[20], last[20];
    unsigned char *pk = malloc(full * ts + 1);
    int pos = 0;
    MPI_Pack(b->buf, (int)full, b->type, pk, (int)(full * ts), &pos, MPI_COMM_SELF);
    size_t k = full * ts < 8 ? full * ts : 8;
    hex(first, pk, k);
    hex(last, pk + full * ts - k, k);
    free(pk);
    snprintf(line + n, len - (size_t)n, " sum=%016llx first=%s last=%s",
             (unsigned long long)fnv(b->buf, b->span + GUARD), first, last);
    {
        unsigned char *exp = malloc(b->span + GUARD);
        memset(exp, 0xEE, b->span + GUARD);
        put(exp, b->type, b->count, w.seed, (size_t)w.bytes);
        if (memcmp(exp, b->buf, b->span + GUARD) != 0) {
            size_t i = 0;
            while (exp[i] == b->buf[i])
                i++;
            fail("%s: received data differ from what was sent at byte %zu of the buffer (%02x, expected %02x)", what,
                 i, b->buf[i], exp[i]);
        }
        free(exp);
    }
}

static void recvd(const char *what, int rc, const MPI_Status *st, const tbuf *b, want w)
{
    char line[600];
    recvd_line(line, sizeof line, what, rc, st, b, w);
    out("%s", line);
}

/* An empty status (MPI_REQUEST_NULL, no active request, MPI_PROC_NULL). */
static void empty_status(const char *what, const MPI_Status *st)
{
    char s[256];
    int c = UNSET;
    status_str(s, sizeof s, st, MPI_INT, 0);
    out("%s %s", what, s);
    MPI_Get_count(st, MPI_INT, &c);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG || c != 0)
        fail("%s: not an empty status: %s", what, s);
}

/* Sends COUNT items of T, the message SEED. */
static void tx(const char *what, MPI_Comm comm, int dest, MPI_Datatype t, int count, int tag, int seed)
{
    tbuf b;
    tb_new(&b, t, count, seed);
    call(what, MPI_Send(b.buf, count, t, dest, tag, comm));
    tb_free(&b);
}

/* Receives into COUNT items of T. */
static void rx(const char *what, MPI_Comm comm, int src, MPI_Datatype t, int count, int tag, want w)
{
    tbuf b;
    MPI_Status st = fresh();
    tb_new(&b, t, count, -1);
    int rc = MPI_Recv(b.buf, count, t, src, tag, comm, &st);
    recvd(what, rc, &st, &b, w);
    tb_free(&b);
}

/* A zero-byte message to the partner that says "go on" (my receives are posted). */
static void ready_send(int tag)
{
    C("ready Send", MPI_Send(NULL, 0, MPI_BYTE, peer, tag, W));
}

static void ready_wait(int tag)
{
    tbuf b;
    MPI_Status st = fresh();
    tb_new(&b, MPI_BYTE, 0, -1);
    int rc = MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, W, &st);
    recvd("ready Recv", rc, &st, &b, WANT(peer, tag, 0, 0, 0));
    tb_free(&b);
}

/* Waits (silently: how long is timing) until the requests Q[IDS[..]] are complete. */
static void settle(MPI_Request *q, const int *ids, int k)
{
    for (;;) {
        int all = 1;
        for (int j = 0; j < k; j++) {
            int f = 0;
            MPI_Request_get_status(q[ids[j]], &f, MPI_STATUS_IGNORE);
            all &= f;
        }
        if (all)
            return;
    }
}

/* Buffer_detach must give back what was attached. */
static void detach_check(void *buf, int size)
{
    void *p = NULL;
    int s = -1;
    int rc = MPI_Buffer_detach(&p, &s);
    out("Buffer_detach rc=%s same_pointer=%s size=%d (attached %d)", ecls(rc), p == buf ? "yes" : "no", s, size);
    if (rc != MPI_SUCCESS || p != buf || s != size)
        fail("Buffer_detach gave %p %d, attached %p %d", p, s, buf, size);
    free(buf);
}

static MPI_Datatype vec_int(int n, int stride)
{
    MPI_Datatype t;
    MPI_Type_vector(n, 1, stride, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype contig(int n, MPI_Datatype base)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, base, &t);
    MPI_Type_commit(&t);
    return t;
}

/* ------------------------------------------------------------------ items */

/* Iprobe and Improbe find nothing: no message is pending anywhere (also none of the
 * layer's own on the application's communicators). */
static void it_nothing(void)
{
    MPI_Comm comms[3] = {W, pcomm, tcomm};
    static const char *const names[3] = {"world", "pair", "dup"};
    for (int i = 0; i < 3; i++) {
        int flag = -1;
        MPI_Status st = fresh();
        MPI_Message m = MPI_MESSAGE_NULL;
        int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i], &flag, &st);
        out("Iprobe(ANY_SOURCE, ANY_TAG, %s) rc=%s flag=%d", names[i], ecls(rc), flag);
        if (flag != 0)
            fail("Iprobe on %s found a message from %d tag %d", names[i], st.MPI_SOURCE, st.MPI_TAG);
        flag = -1;
        rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i], &flag, &m, &st);
        out("Improbe(ANY_SOURCE, ANY_TAG, %s) rc=%s flag=%d", names[i], ecls(rc), flag);
        if (flag != 0)
            fail("Improbe on %s found a message from %d tag %d", names[i], st.MPI_SOURCE, st.MPI_TAG);
    }
    int flag = -1;
    int rc = MPI_Iprobe(peer, 499, W, &flag, MPI_STATUS_IGNORE);
    out("Iprobe(partner, 499) rc=%s flag=%d", ecls(rc), flag);
    if (flag != 0)
        fail("Iprobe found a message of tag 499");
}

/* Every send mode into Recv and Irecv (ready sends only into Irecv: a blocking Recv
 * cannot tell the sender it is posted), small and around the eager limit. */
static void it_modes(void)
{
    static const char *const mode[] = {"Send", "Isend", "Ssend", "Issend", "Bsend", "Ibsend", "Rsend", "Irsend"};
    static const int sizes[] = {N_SMALL, N_8240, N_8300};
    void *bbuf = NULL;
    int bsize = 0;
    if (lo) {
        int ps = 0;
        MPI_Pack_size(N_8300, MPI_INT, W, &ps);
        bsize = 6 * (ps + MPI_BSEND_OVERHEAD);
        bbuf = malloc((size_t)bsize);
        C("Buffer_attach", MPI_Buffer_attach(bbuf, bsize));
    }
    for (int z = 0; z < 3; z++)
        for (int m = 0; m < 8; m++)
            for (int r = 0; r < 2; r++) {
                int ready = m >= 6, n = sizes[z], tag = 100 + z * 20 + m * 2 + r;
                if (ready && r == 0)
                    continue;
                char what[80];
                snprintf(what, sizeof what, "%s %d ints into %s", mode[m], n, r ? "Irecv" : "Recv");
                tbuf b;
                MPI_Request q = MPI_REQUEST_NULL;
                if (lo) {
                    int rc = MPI_SUCCESS;
                    tb_new(&b, MPI_INT, n, tag);
                    if (ready)
                        ready_wait(5000 + tag);
                    switch (m) {
                    case 0: rc = MPI_Send(b.buf, n, MPI_INT, peer, tag, W); break;
                    case 1: rc = MPI_Isend(b.buf, n, MPI_INT, peer, tag, W, &q); break;
                    case 2: rc = MPI_Ssend(b.buf, n, MPI_INT, peer, tag, W); break;
                    case 3: rc = MPI_Issend(b.buf, n, MPI_INT, peer, tag, W, &q); break;
                    case 4: rc = MPI_Bsend(b.buf, n, MPI_INT, peer, tag, W); break;
                    case 5: rc = MPI_Ibsend(b.buf, n, MPI_INT, peer, tag, W, &q); break;
                    case 6: rc = MPI_Rsend(b.buf, n, MPI_INT, peer, tag, W); break;
                    case 7: rc = MPI_Irsend(b.buf, n, MPI_INT, peer, tag, W, &q); break;
                    }
                    call(what, rc);
                    if (q != MPI_REQUEST_NULL)
                        C("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
                } else {
                    MPI_Status st = fresh();
                    int rc;
                    tb_new(&b, MPI_INT, n + 1, -1);
                    if (r == 0) {
                        rc = MPI_Recv(b.buf, n + 1, MPI_INT, peer, tag, W, &st);
                    } else {
                        C("Irecv", MPI_Irecv(b.buf, n + 1, MPI_INT, peer, tag, W, &q));
                        if (ready)
                            ready_send(5000 + tag);
                        rc = MPI_Wait(&q, &st);
                    }
                    recvd(what, rc, &st, &b, WANT(peer, tag, nbytes_of(MPI_INT, n), tag, 0));
                }
                tb_free(&b);
            }
    if (lo)
        detach_check(bbuf, bsize);
}

/* Persistent requests, Start and Startall, 3 rounds with new data each; the datatypes
 * are freed right after *_init (the requests keep them). */
static void it_persistent(void)
{
    static const char *const kind[4] = {"Send_init", "Ssend_init", "Bsend_init", "Rsend_init"};
    static const int n[4] = {N_SMALL, N_8240, N_8300, N_8260};
    enum { ROUNDS = 3 };
    MPI_Request q[4];
    MPI_Datatype keep[4];
    tbuf b[4];
    void *bbuf = NULL;
    int bsize = 0;
    for (int i = 0; i < 4; i++) {
        MPI_Datatype t;
        int tag = 200 + i, rc = MPI_SUCCESS;
        char what[64];
        if (lo) {
            t = vec_int(n[i], 2); /* every second int */
            MPI_Type_dup(t, &keep[i]);
            tb_new(&b[i], keep[i], 1, -1);
            switch (i) {
            case 0: rc = MPI_Send_init(b[i].buf, 1, t, peer, tag, W, &q[i]); break;
            case 1: rc = MPI_Ssend_init(b[i].buf, 1, t, peer, tag, W, &q[i]); break;
            case 2: rc = MPI_Bsend_init(b[i].buf, 1, t, peer, tag, W, &q[i]); break;
            case 3: rc = MPI_Rsend_init(b[i].buf, 1, t, peer, tag, W, &q[i]); break;
            }
            snprintf(what, sizeof what, "%s vector of %d ints", kind[i], n[i]);
            call(what, rc);
            C("Type_free", MPI_Type_free(&t));
        } else if (i < 2) {
            keep[i] = MPI_INT;
            tb_new(&b[i], MPI_INT, n[i], -1);
            snprintf(what, sizeof what, "Recv_init %d ints", n[i]);
            C(what, MPI_Recv_init(b[i].buf, n[i], MPI_INT, peer, tag, W, &q[i]));
        } else {
            t = contig(n[i], MPI_INT);
            MPI_Type_dup(t, &keep[i]);
            tb_new(&b[i], keep[i], 1, -1);
            snprintf(what, sizeof what, "Recv_init contiguous(%d ints)", n[i]);
            C(what, MPI_Recv_init(b[i].buf, 1, t, peer, tag, W, &q[i]));
            C("Type_free", MPI_Type_free(&t));
        }
    }
    if (lo) {
        int ps = 0;
        MPI_Pack_size(1, keep[2], W, &ps);
        bsize = ROUNDS * (ps + MPI_BSEND_OVERHEAD);
        bbuf = malloc((size_t)bsize);
        C("Buffer_attach", MPI_Buffer_attach(bbuf, bsize));
    }
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Status sts[4];
        out("round %d", r);
        if (lo) {
            for (int i = 0; i < 4; i++)
                put(b[i].buf, keep[i], 1, 2000 + r * 10 + i, nbytes_of(keep[i], 1));
            ready_wait(5200 + r);
            if (r == 1) {
                C("Startall", MPI_Startall(4, q));
            } else {
                for (int i = 0; i < 4; i++)
                    C(kind[i], MPI_Start(&q[i]));
            }
            C("Waitall", MPI_Waitall(4, q, sts));
        } else {
            for (int i = 0; i < 4; i++) {
                tb_clear(&b[i]);
                sts[i] = fresh();
            }
            if (r == 1) {
                for (int i = 0; i < 4; i++)
                    C("Start", MPI_Start(&q[i]));
            } else {
                C("Startall", MPI_Startall(4, q));
            }
            ready_send(5200 + r);
            int rc = MPI_Waitall(4, q, sts);
            out("Waitall rc=%s", ecls(rc));
            for (int i = 0; i < 4; i++) {
                char what[64];
                snprintf(what, sizeof what, "from %s", kind[i]);
                recvd(what, rc, &sts[i], &b[i], WANT(peer, 200 + i, nbytes_of(MPI_INT, n[i]), 2000 + r * 10 + i, 0));
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        C("Request_free", MPI_Request_free(&q[i]));
        tb_free(&b[i]);
        if (keep[i] != MPI_INT)
            MPI_Type_free(&keep[i]);
    }
    if (lo)
        detach_check(bbuf, bsize);
}

/* Sendrecv, Sendrecv_replace (basic and derived), Isendrecv, Isendrecv_replace (basic
 * send types: MPICH 4.0.2's Isendrecv crashes with a derived one, and gives no usable
 * status: data only). Both partners send and receive. */
static int sr_seed(int sender, int k)
{
    return 3000 + k * 10 + sender;
}

static void it_sendrecv(void)
{
    static const int sizes[] = {N_SMALL, N_8240, N_8300, N_256K};
    char what[80];
    for (int z = 0; z < 4; z++) {
        int n = sizes[z], tag = 300 + z;
        tbuf s, r;
        MPI_Status st = fresh();
        tb_new(&s, MPI_INT, n, sr_seed(me, z));
        tb_new(&r, MPI_INT, n + 3, -1);
        int rc = MPI_Sendrecv(s.buf, n, MPI_INT, peer, tag, r.buf, n + 3, MPI_INT, peer, tag, W, &st);
        snprintf(what, sizeof what, "Sendrecv %d ints", n);
        recvd(what, rc, &st, &r, WANT(peer, tag, nbytes_of(MPI_INT, n), sr_seed(peer, z), 0));
        tb_free(&s);
        tb_free(&r);
    }
    /* a strided vector sent, ints received, with ANY_SOURCE and ANY_TAG */
    for (int z = 0; z < 2; z++) {
        int n = z ? N_8300 : N_SMALL, tag = 310 + z;
        MPI_Datatype v = vec_int(n, 3);
        tbuf s, r;
        MPI_Status st = fresh();
        tb_new(&s, v, 1, sr_seed(me, 10 + z));
        tb_new(&r, MPI_INT, n, -1);
        int rc = MPI_Sendrecv(s.buf, 1, v, peer, tag, r.buf, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
        snprintf(what, sizeof what, "Sendrecv vector(%d,1,3) into ANY_SOURCE ANY_TAG", n);
        recvd(what, rc, &st, &r, WANT(peer, tag, nbytes_of(MPI_INT, n), sr_seed(peer, 10 + z), 0));
        tb_free(&s);
        tb_free(&r);
        MPI_Type_free(&v);
    }
    /* Sendrecv_replace: ints, then a strided vector */
    for (int z = 0; z < 4; z++) {
        int n = (z & 1) ? N_8300 : N_SMALL, tag = 320 + z;
        MPI_Datatype t = z < 2 ? MPI_INT : vec_int(n, 2);
        int cnt = z < 2 ? n : 1;
        tbuf b;
        MPI_Status st = fresh();
        tb_new(&b, t, cnt, sr_seed(me, 20 + z));
        int rc = MPI_Sendrecv_replace(b.buf, cnt, t, peer, tag, peer, tag, W, &st);
        snprintf(what, sizeof what, "Sendrecv_replace %s %d ints", z < 2 ? "contiguous" : "vector", n);
        recvd(what, rc, &st, &b, WANT(peer, tag, nbytes_of(MPI_INT, n), sr_seed(peer, 20 + z), 0));
        tb_free(&b);
        if (z >= 2)
            MPI_Type_free(&t);
    }
#ifndef VT_LACKS_MPI_Isendrecv
    /* Isendrecv: ints sent, ints or a vector received; Isendrecv_replace: ints */
    for (int z = 0; z < 3; z++) {
        int n = z == 1 ? N_8300 : N_SMALL, tag = 330 + z;
        MPI_Datatype rt = z == 2 ? vec_int(n, 2) : MPI_INT;
        int rcnt = z == 2 ? 1 : n;
        tbuf s, r;
        MPI_Request q;
        MPI_Status st = fresh();
        tb_new(&s, MPI_INT, n, sr_seed(me, 30 + z));
        tb_new(&r, rt, rcnt, -1);
        C("Isendrecv", MPI_Isendrecv(s.buf, n, MPI_INT, peer, tag, r.buf, rcnt, rt, peer, tag, W, &q));
        int rc = MPI_Wait(&q, &st);
        snprintf(what, sizeof what, "Isendrecv %d ints into %s (Wait)", n, z == 2 ? "a vector" : "ints");
        recvd(what, rc, &st, &r, WANT(peer, tag, nbytes_of(MPI_INT, n), sr_seed(peer, 30 + z), F_NOSTATUS));
        tb_free(&s);
        tb_free(&r);
        if (z == 2)
            MPI_Type_free(&rt);
    }
    for (int z = 0; z < 2; z++) {
        int n = z ? N_8300 : N_SMALL, tag = 340 + z;
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        tb_new(&b, MPI_INT, n, sr_seed(me, 40 + z));
        C("Isendrecv_replace", MPI_Isendrecv_replace(b.buf, n, MPI_INT, peer, tag, peer, tag, W, &q));
        int rc = MPI_Wait(&q, &st);
        snprintf(what, sizeof what, "Isendrecv_replace %d ints (Wait)", n);
        recvd(what, rc, &st, &b, WANT(peer, tag, nbytes_of(MPI_INT, n), sr_seed(peer, 40 + z), F_NOSTATUS));
        tb_free(&b);
    }
#endif
}

static void probe_log(const char *what, int rc, const MPI_Status *st, MPI_Datatype t, int tag, long bytes)
{
    char s[256];
    int by = UNSET;
    status_str(s, sizeof s, st, t, F_PROBE);
    out("%s rc=%s %s", what, ecls(rc), s);
    MPI_Get_count(st, MPI_BYTE, &by);
    if (rc != MPI_SUCCESS || st->MPI_SOURCE != peer || st->MPI_TAG != tag || by != bytes)
        fail("%s: %s, expected source %d tag %d %ld bytes", what, s, peer, tag, bytes);
}

/* Probe and Iprobe (specific and ANY_SOURCE/ANY_TAG), then a receive of the probed
 * source, tag and count; a zero-length message probed. */
static const int probe_sizes[3] = {N_SMALL, N_8300, N_256K};

static void it_probe(void)
{
    char what[80];
    if (lo) {
        for (int z = 0; z < 3; z++) {
            tx("Send (Probe)", W, peer, MPI_INT, probe_sizes[z], 400 + z, 4000 + z);
            tx("Send (Iprobe)", W, peer, MPI_INT, probe_sizes[z], 410 + z, 4010 + z);
        }
        tx("Send (Probe ANY)", W, peer, MPI_INT, N_8240, 420, 4020);
        tx("Send (Probe zero)", W, peer, MPI_INT, 0, 460, 4060);
        return;
    }
    for (int z = 0; z < 3; z++) {
        int c = -1, flag = 0, rc;
        long bytes = nbytes_of(MPI_INT, probe_sizes[z]);
        MPI_Status st = fresh();
        tbuf b;
        rc = MPI_Probe(peer, 400 + z, W, &st);
        probe_log("Probe", rc, &st, MPI_INT, 400 + z, bytes);
        MPI_Get_count(&st, MPI_INT, &c);
        tb_new(&b, MPI_INT, c, -1);
        st = fresh();
        rc = MPI_Recv(b.buf, c, MPI_INT, peer, 400 + z, W, &st);
        snprintf(what, sizeof what, "Recv the probed %d ints", c);
        recvd(what, rc, &st, &b, WANT(peer, 400 + z, bytes, 4000 + z, 0));
        tb_free(&b);
        /* Iprobe until found */
        st = fresh();
        do
            rc = MPI_Iprobe(peer, 410 + z, W, &flag, &st);
        while (rc == MPI_SUCCESS && !flag);
        out("Iprobe flag=%d", flag);
        probe_log("Iprobe", rc, &st, MPI_INT, 410 + z, bytes);
        MPI_Get_count(&st, MPI_INT, &c);
        rx("Recv the probed count", W, peer, MPI_INT, c, 410 + z, WANT(peer, 410 + z, bytes, 4010 + z, 0));
    }
    MPI_Status st = fresh();
    int c = -1, rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
    probe_log("Probe(ANY_SOURCE, ANY_TAG)", rc, &st, MPI_INT, 420, nbytes_of(MPI_INT, N_8240));
    MPI_Get_count(&st, MPI_INT, &c);
    rx("Recv the probed source, tag and count", W, st.MPI_SOURCE, MPI_INT, c, st.MPI_TAG,
       WANT(peer, 420, nbytes_of(MPI_INT, N_8240), 4020, 0));
    st = fresh();
    rc = MPI_Probe(peer, 460, W, &st);
    probe_log("Probe zero-length", rc, &st, MPI_INT, 460, 0);
    rx("Recv zero-length into 4 ints", W, peer, MPI_INT, 4, 460, WANT(peer, 460, 0, 4060, 0));
}

/* Mprobe + Mrecv, Improbe (ANY_SOURCE) + Imrecv, Mprobe(ANY_TAG) + Mrecv into a
 * strided vector of the probed size. */
static void it_mprobe(void)
{
    if (lo) {
        for (int z = 0; z < 3; z++) {
            tx("Send (Mprobe)", W, peer, MPI_INT, probe_sizes[z], 430 + z, 4030 + z);
            tx("Send (Improbe)", W, peer, MPI_INT, probe_sizes[z], 440 + z, 4040 + z);
        }
        tx("Send (Mprobe ANY_TAG)", W, peer, MPI_INT, N_8240, 450, 4050);
        return;
    }
    for (int z = 0; z < 3; z++) {
        int c = -1, flag = 0, rc;
        long bytes = nbytes_of(MPI_INT, probe_sizes[z]);
        MPI_Status st = fresh();
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Request q;
        tbuf b;
        rc = MPI_Mprobe(peer, 430 + z, W, &m, &st);
        probe_log("Mprobe", rc, &st, MPI_INT, 430 + z, bytes);
        MPI_Get_count(&st, MPI_INT, &c);
        tb_new(&b, MPI_INT, c, -1);
        st = fresh();
        rc = MPI_Mrecv(b.buf, c, MPI_INT, &m, &st);
        out("message after Mrecv is %s", m == MPI_MESSAGE_NULL ? "MPI_MESSAGE_NULL" : "not null");
        recvd("Mrecv", rc, &st, &b, WANT(peer, 430 + z, bytes, 4030 + z, 0));
        tb_free(&b);
        st = fresh();
        do
            rc = MPI_Improbe(MPI_ANY_SOURCE, 440 + z, W, &flag, &m, &st);
        while (rc == MPI_SUCCESS && !flag);
        out("Improbe(ANY_SOURCE) flag=%d", flag);
        probe_log("Improbe", rc, &st, MPI_INT, 440 + z, bytes);
        MPI_Get_count(&st, MPI_INT, &c);
        tb_new(&b, MPI_INT, c, -1);
        C("Imrecv", MPI_Imrecv(b.buf, c, MPI_INT, &m, &q));
        out("message after Imrecv is %s", m == MPI_MESSAGE_NULL ? "MPI_MESSAGE_NULL" : "not null");
        st = fresh();
        rc = MPI_Wait(&q, &st);
        recvd("Imrecv (Wait)", rc, &st, &b, WANT(peer, 440 + z, bytes, 4040 + z, 0));
        tb_free(&b);
    }
    MPI_Status st = fresh();
    MPI_Message m;
    int c = -1, rc = MPI_Mprobe(peer, MPI_ANY_TAG, W, &m, &st);
    probe_log("Mprobe(ANY_TAG)", rc, &st, MPI_INT, 450, nbytes_of(MPI_INT, N_8240));
    MPI_Get_count(&st, MPI_INT, &c);
    MPI_Datatype v = vec_int(c, 2);
    tbuf b;
    tb_new(&b, v, 1, -1);
    st = fresh();
    rc = MPI_Mrecv(b.buf, 1, v, &m, &st);
    recvd("Mrecv into a vector", rc, &st, &b, WANT(peer, 450, nbytes_of(MPI_INT, N_8240), 4050, 0));
    tb_free(&b);
    MPI_Type_free(&v);
}

/* Probe, Iprobe, Mprobe, Improbe of MPI_PROC_NULL (every rank). */
static void it_probe_proc_null(void)
{
    MPI_Status st = fresh();
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Request q;
    tbuf b;
    int flag = -1, rc;
    tb_new(&b, MPI_INT, 4, -1);
    rc = MPI_Probe(MPI_PROC_NULL, 470, W, &st);
    recvd("Probe(PROC_NULL)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, F_PROBE));
    st = fresh();
    rc = MPI_Iprobe(MPI_PROC_NULL, 470, W, &flag, &st);
    out("Iprobe(PROC_NULL) flag=%d", flag);
    recvd("Iprobe(PROC_NULL)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, F_PROBE));
    st = fresh();
    rc = MPI_Mprobe(MPI_PROC_NULL, 470, W, &m, &st);
    out("Mprobe(PROC_NULL) message is %s", m == MPI_MESSAGE_NO_PROC ? "MPI_MESSAGE_NO_PROC" : "other");
    recvd("Mprobe(PROC_NULL)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, F_PROBE));
    st = fresh();
    rc = MPI_Mrecv(b.buf, 4, MPI_INT, &m, &st);
    recvd("Mrecv(MPI_MESSAGE_NO_PROC)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0));
    st = fresh();
    flag = -1;
    rc = MPI_Improbe(MPI_PROC_NULL, 470, W, &flag, &m, &st);
    out("Improbe(PROC_NULL) flag=%d message is %s", flag, m == MPI_MESSAGE_NO_PROC ? "MPI_MESSAGE_NO_PROC" : "other");
    C("Imrecv(MPI_MESSAGE_NO_PROC)", MPI_Imrecv(b.buf, 4, MPI_INT, &m, &q));
    st = fresh();
    rc = MPI_Wait(&q, &st);
    recvd("Imrecv(MPI_MESSAGE_NO_PROC) (Wait)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0));
    tb_free(&b);
}

/* The large-count (_c) variants, and mixed with the int ones. */
static void it_large_count(void)
{
#ifndef VT_LACKS_MPI_Send_c
    if (lo) {
        tbuf b;
        MPI_Request q;
        tb_new(&b, MPI_INT, N_SMALL, 4500);
        C("Send_c", MPI_Send_c(b.buf, (MPI_Count)N_SMALL, MPI_INT, peer, 500, W));
        tb_free(&b);
        tb_new(&b, MPI_INT, N_8300, 4501);
        C("Isend_c", MPI_Isend_c(b.buf, (MPI_Count)N_8300, MPI_INT, peer, 501, W, &q));
        C("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        tb_free(&b);
        tb_new(&b, MPI_INT, N_256K, 4502);
        C("Send_c (into Recv)", MPI_Send_c(b.buf, (MPI_Count)N_256K, MPI_INT, peer, 502, W));
        tb_free(&b);
        tx("Send (into Recv_c)", W, peer, MPI_INT, N_8240, 503, 4503);
        MPI_Datatype v = vec_int(N_SMALL, 3);
        tb_new(&b, v, 2, 4504);
        C("Ssend_c vector x2", MPI_Ssend_c(b.buf, (MPI_Count)2, v, peer, 504, W));
        tb_free(&b);
        MPI_Type_free(&v);
    } else {
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        int rc;
        tb_new(&b, MPI_INT, N_SMALL + 2, -1);
        rc = MPI_Recv_c(b.buf, (MPI_Count)(N_SMALL + 2), MPI_INT, peer, 500, W, &st);
        recvd("Recv_c", rc, &st, &b, WANT(peer, 500, nbytes_of(MPI_INT, N_SMALL), 4500, 0));
        tb_free(&b);
        tb_new(&b, MPI_INT, N_8300, -1);
        C("Irecv_c", MPI_Irecv_c(b.buf, (MPI_Count)N_8300, MPI_INT, peer, 501, W, &q));
        st = fresh();
        rc = MPI_Wait(&q, &st);
        recvd("Irecv_c (Wait)", rc, &st, &b, WANT(peer, 501, nbytes_of(MPI_INT, N_8300), 4501, 0));
        tb_free(&b);
        rx("Recv (from Send_c)", W, peer, MPI_INT, N_256K, 502, WANT(peer, 502, nbytes_of(MPI_INT, N_256K), 4502, 0));
        tb_new(&b, MPI_INT, N_8300, -1);
        st = fresh();
        rc = MPI_Recv_c(b.buf, (MPI_Count)N_8300, MPI_INT, peer, 503, W, &st);
        recvd("Recv_c (from Send)", rc, &st, &b, WANT(peer, 503, nbytes_of(MPI_INT, N_8240), 4503, 0));
        tb_free(&b);
        tb_new(&b, MPI_INT, 2 * N_SMALL + 5, -1);
        st = fresh();
        rc = MPI_Recv_c(b.buf, (MPI_Count)(2 * N_SMALL + 5), MPI_INT, peer, 504, W, &st);
        recvd("Recv_c ints (from Ssend_c)", rc, &st, &b, WANT(peer, 504, nbytes_of(MPI_INT, 2 * N_SMALL), 4504, 0));
        tb_free(&b);
    }
#endif
}

/* Test, Testall, Testany, Testsome, Waitany over [MPI_REQUEST_NULL, a send, receives A,
 * B, C]: the partner (lo) sends A and C, then B, only when told, so what is complete is
 * known; then the same calls on an array of null requests (MPI_UNDEFINED, empty
 * statuses). */
static void it_testany(void)
{
    if (lo) {
        rx("Recv (the send in the array)", W, peer, MPI_INT, N_SMALL, 600, WANT(peer, 600, 40, 6000, 0));
        ready_wait(610);
        tx("Send A", W, peer, MPI_INT, N_SMALL, 601, 6001);
        tx("Send C", W, peer, MPI_INT, N_8300, 603, 6003);
        ready_wait(611);
        tx("Send B", W, peer, MPI_INT, N_SMALL, 602, 6002);
        return;
    }
    MPI_Request q[5];
    MPI_Status sts[5], st;
    tbuf s, a, bb, c;
    const tbuf *bufs[5] = {NULL, &s, &a, &bb, &c};
    want w[5];
    int flag, idx, outc, ids[5], rc;
    char what[80];
    tb_new(&s, MPI_INT, N_SMALL, 6000);
    tb_new(&a, MPI_INT, N_SMALL, -1);
    tb_new(&bb, MPI_INT, N_SMALL, -1);
    tb_new(&c, MPI_INT, N_8300, -1);
    w[2] = WANT(peer, 601, 40, 6001, 0);
    w[3] = WANT(peer, 602, 40, 6002, 0);
    w[4] = WANT(peer, 603, nbytes_of(MPI_INT, N_8300), 6003, 0);
    q[0] = MPI_REQUEST_NULL;
    C("Isend", MPI_Isend(s.buf, N_SMALL, MPI_INT, peer, 600, W, &q[1]));
    C("Irecv A", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 601, W, &q[2]));
    C("Irecv B", MPI_Irecv(bb.buf, N_SMALL, MPI_INT, peer, 602, W, &q[3]));
    C("Irecv C", MPI_Irecv(c.buf, N_8300, MPI_INT, peer, 603, W, &q[4]));
    flag = -1;
    rc = MPI_Test(&q[3], &flag, MPI_STATUS_IGNORE);
    out("Test(B, not sent) rc=%s flag=%d", ecls(rc), flag);
    if (flag != 0)
        fail("Test found B complete");
    flag = -1;
    rc = MPI_Testall(5, q, &flag, sts);
    out("Testall([NULL, send, A, B, C]) rc=%s flag=%d", ecls(rc), flag);
    if (flag != 0)
        fail("Testall found all complete");
    settle(q, (int[]){1}, 1);
    flag = idx = -1;
    rc = MPI_Testany(5, q, &idx, &flag, &st);
    out("Testany (the send complete) rc=%s flag=%d index=%s request %s", ecls(rc), flag, num(idx),
        q[1] == MPI_REQUEST_NULL ? "freed" : "not freed");
    if (flag != 1 || idx != 1)
        fail("Testany gave flag %d index %d, expected the send (1)", flag, idx);
    flag = idx = -1;
    rc = MPI_Testany(5, q, &idx, &flag, &st);
    out("Testany (none complete) rc=%s flag=%d index=%s", ecls(rc), flag, num(idx));
    if (flag != 0 || idx != MPI_UNDEFINED)
        fail("Testany gave flag %d index %d", flag, idx);
    outc = -1;
    rc = MPI_Testsome(5, q, &outc, ids, sts);
    out("Testsome (none complete) rc=%s outcount=%s", ecls(rc), num(outc));
    if (outc != 0)
        fail("Testsome gave outcount %d", outc);
    ready_send(610); /* A and C now */
    settle(q, (int[]){2, 4}, 2);
    for (int i = 0; i < 5; i++)
        sts[i] = fresh();
    rc = MPI_Testsome(5, q, &outc, ids, sts);
    out("Testsome (A and C complete) rc=%s outcount=%s", ecls(rc), num(outc));
    if (outc != 2 || ids[0] != 2 || ids[1] != 4)
        fail("Testsome gave outcount %d", outc);
    for (int i = 0; i < outc && i < 5; i++) {
        snprintf(what, sizeof what, "Testsome indices[%d]=%d", i, ids[i]);
        if (ids[i] >= 2 && ids[i] <= 4)
            recvd(what, rc, &sts[i], bufs[ids[i]], w[ids[i]]);
    }
    ready_send(611); /* B now */
    st = fresh();
    idx = -1;
    rc = MPI_Waitany(5, q, &idx, &st);
    out("Waitany (B) rc=%s index=%s", ecls(rc), num(idx));
    if (idx != 3)
        fail("Waitany gave index %d, expected 3", idx);
    else
        recvd("Waitany", rc, &st, &bb, w[3]);
    /* no active request left */
    st = fresh();
    rc = MPI_Waitany(5, q, &idx, &st);
    out("Waitany (all null) rc=%s index=%s", ecls(rc), num(idx));
    empty_status("Waitany (all null)", &st);
    st = fresh();
    rc = MPI_Testany(5, q, &idx, &flag, &st);
    out("Testany (all null) rc=%s flag=%d index=%s", ecls(rc), flag, num(idx));
    empty_status("Testany (all null)", &st);
    rc = MPI_Testsome(5, q, &outc, ids, sts);
    out("Testsome (all null) rc=%s outcount=%s", ecls(rc), num(outc));
    rc = MPI_Waitsome(5, q, &outc, ids, sts);
    out("Waitsome (all null) rc=%s outcount=%s", ecls(rc), num(outc));
    if (outc != MPI_UNDEFINED)
        fail("Waitsome on null requests gave outcount %d", outc);
    for (int i = 0; i < 5; i++)
        sts[i] = fresh();
    rc = MPI_Testall(5, q, &flag, sts);
    out("Testall (all null) rc=%s flag=%d", ecls(rc), flag);
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "Testall (all null) statuses[%d]", i);
        empty_status(what, &sts[i]);
    }
    for (int i = 0; i < 5; i++)
        sts[i] = fresh();
    rc = MPI_Waitall(5, q, sts);
    out("Waitall (all null) rc=%s", ecls(rc));
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "Waitall (all null) statuses[%d]", i);
        empty_status(what, &sts[i]);
    }
    tb_free(&s);
    tb_free(&a);
    tb_free(&bb);
    tb_free(&c);
}

/* Waitall with statuses ([NULL, send, recv, NULL, recv into a vector]), with
 * MPI_STATUSES_IGNORE ([recv, NULL, send]); Wait, and Wait on MPI_REQUEST_NULL. */
static void it_waitall(void)
{
    if (lo) {
        rx("Recv", W, peer, MPI_INT, N_SMALL, 620, WANT(peer, 620, 40, 6020, 0));
        tx("Send", W, peer, MPI_INT, N_SMALL, 621, 6021);
        tx("Send", W, peer, MPI_INT, N_8300, 622, 6022);
        rx("Recv", W, peer, MPI_INT, N_8300, 630, WANT(peer, 630, nbytes_of(MPI_INT, N_8300), 6030, 0));
        tx("Send", W, peer, MPI_INT, N_SMALL, 631, 6031);
        tx("Send", W, peer, MPI_INT, N_8240, 640, 6040);
        return;
    }
    MPI_Request q[5];
    MPI_Status sts[5], st;
    MPI_Datatype v = vec_int(N_8300, 2);
    tbuf s, a, c;
    int rc;
    tb_new(&s, MPI_INT, N_SMALL, 6020);
    tb_new(&a, MPI_INT, N_SMALL, -1);
    tb_new(&c, v, 1, -1);
    q[0] = q[3] = MPI_REQUEST_NULL;
    C("Isend", MPI_Isend(s.buf, N_SMALL, MPI_INT, peer, 620, W, &q[1]));
    C("Irecv", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 621, W, &q[2]));
    C("Irecv vector", MPI_Irecv(c.buf, 1, v, peer, 622, W, &q[4]));
    for (int i = 0; i < 5; i++)
        sts[i] = fresh();
    rc = MPI_Waitall(5, q, sts);
    out("Waitall([NULL, send, recv, NULL, recv]) rc=%s", ecls(rc));
    empty_status("Waitall statuses[0] (NULL)", &sts[0]);
    recvd("Waitall statuses[2]", rc, &sts[2], &a, WANT(peer, 621, 40, 6021, 0));
    empty_status("Waitall statuses[3] (NULL)", &sts[3]);
    recvd("Waitall statuses[4]", rc, &sts[4], &c, WANT(peer, 622, nbytes_of(MPI_INT, N_8300), 6022, 0));
    tb_free(&s);
    tb_free(&a);
    tb_free(&c);
    MPI_Type_free(&v);

    MPI_Status *volatile ignore = MPI_STATUSES_IGNORE; /* GCC's stringop-overflow false positive */
    tb_new(&s, MPI_INT, N_8300, 6030);
    tb_new(&a, MPI_INT, N_SMALL, -1);
    q[1] = MPI_REQUEST_NULL;
    C("Irecv", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 631, W, &q[0]));
    C("Isend", MPI_Isend(s.buf, N_8300, MPI_INT, peer, 630, W, &q[2]));
    rc = MPI_Waitall(3, q, ignore);
    recvd("Waitall(MPI_STATUSES_IGNORE)", rc, NULL, &a, WANT(peer, 631, 40, 6031, 0));
    out("requests after Waitall: %s %s %s", q[0] == MPI_REQUEST_NULL ? "null" : "active",
        q[1] == MPI_REQUEST_NULL ? "null" : "active", q[2] == MPI_REQUEST_NULL ? "null" : "active");
    tb_free(&s);
    tb_free(&a);

    tb_new(&a, MPI_INT, N_8300, -1);
    C("Irecv", MPI_Irecv(a.buf, N_8300, MPI_INT, peer, 640, W, &q[0]));
    st = fresh();
    rc = MPI_Wait(&q[0], &st);
    recvd("Wait", rc, &st, &a, WANT(peer, 640, nbytes_of(MPI_INT, N_8240), 6040, 0));
    st = fresh();
    rc = MPI_Wait(&q[0], &st);
    out("Wait(MPI_REQUEST_NULL) rc=%s", ecls(rc));
    empty_status("Wait(MPI_REQUEST_NULL)", &st);
    tb_free(&a);
}

/* Waitsome over receives [A, B, C]: A and C sent first (outcount 2), then B (1), then
 * nothing active (MPI_UNDEFINED). */
static void it_waitsome(void)
{
    if (lo) {
        ready_wait(612);
        tx("Send", W, peer, MPI_INT, N_SMALL, 651, 6051);
        tx("Send", W, peer, MPI_INT, N_8300, 653, 6053);
        ready_wait(613);
        tx("Send", W, peer, MPI_INT, N_SMALL, 652, 6052);
        return;
    }
    MPI_Request q[3];
    MPI_Status sts[3];
    tbuf a, bb, c;
    const tbuf *bufs[3] = {&a, &bb, &c};
    want w[3] = {WANT(peer, 651, 40, 6051, 0), WANT(peer, 652, 40, 6052, 0),
                 WANT(peer, 653, nbytes_of(MPI_INT, N_8300), 6053, 0)};
    int outc, ids[3], rc;
    char what[80];
    tb_new(&a, MPI_INT, N_SMALL, -1);
    tb_new(&bb, MPI_INT, N_SMALL, -1);
    tb_new(&c, MPI_INT, N_8300, -1);
    C("Irecv", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 651, W, &q[0]));
    C("Irecv", MPI_Irecv(bb.buf, N_SMALL, MPI_INT, peer, 652, W, &q[1]));
    C("Irecv", MPI_Irecv(c.buf, N_8300, MPI_INT, peer, 653, W, &q[2]));
    ready_send(612);
    settle(q, (int[]){0, 2}, 2);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++)
            sts[i] = fresh();
        outc = -1;
        rc = MPI_Waitsome(3, q, &outc, ids, sts);
        out("Waitsome rc=%s outcount=%s", ecls(rc), num(outc));
        if (outc != (round ? 1 : 2))
            fail("Waitsome gave outcount %d", outc);
        for (int i = 0; i < outc && i < 3; i++) {
            snprintf(what, sizeof what, "Waitsome indices[%d]=%d", i, ids[i]);
            if (ids[i] >= 0 && ids[i] < 3)
                recvd(what, rc, &sts[i], bufs[ids[i]], w[ids[i]]);
        }
        if (round == 0)
            ready_send(613);
    }
    rc = MPI_Waitsome(3, q, &outc, ids, sts);
    out("Waitsome (all null) rc=%s outcount=%s", ecls(rc), num(outc));
    tb_free(&a);
    tb_free(&bb);
    tb_free(&c);
}

/* Testall ([recv, NULL, recv]) and Test finding everything complete; Test on
 * MPI_REQUEST_NULL. */
static void it_testall(void)
{
    if (lo) {
        tx("Send", W, peer, MPI_INT, N_SMALL, 661, 6061);
        tx("Send", W, peer, MPI_INT, N_8300, 662, 6062);
        tx("Send", W, peer, MPI_INT, N_SMALL, 670, 6070);
        return;
    }
    MPI_Request q[3];
    MPI_Status sts[3], st;
    tbuf a, c;
    int flag, rc;
    tb_new(&a, MPI_INT, N_SMALL, -1);
    tb_new(&c, MPI_INT, N_8300, -1);
    q[1] = MPI_REQUEST_NULL;
    C("Irecv", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 661, W, &q[0]));
    C("Irecv", MPI_Irecv(c.buf, N_8300, MPI_INT, peer, 662, W, &q[2]));
    settle(q, (int[]){0, 2}, 2);
    for (int i = 0; i < 3; i++)
        sts[i] = fresh();
    rc = MPI_Testall(3, q, &flag, sts);
    out("Testall([recv, NULL, recv], complete) rc=%s flag=%d", ecls(rc), flag);
    if (flag != 1)
        fail("Testall gave flag %d", flag);
    recvd("Testall statuses[0]", rc, &sts[0], &a, WANT(peer, 661, 40, 6061, 0));
    empty_status("Testall statuses[1] (NULL)", &sts[1]);
    recvd("Testall statuses[2]", rc, &sts[2], &c, WANT(peer, 662, nbytes_of(MPI_INT, N_8300), 6062, 0));
    tb_clear(&a);
    C("Irecv", MPI_Irecv(a.buf, N_SMALL, MPI_INT, peer, 670, W, &q[0]));
    settle(q, (int[]){0}, 1);
    st = fresh();
    rc = MPI_Test(&q[0], &flag, &st);
    out("Test (complete) rc=%s flag=%d", ecls(rc), flag);
    recvd("Test", rc, &st, &a, WANT(peer, 670, 40, 6070, 0));
    st = fresh();
    rc = MPI_Test(&q[0], &flag, &st);
    out("Test(MPI_REQUEST_NULL) rc=%s flag=%d", ecls(rc), flag);
    empty_status("Test(MPI_REQUEST_NULL)", &st);
    tb_free(&a);
    tb_free(&c);
}

/* MPI_Cancel of receives: never matched (cancelled), already complete (not
 * cancelled), and a persistent one cancelled and then started again. */
static void it_cancel(void)
{
    if (lo) {
        tx("Send", W, peer, MPI_INT, N_SMALL, 702, 7002);
        ready_wait(704);
        tx("Send", W, peer, MPI_INT, N_8300, 703, 7003);
        return;
    }
    tbuf b;
    MPI_Request q;
    MPI_Status st = fresh();
    int flag = -1, rc;
    tb_new(&b, MPI_INT, N_8300, -1);
    C("Irecv (never sent)", MPI_Irecv(b.buf, N_SMALL, MPI_INT, peer, 700, W, &q));
    C("Cancel", MPI_Cancel(&q));
    C("Wait", MPI_Wait(&q, &st));
    C("Test_cancelled", MPI_Test_cancelled(&st, &flag));
    out("cancelled=%d", flag);
    if (flag != 1)
        fail("the receive was not cancelled");
    C("Irecv(ANY_SOURCE, never sent)", MPI_Irecv(b.buf, N_SMALL, MPI_INT, MPI_ANY_SOURCE, 701, W, &q));
    C("Cancel", MPI_Cancel(&q));
    st = fresh();
    do
        rc = MPI_Test(&q, &flag, &st);
    while (rc == MPI_SUCCESS && !flag);
    out("Test rc=%s flag=%d", ecls(rc), flag);
    C("Test_cancelled", MPI_Test_cancelled(&st, &flag));
    out("cancelled=%d", flag);
    if (flag != 1)
        fail("the receive was not cancelled");
    /* too late: the receive is complete */
    tb_clear(&b);
    C("Irecv", MPI_Irecv(b.buf, N_SMALL, MPI_INT, peer, 702, W, &q));
    settle(&q, (int[]){0}, 1);
    C("Cancel (complete receive)", MPI_Cancel(&q));
    st = fresh();
    rc = MPI_Wait(&q, &st);
    C("Test_cancelled", MPI_Test_cancelled(&st, &flag));
    out("cancelled=%d", flag);
    if (flag != 0)
        fail("a complete receive was cancelled");
    recvd("Wait", rc, &st, &b, WANT(peer, 702, 40, 7002, 0));
    /* persistent: started, cancelled, started again */
    tb_clear(&b);
    C("Recv_init", MPI_Recv_init(b.buf, N_8300, MPI_INT, peer, 703, W, &q));
    C("Start", MPI_Start(&q));
    C("Cancel", MPI_Cancel(&q));
    st = fresh();
    C("Wait", MPI_Wait(&q, &st));
    C("Test_cancelled", MPI_Test_cancelled(&st, &flag));
    out("cancelled=%d", flag);
    if (flag != 1)
        fail("the persistent receive was not cancelled");
    C("Start", MPI_Start(&q));
    ready_send(704);
    st = fresh();
    rc = MPI_Wait(&q, &st);
    C("Test_cancelled", MPI_Test_cancelled(&st, &flag));
    out("cancelled=%d", flag);
    recvd("Wait", rc, &st, &b, WANT(peer, 703, nbytes_of(MPI_INT, N_8300), 7003, 0));
    C("Request_free", MPI_Request_free(&q));
    tb_free(&b);
}

/* MPI_Request_free on an active receive (the data still arrives) and on active sends. */
static void it_reqfree(void)
{
    static const int sizes[] = {N_SMALL, N_8300, N_256K};
    if (lo) {
        tbuf s[3];
        MPI_Request q;
        ready_wait(801);
        tx("Send (into the freed receive)", W, peer, MPI_INT, N_SMALL, 800, 8000);
        ready_send(802);
        for (int z = 0; z < 3; z++) {
            tb_new(&s[z], MPI_INT, sizes[z], 8010 + z);
            C("Isend", MPI_Isend(s[z].buf, sizes[z], MPI_INT, peer, 810 + z, W, &q));
            C("Request_free (active send)", MPI_Request_free(&q));
            out("request after free is %s", q == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not null");
        }
        ready_wait(815); /* all received: the buffers may go */
        for (int z = 0; z < 3; z++)
            tb_free(&s[z]);
        return;
    }
    tbuf b;
    MPI_Request q;
    want w = WANT(peer, 800, 40, 8000, 0);
    tb_new(&b, MPI_INT, N_SMALL, -1);
    C("Irecv", MPI_Irecv(b.buf, N_SMALL, MPI_INT, peer, 800, W, &q));
    C("Request_free (active receive)", MPI_Request_free(&q));
    out("request after free is %s", q == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not null");
    ready_send(801);
    ready_wait(802); /* sent after our message, which was matched first */
    /* the data is there (eager); should it still be on its way, wait up to 10 s */
    {
        unsigned char *exp = malloc(b.span + GUARD);
        memset(exp, 0xEE, b.span + GUARD);
        put(exp, MPI_INT, N_SMALL, w.seed, 40);
        double t0 = MPI_Wtime();
        while (memcmp(exp, b.buf, b.span + GUARD) != 0 && MPI_Wtime() - t0 < 10) {
            int f;
            MPI_Iprobe(peer, 899, W, &f, MPI_STATUS_IGNORE);
        }
        free(exp);
    }
    recvd("the freed receive's buffer", MPI_SUCCESS, NULL, &b, w);
    tb_free(&b);
    for (int z = 0; z < 3; z++)
        rx("Recv (from a freed send)", W, peer, MPI_INT, sizes[z], 810 + z,
           WANT(peer, 810 + z, nbytes_of(MPI_INT, sizes[z]), 8010 + z, 0));
    ready_send(815);
}

/* MPI_Request_get_status: incomplete (flag 0), complete (flag 1, status), then Wait
 * (the same status); on MPI_REQUEST_NULL. */
static void it_getstatus(void)
{
    static const int sizes[] = {N_SMALL, N_8300};
    for (int z = 0; z < 2; z++) {
        int n = sizes[z], tag = 900 + z;
        if (lo) {
            ready_wait(910 + z);
            tx("Send", W, peer, MPI_INT, n, tag, 9000 + z);
            continue;
        }
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        int flag = -1, rc;
        want w = WANT(peer, tag, nbytes_of(MPI_INT, n), 9000 + z, 0);
        tb_new(&b, MPI_INT, n + 5, -1);
        C("Irecv", MPI_Irecv(b.buf, n + 5, MPI_INT, peer, tag, W, &q));
        rc = MPI_Request_get_status(q, &flag, &st);
        out("Request_get_status (not sent) rc=%s flag=%d", ecls(rc), flag);
        if (flag != 0)
            fail("Request_get_status found an unsent message");
        ready_send(910 + z);
        do
            rc = MPI_Request_get_status(q, &flag, &st);
        while (rc == MPI_SUCCESS && !flag);
        out("Request_get_status (complete) flag=%d request %s", flag, q == MPI_REQUEST_NULL ? "freed" : "kept");
        recvd("Request_get_status", rc, &st, &b, w);
        st = fresh();
        rc = MPI_Wait(&q, &st);
        recvd("Wait after Request_get_status", rc, &st, &b, w);
        tb_free(&b);
    }
    int flag = -1;
    MPI_Status st = fresh();
    int rc = MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    out("Request_get_status(MPI_REQUEST_NULL) rc=%s flag=%d", ecls(rc), flag);
    empty_status("Request_get_status(MPI_REQUEST_NULL)", &st);
}

/* MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, zero-length messages, the tag MPI_TAG_UB. */
static void it_special(void)
{
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(W, MPI_TAG_UB, &ub, &flag);
    int tag_ub = flag && ub ? *ub : 32767;
    out("MPI_TAG_UB flag=%d value=%d", flag, tag_ub);
    /* MPI_PROC_NULL, on every rank */
    {
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        int rc;
        tb_new(&b, MPI_INT, 4, 10000);
        C("Send to PROC_NULL", MPI_Send(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W));
        C("Ssend to PROC_NULL", MPI_Ssend(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W));
        C("Rsend to PROC_NULL", MPI_Rsend(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W));
        C("Isend to PROC_NULL", MPI_Isend(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W, &q));
        C("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        tb_free(&b);
        tb_new(&b, MPI_INT, 4, -1);
        rc = MPI_Recv(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W, &st);
        recvd("Recv from PROC_NULL", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0));
        C("Irecv from PROC_NULL", MPI_Irecv(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W, &q));
        st = fresh();
        rc = MPI_Wait(&q, &st);
        /* MPICH 4.0.2 gives source 0, tag 0 here (not MPI_PROC_NULL, MPI_ANY_TAG) */
        recvd("Irecv from PROC_NULL (Wait)", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, F_ANYSRC));
        st = fresh();
        rc = MPI_Sendrecv(b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, b.buf, 4, MPI_INT, MPI_PROC_NULL, 1000, W, &st);
        recvd("Sendrecv PROC_NULL", rc, &st, &b, WANT(MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0));
        tb_free(&b);
    }
    if (lo) {
        tx("Send", W, peer, MPI_INT, N_SMALL, 1010, 10010);
        tx("Send", W, peer, MPI_INT, N_8300, 1011, 10011);
        tx("Send", W, peer, MPI_INT, N_SMALL, 1012, 10012);
        tx("Send", W, peer, MPI_INT, N_SMALL, tag_ub, 10013);
        tx("Send zero", W, peer, MPI_INT, 0, 1020, 0);
        tx("Send zero", W, peer, MPI_INT, 0, 1021, 0);
        C("Ssend zero", MPI_Ssend(NULL, 0, MPI_INT, peer, 1022, W));
        MPI_Datatype v = vec_int(5, 2);
        MPI_Request q;
        int dummy[10];
        C("Isend zero vectors", MPI_Isend(dummy, 0, v, peer, 1023, W, &q));
        C("Wait", MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_Type_free(&v);
        tx("Send 1 int", W, peer, MPI_INT, 1, 1024, 0);
        return;
    }
    rx("Recv(ANY_SOURCE, ANY_TAG)", W, MPI_ANY_SOURCE, MPI_INT, N_8300, MPI_ANY_TAG,
       WANT(peer, 1010, 40, 10010, 0));
    {
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        tb_new(&b, MPI_INT, N_8300, -1);
        C("Irecv(ANY_SOURCE, 1011)", MPI_Irecv(b.buf, N_8300, MPI_INT, MPI_ANY_SOURCE, 1011, W, &q));
        int rc = MPI_Wait(&q, &st);
        recvd("Irecv(ANY_SOURCE) (Wait)", rc, &st, &b, WANT(peer, 1011, nbytes_of(MPI_INT, N_8300), 10011, 0));
        tb_clear(&b);
        C("Irecv(partner, ANY_TAG)", MPI_Irecv(b.buf, N_8300, MPI_INT, peer, MPI_ANY_TAG, W, &q));
        st = fresh();
        rc = MPI_Wait(&q, &st);
        recvd("Irecv(ANY_TAG) (Wait)", rc, &st, &b, WANT(peer, 1012, 40, 10012, 0));
        tb_free(&b);
    }
    rx("Recv tag MPI_TAG_UB", W, peer, MPI_INT, N_SMALL, tag_ub, WANT(peer, tag_ub, 40, 10013, 0));
    rx("Recv zero-length into 4 ints", W, peer, MPI_INT, 4, 1020, WANT(peer, 1020, 0, 0, 0));
    rx("Recv zero-length into 0 ints", W, peer, MPI_INT, 0, 1021, WANT(peer, 1021, 0, 0, 0));
    rx("Recv zero-length Ssend", W, MPI_ANY_SOURCE, MPI_INT, 4, MPI_ANY_TAG, WANT(peer, 1022, 0, 0, 0));
    MPI_Datatype v = vec_int(5, 2);
    tbuf b;
    MPI_Request q;
    MPI_Status st = fresh();
    tb_new(&b, v, 2, -1);
    C("Irecv 2 vectors", MPI_Irecv(b.buf, 2, v, peer, 1023, W, &q));
    int rc = MPI_Wait(&q, &st);
    recvd("Irecv of zero vectors (Wait)", rc, &st, &b, WANT(peer, 1023, 0, 0, 0));
    tb_free(&b);
    MPI_Type_free(&v);
    rx("Recv 1 int", W, peer, MPI_INT, 1, 1024, WANT(peer, 1024, 4, 0, 0));
}

/* Derived datatypes: sent as one type, received as another of the same signature;
 * small, around the eager limit, large. */
struct S {
    int a;    /* a gap after it */
    double b;
    char c;   /* and after it */
};

/* (int, double, char) with the gaps of struct S, or packed (extent 13). */
static MPI_Datatype t_struct(int packed)
{
    int lens[3] = {1, 1, 1};
    MPI_Aint gaps[3] = {offsetof(struct S, a), offsetof(struct S, b), offsetof(struct S, c)};
    MPI_Aint tight[3] = {0, 4, 12};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t, r;
    MPI_Type_create_struct(3, lens, packed ? tight : gaps, types, &t);
    MPI_Type_create_resized(t, 0, packed ? 13 : (MPI_Aint)sizeof(struct S), &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

typedef struct {
    char name[96];
    MPI_Datatype st, rt;
    int sc, rc;
} dcase;

static void add(dcase *cs, int *n, MPI_Datatype st, int sc, MPI_Datatype rt, int rc, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void add(dcase *cs, int *n, MPI_Datatype st, int sc, MPI_Datatype rt, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs[*n].name, sizeof cs[*n].name, fmt, ap);
    va_end(ap);
    cs[*n].st = st, cs[*n].sc = sc, cs[*n].rt = rt, cs[*n].rc = rc;
    (*n)++;
}

static void it_datatypes(void)
{
    static const int eager[5] = {N_8100, N_8192, N_8240, N_8260, N_8300};
    MPI_Datatype c5 = contig(5, MPI_DOUBLE), c1024 = contig(1024, MPI_DOUBLE), sg = t_struct(0), sp = t_struct(1);
    MPI_Datatype vd4, vdl, idx, col, t, vi[5];
    MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vd4);
    MPI_Type_commit(&vd4);
    MPI_Type_vector(32768, 1, 2, MPI_DOUBLE, &vdl); /* 256 KiB */
    MPI_Type_commit(&vdl);
    MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){0, 4, 7}, MPI_DOUBLE, &idx);
    MPI_Type_commit(&idx);
    MPI_Type_vector(4, 1, 6, MPI_DOUBLE, &t); /* a column of a 4 x 6 matrix */
    MPI_Type_create_resized(t, 0, sizeof(double), &col);
    MPI_Type_free(&t);
    MPI_Type_commit(&col);
    for (int i = 0; i < 5; i++)
        vi[i] = vec_int(eager[i], 3);
    dcase cs[48];
    int n = 0;
    add(cs, &n, c5, 2, MPI_DOUBLE, 12, "contiguous(5 doubles) x2 -> 12 doubles");
    add(cs, &n, MPI_DOUBLE, 10, c5, 3, "10 doubles -> contiguous(5 doubles) x3");
    add(cs, &n, vd4, 1, MPI_DOUBLE, 4, "vector(4,1,2 doubles) -> 4 doubles");
    add(cs, &n, MPI_DOUBLE, 4, vd4, 1, "4 doubles -> vector(4,1,2 doubles)");
    add(cs, &n, idx, 2, MPI_DOUBLE, 12, "indexed({2,1,3},{0,4,7} doubles) x2 -> 12 doubles");
    add(cs, &n, MPI_DOUBLE, 12, idx, 2, "12 doubles -> indexed x2");
    add(cs, &n, sg, 7, sp, 7, "struct with gaps x7 -> packed struct x7");
    add(cs, &n, sp, 7, sg, 8, "packed struct x7 -> struct with gaps x8");
    add(cs, &n, col, 6, MPI_DOUBLE, 24, "resized column x6 (transposed 4x6) -> 24 doubles");
    add(cs, &n, MPI_DOUBLE, 24, col, 6, "24 doubles -> resized column x6");
    add(cs, &n, col, 6, col, 6, "resized column x6 -> resized column x6");
    for (int i = 0; i < 5; i++) {
        add(cs, &n, vi[i], 1, MPI_INT, eager[i], "vector(%d,1,3 ints) (%d bytes) -> ints", eager[i], 4 * eager[i]);
        add(cs, &n, MPI_INT, eager[i], vi[i], 1, "%d ints (%d bytes) -> vector(%d,1,3 ints)", eager[i], 4 * eager[i],
            eager[i]);
        add(cs, &n, MPI_INT, eager[i], MPI_INT, eager[i], "%d ints (%d bytes) -> ints", eager[i], 4 * eager[i]);
    }
    add(cs, &n, sg, 634, sp, 634, "struct with gaps x634 (8242 bytes) -> packed struct");
    add(cs, &n, sp, 640, sg, 640, "packed struct x640 (8320 bytes) -> struct with gaps");
    add(cs, &n, vdl, 1, MPI_DOUBLE, 32768, "vector(32768,1,2 doubles) (256 KiB) -> doubles");
    add(cs, &n, MPI_DOUBLE, 32768, vdl, 1, "32768 doubles (256 KiB) -> vector(32768,1,2 doubles)");
    add(cs, &n, sg, 12000, sp, 12000, "struct with gaps x12000 -> packed struct");
    add(cs, &n, MPI_DOUBLE, 524288, c1024, 512, "524288 doubles (4 MiB) -> contiguous(1024 doubles) x512");
    for (int k = 0; k < n; k++) {
        int tag = 1700 + k;
        if (lo)
            tx(cs[k].name, W, peer, cs[k].st, cs[k].sc, tag, 17000 + k);
        else
            rx(cs[k].name, W, peer, cs[k].rt, cs[k].rc, tag,
               WANT(peer, tag, nbytes_of(cs[k].st, cs[k].sc), 17000 + k, 0));
    }
    MPI_Datatype all[] = {c5, c1024, sg, sp, vd4, vdl, idx, col, vi[0], vi[1], vi[2], vi[3], vi[4]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_free(&all[i]);
}

/* Both partners MPI_Send just below the eager limit, then MPI_Recv: works untraced
 * because the message is eager; the layer's header must not make it deadlock. MPICH
 * 4.0.2 ch4:ucx (UCX 1.13): 8240 bytes (eager below 8256); MPICH 4.2.1 (UCX 1.18):
 * eager up to 5422 bytes only; Open MPI 4.1 (ob1, vader): 4000 bytes (a send waits for
 * its receive from 4041 bytes on, README.vtrace). The limit of the MPI as it is comes
 * from PBT_EAGER (run-mpi-test.sh's RUN_PROBE: a run of eager_probe() without the
 * layer), the same for the reference run and the traced one. */
#ifdef OPEN_MPI
enum { N_UNSAFE = 1000 };
#else
enum { N_UNSAFE = N_8240 };
#endif

/* The largest message (bytes, up to 64 KiB) whose MPI_Isend from rank 0 completes while
 * rank 1 has not posted its receive: printed by rank 0. */
static void eager_probe(void)
{
    static char buf[1 << 16];
    int yes = 1, no = (int)sizeof buf + 1;
    while (no - yes > 1) {
        int n = yes + (no - yes) / 2, done = 0;
        if (me == 0) {
            MPI_Request r;
            MPI_Isend(buf, n, MPI_CHAR, 1, 1, W, &r);
            for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < 0.3;)
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
            MPI_Send(&done, 1, MPI_INT, 1, 2, W);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (me == 1) {
            MPI_Recv(&done, 1, MPI_INT, 0, 2, W, MPI_STATUS_IGNORE);
            MPI_Recv(buf, n, MPI_CHAR, 0, 1, W, MPI_STATUS_IGNORE);
        }
        MPI_Bcast(&done, 1, MPI_INT, 0, W);
        *(done ? &yes : &no) = n;
    }
    if (me == 0)
        printf("%d\n", yes);
}

/* N_UNSAFE ints, or fewer when PBT_EAGER says the MPI's eager limit is lower. */
static int unsafe_ints(void)
{
    const char *e = getenv("PBT_EAGER");
    long limit = e ? strtol(e, NULL, 10) : 0;
    return limit > 0 && limit / 4 < N_UNSAFE ? (int)(limit / 4) : N_UNSAFE;
}

static void it_unsafe(void)
{
    const int n_unsafe = unsafe_ints();
    for (int z = 0; z < 2; z++) {
        MPI_Datatype t = z ? vec_int(n_unsafe, 2) : MPI_INT;
        int cnt = z ? 1 : n_unsafe;
        tbuf s;
        tb_new(&s, t, cnt, 12000 + 10 * z + me);
        C(z ? "Send a vector just below the eager limit before the partner's Recv"
            : "Send just below the eager limit before the partner's Recv",
          MPI_Send(s.buf, cnt, t, peer, 1100 + z, W));
        rx("Recv", W, peer, t, cnt, 1100 + z,
           WANT(peer, 1100 + z, nbytes_of(MPI_INT, n_unsafe), 12000 + 10 * z + peer, 0));
        tb_free(&s);
        if (z)
            MPI_Type_free(&t);
    }
}

/* A larger message into a smaller buffer (MPI_ERRORS_RETURN): the error class of the
 * return code and of status.MPI_ERROR, the count, the data; contiguous and strided,
 * small and large; Recv, Irecv + Wait, Mprobe + Mrecv, Waitall (MPI_ERR_IN_STATUS). */
static void it_truncate(void)
{
    enum { BIG = N_256K + 1000 };
    MPI_Datatype v3 = vec_int(3, 3), vbig = vec_int(4096, 3);
    struct {
        const char *name;
        int sn;
        MPI_Datatype rt;
        int rc, how;
    } cs[] = {
        {"10 ints -> Recv 6 ints", N_SMALL, MPI_INT, 6, 0},
        {"10 ints -> Recv vector(3,1,3 ints) x2", N_SMALL, v3, 2, 0},
        {"2075 ints (8300 bytes) -> Recv 2060 ints", N_8300, MPI_INT, N_8240, 0},
        {"2060 ints (8240 bytes) -> Recv 2025 ints", N_8240, MPI_INT, N_8100, 0},
        {"66536 ints -> Recv 65536 ints", BIG, MPI_INT, N_256K, 0},
        {"66536 ints -> Recv vector(4096,1,3 ints) x16", BIG, vbig, 16, 0},
        {"10 ints -> Irecv 6 ints (Wait)", N_SMALL, MPI_INT, 6, 1},
        {"66536 ints -> Irecv 65536 ints (Wait)", BIG, MPI_INT, N_256K, 1},
        {"10 ints -> Mprobe, Mrecv 6 ints", N_SMALL, MPI_INT, 6, 2},
        {"2075 ints -> Mprobe, Mrecv vector(3,1,3 ints) x600", N_8300, v3, 600, 2},
    };
    int ncs = (int)(sizeof cs / sizeof cs[0]);
    if (lo) {
        for (int k = 0; k < ncs; k++)
            tx("Send", tcomm, peer, MPI_INT, cs[k].sn, 1200 + k, 14000 + k);
        tx("Send", tcomm, peer, MPI_INT, N_SMALL, 1220, 14020);
        tx("Send", tcomm, peer, MPI_INT, N_SMALL, 1221, 14021);
    } else {
        for (int k = 0; k < ncs; k++) {
            int tag = 1200 + k, rc;
            tbuf b;
            MPI_Status st = fresh();
            MPI_Request q;
            MPI_Message m;
            tb_new(&b, cs[k].rt, cs[k].rc, -1);
            if (cs[k].how == 0) {
                rc = MPI_Recv(b.buf, cs[k].rc, cs[k].rt, peer, tag, tcomm, &st);
            } else if (cs[k].how == 1) {
                C("Irecv", MPI_Irecv(b.buf, cs[k].rc, cs[k].rt, peer, tag, tcomm, &q));
                rc = MPI_Wait(&q, &st);
            } else {
                rc = MPI_Mprobe(peer, tag, tcomm, &m, &st);
                probe_log("Mprobe", rc, &st, cs[k].rt, tag, nbytes_of(MPI_INT, cs[k].sn));
                st = fresh();
                rc = MPI_Mrecv(b.buf, cs[k].rc, cs[k].rt, &m, &st);
            }
            recvd(cs[k].name, rc, &st, &b, WANT(peer, tag, nbytes_of(MPI_INT, cs[k].sn), 14000 + k, F_TRUNC | F_ERR));
            tb_free(&b);
        }
        tbuf a, b;
        MPI_Request q[2];
        MPI_Status sts[2] = {fresh(), fresh()};
        tb_new(&a, MPI_INT, 6, -1);
        tb_new(&b, MPI_INT, N_SMALL, -1);
        C("Irecv 6 ints", MPI_Irecv(a.buf, 6, MPI_INT, peer, 1220, tcomm, &q[0]));
        C("Irecv 10 ints", MPI_Irecv(b.buf, N_SMALL, MPI_INT, peer, 1221, tcomm, &q[1]));
        int rc = MPI_Waitall(2, q, sts);
        out("Waitall rc=%s", ecls(rc));
        if (eclass(rc) != MPI_ERR_IN_STATUS)
            fail("Waitall returned %s, expected ERR_IN_STATUS", ecls(rc));
        recvd("Waitall statuses[0] 10 ints -> 6 ints", sts[0].MPI_ERROR, &sts[0], &a,
              WANT(peer, 1220, 40, 14020, F_TRUNC | F_ERR));
        /* MPICH: the requests after the failed one are left as they are (ERR_PENDING,
         * status untouched), even when complete: the second needs a Wait */
        out("Waitall statuses[1] err=%s, requests after: %s %s", ecls(sts[1].MPI_ERROR),
            q[0] == MPI_REQUEST_NULL ? "null" : "active", q[1] == MPI_REQUEST_NULL ? "null" : "active");
        if (q[1] != MPI_REQUEST_NULL) {
            sts[1] = fresh();
            rc = MPI_Wait(&q[1], &sts[1]);
            recvd("Wait 10 ints -> 10 ints", rc, &sts[1], &b, WANT(peer, 1221, 40, 14021, 0));
        } else {
            recvd("Waitall statuses[1] 10 ints -> 10 ints", sts[1].MPI_ERROR, &sts[1], &b,
                  WANT(peer, 1221, 40, 14021, F_ERR));
        }
        tb_free(&a);
        tb_free(&b);
    }
    MPI_Type_free(&v3);
    MPI_Type_free(&vbig);
}

/* Partial elements: MPI_Get_count is MPI_UNDEFINED, MPI_Get_elements counts the basic
 * elements; the data of the partial element is there. */
static void it_partial(void)
{
    MPI_Datatype d2 = contig(2, MPI_DOUBLE), i2 = contig(2, MPI_INT), sg = t_struct(0), s5;
    {
        /* (int, double, char, int, double), packed */
        MPI_Datatype types[5] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(5, (int[]){1, 1, 1, 1, 1}, (MPI_Aint[]){0, 4, 12, 13, 17}, types, &s5);
        MPI_Type_commit(&s5);
    }
    if (lo) {
        tx("Send 3 doubles", W, peer, MPI_DOUBLE, 3, 1300, 13000);
        tx("Send 3 doubles", W, peer, MPI_DOUBLE, 3, 1301, 13001);
        tx("Send 2075 ints", W, peer, MPI_INT, N_8300, 1302, 13002);
        tx("Send (int, double, char, int, double)", W, peer, s5, 1, 1303, 13003);
    } else {
        rx("3 doubles -> contiguous(2 doubles) x2", W, peer, d2, 2, 1300, WANT(peer, 1300, 24, 13000, 0));
        tbuf b;
        MPI_Request q;
        MPI_Status st = fresh();
        tb_new(&b, d2, 2, -1);
        C("Irecv", MPI_Irecv(b.buf, 2, d2, peer, 1301, W, &q));
        int rc = MPI_Wait(&q, &st);
        recvd("3 doubles -> Irecv contiguous(2 doubles) x2 (Wait)", rc, &st, &b, WANT(peer, 1301, 24, 13001, 0));
        tb_free(&b);
        rx("2075 ints -> contiguous(2 ints) x1100", W, peer, i2, 1100, 1302,
           WANT(peer, 1302, nbytes_of(MPI_INT, N_8300), 13002, 0));
        rx("(int, double, char, int, double) -> struct with gaps x3", W, peer, sg, 3, 1303,
           WANT(peer, 1303, nbytes_of(s5, 1), 13003, 0));
    }
    MPI_Type_free(&d2);
    MPI_Type_free(&i2);
    MPI_Type_free(&sg);
    MPI_Type_free(&s5);
}

/* Bsend buffer accounting: a buffer of exactly sum(MPI_Pack_size + MPI_BSEND_OVERHEAD)
 * holds 4 messages sent back to back before the receiver posts anything (Bsend, then
 * Ibsend); Buffer_detach gives back what was attached. */
static void it_bsend(void)
{
    MPI_Datatype v = vec_int(100, 3);
    struct {
        MPI_Datatype t;
        int n, rn;
    } m[4] = {{MPI_INT, N_SMALL, N_SMALL}, {MPI_INT, N_8240, N_8240}, {MPI_INT, N_8300, N_8300}, {v, 1, 100}};
    for (int round = 0; round < 2; round++) {
        if (!lo) {
            MPI_Barrier(pcomm); /* only now are the receives posted */
            for (int i = 0; i < 4; i++)
                rx(round ? "Recv (Ibsend)" : "Recv (Bsend)", W, peer, MPI_INT, m[i].rn, 1400 + round * 10 + i,
                   WANT(peer, 1400 + round * 10 + i, nbytes_of(MPI_INT, m[i].rn), 15000 + round * 10 + i, 0));
            continue;
        }
        int size = 0;
        for (int i = 0; i < 4; i++) {
            int ps = 0;
            MPI_Pack_size(m[i].n, m[i].t, W, &ps);
            size += ps + MPI_BSEND_OVERHEAD;
        }
        out("buffer of %d bytes for 4 messages", size);
        void *buf = malloc((size_t)size);
        C("Buffer_attach", MPI_Buffer_attach(buf, size));
        MPI_Request q[4];
        tbuf s[4];
        for (int i = 0; i < 4; i++) {
            tb_new(&s[i], m[i].t, m[i].n, 15000 + round * 10 + i);
            if (round == 0) {
                C("Bsend", MPI_Bsend(s[i].buf, m[i].n, m[i].t, peer, 1400 + i, W));
                tb_free(&s[i]); /* the message is in the attached buffer */
            } else {
                C("Ibsend", MPI_Ibsend(s[i].buf, m[i].n, m[i].t, peer, 1410 + i, W, &q[i]));
            }
        }
        if (round == 1) {
            MPI_Status sts[4];
            C("Waitall (Ibsend)", MPI_Waitall(4, q, sts));
            for (int i = 0; i < 4; i++)
                tb_free(&s[i]);
        }
        MPI_Barrier(pcomm);
        detach_check(buf, size);
    }
    MPI_Type_free(&v);
}

/* An intercommunicator between the two halves of MPI_COMM_WORLD: Send/Recv,
 * Isend/Irecv, Probe; the status source is the rank in the remote group. Local rank
 * i talks to remote rank half-1-i. */
static void it_intercomm(void)
{
    int half = np / 2, color = me < half ? 0 : 1, lr = -1, rsize = -1, inter_flag = -1;
    MPI_Comm local, inter;
    MPI_Comm_split(W, color, me, &local);
    C("Intercomm_create", MPI_Intercomm_create(local, 0, W, color ? 0 : half, 1500, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_test_inter(inter, &inter_flag);
    out("rank %d remote size %d test_inter %d", lr, rsize, inter_flag);
    int rp = half - 1 - lr, seed = 16000 + color * 100 + lr * 10, rseed = 16000 + (1 - color) * 100 + rp * 10;
    if (color == 0) {
        tx("Send", inter, rp, MPI_INT, N_SMALL, 1501, seed + 1);
        rx("Recv", inter, rp, MPI_INT, N_SMALL, 1502, WANT(rp, 1502, 40, rseed + 2, 0));
        tx("Send (Probe)", inter, rp, MPI_INT, N_256K, 1505, seed + 5);
    } else {
        rx("Recv", inter, rp, MPI_INT, N_SMALL, 1501, WANT(rp, 1501, 40, rseed + 1, 0));
        tx("Send", inter, rp, MPI_INT, N_SMALL, 1502, seed + 2);
        MPI_Status st = fresh();
        int c = -1, rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
        char s[256];
        status_str(s, sizeof s, &st, MPI_INT, F_PROBE);
        out("Probe(ANY_SOURCE, ANY_TAG) rc=%s %s", ecls(rc), s);
        MPI_Get_count(&st, MPI_INT, &c);
        if (st.MPI_SOURCE != rp || st.MPI_TAG != 1505 || c != N_256K)
            fail("Probe on the intercommunicator: %s", s);
        rx("Recv the probed message", inter, st.MPI_SOURCE, MPI_INT, c, st.MPI_TAG,
           WANT(rp, 1505, nbytes_of(MPI_INT, N_256K), rseed + 5, 0));
    }
    {
        tbuf s1, s2, r1, r2;
        MPI_Request q[4];
        MPI_Status sts[4];
        tb_new(&s1, MPI_INT, N_8300, seed + 3);
        tb_new(&s2, MPI_INT, N_SMALL, seed + 4);
        tb_new(&r1, MPI_INT, N_8300, -1);
        tb_new(&r2, MPI_INT, N_SMALL, -1);
        C("Irecv", MPI_Irecv(r1.buf, N_8300, MPI_INT, rp, 1503, inter, &q[0]));
        C("Irecv(ANY_SOURCE)", MPI_Irecv(r2.buf, N_SMALL, MPI_INT, MPI_ANY_SOURCE, 1504, inter, &q[1]));
        C("Isend", MPI_Isend(s1.buf, N_8300, MPI_INT, rp, 1503, inter, &q[2]));
        C("Isend", MPI_Isend(s2.buf, N_SMALL, MPI_INT, rp, 1504, inter, &q[3]));
        for (int i = 0; i < 4; i++)
            sts[i] = fresh();
        int rc = MPI_Waitall(4, q, sts);
        out("Waitall rc=%s", ecls(rc));
        recvd("Irecv", rc, &sts[0], &r1, WANT(rp, 1503, nbytes_of(MPI_INT, N_8300), rseed + 3, 0));
        recvd("Irecv(ANY_SOURCE)", rc, &sts[1], &r2, WANT(rp, 1504, 40, rseed + 4, 0));
        tb_free(&s1);
        tb_free(&s2);
        tb_free(&r1);
        tb_free(&r2);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

/* Matching order (non-overtaking): one sender's messages of the same and of
 * different tags, eager and not, received by specific tags and MPI_ANY_TAG in another
 * order, and by receives posted before. */
static void it_order(void)
{
    static const struct {
        int tag, n;
    } seq[7] = {{1601, N_SMALL}, {1602, N_SMALL}, {1601, N_8300}, {1602, N_8240},
                {1601, N_SMALL}, {1603, N_256K}, {1602, N_8260}};
    /* the receives: posted tag, and which message it must get */
    static const struct {
        int tag, msg;
    } order[7] = {{1602, 1}, {MPI_ANY_TAG, 0}, {1601, 2}, {MPI_ANY_TAG, 3},
                  {1603, 5}, {MPI_ANY_TAG, 4}, {MPI_ANY_TAG, 6}};
    static const int later[4] = {N_SMALL, N_8300, N_SMALL, N_8240}; /* into receives posted first */
    char what[80];
    if (lo) {
        tbuf s[7];
        MPI_Request q[7];
        MPI_Status sts[7];
        for (int i = 0; i < 7; i++) {
            tb_new(&s[i], MPI_INT, seq[i].n, 18000 + i);
            C("Isend", MPI_Isend(s[i].buf, seq[i].n, MPI_INT, peer, seq[i].tag, W, &q[i]));
        }
        MPI_Barrier(pcomm); /* all sent before any receive is posted */
        C("Waitall", MPI_Waitall(7, q, sts));
        for (int i = 0; i < 7; i++)
            tb_free(&s[i]);
        ready_wait(1619);
        for (int i = 0; i < 4; i++)
            tx("Send", W, peer, MPI_INT, later[i], i < 3 ? 1611 : 1612, 18010 + i);
    } else {
        MPI_Barrier(pcomm);
        for (int i = 0; i < 7; i++) {
            int k = order[i].msg;
            snprintf(what, sizeof what, "Recv(tag %s) gets message %d", tag_name(order[i].tag), k);
            rx(what, W, peer, MPI_INT, N_256K, order[i].tag,
               WANT(peer, seq[k].tag, nbytes_of(MPI_INT, seq[k].n), 18000 + k, 0));
        }
        tbuf r[4];
        MPI_Request q[4];
        MPI_Status sts[4];
        for (int i = 0; i < 4; i++) {
            tb_new(&r[i], MPI_INT, N_8300, -1);
            C(i < 3 ? "Irecv(tag 1611)" : "Irecv(ANY_TAG)",
              MPI_Irecv(r[i].buf, N_8300, MPI_INT, peer, i < 3 ? 1611 : MPI_ANY_TAG, W, &q[i]));
            sts[i] = fresh();
        }
        ready_send(1619);
        int rc = MPI_Waitall(4, q, sts);
        out("Waitall rc=%s", ecls(rc));
        for (int i = 0; i < 4; i++) {
            snprintf(what, sizeof what, "posted receive %d", i);
            recvd(what, rc, &sts[i], &r[i],
                  WANT(peer, i < 3 ? 1611 : 1612, nbytes_of(MPI_INT, later[i]), 18010 + i, 0));
            tb_free(&r[i]);
        }
    }
}

/* MPI_ANY_SOURCE from every other rank to rank 0: 4 messages each, the last one (tag
 * 1630) received first by its tag, then the others with MPI_ANY_TAG in their order
 * (the order between senders is not defined: the lines are printed by sender). */
static void it_any_source(void)
{
    static const int any_n[4] = {N_SMALL, N_8300, N_SMALL, N_8240};
    char what[80];
    if (me != 0) {
        tbuf s[4];
        MPI_Request q[4];
        MPI_Status sts[4];
        for (int k = 0; k < 4; k++) {
            tb_new(&s[k], MPI_INT, any_n[k], 18100 + me * 10 + k);
            C("Isend to rank 0", MPI_Isend(s[k].buf, any_n[k], MPI_INT, 0, k < 3 ? 1620 + k : 1630, W, &q[k]));
        }
        C("Waitall", MPI_Waitall(4, q, sts));
        for (int k = 0; k < 4; k++)
            tb_free(&s[k]);
        return;
    }
    char(*lines)[600] = calloc((size_t)np * 4, sizeof *lines);
    int *next = calloc((size_t)np, sizeof *next);
    for (int i = 0; i < 4 * (np - 1); i++) {
        int by_tag = i < np - 1, k;
        tbuf b;
        MPI_Status st = fresh();
        tb_new(&b, MPI_INT, N_8300, -1);
        int rc = MPI_Recv(b.buf, N_8300, MPI_INT, MPI_ANY_SOURCE, by_tag ? 1630 : MPI_ANY_TAG, W, &st);
        int src = st.MPI_SOURCE;
        if (rc != MPI_SUCCESS || src < 1 || src >= np || next[src] >= 3 || (by_tag && lines[src * 4 + 3][0])) {
            fail("Recv(ANY_SOURCE): rc %s source %d", ecls(rc), src);
            tb_free(&b);
            continue;
        }
        k = by_tag ? 3 : next[src]++;
        snprintf(what, sizeof what, "Recv(ANY_SOURCE, %s): message %d of rank %d", by_tag ? "1630" : "ANY_TAG", k,
                 src);
        recvd_line(lines[src * 4 + k], sizeof lines[0], what, rc, &st, &b,
                   WANT(src, k < 3 ? 1620 + k : 1630, nbytes_of(MPI_INT, any_n[k]), 18100 + src * 10 + k, 0));
        tb_free(&b);
    }
    for (int src = 1; src < np; src++)
        out("%s", lines[src * 4 + 3]);
    for (int src = 1; src < np; src++)
        for (int k = 0; k < 3; k++)
            out("%s", lines[src * 4 + k]);
    free(lines);
    free(next);
}

static const struct {
    const char *name;
    void (*fn)(void);
} items[] = {
    {"nothing", it_nothing},
    {"modes", it_modes},
    {"persistent", it_persistent},
    {"sendrecv", it_sendrecv},
    {"probe", it_probe},
    {"mprobe", it_mprobe},
    {"probe_proc_null", it_probe_proc_null},
    {"large_count", it_large_count},
    {"testany", it_testany},
    {"waitall", it_waitall},
    {"waitsome", it_waitsome},
    {"testall", it_testall},
    {"cancel", it_cancel},
    {"request_free", it_reqfree},
    {"get_status", it_getstatus},
    {"special", it_special},
    {"datatypes", it_datatypes},
    {"unsafe", it_unsafe},
    {"truncate", it_truncate},
    {"partial", it_partial},
    {"bsend", it_bsend},
    {"intercomm", it_intercomm},
    {"order", it_order},
    {"any_source", it_any_source},
    {"nothing_left", it_nothing},
};

/* name is one of the comma-separated names of list */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char path[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &np);
    if (np % 2) {
        if (me == 0)
            fprintf(stderr, "pb_transparency: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    peer = me ^ 1;
    lo = !(me & 1);
    MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_split(W, me / 2, me, &pcomm);
    MPI_Comm_dup(W, &tcomm);
    snprintf(path, sizeof path, "pbt.%d.log", me);
    lg = fopen(path, "w");
    if (!lg) {
        perror(path);
        MPI_Abort(W, 2);
    }
    signal(SIGALRM, stuck);
    const char *probe = getenv("PBT_EAGER");
    if (probe && !strcmp(probe, "probe")) {
        eager_probe();
        fclose(lg);
        remove(path);
        MPI_Comm_free(&pcomm);
        MPI_Comm_free(&tcomm);
        MPI_Finalize();
        return 0;
    }
    const char *only = getenv("PBT_ONLY");   /* one item, when debugging */
    const char *skip = getenv("PBT_SKIP");   /* items left out: NAME[,NAME...] */
    /* and the items the MPI library fails by itself (test/build/openmpi.sh) */
    const char *skip_lib = getenv("PBT_SKIP_LIB");
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        if ((only && strcmp(only, items[i].name)) || (skip && listed(skip, items[i].name)) ||
            (skip_lib && listed(skip_lib, items[i].name)))
            continue;
        item = items[i].name;
        alarm(ITEM_SECONDS);
        MPI_Barrier(W);
        items[i].fn();
        fflush(lg);
    }
    alarm(0);
    item = "end";
    out("%d check(s) failed", errors);
    fclose(lg);
    MPI_Comm_free(&pcomm);
    MPI_Comm_free(&tcomm);
    MPI_Finalize();
    if (errors)
        fprintf(stderr, "pb_transparency: rank %d: %d check(s) failed\n", me, errors);
    return errors ? 1 : 0;
}
