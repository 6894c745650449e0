/* vtrace export --format=paraver: a Paraver trace, OUT.prv (records), OUT.pcf (names
 * of states, event types and values) and OUT.row (names of CPUs, nodes and threads).
 *
 * One application, one task per rank with one thread, one node per host and one CPU per
 * rank. States: Running for computation, one state per class of MPI call (the state
 * numbers Extrae uses, so Paraver's MPI configurations read them), trace buffer
 * flushes, and in a reduced trace "Aggregated" for the stretches between its records.
 * Events at each call's enter and exit (value 0): the MPI function (one value per
 * function name) and the call site (one value per call site). MARKER and STOPPED
 * records are events too. Each message is a communication record: logical and
 * physical send at the sending call's enter and exit, logical and physical receive at
 * the enter and exit of the call that completed the receive (a reduced trace: at the
 * send's start S, and the COMP record that names the message).
 *
 * Paraver wants the records sorted by time (a state's begin, a communication's
 * logical send): every rank's records come out in time order, and so do its messages
 * once sorted by send time (export_prvmsgs.c, in a temporary file); a heap merges these
 * 2 x nranks sorted streams, so the trace is streamed, one block per rank and a few
 * messages per sender in memory. Times
 * are global ns (vt_global_time) minus the trace's first enter; a rank's records whose
 * times overlap (calls of several threads) are clamped to keep them sorted. */
#include "vt_config.h"
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "tools/export.h"
#include "tools/export_prvmsgs.h"
#include "tools/paraver_mpi.h"
#include "tools/progress.h"
#include "util/codec.h"
#include "util/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Event types: MPI calls as Extrae writes them (paraver_mpi.h: 50000001 point-to-point,
 * 50000002 collectives, 50000003 others, 50000004 one-sided, 50000005 I/O, Extrae's
 * values), so Paraver's MPI configuration files apply; the rest of our own. */
#define T_CALLSITE 90000002u
#define T_CALLER_FN 70000001u   /* Extrae: "Caller at level 1" */
#define T_CALLER_LINE 80000001u /* Extrae: "Caller line at level 1" */
#define T_MARKER 90000003u
#define T_STOPPED 90000004u

enum {
    S_IDLE = 0,
    S_RUNNING = 1,
    S_WAITMSG = 3,
    S_BSEND = 4,
    S_SYNC = 5,
    S_TESTPROBE = 6,
    S_WAIT = 8,
    S_ISEND = 10,
    S_IRECV = 11,
    S_IO = 12,
    S_GROUP = 13,
    S_OTHERS = 15,
    S_SENDRECV = 16,
    S_FLUSH = 17,
    S_AGGREGATED = 18,
    S_MAX = 19,
};

