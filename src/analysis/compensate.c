/* Overhead compensation (seed 001; compensate.h). All times are handled in picoseconds
 * of the global clock (vt_global_time), so that a per-call overhead such as 19.6 ns
 * accumulates without rounding; the written trace holds nanoseconds on a clock whose
 * offsets are 0 (the compensated times are global already).
 *
 * Local events (seed 001, eq. 1). The layer's cost of a call lies outside the call's
 * [enter, exit]: the record is encoded after the exit timestamp, and VT_ENTER's work
 * before the next enter is negligible. So a call keeps its measured duration and each
 * gap between two calls loses the overhead O of the call before it (O = the per-event
 * overhead + the copy cost per byte x its bytes) and the duration of the FLUSH records
 * that lie in it:  enter_a(i) = exit_a(i-1) + max(0, gap_m - O - flushes).  The max
 * keeps the order when the given O is larger than a gap. The first call (MPI_Init)
 * keeps its measured enter. Special records (FLUSH, MARKER, STOPPED) are placed by
 * their measured time in that mapping; a FLUSH becomes zero long.
 *
 * Point-to-point messages (send = the sending call's enter, recv = the exit of the call
 * that completed the receive, as seed 001 translates them):
 *  m.1 (enter.recv_m <= exit.send_m, the receiver waited): the measured communication
 *      time Comm_m = recv_m - send_m is kept:  recv_a = max(send_a + Comm_m,
 *      enter.recv_a + C·size)  (eqs. 3 and 4: a.1 and a.2 in one max).
 *  m.2 (the receive began after the send ended): the paper gives a lower bound
 *      send_a + max(2 C·size, Comm_min) and an upper bound send_a + max(recv_m - send_m,
 *      Comm_min) (eqs. 9-11). We use the LOWER bound: the upper one keeps the measured
 *      recv_m - send_m, which holds the time the message sat at the receiver, and that
 *      time was stretched by the overhead the receiver accumulated since the send (with
 *      a constant O it puts back exactly the difference of the two ranks' accumulated
 *      overheads). The receiver's copy C·size of eq. 8 is taken as the receive's own
 *      measured duration (in m.2 the message was there: the call only matched and
 *      copied it; the layer stores no copy table, C is 0), so recv_a = max(send_a +
 *      max(2 C·size, L), enter.recv_a + (exit_m - enter_m)): a receive stays a local
 *      event unless its compensated send moved after it.
 *  In both cases recv_a >= send_a + L (L: the minimal latency, half the fastest round
 *  trip the layer measured, VTRACE_MODEL_L, or --latency), and a call completing
 *  several messages takes the latest bound.
 * Collectives: n-to-n (Barrier, All*, Reduce_scatter*): exit_a(i) = enter_a(k) +
 *  max(0, exit_m(i) - enter_m(j)), k the latest compensated entry, j the latest measured
 *  (eq. 13). 1-to-n (Bcast, Scatter(v)): each non-root is a receive of a message sent at
 *  the root's enter (m.1/m.2 as above, size = bytes received). n-to-1 (Gather(v),
 *  Reduce): the root as n-to-n, the others local. Other calls (synchronous sends, Scan,
 *  non-blocking collectives) are local events. */
#include "vt_config.h"
#include "analysis/compensate.h"
#include "format/blockio.h"
#include "util/codec.h"
#include "util/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K_CALL = 0, K_FLUSH = 1, K_SPECIAL = 2 };
enum { C_NONE = 0, C_NTON, C_1TON, C_NTO1 };

typedef struct crec {
    int64_t me, mx;   /* measured, global ps */
    int64_t ae, ax;   /* compensated, global ps */
    uint64_t bytes;   /* send bytes (copy cost) */
    uint64_t rbytes;  /* received bytes */
    int64_t coll;     /* instance index, -1 */
    uint8_t kind, ckind, root;
} crec;

typedef struct dep {
    uint64_t done; /* record on the receiver */
    uint32_t src;
    uint64_t send; /* record on the sender */
    uint64_t bytes;
} dep;

typedef struct inst {
    uint64_t comm, seq;
    uint32_t members, entered;
    int64_t max_ae, max_me;
    int root_in;
    int64_t root_ae, root_me, root_mx;
} inst;

