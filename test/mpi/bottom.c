/* bottom: point-to-point messages from and into MPI_BOTTOM with absolute-address
 * datatypes (MPI_Get_address + MPI_Type_create_struct, as MPICH's datatype/sendrecvt4
 * does), written per rank to bottom.RANK.log in the current directory. The tests
 * (testlist: RUN_COMPARE) run it untraced (VTRACE_MODE=off: MPICH as it is) and under
 * VTRACE_MODE=full, reduced and both, and want the logs byte for byte the same: return
 * codes, a checksum of the received data, status source and tag, MPI_Get_count in the
 * datatype and in bytes, MPI_Get_elements, probe counts.
 *
 * Three sizes: tiny and small payloads, which the layer packs together with its header
 * (below VT_PB_PACK_MAX, 8256 bytes: on the stack, and in a scratch buffer), and large
 * ones, which it sends with a struct datatype over MPI_BOTTOM. Every form of the
 * piggyback path: blocking sends in the four modes, their non-blocking and persistent
 * forms (persistent ones started twice, the data changed in between), MPI_Recv, Irecv,
 * Recv_init, MPI_Sendrecv, Sendrecv_replace, Probe, Iprobe, Mprobe + Mrecv, Improbe +
 * Imrecv, a contiguous absolute-address type (one hindexed block), and an absolute type
 * on one side with an ordinary buffer and a relative type of the same signature on the
 * other.
 *
 * The program checks itself too (exit status 1, the reason on standard error): the data
 * received against what was sent, the guard bytes around every array untouched. */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITEMLOG_PROGRAM "bottom"
#include "itemlog.h"

#define W MPI_COMM_WORLD
#define GUARD 32        /* bytes before and after every array, which must stay untouched */
#define GUARD_BYTE 0xa5
#define ITEM_SECONDS 60

static int peer;

/* ------------------------------------------------------------------ output */

/* An MPI error's text, on standard error (the log has the code). */
static int said(int rc)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "bottom: rank %d: %s: %s\n", me, item, text);
    }
    return rc;
}

static void stuck(int sig)
{
    static const char msg[] = "bottom: no progress for 60 s (see the last item in bottom.RANK.log)\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(3);
}

/* ------------------------------------------------------------------ areas */

/* The memory an absolute datatype describes: three arrays, apart from each other, each
 * with guard bytes on both sides. */
typedef struct area {
    int *a;
    double *d;
    char *c;
    int na, nd, nc;
    MPI_Datatype abs;       /* struct {a, d, c} at their absolute addresses */
    MPI_Datatype rel;       /* the same from a (an ordinary buffer) */
    MPI_Datatype contig;    /* hindexed: the ints alone, one block at its absolute address */
    int bytes;              /* payload of abs */
} area;

static void *guarded(size_t bytes)
{
    unsigned char *p = malloc(bytes + 2 * GUARD);
    if (!p) {
        fprintf(stderr, "bottom: out of memory\n");
        MPI_Abort(W, 2);
    }
    memset(p, GUARD_BYTE, bytes + 2 * GUARD);
    return p + GUARD;
}

static void unguard(void *p) { free((unsigned char *)p - GUARD); }

static void area_make(area *x, int na, int nd, int nc)
{
    x->na = na, x->nd = nd, x->nc = nc;
    x->a = guarded((size_t)na * sizeof(int));
    x->d = guarded((size_t)nd * sizeof(double));
    x->c = guarded((size_t)nc);
    int bl[3] = {na, nd, nc};
    MPI_Aint disp[3], base;
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Get_address(x->a, &disp[0]);
    MPI_Get_address(x->d, &disp[1]);
    MPI_Get_address(x->c, &disp[2]);
    MPI_Type_create_struct(3, bl, disp, ty, &x->abs);
    MPI_Type_commit(&x->abs);
    base = disp[0];
    for (int i = 0; i < 3; i++)
        disp[i] = MPI_Aint_diff(disp[i], base);
    MPI_Type_create_struct(3, bl, disp, ty, &x->rel);
    MPI_Type_commit(&x->rel);
    MPI_Aint at;
    MPI_Get_address(x->a, &at);
    MPI_Type_create_hindexed(1, &na, &at, MPI_INT, &x->contig);
    MPI_Type_commit(&x->contig);
    MPI_Type_size(x->abs, &x->bytes);
}