static const struct {
    int value;
    const char *name;
    const char *color;
} states[] = {
    {S_IDLE, "Idle", "{117,195,255}"},
    {S_RUNNING, "Running", "{0,0,255}"},
    {S_WAITMSG, "Waiting a message", "{255,0,0}"},
    {S_BSEND, "Blocking Send", "{255,0,174}"},
    {S_SYNC, "Synchronization", "{179,0,0}"},
    {S_TESTPROBE, "Test/Probe", "{0,255,0}"},
    {S_WAIT, "Wait/WaitAll", "{235,0,0}"},
    {S_ISEND, "Immediate Send", "{100,100,177}"},
    {S_IRECV, "Immediate Receive", "{172,174,41}"},
    {S_IO, "I/O", "{255,144,26}"},
    {S_GROUP, "Group Communication", "{255,255,0}"},
    {S_OTHERS, "Others", "{192,224,0}"},
    {S_SENDRECV, "Send Receive", "{230,102,0}"},
    {S_FLUSH, "vtrace: trace buffer flush", "{128,128,128}"},
    {S_AGGREGATED, "Aggregated (reduced trace: events between records)", "{200,200,200}"},
};

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The state of an MPI call, from its name (tools map names to meanings). */
static int state_of(const char *name)
{
    static const char *const group[] = {"Bcast", "Reduce", "Allreduce", "Gather", "Allgather", "Scatter",
                                        "Alltoall", "Scan", "Exscan", "Neighbor_"};
    if (!starts(name, "MPI_"))
        return S_OTHERS;
    const char *n = name + 4;
    if (starts(n, "File_"))
        return S_IO;
    if (starts(n, "Sendrecv"))
        return S_SENDRECV;
    if (starts(n, "Wait"))
        return S_WAIT;
    if (starts(n, "Test") || starts(n, "Iprobe") || starts(n, "Improbe"))
        return S_TESTPROBE;
    if (starts(n, "Barrier") || starts(n, "Ibarrier"))
        return S_SYNC;
    if (starts(n, "Recv") && !starts(n, "Recv_init"))
        return S_WAITMSG;
    if (starts(n, "Mrecv") || starts(n, "Probe") || starts(n, "Mprobe"))
        return S_WAITMSG;
    if (!strcmp(n, "Send") || !strcmp(n, "Ssend") || !strcmp(n, "Bsend") || !strcmp(n, "Rsend") ||
        starts(n, "Send_c") || starts(n, "Ssend_c") || starts(n, "Bsend_c") || starts(n, "Rsend_c"))
        return S_BSEND;
    if (starts(n, "Isend") || starts(n, "Issend") || starts(n, "Ibsend") || starts(n, "Irsend") ||
        strstr(n, "send_init") || starts(n, "Send_init") || starts(n, "Start"))
        return S_ISEND;
    if (starts(n, "Irecv") || starts(n, "Imrecv") || starts(n, "Recv_init"))
        return S_IRECV;
    const char *g = n[0] == 'I' ? n + 1 : n;
    for (size_t i = 0; i < sizeof group / sizeof group[0]; i++)
        if (starts(g, group[i]))
            return S_GROUP;
    return S_OTHERS;
}

/* ------------------------------------------------------------------ names */

/* Interned strings: value i + 1 is the i-th string. */
typedef struct names {
    char **v;
    size_t n, cap;
    uint32_t *h; /* open addressing: index + 1, 0 empty */
    size_t hcap;
} names;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The value of S (from 1); 0 when out of memory. */
static uint32_t intern(names *t, const char *s)
{
    if (2 * (t->n + 1) > t->hcap) {
        size_t cap = t->hcap ? 2 * t->hcap : 64;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h)
            return 0;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = hash(t->v[i]) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(t->h);
        t->h = h;
        t->hcap = cap;
    }
    size_t j = hash(s) & (t->hcap - 1);
    while (t->h[j]) {
        if (!strcmp(t->v[t->h[j] - 1], s))
            return t->h[j];
        j = (j + 1) & (t->hcap - 1);
    }
    if (vt__export_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v))
        return 0;
    char *c = strdup(s);
    if (!c)
        return 0;
    t->v[t->n++] = c;
    t->h[j] = (uint32_t)t->n;
    return (uint32_t)t->n;
}

static void names_free(names *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->h);
}

/* ------------------------------------------------------------------ records */

/* A pending record of a rank's stream: a state or an event line. */
typedef struct item {
    int64_t t, end; /* state: begin and end; event: time */
    int state;      /* -1: an event line */
    int nev;
    uint64_t type[4], value[4];
} item;

#define CBUF 16

typedef struct rstream {
    vt_cursor *c;
    int eof;
    item q[8];
    int qn, qi;
    int have_prev;
    int64_t prev_exit, last;
    uint32_t *fnval, *siteval; /* this rank's function id / call site index -> value */
    uint32_t *callerfn, *callerline; /* call site index -> caller function / line value, 0 none */
    uint32_t *fntype;          /* function id -> event type (50000001, ...) */
    int *fnstate;
    size_t nfn, nsite;
    /* its messages as a sender: msgs.sorted[at .. end), CBUF of them read ahead */
    uint64_t at, end;
    vt__prv_comm cbuf[CBUF];
    size_t cn, ci;
} rstream;