typedef struct rstate {
    crec *r;
    size_t n, cap;
    dep *d;
    size_t nd, di;
    size_t pos;       /* next record to process */
    int64_t prev;     /* last call processed, -1 */
    size_t fl;        /* flush cursor (flushes sorted by enter) */
    size_t *flush;    /* indices of FLUSH records */
    size_t nflush;
    int64_t entered;  /* highest record whose enter is known, -1 */
    int64_t O_ps;
} rstate;

typedef struct comp {
    const vt_trace *t;
    uint32_t nranks;
    rstate *rs;
    inst *in;
    size_t nin, capin;
    size_t *hash;
    size_t hcap;
    int64_t L_ps, copy_ps[1];
    int m2_upper;
    vt_comp_stats *st;
    vt_error *err;
} comp;

static int collective_kind(const char *n)
{
    static const char *nton[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                                 "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter",
                                 "MPI_Reduce_scatter_block", NULL};
    static const char *oton[] = {"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv", NULL};
    static const char *nto1[] = {"MPI_Gather", "MPI_Gatherv", "MPI_Reduce", NULL};
    for (int i = 0; nton[i]; i++)
        if (!strcmp(n, nton[i]))
            return C_NTON;
    for (int i = 0; oton[i]; i++)
        if (!strcmp(n, oton[i]))
            return C_1TON;
    for (int i = 0; nto1[i]; i++)
        if (!strcmp(n, nto1[i]))
            return C_NTO1;
    return C_NONE;
}

static uint64_t hkey(uint64_t a, uint64_t b) { return (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull); }

/* The instance of (comm, seq), created with MEMBERS when new; SIZE_MAX out of memory. */
static size_t instance(comp *C, uint64_t comm, uint64_t seq, uint32_t members)
{
    if (2 * (C->nin + 1) > C->hcap) {
        size_t nc = C->hcap ? 2 * C->hcap : 1024;
        size_t *nh = malloc(nc * sizeof *nh);
        if (!nh)
            return SIZE_MAX;
        for (size_t i = 0; i < nc; i++)
            nh[i] = SIZE_MAX;
        for (size_t i = 0; i < C->nin; i++) {
            size_t h = hkey(C->in[i].comm, C->in[i].seq) & (nc - 1);
            while (nh[h] != SIZE_MAX)
                h = (h + 1) & (nc - 1);
            nh[h] = i;
        }
        free(C->hash);
        C->hash = nh;
        C->hcap = nc;
    }
    size_t h = hkey(comm, seq) & (C->hcap - 1);
    while (C->hash[h] != SIZE_MAX) {
        inst *x = &C->in[C->hash[h]];
        if (x->comm == comm && x->seq == seq)
            return C->hash[h];
        h = (h + 1) & (C->hcap - 1);
    }
    if (C->nin == C->capin) {
        size_t nc = C->capin ? 2 * C->capin : 256;
        inst *ni = realloc(C->in, nc * sizeof *ni);
        if (!ni)
            return SIZE_MAX;
        C->in = ni;
        C->capin = nc;
    }
    inst *x = &C->in[C->nin];
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->seq = seq;
    x->members = members;
    x->max_ae = x->max_me = INT64_MIN;
    C->hash[h] = C->nin;
    return C->nin++;
}

static int dep_cmp(const void *a, const void *b)
{
    const dep *x = a, *y = b;
    return x->done < y->done ? -1 : x->done > y->done;
}

static int64_t gps(const vt_trace *t, uint32_t r, int64_t local) { return vt_global_time(t, r, local) * 1000; }