static void area_free(area *x)
{
    MPI_Type_free(&x->abs);
    MPI_Type_free(&x->rel);
    MPI_Type_free(&x->contig);
    unguard(x->a);
    unguard(x->d);
    unguard(x->c);
}

static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* The data of seed: what a sender writes and a receiver expects. */
static void fill(area *x, unsigned seed)
{
    uint32_t s = seed * 2654435761u + 1;
    for (int i = 0; i < x->na; i++)
        x->a[i] = (int)next(&s);
    for (int i = 0; i < x->nd; i++)
        x->d[i] = (double)(next(&s) % 1000000) / 8;
    for (int i = 0; i < x->nc; i++)
        x->c[i] = (char)next(&s);
}

static void clear(area *x)
{
    memset(x->a, 0, (size_t)x->na * sizeof(int));
    memset(x->d, 0, (size_t)x->nd * sizeof(double));
    memset(x->c, 0, (size_t)x->nc);
}

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* A checksum of the three arrays with their guards. */
static uint32_t sum(const area *x)
{
    uint32_t h = 2166136261u;
    h = fnv(h, (const char *)x->a - GUARD, (size_t)x->na * sizeof(int) + 2 * GUARD);
    h = fnv(h, (const char *)x->d - GUARD, (size_t)x->nd * sizeof(double) + 2 * GUARD);
    h = fnv(h, x->c - GUARD, (size_t)x->nc + 2 * GUARD);
    return h;
}

static int guards_ok(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < GUARD; i++)
        if (b[-1 - (long)i] != GUARD_BYTE || b[n + i] != GUARD_BYTE)
            return 0;
    return 1;
}

/* Checks that x holds seed's data (only its ints when ints_only). */
static void expect(const area *x, unsigned seed, int ints_only)
{
    area want = *x;
    want.a = malloc((size_t)x->na * sizeof(int) + 1);
    want.d = malloc((size_t)x->nd * sizeof(double) + 1);
    want.c = malloc((size_t)x->nc + 1);
    fill(&want, seed);
    if (memcmp(want.a, x->a, (size_t)x->na * sizeof(int)))
        fail("the ints received are not the ones sent (seed %u)", seed);
    if (!ints_only && memcmp(want.d, x->d, (size_t)x->nd * sizeof(double)))
        fail("the doubles received are not the ones sent (seed %u)", seed);
    if (!ints_only && memcmp(want.c, x->c, (size_t)x->nc))
        fail("the chars received are not the ones sent (seed %u)", seed);
    if (ints_only) {
        for (int i = 0; i < x->nd; i++)
            if (x->d[i] != 0)
                fail("double %d was written by a receive of the ints alone", i);
    }
    if (!guards_ok(x->a, (size_t)x->na * sizeof(int)) || !guards_ok(x->d, (size_t)x->nd * sizeof(double)) ||
        !guards_ok(x->c, (size_t)x->nc))
        fail("a guard byte was overwritten");
    free(want.a);
    free(want.d);
    free(want.c);
}

/* What the receiver sees: return code, data checksum, status, counts. */
static void seen(const char *what, int rc, const area *x, const MPI_Status *st, MPI_Datatype type)
{
    int count = -1, bytes = -1, elements = -1;
    MPI_Get_count(st, type, &count);
    MPI_Get_count(st, MPI_BYTE, &bytes);
    MPI_Get_elements(st, type, &elements);
    out("%s rc=%d sum=%08x source=%d tag=%d count=%d bytes=%d elements=%d", what, said(rc), (unsigned)sum(x),
        st->MPI_SOURCE, st->MPI_TAG, count, bytes, elements);
}

static void probed(const char *what, int rc, int flag, const MPI_Status *st)
{
    int bytes = -1;
    MPI_Get_count(st, MPI_BYTE, &bytes);
    out("%s rc=%d flag=%d source=%d tag=%d bytes=%d", what, said(rc), flag, st->MPI_SOURCE, st->MPI_TAG, bytes);
}

/* ------------------------------------------------------------------ items */

enum { TINY, SMALL, LARGE, NSIZES };
static const char *const size_name[NSIZES] = {"tiny", "small", "large"};
static area snd[NSIZES], rcv[NSIZES];
static unsigned seed_no = 1;

static const char *const mode_name[4] = {"send", "ssend", "bsend", "rsend"};