typedef struct pv {
    const vt_trace *t;
    vt_error *err;
    uint32_t nranks;
    int reduced;
    int64_t t0, tend;
    char *prv, *pcf, *row; /* file names */
    FILE *f;
    const char *fname;     /* the file being written */
    names fns, sites, hosts, callerfns, callerlines;
    uint32_t *node_of;     /* rank -> node (from 1) */
    uint32_t *cpu_of;      /* rank -> CPU (from 1) */
    uint32_t *node_cpus;   /* node - 1 -> CPUs */
    vt__prv_msgs msgs;     /* sorted per sender by logical send */
    rstream *rs;
    vt__progress prog;
    uint64_t done;
} pv;

static int oom(pv *p)
{
    snprintf(p->err->msg, sizeof p->err->msg, "%s: out of memory", p->prv ? p->prv : "paraver export");
    return -1;
}

static int write_failed(pv *p)
{
    snprintf(p->err->msg, sizeof p->err->msg, "%s: cannot write: %s", p->fname, strerror(errno ? errno : EIO));
    return -1;
}

static int open_out(pv *p, const char *name)
{
    errno = 0;
    p->fname = name;
    p->f = fopen(name, "w");
    if (!p->f) {
        snprintf(p->err->msg, sizeof p->err->msg, "%s: cannot create: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

static int close_out(pv *p, int rc)
{
    if (!p->f)
        return rc;
    errno = 0;
    if (!rc && (fflush(p->f) || ferror(p->f)))
        rc = write_failed(p);
    errno = 0;
    if (fclose(p->f) && !rc)
        rc = write_failed(p);
    p->f = NULL;
    return rc;
}

static int64_t gtime(const pv *p, uint32_t r, int64_t local)
{
    return vt_global_time(p->t, r, local) - p->t0;
}

/* Definitions: function and call-site values, nodes and CPUs. */
static int setup_defs(pv *p)
{
    p->node_of = calloc(p->nranks + 1, sizeof *p->node_of);
    p->cpu_of = calloc(p->nranks + 1, sizeof *p->cpu_of);
    p->node_cpus = calloc(p->nranks + 1, sizeof *p->node_cpus);
    p->rs = calloc(p->nranks + 1, sizeof *p->rs);
    if (!p->node_of || !p->cpu_of || !p->node_cpus || !p->rs)
        return oom(p);
    uint32_t *idx = calloc(p->nranks + 1, sizeof *idx); /* rank's index among its node's */
    if (!idx)
        return oom(p);
    for (uint32_t r = 0; r < p->nranks; r++) {
        uint32_t node = intern(&p->hosts, vt__export_host(p->t, r));
        if (!node) {
            free(idx);
            return oom(p);
        }
        p->node_of[r] = node;
        idx[r] = p->node_cpus[node - 1]++;
    }
    /* CPUs are numbered node by node */
    uint32_t *first = calloc(p->hosts.n + 1, sizeof *first);
    if (!first) {
        free(idx);
        return oom(p);
    }
    for (size_t n = 1; n <= p->hosts.n; n++)
        first[n] = first[n - 1] + p->node_cpus[n - 1];
    for (uint32_t r = 0; r < p->nranks; r++)
        p->cpu_of[r] = first[p->node_of[r] - 1] + idx[r] + 1;
    free(first);
    free(idx);

    for (uint32_t r = 0; r < p->nranks; r++) {
        const vt_rank *R = vt_trace_rank(p->t, r);
        rstream *s = &p->rs[r];
        s->nfn = R->nfuncs;
        s->nsite = R->ncallsites;
        s->fnval = calloc(s->nfn + 1, sizeof *s->fnval);
        s->fnstate = calloc(s->nfn + 1, sizeof *s->fnstate);
        s->fntype = calloc(s->nfn + 1, sizeof *s->fntype);
        s->siteval = calloc(s->nsite + 1, sizeof *s->siteval);
        s->callerfn = calloc(s->nsite + 1, sizeof *s->callerfn);
        s->callerline = calloc(s->nsite + 1, sizeof *s->callerline);
        if (!s->fnval || !s->fnstate || !s->siteval || !s->fntype || !s->callerfn || !s->callerline)
            return oom(p);
        /* the functions the rank called (its profile counts every call): a table shared
         * by the trace (vtrace.defs, 1.5) names every wrapped one, whose _c forms have
         * the values of the others in Extrae's encoding */
        uint8_t *called = calloc(s->nfn + 1, 1);
        if (!called)
            return oom(p);
        for (size_t i = 0; i < R->nprofile; i++)
            if (R->profile[i].fn < s->nfn && R->profile[i].calls)
                called[R->profile[i].fn] = 1;
        for (size_t i = 0; i < s->nfn; i++) {
            if (!called[i])
                continue;
            uint32_t own = intern(&p->fns, R->funcs[i].name);
            if (!own) {
                free(called);
                return oom(p);
            }
            s->fnval[i] = vt__prv_mpi(R->funcs[i].name, &s->fntype[i]);
            if (!s->fnval[i])
                s->fnval[i] = VT_PRV_MPI_OWN_VALUES + own;
            s->fnstate[i] = state_of(R->funcs[i].name);
        }
        free(called);
        for (size_t i = 0; i < s->nsite; i++) {
            if (!(s->siteval[i] = intern(&p->sites, vt_site_name(p->t, r, (int64_t)i))))
                return oom(p);
            /* Extrae's caller values: the function, and "LINE (FILE)" */
            vt_srcloc loc;
            if (!vt_symbols_resolve(p->t, r, (int64_t)i, &loc))
                continue;
            char line[4200];
            const char *base = strrchr(loc.file, '/');
            snprintf(line, sizeof line, "%d (%s)", loc.line, base ? base + 1 : loc.file);
            if ((loc.function[0] && !(s->callerfn[i] = intern(&p->callerfns, loc.function))) ||
                !(s->callerline[i] = intern(&p->callerlines, line)))
                return oom(p);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ streams */

static void push_state(rstream *s, int64_t b, int64_t e, int state)
{
    if (e <= b)
        return;
    s->q[s->qn++] = (item){.t = b, .end = e, .state = state};
}

static void push_event(rstream *s, int64_t t, int nev, uint64_t t1, uint64_t v1, uint64_t t2, uint64_t v2)
{
    s->q[s->qn++] = (item){.t = t, .state = -1, .nev = nev, .type = {t1, t2}, .value = {v1, v2}};
}

/* Extrae's caller events beside the call's at its entry: the function (70000001) and the
 * line (80000001) of the call site, where the debug information gives them. */
static void push_callers(rstream *s, int64_t site)
{
    item *it = &s->q[s->qn - 1];
    uint64_t f = site >= 0 && (size_t)site < s->nsite ? s->callerfn[site] : 0;
    uint64_t l = site >= 0 && (size_t)site < s->nsite ? s->callerline[site] : 0;
    if (f) {
        it->type[it->nev] = T_CALLER_FN;
        it->value[it->nev++] = f;
    }
    if (l) {
        it->type[it->nev] = T_CALLER_LINE;
        it->value[it->nev++] = l;
    }
}

static void push_call(rstream *s, int64_t b, int64_t e, int64_t fn, int64_t site)
{
    int state = fn >= 0 && (size_t)fn < s->nfn ? s->fnstate[fn] : S_OTHERS;
    uint64_t fv = fn >= 0 && (size_t)fn < s->nfn ? s->fnval[fn] : 0;
    uint64_t ft = fv ? s->fntype[fn] : 0;
    uint64_t sv = site >= 0 && (size_t)site < s->nsite ? s->siteval[site] : 0;
    push_state(s, b, e, state);
    if (!fv)
        return;
    if (sv) {
        push_event(s, b, 2, ft, fv, T_CALLSITE, sv);
        push_callers(s, site);
        push_event(s, e, 2, ft, 0, T_CALLSITE, 0);
    } else {
        push_event(s, b, 1, ft, fv, 0, 0);
        push_event(s, e, 1, ft, 0, 0, 0);
    }
}

/* Refills the queue of rank R from its next record; 0 at the end of the rank. */
static int refill(pv *p, uint32_t r, int *more)
{
    rstream *s = &p->rs[r];
    *more = 0;
    while (!s->eof) {
        s->qn = s->qi = 0;
        int got;
        if (p->reduced) {
            vt_rrec rr;
            got = vt_cursor_next_reduced(s->c, &rr, p->err);
            if (got < 0)
                return -1;
            if (got == 1) {
                int64_t b = gtime(p, r, rr.enter), e = gtime(p, r, rr.exit);
                if (s->have_prev && b > s->prev_exit)
                    push_state(s, s->prev_exit, b, S_AGGREGATED);
                if (rr.kind == VT_RREC_CAND || rr.kind == VT_RREC_COMP || rr.kind == VT_RREC_NBCINIT) {
                    if (rr.fn < 0)
                        push_state(s, b, e, S_RUNNING);
                    else
                        push_call(s, b, e, rr.fn, rr.callsite);
                }
                if (!s->have_prev || e > s->prev_exit)
                    s->prev_exit = e;
                s->have_prev = 1;
            }
        } else {
            vt_event ev;
            got = vt_cursor_next(s->c, &ev, p->err);
            if (got < 0)
                return -1;
            if (got == 1) {
                int64_t b = gtime(p, r, ev.enter), e = gtime(p, r, ev.exit);
                if (s->have_prev && b > s->prev_exit)
                    push_state(s, s->prev_exit, b, S_RUNNING);
                if (ev.code == VT_CODE_MARKER)
                    push_event(s, b, 1, T_MARKER, (uint64_t)ev.marker_value, 0, 0);
                else if (ev.code == VT_CODE_STOPPED)
                    push_event(s, b, 1, T_STOPPED, ev.stop_reason, 0, 0);
                else if (ev.code == VT_CODE_FLUSH)
                    push_state(s, b, e, S_FLUSH);
                else
                    push_call(s, b, e, ev.fn, ev.callsite);
                if (!s->have_prev || e > s->prev_exit)
                    s->prev_exit = e;
                s->have_prev = 1;
            }
        }
        if (got == 1)
            vt__progress_update(&p->prog, ++p->done);
        if (got == 0)
            s->eof = 1;
        /* keep the rank's stream sorted whatever its records' overlaps */
        for (int i = 0; i < s->qn; i++) {
            item *it = &s->q[i];
            if (it->t < s->last)
                it->t = s->last;
            if (it->state >= 0 && it->end < it->t)
                it->end = it->t;
            s->last = it->t;
        }
        if (s->qn) {
            *more = 1;
            return 0;
        }
    }
    return 0;
}

/* Heap of sources: 2r is rank r's records, 2r + 1 its messages. */
typedef struct heap {
    uint32_t *v;
    size_t n;
} heap;

static int64_t head_time(const pv *p, uint32_t src)
{
    uint32_t r = src / 2;
    if (src & 1)
        return p->rs[r].cbuf[p->rs[r].ci].ls - p->t0;
    const rstream *s = &p->rs[r];
    return s->q[s->qi].t;
}

static int less(const pv *p, uint32_t a, uint32_t b)
{
    int64_t x = head_time(p, a), y = head_time(p, b);
    return x != y ? x < y : a < b;
}

static void sift_down(const pv *p, heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->n && less(p, h->v[l], h->v[m]))
            m = l;
        if (l + 1 < h->n && less(p, h->v[l + 1], h->v[m]))
            m = l + 1;
        if (m == i)
            return;
        uint32_t x = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = x;
        i = m;
    }
}

static void write_item(pv *p, uint32_t r, const item *it)
{
    uint32_t cpu = p->cpu_of[r];
    if (it->state >= 0) {
        fprintf(p->f, "1:%" PRIu32 ":1:%" PRIu32 ":1:%" PRId64 ":%" PRId64 ":%d\n", cpu, r + 1, it->t, it->end,
                it->state);
    } else {
        fprintf(p->f, "2:%" PRIu32 ":1:%" PRIu32 ":1:%" PRId64, cpu, r + 1, it->t);
        for (int i = 0; i < it->nev; i++)
            fprintf(p->f, ":%" PRIu64 ":%" PRIu64, it->type[i], it->value[i]);
        putc('\n', p->f);
    }
}

/* Reads ahead the next messages of sender R; 0 when it has none left. */
static int comm_refill(pv *p, uint32_t r, int *more)
{
    rstream *s = &p->rs[r];
    size_t k = s->end - s->at < CBUF ? (size_t)(s->end - s->at) : CBUF;
    s->cn = s->ci = 0;
    *more = k > 0;
    if (k && vt_spill_read(&p->msgs.sorted, s->at, k, s->cbuf)) {
        snprintf(p->err->msg, sizeof p->err->msg, "%s: cannot read a temporary file: %s", p->prv, strerror(errno));
        return -1;
    }
    s->at += k;
    s->cn = k;
    return 0;
}

static void write_comm(pv *p, const vt__prv_comm *c)
{
    /* never before the trace's start */
    int64_t t[4] = {c->ls - p->t0, c->ps - p->t0, c->lr - p->t0, c->pr - p->t0};
    for (int i = 0; i < 4; i++)
        if (t[i] < 0)
            t[i] = 0;
    fprintf(p->f,
            "3:%" PRIu32 ":1:%" PRIu32 ":1:%" PRId64 ":%" PRId64 ":%" PRIu32 ":1:%" PRIu32 ":1:%" PRId64 ":%" PRId64
            ":%" PRIu64 ":%" PRId64 "\n",
            p->cpu_of[c->src], c->src + 1, t[0], t[1], p->cpu_of[c->dst], c->dst + 1, t[2], t[3], c->bytes,
            c->tag < 0 ? 0 : c->tag);
}

static int write_prv(pv *p)
{
    if (open_out(p, p->prv))
        return -1;
    static char buf[1 << 16];
    setvbuf(p->f, buf, _IOFBF, sizeof buf);
    /* #Paraver (dd/mm/yyyy at hh:mm):duration_ns:nodes(cpus,...):napps:ntasks(threads:node,...) */
    time_t now = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde)
        now = (time_t)strtoll(sde, NULL, 10);
    struct tm tm;
    localtime_r(&now, &tm);
    fprintf(p->f, "#Paraver (%02d/%02d/%04d at %02d:%02d):%" PRId64 "_ns:%zu(", tm.tm_mday, tm.tm_mon + 1,
            tm.tm_year + 1900, tm.tm_hour, tm.tm_min, p->tend - p->t0, p->hosts.n);
    for (size_t n = 0; n < p->hosts.n; n++)
        fprintf(p->f, "%s%" PRIu32, n ? "," : "", p->node_cpus[n]);
    fprintf(p->f, "):1:%" PRIu32 "(", p->nranks);
    for (uint32_t r = 0; r < p->nranks; r++)
        fprintf(p->f, "%s1:%" PRIu32, r ? "," : "", p->node_of[r]);
    fputs(")\n", p->f);

    int rc = -1;
    heap h = {calloc(2 * (size_t)p->nranks + 1, sizeof *h.v), 0};
    if (!h.v) {
        oom(p);
        goto out;
    }
    for (uint32_t r = 0; r < p->nranks; r++) {
        rstream *s = &p->rs[r];
        if (vt_cursor_open(p->t, r, &s->c, p->err))
            goto out;
        int more;
        if (refill(p, r, &more))
            goto out;
        if (more)
            h.v[h.n++] = 2 * r;
        s->at = p->msgs.first[r];
        s->end = p->msgs.first[r + 1];
        if (comm_refill(p, r, &more))
            goto out;
        if (more)
            h.v[h.n++] = 2 * r + 1;
    }
    for (size_t i = h.n; i-- > 0;)
        sift_down(p, &h, i);
    uint64_t lines = 0;
    while (h.n) {
        uint32_t src = h.v[0], r = src / 2;
        rstream *s = &p->rs[r];
        int more = 1;
        if (src & 1) {
            write_comm(p, &s->cbuf[s->ci]);
            if (++s->ci == s->cn && comm_refill(p, r, &more))
                goto out;
        } else {
            write_item(p, r, &s->q[s->qi]);
            if (++s->qi == s->qn && refill(p, r, &more))
                goto out;
        }
        if (!more)
            h.v[0] = h.v[--h.n];
        sift_down(p, &h, 0);
        if ((++lines & 4095) == 0 && ferror(p->f)) {
            write_failed(p);
            goto out;
        }
    }
    rc = 0;
out:
    free(h.v);
    for (uint32_t r = 0; r < p->nranks; r++) {
        vt_cursor_close(p->rs[r].c);
        p->rs[r].c = NULL;
    }
    return close_out(p, rc);
}

static void pcf_values(pv *p, unsigned type, const char *what, const names *t)
{
    fprintf(p->f, "EVENT_TYPE\n0    %u    %s\nVALUES\n0      End\n", type, what);
    for (size_t i = 0; i < t->n; i++)
        fprintf(p->f, "%zu      %s\n", i + 1, t->v[i]);
    fputs("\n\n", p->f);
}

/* The MPI event types as Extrae writes them: each type used, its functions' values,
 * 0 "Outside MPI". */
static void pcf_mpi(pv *p)
{
    static const uint32_t types[] = {VT_PRV_MPI_P2P, VT_PRV_MPI_COLLECTIVE, VT_PRV_MPI_OTHER, VT_PRV_MPI_RMA,
                                     VT_PRV_MPI_IO};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int any = 0;
        for (size_t i = 0; i < p->fns.n; i++) {
            uint32_t type, v = vt__prv_mpi(p->fns.v[i], &type);
            if (type != types[k] || !p->fns.v[i][0]) /* an entry no FUNCS block named */
                continue;
            if (!any++)
                fprintf(p->f, "EVENT_TYPE\n9    %u    %s\nVALUES\n", types[k], vt__prv_mpi_type_label(types[k]));
            fprintf(p->f, "%u   %s\n", v ? v : VT_PRV_MPI_OWN_VALUES + (uint32_t)i + 1, p->fns.v[i]);
        }
        if (any)
            fputs("0   Outside MPI\n\n\n", p->f);
    }
}

static int write_pcf(pv *p)
{
    if (open_out(p, p->pcf))
        return -1;
    fputs("DEFAULT_OPTIONS\n\n"
          "LEVEL               THREAD\n"
          "UNITS               NANOSEC\n"
          "LOOK_BACK           100\n"
          "SPEED               1\n"
          "FLAG_ICONS          ENABLED\n"
          "NUM_OF_STATE_COLORS 1000\n"
          "YMAX_SCALE          37\n\n\n"
          "DEFAULT_SEMANTIC\n\n"
          "THREAD_FUNC         State As Is\n\n\n"
          "STATES\n",
          p->f);
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        fprintf(p->f, "%-4d %s\n", states[i].value, states[i].name);
    fputs("\n\nSTATES_COLOR\n", p->f);
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        fprintf(p->f, "%-4d %s\n", states[i].value, states[i].color);
    fputs("\n\n", p->f);
    pcf_mpi(p);
    pcf_values(p, T_CALLSITE, "MPI call site (vtrace)", &p->sites);
    if (p->callerfns.n)
        pcf_values(p, T_CALLER_FN, "Caller at level 1", &p->callerfns);
    if (p->callerlines.n)
        pcf_values(p, T_CALLER_LINE, "Caller line at level 1", &p->callerlines);
    fprintf(p->f, "EVENT_TYPE\n0    %u    vtrace MARKER value (kind 1: iteration)\n\n\n", T_MARKER);
    fprintf(p->f,
            "EVENT_TYPE\n0    %u    vtrace recording stopped\nVALUES\n1      write failed\n2      buffer policy\n\n",
            T_STOPPED);
    return close_out(p, 0);
}

static int write_row(pv *p)
{
    if (open_out(p, p->row))
        return -1;
    fprintf(p->f, "LEVEL CPU SIZE %" PRIu32 "\n", p->nranks);
    /* CPUs node by node, as numbered */
    for (size_t n = 1; n <= p->hosts.n; n++) {
        uint32_t k = 0;
        for (uint32_t r = 0; r < p->nranks; r++)
            if (p->node_of[r] == n)
                fprintf(p->f, "%" PRIu32 ".%s\n", ++k, p->hosts.v[n - 1]);
    }
    fprintf(p->f, "\nLEVEL NODE SIZE %zu\n", p->hosts.n);
    for (size_t n = 0; n < p->hosts.n; n++)
        fprintf(p->f, "%s\n", p->hosts.v[n]);
    fprintf(p->f, "\nLEVEL THREAD SIZE %" PRIu32 "\n", p->nranks);
    for (uint32_t r = 0; r < p->nranks; r++)
        fprintf(p->f, "rank %" PRIu32 " (%s)\n", r, vt__export_host(p->t, r));
    return close_out(p, 0);
}

static char *with_ext(const char *base, const char *ext)
{
    size_t n = strlen(base);
    char *s = malloc(n + strlen(ext) + 1);
    if (s) {
        memcpy(s, base, n);
        strcpy(s + n, ext);
    }
    return s;
}

int vt__export_paraver(const vt_trace *t, const vt__export_opts *o, vt_error *err)
{
    pv p = {.t = t, .err = err, .nranks = vt_trace_nranks(t), .reduced = vt_trace_is_reduced(t),
            .msgs = {.sorted = {.fd = -1}}};
    /* OUT is the name without extension; OUT.prv is accepted too */
    size_t n = strlen(o->out);
    char *base = strdup(o->out);
    if (!base)
        return oom(&p);
    if (n > 4 && !strcmp(base + n - 4, ".prv"))
        base[n - 4] = '\0';
    p.prv = with_ext(base, ".prv");
    p.pcf = with_ext(base, ".pcf");
    p.row = with_ext(base, ".row");
    free(base);
    int rc = -1;
    if (!p.prv || !p.pcf || !p.row) {
        oom(&p);
        goto out;
    }
    if (setup_defs(&p))
        goto out;
    if (vt__prv_msgs_collect(&p.msgs, t, p.prv, err))
        goto out;
    p.t0 = p.msgs.t0;
    p.tend = p.msgs.tend;
    vt__progress_start(&p.prog, "export paraver", vt_trace_nrecords(t), o->quiet);
    rc = write_prv(&p);
    vt__progress_end(&p.prog);
    if (!rc)
        rc = write_pcf(&p);
    if (!rc)
        rc = write_row(&p);
out:
    for (uint32_t r = 0; p.rs && r < p.nranks; r++) {
        free(p.rs[r].fnval);
        free(p.rs[r].fnstate);
        free(p.rs[r].fntype);
        free(p.rs[r].siteval);
        free(p.rs[r].callerfn);
        free(p.rs[r].callerline);
    }
    vt__prv_msgs_free(&p.msgs);
    free(p.rs);
    free(p.node_of);
    free(p.cpu_of);
    free(p.node_cpus);
    names_free(&p.fns);
    names_free(&p.sites);
    names_free(&p.callerfns);
    names_free(&p.callerlines);
    names_free(&p.hosts);
    free(p.prv);
    free(p.pcf);
    free(p.row);
    return rc;
}