static int load(comp *C)
{
    const vt_trace *t = C->t;
    for (uint32_t r = 0; r < C->nranks; r++) {
        rstate *s = &C->rs[r];
        const vt_rank *rk = vt_trace_rank(t, r);
        vt_cursor *cur;
        vt_event ev;
        if (vt_cursor_open(t, r, &cur, C->err))
            return -1;
        /* the blocks' record counts are the file's word: a first guess, grown as needed */
        s->cap = rk->nrecords < (1u << 20) ? (rk->nrecords ? rk->nrecords : 1) : (1u << 20);
        s->r = calloc(s->cap, sizeof *s->r);
        if (!s->r) {
            vt_cursor_close(cur);
            return vt_error_set(C->err, "out of memory (%zu records of rank %u)", s->cap, r);
        }
        int got;
        while ((got = vt_cursor_next(cur, &ev, C->err)) == 1) {
            if (s->n == s->cap) {
                crec *nr = realloc(s->r, 2 * s->cap * sizeof *nr);
                if (!nr) {
                    vt_cursor_close(cur);
                    return vt_error_set(C->err, "out of memory");
                }
                s->r = nr;
                s->cap *= 2;
            }
            crec *c = &s->r[s->n++];
            memset(c, 0, sizeof *c);
            c->me = gps(t, r, ev.enter);
            c->mx = gps(t, r, ev.exit);
            c->coll = -1;
            c->kind = ev.fn < 0 ? (ev.code == VT_CODE_FLUSH ? K_FLUSH : K_SPECIAL) : K_CALL;
            if (c->kind == K_FLUSH)
                s->nflush++;
            if (c->kind != K_CALL)
                continue;
            c->bytes = ev.bytes;
            c->rbytes = ev.rbytes;
            const vt_function *f = vt_trace_function(t, r, ev.fn);
            const vt_comm *cm = ev.comm >= 0 ? vt_trace_comm(t, r, ev.comm) : NULL;
            int ck = f ? collective_kind(f->name) : C_NONE;
            if (ck != C_NONE && cm && !(cm->flags & 1) && (ev.fields & VT_F_COLLSEQ) && cm->size > 1) {
                int root = (ev.fields & VT_F_ROOT) && ev.root == (int64_t)r;
                if (ck != C_NTON && !(ev.fields & VT_F_ROOT))
                    continue;
                size_t i = instance(C, cm->id, ev.collseq, cm->size);
                if (i == SIZE_MAX) {
                    vt_cursor_close(cur);
                    return vt_error_set(C->err, "out of memory");
                }
                c->coll = (int64_t)i;
                c->ckind = (uint8_t)ck;
                c->root = (uint8_t)root;
            }
        }
        vt_cursor_close(cur);
        if (got < 0)
            return -1;
        s->flush = malloc((s->nflush ? s->nflush : 1) * sizeof *s->flush);
        if (!s->flush)
            return vt_error_set(C->err, "out of memory");
        s->nflush = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->r[i].kind == K_FLUSH)
                s->flush[s->nflush++] = i;
        s->prev = -1;
        s->entered = -1;
    }
    return 0;
}