static int send_mode(int mode, const void *buf, int n, MPI_Datatype t, int dest, int tag)
{
    switch (mode) {
    case 1: return MPI_Ssend(buf, n, t, dest, tag, W);
    case 2: return MPI_Bsend(buf, n, t, dest, tag, W);
    case 3: return MPI_Rsend(buf, n, t, dest, tag, W);
    default: return MPI_Send(buf, n, t, dest, tag, W);
    }
}

static int isend_mode(int mode, const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Request *r)
{
    switch (mode) {
    case 1: return MPI_Issend(buf, n, t, dest, tag, W, r);
    case 2: return MPI_Ibsend(buf, n, t, dest, tag, W, r);
    case 3: return MPI_Irsend(buf, n, t, dest, tag, W, r);
    default: return MPI_Isend(buf, n, t, dest, tag, W, r);
    }
}

static int send_init_mode(int mode, const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Request *r)
{
    switch (mode) {
    case 1: return MPI_Ssend_init(buf, n, t, dest, tag, W, r);
    case 2: return MPI_Bsend_init(buf, n, t, dest, tag, W, r);
    case 3: return MPI_Rsend_init(buf, n, t, dest, tag, W, r);
    default: return MPI_Send_init(buf, n, t, dest, tag, W, r);
    }
}

/* Blocking sends in each mode, rank 0 to rank 1 (MPI_Recv; MPI_Irecv posted before a
 * barrier for ready sends). */
static void blocking(int z)
{
    for (int mode = 0; mode < 4; mode++) {
        unsigned seed = seed_no++;
        int tag = (int)seed;
        if (me == 0) {
            fill(&snd[z], seed);
            if (mode == 3)
                MPI_Barrier(W);
            int rc = send_mode(mode, MPI_BOTTOM, 1, snd[z].abs, 1, tag);
            out("%s %s rc=%d", mode_name[mode], size_name[z], said(rc));
        } else {
            MPI_Status st;
            int rc;
            clear(&rcv[z]);
            if (mode == 3) {
                MPI_Request r;
                rc = MPI_Irecv(MPI_BOTTOM, 1, rcv[z].abs, 0, tag, W, &r);
                MPI_Barrier(W);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, &st);
            } else {
                rc = MPI_Recv(MPI_BOTTOM, 1, rcv[z].abs, 0, tag, W, &st);
            }
            seen(mode == 3 ? "irecv" : "recv", rc, &rcv[z], &st, rcv[z].abs);
            expect(&rcv[z], seed, 0);
        }
    }
}

/* Non-blocking sends in each mode, MPI_Irecv + MPI_Wait. */
static void nonblocking(int z)
{
    for (int mode = 0; mode < 4; mode++) {
        unsigned seed = seed_no++;
        int tag = (int)seed;
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status st;
        int rc;
        if (me == 0) {
            fill(&snd[z], seed);
            if (mode == 3)
                MPI_Barrier(W);
            rc = isend_mode(mode, MPI_BOTTOM, 1, snd[z].abs, 1, tag, &r);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, &st);
            out("i%s %s rc=%d", mode_name[mode], size_name[z], said(rc));
        } else {
            clear(&rcv[z]);
            rc = MPI_Irecv(MPI_BOTTOM, 1, rcv[z].abs, 0, tag, W, &r);
            if (mode == 3)
                MPI_Barrier(W);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, &st);
            seen("irecv", rc, &rcv[z], &st, rcv[z].abs);
            expect(&rcv[z], seed, 0);
        }
    }
}

/* Persistent sends in each mode and MPI_Recv_init, each started twice with other data:
 * a started send must send what the buffer holds at MPI_Start. */
static void persistent(int z)
{
    for (int mode = 0; mode < 4; mode++) {
        unsigned seed0 = seed_no;
        int tag = (int)seed0;
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status st;
        int rc;
        seed_no += 2;
        if (me == 0)
            rc = send_init_mode(mode, MPI_BOTTOM, 1, snd[z].abs, 1, tag, &r);
        else
            rc = MPI_Recv_init(MPI_BOTTOM, 1, rcv[z].abs, 0, tag, W, &r);
        out("%s_init %s rc=%d", me == 0 ? mode_name[mode] : "recv", size_name[z], said(rc));
        for (unsigned round = 0; round < 2 && rc == MPI_SUCCESS; round++) {
            if (me == 0) {
                fill(&snd[z], seed0 + round);
                if (mode == 3)
                    MPI_Barrier(W);
                rc = MPI_Start(&r);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, &st);
                out("start %u rc=%d", round, said(rc));
            } else {
                clear(&rcv[z]);
                rc = MPI_Start(&r);
                if (mode == 3)
                    MPI_Barrier(W);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, &st);
                seen("start+wait", rc, &rcv[z], &st, rcv[z].abs);
                expect(&rcv[z], seed0 + round, 0);
            }
        }
        if (r != MPI_REQUEST_NULL)
            MPI_Request_free(&r);
    }
}

