/* A synthetic trace: 3 ranks exchanging every kind of point-to-point message the
 * matcher knows (Send/Recv, Isend+Waitall, Irecv+Wait(all), a cancelled Irecv,
 * Sendrecv, persistent Send_init/Recv_init with Start/Startall, Mprobe+Mrecv,
 * MPI_PROC_NULL, a split communicator), collectives, file I/O, FLUSH and MARKER
 * records, written with codec.h and blockio.c exactly as the format says. */
#include "vt_config.h"
#include "synth.h"
#include "format/blockio.h"
#include "format/commid.h"
#include "format/evcols.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR SYNTH_NRANKS
#define SPLIT_ID 0x9e3779b97f4a7c15ull

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void b_room(bytes *b, size_t more)
{
    if (b->n + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        abort();
    b->cap = cap;
}
static void b_uvar(bytes *b, uint64_t v)
{
    b_room(b, VT_UVAR_MAX);
    b->n = (size_t)(vt_put_uvar(b->p + b->n, v) - b->p);
}
static void b_svar(bytes *b, int64_t v) { b_uvar(b, vt_zigzag(v)); }
static void b_u8(bytes *b, uint8_t v)
{
    b_room(b, 1);
    b->p[b->n++] = v;
}
static void b_str(bytes *b, const char *s)
{
    size_t len = strlen(s);
    b_room(b, len + VT_UVAR_MAX);
    b->n = (size_t)(vt_put_str(b->p + b->n, s, len) - b->p);
}

/* ------------------------------------------------------------------ function table */

static const char *const fnames[][2] = {
    {"MPI_Init", ""},           {"MPI_Finalize", ""},         {"MPI_Send", "cptb"},        {"MPI_Recv", "cPTB"},
    {"MPI_Isend", "cptbr"},     {"MPI_Irecv", "cr"},          {"MPI_Wait", "k"},           {"MPI_Waitall", "k"},
    {"MPI_Sendrecv", "cptbPTB"}, {"MPI_Bcast", "cobBq"},      {"MPI_Mprobe", "cPTBm"},     {"MPI_Mrecv", "PTBm"},
    {"MPI_Comm_split", "cnq"},  {"MPI_Send_init", "cptbr"},   {"MPI_Recv_init", "cr"},     {"MPI_Start", "R"},
    {"MPI_Startall", "R"},      {"MPI_File_write_at", "fOb"}, {"MPI_Probe", "cPT"},        {"MPI_Comm_rank", ""},
    {"MPI_Allreduce", "cbBq"},
};
#define NFN (sizeof fnames / sizeof fnames[0])

typedef struct compl {
    uint64_t req, flags;
    int64_t peer, tag;
    uint64_t bytes;
} compl;

/* Field values of one call; the layout decides which are written. */
typedef struct fv {
    uint64_t site;
    int64_t c, n, p, t, b, P, T, B, o, q, r, m, f, O;
    int nR;
    uint64_t R[4];
    int nk;
    compl k[4];
} fv;

typedef struct prof {
    uint64_t calls, time, bytes, records;
} prof;

typedef struct rb {
    int rank;
    int fd;
    int zstd;
    int cols;
    const char *layouts[NFN]; /* by function id, for packing */
    int per_block;
    int order[NFN]; /* function id of table entry i -> index into fnames */
    int id_of[NFN]; /* fnames index -> function id */
    bytes blk;      /* current EVENTS payload */
    uint32_t inblk;
    uint64_t nrec;
    int64_t now, prev;
    int64_t first_enter, last_exit;
    prof pr[NFN];
    int err;
} rb;

static void flush_block(rb *w)
{
    if (w->inblk == 0)
        return;
    if (w->cols) {
        vt_evcols_funcs fn = {w->layouts, NFN};
        uint8_t *packed;
        size_t plen;
        char msg[256];
        if (vt_evcols_pack(w->blk.p, w->blk.n, w->inblk, &fn, &packed, &plen, msg, sizeof msg) ||
            vt_block_write(w->fd, VT_BLOCK_EVENTS_COLS, packed, plen, w->inblk, w->zstd))
            w->err = 1;
        else
            free(packed);
    } else if (vt_block_write(w->fd, VT_BLOCK_EVENTS, w->blk.p, w->blk.n, w->inblk, w->zstd)) {
        w->err = 1;
    }
    w->blk.n = 0;
    w->inblk = 0;
}

/* Starts a record at now + gap lasting dur; returns with the common part written. */
static void rec_begin(rb *w, uint64_t code, int64_t gap, int64_t dur)
{
    if (w->inblk == 0) {
        b_uvar(&w->blk, w->nrec);
        b_svar(&w->blk, w->now);
        w->prev = w->now;
    }
    int64_t enter = w->now + gap, exit_ = enter + dur;
    if (w->nrec == 0)
        w->first_enter = enter;
    w->last_exit = exit_;
    b_uvar(&w->blk, code);
    b_svar(&w->blk, enter - w->prev);
    b_uvar(&w->blk, (uint64_t)(exit_ - enter));
    w->prev = w->now = exit_;
}

static void rec_end(rb *w)
{
    w->inblk++;
    w->nrec++;
    if (w->inblk >= (uint32_t)w->per_block)
        flush_block(w);
}

static int fn_index(const char *name)
{
    for (size_t i = 0; i < NFN; i++)
        if (strcmp(fnames[i][0], name) == 0)
            return (int)i;
    abort();
}

static void call(rb *w, const char *name, int64_t gap, int64_t dur, fv v)
{
    int fi = fn_index(name);
    int id = w->id_of[fi];
    rec_begin(w, VT_CODE_FIRST_FN + (uint64_t)id, gap, dur);
    b_uvar(&w->blk, v.site);
    uint64_t bytes_ = 0;
    for (const char *l = fnames[fi][1]; *l; l++) {
        switch (*l) {
        case 'c': b_uvar(&w->blk, (uint64_t)v.c); break;
        case 'n': b_svar(&w->blk, v.n); break;
        case 'p': b_svar(&w->blk, v.p); break;
        case 't': b_svar(&w->blk, v.t); break;
        case 'b': b_uvar(&w->blk, (uint64_t)v.b); bytes_ += (uint64_t)v.b; break;
        case 'P': b_svar(&w->blk, v.P); break;
        case 'T': b_svar(&w->blk, v.T); break;
        case 'B': b_uvar(&w->blk, (uint64_t)v.B); bytes_ += (uint64_t)v.B; break;
        case 'o': b_svar(&w->blk, v.o); break;
        case 'q': b_uvar(&w->blk, (uint64_t)v.q); break;
        case 'r': b_uvar(&w->blk, (uint64_t)v.r); break;
        case 'R':
            b_uvar(&w->blk, (uint64_t)v.nR);
            for (int i = 0; i < v.nR; i++)
                b_uvar(&w->blk, v.R[i]);
            break;
        case 'k':
            b_uvar(&w->blk, (uint64_t)v.nk);
            for (int i = 0; i < v.nk; i++) {
                b_uvar(&w->blk, v.k[i].req);
                b_uvar(&w->blk, v.k[i].flags);
                b_svar(&w->blk, v.k[i].peer);
                b_svar(&w->blk, v.k[i].tag);
                b_uvar(&w->blk, v.k[i].bytes);
                bytes_ += v.k[i].bytes;
            }
            break;
        case 'm': b_uvar(&w->blk, (uint64_t)v.m); break;
        case 'f': b_uvar(&w->blk, (uint64_t)v.f); break;
        case 'O': b_svar(&w->blk, v.O); break;
        default: abort();
        }
    }
    prof *p = &w->pr[fi];
    p->calls++;
    p->time += (uint64_t)dur;
    p->bytes += bytes_;
    p->records++;
    rec_end(w);
}

static void special(rb *w, uint64_t code, int64_t gap, int64_t dur, uint64_t a, int64_t b)
{
    rec_begin(w, code, gap, dur);
    if (code == VT_CODE_MARKER) {
        b_uvar(&w->blk, a);
        b_svar(&w->blk, b);
    } else if (code == VT_CODE_STOPPED) {
        b_uvar(&w->blk, a);
    }
    rec_end(w);
}

#define C(...) ((fv){__VA_ARGS__})
#define RECV 1u
#define CANC 2u
#define PERS 8u

/* The events of each rank. */
static void rank0(rb *w)
{
    call(w, "MPI_Init", 0, 5000, C(.site = 0));
    call(w, "MPI_Send", 100, 300, C(.site = 0, .c = 0, .p = 1, .t = 5, .b = 80));
    call(w, "MPI_Isend", 50, 40, C(.site = 0, .c = 0, .p = 2, .t = 7, .b = 16, .r = 1));
    call(w, "MPI_Irecv", 10, 20, C(.site = 0, .c = 0, .r = 2));
    call(w, "MPI_Waitall", 30, 900,
         C(.site = 1, .nk = 2, .k = {{1, 0, 2, 7, 16}, {2, RECV, 1, 9, 8}}));
    call(w, "MPI_Sendrecv", 200, 400, C(.site = 0, .c = 0, .p = 1, .t = 3, .b = 4, .P = 1, .T = 4, .B = 4));
    call(w, "MPI_Bcast", 100, 250, C(.site = 0, .c = 0, .o = 0, .b = 100, .B = 0, .q = 0));
    special(w, VT_CODE_FLUSH, 10, 2000, 0, 0);
    call(w, "MPI_Mprobe", 100, 700, C(.site = 0, .c = 0, .P = 2, .T = 11, .B = 12, .m = 1));
    call(w, "MPI_Mrecv", 10, 30, C(.site = 0, .P = 2, .T = 11, .B = 12, .m = 1));
    call(w, "MPI_Comm_split", 100, 600, C(.site = 0, .c = 0, .n = 2, .q = 1));
    call(w, "MPI_Send", 100, 200, C(.site = 0, .c = 2, .p = 2, .t = 0, .b = 8));
    call(w, "MPI_Send_init", 50, 10, C(.site = 0, .c = 0, .p = 1, .t = 21, .b = 40, .r = 3));
    call(w, "MPI_Start", 10, 10, C(.site = 0, .nR = 1, .R = {3}));
    call(w, "MPI_Wait", 10, 100, C(.site = 1, .nk = 1, .k = {{3, PERS, 1, 21, 40}}));
    call(w, "MPI_Start", 10, 10, C(.site = 0, .nR = 1, .R = {3}));
    call(w, "MPI_Wait", 10, 100, C(.site = 1, .nk = 1, .k = {{3, PERS, 1, 21, 40}}));
    call(w, "MPI_File_write_at", 100, 3000, C(.site = 0, .f = 0, .O = 1024, .b = 64));
    special(w, VT_CODE_MARKER, 5, 0, 1, 1);
    call(w, "MPI_Send", 10, 5, C(.site = 0, .c = 0, .p = VT_PEER_PROC_NULL, .t = 0, .b = 0));
}

static void rank1(rb *w, int unmatched)
{
    call(w, "MPI_Init", 0, 4000, C(.site = 0));
    if (!unmatched)
        call(w, "MPI_Recv", 500, 800, C(.site = 0, .c = 0, .P = 0, .T = 5, .B = 80));
    call(w, "MPI_Send", 100, 100, C(.site = 0, .c = 0, .p = 0, .t = 9, .b = 8));
    call(w, "MPI_Sendrecv", 100, 500, C(.site = 0, .c = 0, .p = 0, .t = 4, .b = 4, .P = 0, .T = 3, .B = 4));
    call(w, "MPI_Bcast", 100, 300, C(.site = 0, .c = 0, .o = 0, .b = 0, .B = 100, .q = 0));
    call(w, "MPI_Recv_init", 50, 10, C(.site = 0, .c = 0, .r = 1));
    call(w, "MPI_Startall", 10, 10, C(.site = 0, .nR = 1, .R = {1}));
    call(w, "MPI_Wait", 10, 300, C(.site = 1, .nk = 1, .k = {{1, RECV | PERS, 0, 21, 40}}));
    call(w, "MPI_Start", 10, 10, C(.site = 0, .nR = 1, .R = {1}));
    call(w, "MPI_Wait", 10, 300, C(.site = 1, .nk = 1, .k = {{1, RECV | PERS, 0, 21, 40}}));
    call(w, "MPI_Probe", 100, 400, C(.site = 0, .c = 0, .P = 2, .T = 13));
    call(w, "MPI_Recv", 10, 50, C(.site = 0, .c = 0, .P = 2, .T = 13, .B = 4));
    call(w, "MPI_Comm_split", 100, 600, C(.site = 0, .c = 0, .n = -1, .q = 1));
}

static void rank2(rb *w)
{
    call(w, "MPI_Init", 0, 6000, C(.site = 0));
    call(w, "MPI_Irecv", 100, 20, C(.site = 0, .c = 0, .r = 1));
    call(w, "MPI_Irecv", 10, 20, C(.site = 0, .c = 0, .r = 2));
    call(w, "MPI_Wait", 10, 700, C(.site = 0, .nk = 1, .k = {{1, RECV, 0, 7, 16}}));
    call(w, "MPI_Wait", 10, 70, C(.site = 0, .nk = 1, .k = {{2, RECV | CANC, VT_PEER_UNKNOWN, 0, 0}}));
    call(w, "MPI_Bcast", 100, 200, C(.site = 0, .c = 0, .o = 0, .b = 0, .B = 100, .q = 0));
    call(w, "MPI_Send", 100, 100, C(.site = 0, .c = 0, .p = 0, .t = 11, .b = 12));
    call(w, "MPI_Send", 10, 100, C(.site = 0, .c = 0, .p = 1, .t = 13, .b = 4));
    call(w, "MPI_Comm_split", 100, 600, C(.site = 0, .c = 0, .n = 2, .q = 1));
    call(w, "MPI_Recv", 100, 300, C(.site = 0, .c = 2, .P = 0, .T = 0, .B = 8));
}

/* Every rank: a few allreduces (compressible), then MPI_Finalize. */
static void common_tail(rb *w)
{
    for (int i = 0; i < 12; i++)
        call(w, "MPI_Allreduce", 100, 150 + 10 * i, C(.site = 0, .c = 0, .b = 8, .B = 8, .q = 2 + i));
    call(w, "MPI_Finalize", 50, 1000, C(.site = 0));
}

/* ------------------------------------------------------------------ files */

static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errbuf && errlen)
        vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int open_out(const char *dir, const char *name, char *errbuf, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(errbuf, errlen, "%s: %s", path, strerror(errno));
    return fd;
}