static int load_deps(comp *C, const vt_matches *m)
{
    size_t nk;
    const vt_match_key *keys = vt_matches_keys(m, &nk);
    for (uint32_t r = 0; r < C->nranks; r++) {
        size_t n;
        const vt_match_crecv *cr = vt_matches_crecvs(m, r, &n);
        rstate *s = &C->rs[r];
        s->d = malloc((n ? n : 1) * sizeof *s->d);
        if (!s->d)
            return vt_error_set(C->err, "out of memory");
        for (size_t i = 0; i < n; i++) {
            if (cr[i].send_pos == VT_MPOS_NONE || cr[i].key >= nk)
                continue;
            uint32_t src = keys[cr[i].key].src;
            size_t ns;
            const vt_match_csend *cs = vt_matches_csends(m, src, &ns);
            if (src >= C->nranks || cr[i].send_pos >= ns || cr[i].done_index >= s->n)
                continue;
            const vt_match_csend *snd = &cs[cr[i].send_pos];
            if (snd->index >= C->rs[src].n)
                continue;
            s->d[s->nd++] = (dep){cr[i].done_index, src, snd->index, snd->bytes};
        }
        vt_sort(s->d, s->nd, sizeof *s->d, dep_cmp);
    }
    return 0;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The bound a message (or a 1-to-n pair) puts on the receiving call's exit; *waited
 * says whether it was case m.1. */
static int64_t msg_bound(comp *C, const crec *rc, int64_t send_a, int64_t send_me, int64_t send_mx, uint64_t bytes,
                         int *waited)
{
    int64_t cs = C->copy_ps[0] * (int64_t)bytes, b;
    if (rc->me <= send_mx) { /* m.1: the communication time was measured */
        *waited = 1;
        C->st->m1++;
        b = max64(send_a + (rc->mx - send_me), rc->ae + cs);
    } else { /* m.2: the lower bound by default (see the top of the file) */
        C->st->m2++;
        int64_t lower = send_a + max64(2 * cs, C->L_ps);
        int64_t upper = send_a + max64(rc->mx - send_me, C->L_ps);
        if (upper > max64(lower, rc->ae + (rc->mx - rc->me)))
            C->st->m2_upper_wider++;
        b = C->m2_upper ? upper : lower;
    }
    return max64(b, send_a + C->L_ps);
}

/* Processes as many records of rank R as its dependences allow; returns the number. */
static size_t advance(comp *C, uint32_t r)
{
    rstate *s = &C->rs[r];
    size_t done = 0;
    while (s->pos < s->n) {
        crec *c = &s->r[s->pos];
        if (c->kind != K_CALL) {
            s->pos++;
            done++;
            continue;
        }
        if (s->entered < (int64_t)s->pos) {
            if (s->prev < 0) {
                c->ae = c->me;
            } else {
                crec *p = &s->r[s->prev];
                int64_t fl = 0;
                while (s->fl < s->nflush && s->r[s->flush[s->fl]].me < c->me) {
                    crec *f = &s->r[s->flush[s->fl]];
                    if (f->me >= p->mx)
                        fl += f->mx - f->me;
                    s->fl++;
                }
                int64_t O = s->O_ps + C->copy_ps[0] * (int64_t)p->bytes;
                C->st->ranks[r].removed_ps += O + fl;
                c->ae = p->ax + max64(0, c->me - p->mx - O - fl);
            }
            s->entered = (int64_t)s->pos;
            if (c->coll >= 0) {
                inst *x = &C->in[c->coll];
                x->entered++;
                x->max_ae = max64(x->max_ae, c->ae);
                x->max_me = max64(x->max_me, c->me);
                if (c->root) {
                    x->root_in = 1;
                    x->root_ae = c->ae;
                    x->root_me = c->me;
                    x->root_mx = c->mx;
                }
            }
        }
        /* dependences ready? */
        for (size_t k = s->di; k < s->nd && s->d[k].done == s->pos; k++)
            if (C->rs[s->d[k].src].entered < (int64_t)s->d[k].send)
                return done;
        inst *x = c->coll >= 0 ? &C->in[c->coll] : NULL;
        int coll_dep = x && (c->ckind == C_NTON || (c->ckind == C_NTO1 && c->root) || (c->ckind == C_1TON && !c->root));
        if (coll_dep && (c->ckind == C_1TON ? !x->root_in : x->entered < x->members))
            return done;
        int64_t local = c->ae + (c->mx - c->me), lo = INT64_MIN;
        int waited = 0, any = 0;
        for (; s->di < s->nd && s->d[s->di].done == s->pos; s->di++) {
            const dep *d = &s->d[s->di];
            const crec *snd = &C->rs[d->src].r[d->send];
            lo = max64(lo, msg_bound(C, c, snd->ae, snd->me, snd->mx, d->bytes, &waited));
            any = 1;
        }
        if (coll_dep && c->ckind == C_1TON) {
            lo = max64(lo, msg_bound(C, c, x->root_ae, x->root_me, x->root_mx, c->rbytes, &waited));
            any = 1;
        }
        if (coll_dep && c->ckind != C_1TON) {
            /* eq. 13: the synchronisation time measured on this member */
            c->ax = max64(c->ae, x->max_ae + max64(0, c->mx - x->max_me));
            if (c->ax > local)
                C->st->delayed++;
        } else if (any) {
            int64_t base = waited ? c->ae + C->copy_ps[0] * (int64_t)c->rbytes : local;
            c->ax = max64(base, lo);
            if (c->ax > local)
                C->st->delayed++;
        } else {
            c->ax = local;
        }
        s->prev = (int64_t)s->pos;
        s->pos++;
        done++;
    }
    return done;
}

/* Compensated time of a measured time T (ps) on rank S, by the gap mapping. */
static int64_t map_time(comp *C, rstate *s, int64_t T)
{
    /* the last call entered at or before T */
    size_t lo = 0, hi = s->n, best = SIZE_MAX;
    (void)C;
    /* calls are in time order: binary search over records, skipping specials */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, k = mid;
        while (k < hi && s->r[k].kind != K_CALL)
            k++;
        if (k == hi) {
            hi = mid;
            continue;
        }
        if (s->r[k].me <= T) {
            best = k;
            lo = k + 1;
        } else {
            hi = mid;
        }
    }
    if (best == SIZE_MAX) { /* before the first call */
        for (size_t k = 0; k < s->n; k++)
            if (s->r[k].kind == K_CALL)
                return s->r[k].ae - (s->r[k].me - T);
        return T;
    }
    crec *c = &s->r[best];
    if (T <= c->mx)
        return c->ae + (T - c->me) < c->ax ? c->ae + (T - c->me) : c->ax;
    size_t nx = best + 1;
    while (nx < s->n && s->r[nx].kind != K_CALL)
        nx++;
    int64_t fl = 0;
    for (size_t i = 0; i < s->nflush; i++) {
        const crec *f = &s->r[s->flush[i]];
        if (f->me >= c->mx && f->me < T)
            fl += (T < f->mx ? T : f->mx) - f->me;
    }
    int64_t a = c->ax + max64(0, T - c->mx - s->O_ps - C->copy_ps[0] * (int64_t)c->bytes - fl);
    if (nx < s->n && a > s->r[nx].ae)
        a = s->r[nx].ae;
    return a;
}

