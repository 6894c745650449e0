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
#include "analysis/compensate_priv.h"
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
    vt__comp_rules R;       /* the latency, copy cost, m.2 bound */
    vt_comp_stats *st;
    vt_error *err;
} comp;

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
            int ck = f ? vt__comp_collective_kind(f->name) : C_NONE;
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
                int64_t O = s->O_ps + C->R.copy_ps * (int64_t)p->bytes;
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
            lo = max64(lo,
                       vt__comp_msg_bound(&C->R, c->me, c->mx, c->ae, snd->ae, snd->me, snd->mx, d->bytes, &waited));
            any = 1;
        }
        if (coll_dep && c->ckind == C_1TON) {
            lo = max64(lo, vt__comp_msg_bound(&C->R, c->me, c->mx, c->ae, x->root_ae, x->root_me, x->root_mx, c->rbytes,
                                         &waited));
            any = 1;
        }
        if (coll_dep && c->ckind != C_1TON) {
            /* eq. 13: the synchronisation time measured on this member */
            c->ax = max64(c->ae, x->max_ae + max64(0, c->mx - x->max_me));
            if (c->ax > local)
                C->st->delayed++;
        } else if (any) {
            int64_t base = waited ? c->ae + C->R.copy_ps * (int64_t)c->rbytes : local;
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
    int64_t a = c->ax + max64(0, T - c->mx - s->O_ps - C->R.copy_ps * (int64_t)c->bytes - fl);
    if (nx < s->n && a > s->r[nx].ae)
        a = s->r[nx].ae;
    return a;
}

static int mem_times(void *arg, uint32_t r, uint64_t idx, int64_t *e, int64_t *x, vt_error *err)
{
    comp *C = arg;
    rstate *s = &C->rs[r];
    if (idx >= s->n)
        return vt_error_set(err, "%s: rank %u has more records than when it was read", vt_trace_dir(C->t), r);
    const crec *c = &s->r[idx];
    if (c->kind == K_CALL) {
        *e = vt__comp_ns_of(c->ae);
        *x = vt__comp_ns_of(c->ax);
    } else if (c->kind == K_FLUSH) {
        *e = *x = vt__comp_ns_of(map_time(C, s, c->me)); /* its own duration removed */
    } else {
        *e = vt__comp_ns_of(map_time(C, s, c->me));
        *x = vt__comp_ns_of(map_time(C, s, c->mx));
        if (*x < *e)
            *x = *e;
    }
    return 0;
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
    C.R.L_ps = 1000 * (o->latency_ns >= 0 ? o->latency_ns : vt__comp_config_latency_ns(vt_trace_config(t)));
    C.R.m2_upper = o->m2_upper;
    C.R.st = st;
    st->latency_ns = C.R.L_ps / 1000;
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
        if (o->overhead_ps < 0 && (int64_t)rk->copy_ps_per_byte > C.R.copy_ps)
            C.R.copy_ps = (int64_t)rk->copy_ps_per_byte;
    }
    if (!m) {
        rc = vt__compensate_stream(t, out, o, &C.R, st, err);
        goto out;
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
        if (!moved && (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE)) {
            /* the cut: what is compensated so far is written, the rest left out */
            for (uint32_t r = 0; r < C.nranks; r++) {
                rstate *s = &C.rs[r];
                if (s->pos < s->n) {
                    st->cut_ranks++;
                    st->cut_records += s->n - s->pos;
                    s->n = s->pos;
                }
            }
            break;
        }
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
        st->ranks[r].measured_ns = vt__comp_ns_of(lx - fe);
        st->ranks[r].compensated_ns = vt__comp_ns_of(la - fa);
    }
    if (mkdir(out, 0755) && errno != EEXIST) {
        vt_error_set(err, "%s: cannot create the output directory (%s)", out, strerror(errno));
        goto out;
    }
    for (uint32_t r = 0; r < C.nranks; r++)
        if (vt__comp_write_rank(t, out, r, o->zstd_level, C.rs[r].n, mem_times, &C, err))
            goto out;
    if (vt__comp_write_defs(t, out, o, err))
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