/* Both ranks at once: MPI_Sendrecv from and into MPI_BOTTOM, then MPI_Sendrecv_replace. */
static void exchanges(int z)
{
    unsigned seed = seed_no;
    seed_no += 4;
    MPI_Status st;
    fill(&snd[z], seed + (unsigned)me);
    clear(&rcv[z]);
    int rc = MPI_Sendrecv(MPI_BOTTOM, 1, snd[z].abs, peer, 1, MPI_BOTTOM, 1, rcv[z].abs, peer, 1, W, &st);
    seen("sendrecv", rc, &rcv[z], &st, rcv[z].abs);
    expect(&rcv[z], seed + (unsigned)peer, 0);

    fill(&rcv[z], seed + 2 + (unsigned)me);
    rc = MPI_Sendrecv_replace(MPI_BOTTOM, 1, rcv[z].abs, peer, 2, peer, 2, W, &st);
    seen("sendrecv_replace", rc, &rcv[z], &st, rcv[z].abs);
    expect(&rcv[z], seed + 2 + (unsigned)peer, 0);
}

/* Rank 1 finds the message with a probe first (from any source, with any tag): MPI_Probe +
 * Recv, MPI_Iprobe + Recv, MPI_Mprobe + Mrecv, MPI_Improbe + Imrecv. */
static void probes(int z)
{
    static const char *const how[4] = {"probe", "iprobe", "mprobe", "improbe"};
    for (int k = 0; k < 4; k++) {
        unsigned seed = seed_no++;
        int tag = (int)seed;
        if (me == 0) {
            fill(&snd[z], seed);
            int rc = MPI_Send(MPI_BOTTOM, 1, snd[z].abs, 1, tag, W);
            out("send %s rc=%d", size_name[z], said(rc));
            continue;
        }
        MPI_Status st;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Request r;
        int rc, flag = 0;
        clear(&rcv[z]);
        switch (k) {
        case 0: rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st), flag = 1; break;
        case 1:
            do
                rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &flag, &st);
            while (rc == MPI_SUCCESS && !flag);
            break;
        case 2: rc = MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &msg, &st), flag = 1; break;
        default:
            do
                rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &flag, &msg, &st);
            while (rc == MPI_SUCCESS && !flag);
            break;
        }
        probed(how[k], rc, flag, &st);
        if (rc != MPI_SUCCESS)
            continue;
        switch (k) {
        case 0:
        case 1: rc = MPI_Recv(MPI_BOTTOM, 1, rcv[z].abs, st.MPI_SOURCE, st.MPI_TAG, W, &st); break;
        case 2: rc = MPI_Mrecv(MPI_BOTTOM, 1, rcv[z].abs, &msg, &st); break;
        default:
            rc = MPI_Imrecv(MPI_BOTTOM, 1, rcv[z].abs, &msg, &r);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, &st);
            break;
        }
        seen(k < 2 ? "recv" : k == 2 ? "mrecv" : "imrecv+wait", rc, &rcv[z], &st, rcv[z].abs);
        expect(&rcv[z], seed, 0);
    }
}

/* An absolute type on one side only: from MPI_BOTTOM into an ordinary buffer with a
 * relative type of the same signature, and back. */
static void mixed(int z)
{
    for (int dir = 0; dir < 2; dir++) {
        unsigned seed = seed_no++;
        int tag = (int)seed;
        MPI_Status st;
        int rc;
        if (me == 0) {
            fill(&snd[z], seed);
            rc = dir ? MPI_Send(snd[z].a, 1, snd[z].rel, 1, tag, W) : MPI_Send(MPI_BOTTOM, 1, snd[z].abs, 1, tag, W);
            out("send %s from %s rc=%d", size_name[z], dir ? "a buffer" : "MPI_BOTTOM", said(rc));
        } else {
            clear(&rcv[z]);
            rc = dir ? MPI_Recv(MPI_BOTTOM, 1, rcv[z].abs, 0, tag, W, &st)
                     : MPI_Recv(rcv[z].a, 1, rcv[z].rel, 0, tag, W, &st);
            seen(dir ? "recv into MPI_BOTTOM" : "recv into a buffer", rc, &rcv[z], &st, rcv[z].abs);
            expect(&rcv[z], seed, 0);
        }
    }
}