/* ------------------------------------------------------------------ writing */

typedef struct obuf {
    uint8_t *p;
    size_t len, cap;
} obuf;

static int ob_room(obuf *b, size_t need)
{
    if (b->len + need <= b->cap)
        return 0;
    size_t nc = (b->cap ? 2 * b->cap : 1 << 16) + need;
    uint8_t *np = realloc(b->p, nc);
    if (!np)
        return -1;
    b->p = np;
    b->cap = nc;
    return 0;
}
#define OB_U(b, v) ((b)->len = (size_t)(vt_put_uvar((b)->p + (b)->len, (uint64_t)(v)) - (b)->p))
#define OB_S(b, v) ((b)->len = (size_t)(vt_put_svar((b)->p + (b)->len, (int64_t)(v)) - (b)->p))

static int64_t ns_of(int64_t ps) { return ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000); }

static int encode_event(obuf *b, const vt_event *ev, const vt_function *f, int64_t enter, int64_t exit, int64_t prev)
{
    size_t need = 8 * VT_UVAR_MAX + (ev->nstarted + 1) * VT_UVAR_MAX + (ev->ndone + 1) * 5 * VT_UVAR_MAX + 64;
    if (ob_room(b, need))
        return -1;
    OB_U(b, ev->code);
    OB_S(b, enter - prev);
    OB_U(b, exit - enter);
    if (ev->fn < 0) {
        if (ev->code == VT_CODE_MARKER) {
            OB_U(b, ev->marker_kind);
            OB_S(b, ev->marker_value);
        } else if (ev->code == VT_CODE_STOPPED) {
            OB_U(b, ev->stop_reason);
        }
        return 0;
    }
    OB_U(b, ev->callsite < 0 ? 0 : ev->callsite);
    for (const char *l = f->layout; *l; l++) {
        switch (*l) {
        case 'c': OB_U(b, ev->comm); break;
        case 'n': OB_S(b, ev->newcomm); break;
        case 'p': OB_S(b, ev->peer); break;
        case 't': OB_S(b, ev->tag); break;
        case 'b': OB_U(b, ev->bytes); break;
        case 'P': OB_S(b, ev->rpeer); break;
        case 'T': OB_S(b, ev->rtag); break;
        case 'B': OB_U(b, ev->rbytes); break;
        case 'o': OB_S(b, ev->root); break;
        case 'q': OB_U(b, ev->collseq); break;
        case 'r': OB_U(b, ev->request); break;
        case 'R':
            OB_U(b, ev->nstarted);
            for (size_t i = 0; i < ev->nstarted; i++)
                OB_U(b, ev->started[i]);
            break;
        case 'k':
            OB_U(b, ev->ndone);
            for (size_t i = 0; i < ev->ndone; i++) {
                OB_U(b, ev->done[i].request);
                OB_U(b, ev->done[i].flags);
                OB_S(b, ev->done[i].peer);
                OB_S(b, ev->done[i].tag);
                OB_U(b, ev->done[i].bytes);
            }
            break;
        case 'm': OB_U(b, ev->msg); break;
        case 'f': OB_U(b, ev->file); break;
        case 'O': OB_S(b, ev->offset); break;
        default: return -2;
        }
    }
    return 0;
}