static const int64_t start_time[NR] = {2000, 1000, 3000};
static const char *const host[NR] = {"node0", "node1", "node0"};

/* The dictionary of o->shared: what the ranks' RANKDEFS share. */
static const char shared_dict[] = "mainsynth.cnode0node1node2MPI_COMM_WORLDworldself0-5";

static int write_rank(const char *dir, int rank, const synth_opts *o, char *errbuf, size_t errlen)
{
    char name[32];
    snprintf(name, sizeof name, "rank-%06d.vte", rank);
    rb w;
    memset(&w, 0, sizeof w);
    w.rank = rank;
    w.zstd = o->zstd_level;
    w.per_block = o->records_per_block > 0 ? o->records_per_block : 8;
    w.now = start_time[rank];
    for (size_t i = 0; i < NFN; i++) {
        /* rank 2 lists the functions in reverse order: tables are per rank */
        w.order[i] = rank == 2 ? (int)(NFN - 1 - i) : (int)i;
        w.id_of[w.order[i]] = (int)i;
        w.layouts[i] = fnames[w.order[i]][1];
    }
    w.cols = o->cols;
    w.fd = open_out(dir, name, errbuf, errlen);
    if (w.fd < 0)
        return -1;
    bytes b = {0};
    if (vt_file_header_write(w.fd, VT_MAGIC_RANK, (uint32_t)rank))
        w.err = 1;

    /* FUNCS; with o->cols (format 1.3) a first block naming nothing, then one naming the
     * table (more FUNCS blocks, before the blocks that use them) */
    const char *names[NFN], *layouts[NFN];
    for (size_t i = 0; i < NFN; i++) {
        names[i] = fnames[w.order[i]][0];
        layouts[i] = fnames[w.order[i]][1];
    }
    if (o->shared && rank < 2) {
        /* no FUNCS block: the trace's, in vtrace.defs (1.5) */
    } else if (o->cols) {
        static const uint8_t none[NFN];
        if (vt_funcs_block_write(w.fd, names, layouts, NFN, none, 1, o->zstd_level) ||
            vt_funcs_block_write(w.fd, names, layouts, NFN, NULL, 1, o->zstd_level))
            w.err = 1;
    } else {
        b_uvar(&b, NFN);
        for (size_t i = 0; i < NFN; i++) {
            b_str(&b, names[i]);
            b_str(&b, layouts[i]);
        }
        if (vt_block_write(w.fd, VT_BLOCK_FUNCS, b.p, b.n, 0, o->zstd_level))
            w.err = 1;
    }

    /* EVENTS */
    if (rank == 0)
        rank0(&w);
    else if (rank == 1)
        rank1(&w, o->unmatched);
    else
        rank2(&w);
    common_tail(&w);
    flush_block(&w);

    /* RANKDEFS */
    b.n = 0;
    if (rank != 1) {
        /* rank 0: its call sites follow the module table (1.6); rank 2 has none */
        b_uvar(&b, 0);
    } else {
        /* rank 1: the list of 1.0 (as a reduced or compensated 1.5 trace keeps it) */
        b_uvar(&b, 2);
        b_uvar(&b, 0x401234);
        b_str(&b, "/usr/bin/app");
        b_uvar(&b, 0x1234);
        b_str(&b, "main");
        b_uvar(&b, 0x7f0000005678ull);
        b_str(&b, "/usr/lib/libfoo.so");
        b_uvar(&b, 0x5678);
        b_str(&b, "");
    }
    int ncomms = rank == 1 ? 2 : 3;
    b_uvar(&b, (uint64_t)ncomms);
    /* world; with o->cols (format 1.3's compact lists, doc/format.md) a range */
    const uint64_t compact = w.cols ? 2 : 0;
    b_uvar(&b, VT_CID_WORLD); /* 2.0: what the id is derived from (format/commid.h) */
    b_uvar(&b, compact);
    b_uvar(&b, NR);
    if (compact) {
        b_uvar(&b, 1); /* form: a range */
        b_uvar(&b, 0);
        b_svar(&b, 1);
    } else {
        for (int i = 0; i < NR; i++)
            b_uvar(&b, (uint64_t)i);
    }
    b_uvar(&b, 0);
    b_svar(&b, -1);
    b_str(&b, "world");
    /* self; compact: one by one */
    b_uvar(&b, VT_CID_SELF); /* 2^63 + rank */
    b_uvar(&b, compact);
    b_uvar(&b, 1);
    if (compact)
        b_uvar(&b, 0);
    b_uvar(&b, (uint64_t)rank);
    b_uvar(&b, 0);
    b_svar(&b, -1);
    b_str(&b, "self");
    if (ncomms == 3) {
        /* ranks 0 and 2; compact: the range 0, 2 */
        b_uvar(&b, VT_CID_EXPLICIT); /* the id itself */
        b_uvar(&b, SPLIT_ID);
        b_uvar(&b, compact);
        b_uvar(&b, 2);
        if (compact) {
            b_uvar(&b, 1);
            b_uvar(&b, 0);
            b_svar(&b, 2);
        } else {
            b_uvar(&b, 0);
            b_uvar(&b, 2);
        }
        b_uvar(&b, 0);
        b_svar(&b, 0);
        b_str(&b, "MPI_Comm_split");
    }
    if (rank == 0) {
        b_uvar(&b, 1);
        b_str(&b, "out.dat");
        b_uvar(&b, 1); /* MPI_COMM_SELF */
    } else {
        b_uvar(&b, 0);
    }
    /* profile: the recorded calls plus calls that are never records */
    w.pr[fn_index("MPI_Comm_rank")] = (prof){(uint64_t)(2 + rank), (uint64_t)(60 + 10 * rank), 0, 0};
    uint64_t nprof = 0;
    for (size_t i = 0; i < NFN; i++)
        nprof += w.pr[w.order[i]].calls > 0;
    b_uvar(&b, nprof);
    for (size_t i = 0; i < NFN; i++) {
        const prof *p = &w.pr[w.order[i]];
        if (!p->calls)
            continue;
        b_uvar(&b, i);
        b_uvar(&b, p->calls);
        b_uvar(&b, p->time);
        b_uvar(&b, p->bytes);
        b_uvar(&b, p->records);
    }
    static const int64_t core[NR] = {0, 4, -1}, numa[NR] = {0, 1, -1};
    static const char *const binding[NR] = {"0", "4-5", ""};
    b_str(&b, host[rank]);
    b_svar(&b, core[rank]);
    b_svar(&b, numa[rank]);
    b_str(&b, binding[rank]);
    b_uvar(&b, rank == 2 ? VT_RANK_LATE_INIT : 0);
    b_uvar(&b, w.nrec);
    b_uvar(&b, 0);
    b_svar(&b, w.first_enter - 100);
    b_svar(&b, w.last_exit + 100);
    if (rank != 1) {
        for (int i = 0; i < 6; i++)
            b_uvar(&b, 0); /* 1.2 overheads, 1.4 end reason (finalize) and write: none */
        /* 1.4: modules; 1.6: the call sites, as module index + 1 and offset */
        b_uvar(&b, rank == 0 ? 2 : 0);
        if (rank == 0) {
            static const uint8_t id[4] = {0xde, 0xad, 0xbe, 0xef};
            b_str(&b, "/usr/bin/app");
            b_uvar(&b, sizeof id);
            for (size_t i = 0; i < sizeof id; i++)
                b_u8(&b, id[i]);
            b_str(&b, "/usr/lib/libfoo.so");
            b_uvar(&b, 0);
        }
        b_uvar(&b, rank == 0 ? 2 : 0);
        if (rank == 0) {
            b_uvar(&b, 1);
            b_uvar(&b, 0x1234);
            b_str(&b, "main");
            b_uvar(&b, 2);
            b_uvar(&b, 0x5678);
            b_str(&b, ""); /* the last byte of the payload (test_corrupt.c) */
        }
    }
    if (vt_block_write_dict(w.fd, VT_BLOCK_RANKDEFS, b.p, b.n, 0, o->zstd_level, o->shared ? shared_dict : NULL,
                            o->shared ? sizeof shared_dict - 1 : 0))
        w.err = 1;
    if (vt_block_write(w.fd, VT_BLOCK_END, NULL, 0, 0, 0))
        w.err = 1;
    free(b.p);
    free(w.blk.p);
    if (close(w.fd) != 0)
        w.err = 1;
    if (w.err)
        return fail(errbuf, errlen, "%s/%s: write failed", dir, name);
    return 0;
}