/* A contiguous absolute type (the ints alone, one hindexed block): blocking, then
 * non-blocking. */
static void contiguous(int z)
{
    for (int nb = 0; nb < 2; nb++) {
        unsigned seed = seed_no++;
        int tag = (int)seed;
        MPI_Status st;
        MPI_Request r;
        int rc;
        if (me == 0) {
            fill(&snd[z], seed);
            rc = nb ? MPI_Isend(MPI_BOTTOM, 1, snd[z].contig, 1, tag, W, &r)
                    : MPI_Send(MPI_BOTTOM, 1, snd[z].contig, 1, tag, W);
            if (nb && rc == MPI_SUCCESS)
                rc = MPI_Wait(&r, &st);
            out("%s %s rc=%d", nb ? "isend" : "send", size_name[z], said(rc));
        } else {
            clear(&rcv[z]);
            if (nb) {
                rc = MPI_Irecv(MPI_BOTTOM, 1, rcv[z].contig, 0, tag, W, &r);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, &st);
            } else {
                rc = MPI_Recv(MPI_BOTTOM, 1, rcv[z].contig, 0, tag, W, &st);
            }
            seen(nb ? "irecv" : "recv", rc, &rcv[z], &st, rcv[z].contig);
            expect(&rcv[z], seed, 1);
        }
    }
}

static const struct {
    const char *name;
    void (*fn)(int size);
} items[] = {
    {"blocking", blocking}, {"nonblocking", nonblocking}, {"persistent", persistent}, {"exchanges", exchanges},
    {"probes", probes},     {"mixed", mixed},             {"contiguous", contiguous},
};

int main(int argc, char **argv)
{
    char path[64];
    int np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &np);
    if (np != 2) {
        if (me == 0)
            fprintf(stderr, "bottom: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    peer = 1 - me;
    MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN);
    snprintf(path, sizeof path, "bottom.%d.log", me);
    lg = fopen(path, "w");
    if (!lg) {
        perror(path);
        MPI_Abort(W, 2);
    }
    setvbuf(lg, NULL, _IOLBF, 0);   /* a hang shows where */
    signal(SIGALRM, stuck);
    /* tiny: on the layer's stack stage; small: packed, in its scratch buffer; large: its
     * struct datatype (payload bytes: 33, 4007, 80013) */
    area_make(&snd[TINY], 3, 2, 5);
    area_make(&rcv[TINY], 3, 2, 5);
    area_make(&snd[SMALL], 500, 250, 7);
    area_make(&rcv[SMALL], 500, 250, 7);
    area_make(&snd[LARGE], 10000, 5000, 13);
    area_make(&rcv[LARGE], 10000, 5000, 13);
    for (int z = 0; z < NSIZES; z++) {
        item = "sizes";
        out("%s: %d bytes", size_name[z], snd[z].bytes);
    }
    /* buffered sends: up to two messages of each size pending at once */
    int pack = 0, bsize = 0;
    for (int z = 0; z < NSIZES; z++) {
        MPI_Pack_size(1, snd[z].abs, W, &pack);
        bsize += 2 * (pack + MPI_BSEND_OVERHEAD);
    }
    char *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    /* one item, or one item of one size ("probes large"), when debugging */
    const char *only = getenv("BOTTOM_ONLY");
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        for (int z = 0; z < NSIZES; z++) {
            char name[64];
            snprintf(name, sizeof name, "%s %s", items[i].name, size_name[z]);
            if (only && strcmp(only, items[i].name) && strcmp(only, name))
                continue;
            item = name;
            alarm(ITEM_SECONDS);
            MPI_Barrier(W);
            items[i].fn(z);
            fflush(lg);
        }
    }
    alarm(0);
    item = "end";
    void *b;
    int n;
    MPI_Buffer_detach(&b, &n);
    free(bbuf);
    for (int z = 0; z < NSIZES; z++) {
        area_free(&snd[z]);
        area_free(&rcv[z]);
    }
    out("%d check(s) failed", errors);
    fclose(lg);
    MPI_Finalize();
    if (errors)
        fprintf(stderr, "bottom: rank %d: %d check(s) failed\n", me, errors);
    return errors ? 1 : 0;
}