#define BLOCK_RECORDS 8192

static int write_rank(comp *C, const char *dir, uint32_t r, int level)
{
    const vt_trace *t = C->t;
    const vt_rank *rk = vt_trace_rank(t, r);
    rstate *s = &C->rs[r];
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%06u.vte", dir, r);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return vt_error_set(C->err, "%s: cannot create it (%s)", path, strerror(errno));
    uint8_t *raw = NULL;
    size_t rawlen;
    obuf b = {0};
    vt_cursor *cur = NULL;
    int rc = vt_file_header_write(fd, VT_MAGIC_RANK, r);
    if (rc)
        goto io;
    if (vt_trace_raw_block(t, r, VT_BLOCK_FUNCS, &raw, &rawlen, C->err))
        goto bad;
    rc = vt_block_write(fd, VT_BLOCK_FUNCS, raw, rawlen, 0, level);
    free(raw);
    raw = NULL;
    if (rc)
        goto io;
    if (vt_cursor_open(t, r, &cur, C->err))
        goto bad;
    vt_event ev;
    int got;
    uint64_t idx = 0, first = 0;
    uint32_t nrec = 0;
    int64_t prev = 0;
    while ((got = vt_cursor_next(cur, &ev, C->err)) == 1) {
        const crec *c = &s->r[idx];
        int64_t e, x;
        if (c->kind == K_CALL) {
            e = ns_of(c->ae);
            x = ns_of(c->ax);
        } else if (c->kind == K_FLUSH) {
            e = x = ns_of(map_time(C, s, c->me)); /* its own duration removed */
        } else {
            e = ns_of(map_time(C, s, c->me));
            x = ns_of(map_time(C, s, c->mx));
            if (x < e)
                x = e;
        }
        if (nrec == 0) {
            b.len = 0;
            if (ob_room(&b, 2 * VT_UVAR_MAX))
                goto oom;
            OB_U(&b, first);
            OB_S(&b, e);
            prev = e;
        }
        int er = encode_event(&b, &ev, vt_trace_function(t, r, ev.fn), e, x, prev);
        if (er == -1)
            goto oom;
        if (er) {
            vt_error_set(C->err, "%s: a layout letter this version cannot write", rk->path);
            goto bad;
        }
        prev = x;
        idx++;
        if (++nrec == BLOCK_RECORDS) {
            if ((rc = vt_block_write(fd, VT_BLOCK_EVENTS, b.p, b.len, nrec, level)))
                goto io;
            first += nrec;
            nrec = 0;
        }
    }
    if (got < 0)
        goto bad;
    if (nrec && (rc = vt_block_write(fd, VT_BLOCK_EVENTS, b.p, b.len, nrec, level)))
        goto io;
    /* RANKDEFS: as read, with the overhead fields (format 1.2) set to 0: the written
     * trace holds no overhead any more, so compensating it again removes nothing. */
    if (vt_trace_raw_block(t, r, VT_BLOCK_RANKDEFS, &raw, &rawlen, C->err))
        goto bad;
    /* what follows the overhead (1.4: the module table) is kept */
    size_t at = rk->has_overhead ? rk->overhead_at : rawlen;
    size_t skip = rk->has_overhead ? rk->overhead_len : 0;
    if (at + skip > rawlen) {
        vt_error_set(C->err, "%s: RANKDEFS is shorter than when it was read", rk->path);
        goto bad;
    }
    uint8_t *nraw = malloc(rawlen - skip + 2);
    if (!nraw)
        goto oom;
    memcpy(nraw, raw, at);
    nraw[at] = 0;     /* overhead per event: 0 ps */
    nraw[at + 1] = 0; /* copy cost per byte: 0 ps */
    memcpy(nraw + at + 2, raw + at + skip, rawlen - at - skip);
    rawlen = rawlen - skip + 2;
    free(raw);
    raw = nraw;
    if ((rc = vt_block_write(fd, VT_BLOCK_RANKDEFS, raw, rawlen, 0, level)))
        goto io;
    if ((rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0)))
        goto io;
    free(raw);
    free(b.p);
    vt_cursor_close(cur);
    if (close(fd))
        return vt_error_set(C->err, "%s: %s", path, strerror(errno));
    return 0;