static const char config_text[] = "VT_BUFFER_SIZE=1048576\nVT_COMPRESS=0\n";

static int write_defs(const char *dir, const synth_opts *o, char *errbuf, size_t errlen)
{
    int fd = open_out(dir, "vtrace.defs", errbuf, errlen);
    if (fd < 0)
        return -1;
    bytes b = {0};
    int err = vt_file_header_write(fd, VT_MAGIC_DEFS, NR) != 0;
    b_str(&b, "0.1.0-synth");
    b_str(&b, "MPICH Version: 4.0.2 (synthetic)");
    b_str(&b, config_text);
    b_uvar(&b, NR);
    /* rank 0: the reference; rank 1: another host with drift; rank 2: same host and
     * clock as rank 0 (the offsets written are ignored) */
    static const int64_t clk[NR][4] = {{1000, 0, 1000000, 0}, {500, 10000, 100500, 10100}, {0, 77777, 0, 77777}};
    static const int same[NR] = {1, 0, 1};
    for (int r = 0; r < NR; r++) {
        for (int i = 0; i < 4; i++)
            b_svar(&b, clk[r][i]);
        b_uvar(&b, (uint64_t)same[r]);
        b_str(&b, host[r]);
    }
    b_uvar(&b, 0);
    err |= vt_block_write(fd, VT_BLOCK_GLOBAL, b.p, b.n, 0, o->zstd_level) != 0;
    if (o->shared) {
        /* the function table of the rank files without one (ranks 0 and 1) */
        const char *names[NFN], *layouts[NFN];
        for (size_t i = 0; i < NFN; i++) {
            names[i] = fnames[i][0];
            layouts[i] = fnames[i][1];
        }
        err |= vt_funcs_block_write(fd, names, layouts, NFN, NULL, 1, o->zstd_level) != 0;
        err |= vt_block_write(fd, VT_BLOCK_DICT, shared_dict, sizeof shared_dict - 1, 0, 0) != 0;
    }
    err |= vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0) != 0;
    free(b.p);
    err |= close(fd) != 0;
    if (err)
        return fail(errbuf, errlen, "%s/vtrace.defs: write failed", dir);
    fd = open_out(dir, "config.txt", errbuf, errlen);
    if (fd < 0)
        return -1;
    err = vt_write_all(fd, config_text, sizeof config_text - 1) != 0;
    err |= close(fd) != 0;
    if (err)
        return fail(errbuf, errlen, "%s/config.txt: write failed", dir);
    return 0;
}

int synth_write(const char *dir, const synth_opts *opts, char *errbuf, size_t errlen)
{
    synth_opts o = {0};
    if (opts)
        o = *opts;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return fail(errbuf, errlen, "%s: %s", dir, strerror(errno));
    if (write_defs(dir, &o, errbuf, errlen))
        return -1;
    for (int r = 0; r < NR; r++)
        if (write_rank(dir, r, &o, errbuf, errlen))
            return -1;
    return 0;
}