oom:
    vt_error_set(C->err, "out of memory writing %s", path);
    goto bad;
io:
    vt_error_set(C->err, "%s: cannot write it (%s)", path, strerror(-rc));
bad:
    free(raw);
    free(b.p);
    vt_cursor_close(cur);
    close(fd);
    return -1;
}

/* The GLOBAL payload: offsets set to 0 (the written times are global already), the
 * configuration text noting the compensation. */
static int write_defs(comp *C, const char *dir, const vt_comp_opts *o)
{
    const vt_trace *t = C->t;
    obuf b = {0};
    const char *cfg = vt_trace_config(t);
    char note[160];
    snprintf(note, sizeof note, "%sVTRACE_COMPENSATED=%" PRId64 "ps\n",
             *cfg && cfg[strlen(cfg) - 1] != '\n' ? "\n" : "", o->overhead_ps);
    if (o->overhead_ps < 0)
        snprintf(note, sizeof note, "%sVTRACE_COMPENSATED=measured\n",
                 *cfg && cfg[strlen(cfg) - 1] != '\n' ? "\n" : "");
    size_t need = strlen(vt_trace_version(t)) + strlen(vt_trace_mpi_version(t)) + strlen(cfg) + strlen(note) +
                  8 * VT_UVAR_MAX;
    for (uint32_t r = 0; r < C->nranks; r++)
        need += 6 * VT_UVAR_MAX + strlen(vt_trace_rank(t, r)->global_hostname);
    if (ob_room(&b, need))
        return vt_error_set(C->err, "out of memory");
    uint8_t *p = b.p;
    p = vt_put_str(p, vt_trace_version(t), strlen(vt_trace_version(t)));
    p = vt_put_str(p, vt_trace_mpi_version(t), strlen(vt_trace_mpi_version(t)));
    size_t cl = strlen(cfg), nl = strlen(note);
    p = vt_put_uvar(p, cl + nl);
    memcpy(p, cfg, cl);
    memcpy(p + cl, note, nl);
    p += cl + nl;
    p = vt_put_uvar(p, C->nranks);
    for (uint32_t r = 0; r < C->nranks; r++) {
        const vt_rank *rk = vt_trace_rank(t, r);
        p = vt_put_svar(p, rk->clock.t1);
        p = vt_put_svar(p, 0);
        p = vt_put_svar(p, rk->clock.t2);
        p = vt_put_svar(p, 0);
        p = vt_put_uvar(p, (uint64_t)rk->clock.same_clock);
        p = vt_put_str(p, rk->global_hostname, strlen(rk->global_hostname));
    }
    p = vt_put_uvar(p, vt_trace_flags(t));
    char path[4200];
    snprintf(path, sizeof path, "%s/vtrace.defs", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;
    if (fd < 0) {
        free(b.p);
        return vt_error_set(C->err, "%s: cannot create it (%s)", path, strerror(errno));
    }
    rc = vt_file_header_write(fd, VT_MAGIC_DEFS, C->nranks);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, b.p, (size_t)(p - b.p), 0, 0);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0);
    if (close(fd) && !rc)
        rc = -errno;
    free(b.p);
    if (rc)
        return vt_error_set(C->err, "%s: cannot write it (%s)", path, strerror(-rc));
    snprintf(path, sizeof path, "%s/config.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(cfg, f);
        fputs(note, f);
        fclose(f);
    }
    return 0;
}

static int64_t config_latency_ns(const char *cfg)
{
    const char *p = strstr(cfg, "VTRACE_MODEL_L=");
    if (!p)
        return 0;
    long long v = strtoll(p + strlen("VTRACE_MODEL_L="), NULL, 10);
    return v > 0 ? v : 0;
}

int vt_compensate(const vt_trace *t, const vt_matches *m, const char *out, const vt_comp_opts *o, vt_comp_stats *st,
                  vt_error *err)
{
    memset(st, 0, sizeof *st);
    if (vt_trace_is_reduced(t))
        return vt_error_set(err, "%s is a reduced trace: it keeps only the events that can change a prediction, so the "
                         "overhead of the calls between them cannot be placed; compensate the full trace",
                    vt_trace_dir(t));
    comp C = {0};
    C.t = t;
    C.nranks = vt_trace_nranks(t);
    C.st = st;
    C.err = err;
    C.L_ps = 1000 * (o->latency_ns >= 0 ? o->latency_ns : config_latency_ns(vt_trace_config(t)));
    C.m2_upper = o->m2_upper;
    st->latency_ns = C.L_ps / 1000;
    st->nranks = C.nranks;
    st->ranks = calloc(C.nranks, sizeof *st->ranks);
    C.rs = calloc(C.nranks, sizeof *C.rs);
    int rc = -1;
    if (!st->ranks || !C.rs) {
        vt_error_set(err, "out of memory");
        goto out;
    }
    for (uint32_t r = 0; r < C.nranks; r++) {
        const vt_rank *rk = vt_trace_rank(t, r);
        C.rs[r].O_ps = o->overhead_ps >= 0 ? o->overhead_ps : (int64_t)rk->overhead_ps;
        st->ranks[r].overhead_ps = (uint64_t)C.rs[r].O_ps;
        /* one copy cost for the run: the layer's (0 today, it copies nothing) */
        if (o->overhead_ps < 0 && (int64_t)rk->copy_ps_per_byte > C.copy_ps[0])
            C.copy_ps[0] = (int64_t)rk->copy_ps_per_byte;
    }
    if (load(&C) || load_deps(&C, m))
        goto out;
    for (;;) {
        size_t moved = 0;
        int all = 1;
        for (uint32_t r = 0; r < C.nranks; r++) {
            moved += advance(&C, r);
            all &= C.rs[r].pos == C.rs[r].n;
        }
        if (all)
            break;
        if (!moved) {
            for (uint32_t r = 0; r < C.nranks; r++)
                if (C.rs[r].pos < C.rs[r].n) {
                    vt_error_set(err, "%s: record %zu of rank %u waits for a message or collective that never comes "
                              "(an incomplete trace, or one that contradicts its own order); not compensated",
                         vt_trace_dir(t), C.rs[r].pos, r);
                    break;
                }
            goto out;
        }
    }
    st->collectives = C.nin;
    for (uint32_t r = 0; r < C.nranks; r++) {
        rstate *s = &C.rs[r];
        int64_t fe = 0, lx = 0, fa = 0, la = 0;
        int seen = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (s->r[i].kind == K_FLUSH)
                st->ranks[r].flushes++;
            if (s->r[i].kind != K_CALL)
                continue;
            st->ranks[r].calls++;
            if (!seen++) {
                fe = s->r[i].me;
                fa = s->r[i].ae;
            }
            lx = s->r[i].mx;
            la = s->r[i].ax;
        }
        st->ranks[r].measured_ns = ns_of(lx - fe);
        st->ranks[r].compensated_ns = ns_of(la - fa);
    }
    if (mkdir(out, 0755) && errno != EEXIST) {
        vt_error_set(err, "%s: cannot create the output directory (%s)", out, strerror(errno));
        goto out;
    }
    for (uint32_t r = 0; r < C.nranks; r++)
        if (write_rank(&C, out, r, o->zstd_level))
            goto out;
    if (write_defs(&C, out, o))
        goto out;
    rc = 0;
out:
    if (C.rs)
        for (uint32_t r = 0; r < C.nranks; r++) {
            free(C.rs[r].r);
            free(C.rs[r].d);
            free(C.rs[r].flush);
        }
    free(C.rs);
    free(C.in);
    free(C.hash);
    return rc;
}

void vt_comp_stats_free(vt_comp_stats *st)
{
    free(st->ranks);
    st->ranks = NULL;
}
