/* Clock-condition repair: the forward pass of a controlled logical clock
 * (clockfix.h, doc/clock-repair.md). */
#include "vt_config.h"
#include "format/clockfix.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vt_clockfix {
    uint32_t nranks;
    size_t *nsteps;
    vt_clockfix_step **steps;
};

static void set_err(vt_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(vt_error *e, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ sends in flight */

/* Sends passed on by their sender and not yet consumed by their receive, keyed by
 * (sender, position in its csends). Open addressing, linear probing, deletion by
 * backward shift (no tombstones), so the table stays as small as the messages in
 * flight. */
typedef struct flight_e {
    uint64_t key; /* (rank << 32 | pos) + 1; 0 empty */
    int64_t raw;  /* global enter of the send without this pass's shift */
    int64_t fixed; /* ... with the sender's shift at the send */
} flight_e;

typedef struct flight {
    flight_e *e;
    size_t cap, n; /* cap a power of two */
} flight;

static size_t fl_hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static int fl_put(flight *f, uint64_t key, int64_t raw, int64_t fixed)
{
    if ((f->n + 1) * 2 > f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        flight_e *e = calloc(cap, sizeof *e);
        if (!e)
            return -1;
        for (size_t i = 0; i < f->cap; i++) {
            if (!f->e[i].key)
                continue;
            size_t j = fl_hash(f->e[i].key, cap);
            while (e[j].key)
                j = (j + 1) & (cap - 1);
            e[j] = f->e[i];
        }
        free(f->e);
        f->e = e;
        f->cap = cap;
    }
    size_t j = fl_hash(key, f->cap);
    while (f->e[j].key && f->e[j].key != key)
        j = (j + 1) & (f->cap - 1);
    if (!f->e[j].key)
        f->n++;
    f->e[j] = (flight_e){key, raw, fixed};
    return 0;
}

/* Removes KEY into *out; 0 when absent. */
static int fl_take(flight *f, uint64_t key, flight_e *out)
{
    if (!f->cap)
        return 0;
    size_t mask = f->cap - 1, j = fl_hash(key, f->cap);
    while (f->e[j].key && f->e[j].key != key)
        j = (j + 1) & mask;
    if (!f->e[j].key)
        return 0;
    *out = f->e[j];
    /* backward-shift deletion: move later members of the cluster into the hole when
     * their home position is not in (hole, their position] */
    size_t hole = j;
    for (size_t k = (j + 1) & mask; f->e[k].key; k = (k + 1) & mask) {
        size_t home = fl_hash(f->e[k].key, f->cap);
        int between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!between) {
            f->e[hole] = f->e[k];
            hole = k;
        }
    }
    f->e[hole].key = 0;
    f->n--;
    return 1;
}

static uint64_t fl_key(uint32_t rank, uint32_t pos) { return (((uint64_t)rank << 32) | pos) + 1; }

/* ------------------------------------------------------------------ per rank */

/* Receives posted and not yet completed: a min-heap of crecv positions by done_index. */
typedef struct pend {
    uint32_t *h;
    size_t n, cap;
} pend;

enum { R_READY, R_BLOCKED, R_DONE };

typedef struct rstate {
    uint32_t rank;
    vt_cursor *cur;
    vt_event ev;
    int have_ev;    /* ev is being processed (its sends are passed on) */
    const vt_match_csend *sends;
    size_t nsends, sp; /* sp: sends passed on (the receivers may use sends[0, sp)) */
    const vt_match_crecv *recvs;
    size_t nrecvs, rp; /* rp: receives posted (added to pend) */
    pend pd;
    int64_t shift;  /* cumulative shift so far */
    int64_t need;   /* jump the current record needs */
    int64_t last_send_enter; /* local enter of the last send passed on; INT64_MIN none */
    int got_need;   /* some receive of the current record moved it */
    vt_clockfix_step *steps;
    size_t nsteps, capsteps;
    int state;
    uint32_t wait_on;   /* R_BLOCKED: the sender */
    uint32_t wait_pos;  /* ... and the position of the send in its csends */
    uint32_t next_waiter; /* list of ranks waiting on the same sender; UINT32_MAX end */
    uint32_t waiters;     /* first rank waiting on this one; UINT32_MAX none */
} rstate;

static int pend_push(pend *p, const vt_match_crecv *rv, uint32_t pos)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        uint32_t *h = realloc(p->h, cap * sizeof *h);
        if (!h)
            return -1;
        p->h = h;
        p->cap = cap;
    }
    size_t i = p->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (rv[p->h[up]].done_index < rv[pos].done_index ||
            (rv[p->h[up]].done_index == rv[pos].done_index && p->h[up] < pos))
            break;
        p->h[i] = p->h[up];
        i = up;
    }
    p->h[i] = pos;
    return 0;
}

static void pend_pop(pend *p, const vt_match_crecv *rv)
{
    uint32_t x = p->h[--p->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= p->n)
            break;
        if (c + 1 < p->n && (rv[p->h[c + 1]].done_index < rv[p->h[c]].done_index ||
                             (rv[p->h[c + 1]].done_index == rv[p->h[c]].done_index && p->h[c + 1] < p->h[c])))
            c++;
        if (rv[x].done_index < rv[p->h[c]].done_index || (rv[x].done_index == rv[p->h[c]].done_index && x < p->h[c]))
            break;
        p->h[i] = p->h[c];
        i = c;
    }
    if (p->n)
        p->h[i] = x;
}

typedef struct pass {
    const vt_trace *t;
    const vt_matches *m;
    const vt_match_key *keys;
    size_t nkeys;
    uint32_t nranks;
    int64_t lat;
    rstate *rs;
    flight fl;
    vt_clockfix_stats st;
    vt_error *err;
} pass;

static const char *fname(const pass *P, uint32_t rank, int64_t fn)
{
    const vt_function *f = fn >= 0 ? vt_trace_function(P->t, rank, fn) : NULL;
    return f ? f->name : "special record";
}

static const char *tname(const pass *P) { return *vt_trace_dir(P->t) ? vt_trace_dir(P->t) : "trace"; }

static int add_step(pass *P, rstate *s, int64_t from, int64_t shift)
{
    if (s->nsteps && from <= s->steps[s->nsteps - 1].from_ns) {
        /* several records at the same local ns (or exits going back in a damaged
         * trace): one step, the larger shift */
        s->steps[s->nsteps - 1].shift_ns = shift;
        return 0;
    }
    if (s->nsteps == s->capsteps) {
        size_t cap = s->capsteps ? s->capsteps * 2 : 4;
        vt_clockfix_step *v = realloc(s->steps, cap * sizeof *v);
        if (!v) {
            set_err(P->err, "out of memory repairing the clock of rank %u", s->rank);
            return -1;
        }
        s->steps = v;
        s->capsteps = cap;
    }
    s->steps[s->nsteps++] = (vt_clockfix_step){from, shift};
    return 0;
}

/* Wakes the ranks waiting on S (they check their send again). */
static void wake(pass *P, rstate *s, uint32_t *stack, size_t *nstack)
{
    uint32_t w = s->waiters;
    s->waiters = UINT32_MAX;
    while (w != UINT32_MAX) {
        rstate *ws = &P->rs[w];
        uint32_t next = ws->next_waiter;
        ws->next_waiter = UINT32_MAX;
        ws->state = R_READY;
        stack[(*nstack)++] = w;
        w = next;
    }
}

/* Checks receive RV (position POS on rank S) against its send. 1 done, 0 blocked,
 * -1 error. */
static int check_recv(pass *P, rstate *s, uint32_t pos)
{
    const vt_match_crecv *rv = &s->recvs[pos];
    const vt_match_key *k = rv->key < P->nkeys ? &P->keys[rv->key] : NULL;
    const vt_match_csend *sd = NULL;
    size_t nsd = 0;
    if (k && k->src < P->nranks)
        sd = vt_matches_csends(P->m, k->src, &nsd);
    if (!k || k->dst != s->rank || !sd || rv->send_pos >= nsd || sd[rv->send_pos].recv_pos != pos ||
        sd[rv->send_pos].key != rv->key || rv->done_index != s->ev.index || rv->done_exit != s->ev.exit) {
        set_err(P->err,
                "%s: clock repair: the message matches do not belong to this trace (rank %u, receive at "
                "record %" PRIu64 ", completed at record %" PRIu64 ")",
                tname(P), s->rank, rv->index, rv->done_index);
        return -1;
    }
    rstate *from = &P->rs[k->src];
    if (rv->send_pos >= from->sp) {
        s->state = R_BLOCKED;
        s->wait_on = k->src;
        s->wait_pos = rv->send_pos;
        s->next_waiter = from->waiters;
        from->waiters = s->rank;
        return 0;
    }
    flight_e e;
    if (!fl_take(&P->fl, fl_key(k->src, rv->send_pos), &e)) {
        set_err(P->err,
                "%s: clock repair: the send of the receive at record %" PRIu64 " of rank %u (record %" PRIu64
                " of rank %u) is matched twice",
                tname(P), rv->index, s->rank, sd[rv->send_pos].index, k->src);
        return -1;
    }
    int64_t raw_exit = vt_global_time(P->t, s->rank, s->ev.exit);
    P->st.messages++;
    if (raw_exit < e.raw + P->lat) {
        P->st.violations++;
        if (e.raw + P->lat - raw_exit > P->st.max_violation_ns)
            P->st.max_violation_ns = e.raw + P->lat - raw_exit;
    }
    int64_t miss = e.fixed + P->lat - (raw_exit + s->shift);
    if (miss > 0) {
        P->st.repaired++;
        s->got_need = 1;
        if (miss > s->need)
            s->need = miss;
    }
    return 1;
}

/* Advances S until it blocks or ends. 0, or -1 and the error. */
static int run(pass *P, rstate *s)
{
    for (;;) {
        if (!s->have_ev) {
            int rc = vt_cursor_next(s->cur, &s->ev, P->err);
            if (rc < 0)
                return -1;
            if (rc == 0) {
                if (s->pd.n || s->rp < s->nrecvs) {
                    const vt_match_crecv *rv = &s->recvs[s->pd.n ? s->pd.h[0] : s->rp];
                    set_err(P->err,
                            "%s: clock repair: rank %u ends before the receive at record %" PRIu64
                            " completes (at record %" PRIu64 "): the matches do not belong to this trace",
                            tname(P), s->rank, rv->index, rv->done_index);
                    return -1;
                }
                if (s->sp < s->nsends) {
                    set_err(P->err,
                            "%s: clock repair: rank %u ends before its send at record %" PRIu64
                            ": the matches do not belong to this trace",
                            tname(P), s->rank, s->sends[s->sp].index);
                    return -1;
                }
                s->state = R_DONE;
                return 0;
            }
            s->have_ev = 1;
            s->need = 0;
            s->got_need = 0;
            /* sends first: a send of this record starts at its enter, before the
             * receives of the record can complete at its exit */
            int64_t g = vt_global_time(P->t, s->rank, s->ev.enter);
            for (; s->sp < s->nsends && s->sends[s->sp].index <= s->ev.index; s->sp++) {
                if (s->sends[s->sp].recv_pos == VT_MPOS_NONE)
                    continue;
                if (fl_put(&P->fl, fl_key(s->rank, (uint32_t)s->sp), g, g + s->shift)) {
                    set_err(P->err, "out of memory repairing the clock of rank %u", s->rank);
                    return -1;
                }
                s->last_send_enter = s->ev.enter;
            }
            for (; s->rp < s->nrecvs && s->recvs[s->rp].index <= s->ev.index; s->rp++) {
                if (s->recvs[s->rp].send_pos == VT_MPOS_NONE)
                    continue;
                if (pend_push(&s->pd, s->recvs, (uint32_t)s->rp)) {
                    set_err(P->err, "out of memory repairing the clock of rank %u", s->rank);
                    return -1;
                }
            }
        }
        while (s->pd.n && s->recvs[s->pd.h[0]].done_index <= s->ev.index) {
            int rc = check_recv(P, s, s->pd.h[0]);
            if (rc < 0)
                return -1;
            if (rc == 0)
                return 0;
            pend_pop(&s->pd, s->recvs);
        }
        if (s->got_need && s->need > 0) {
            /* the jump: from the exit of this record on, everything moves by NEED */
            if (s->last_send_enter != INT64_MIN && s->ev.exit <= s->last_send_enter)
                P->st.coincident++;
            s->shift += s->need;
            P->st.jumps++;
            if (add_step(P, s, s->ev.exit, s->shift))
                return -1;
        }
        s->have_ev = 0;
    }
}

static void describe_wait(pass *P, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (uint32_t r = 0; r < P->nranks && off + 200 < len; r++) {
        rstate *s = &P->rs[r];
        if (s->state != R_BLOCKED)
            continue;
        const vt_match_csend *sd = vt_matches_csends(P->m, s->wait_on, NULL);
        off += (size_t)snprintf(buf + off, len - off,
                                "%s rank %u at record %" PRIu64 " (%s) waits for the send at record %" PRIu64
                                " of rank %u",
                                off ? ";" : "", r, s->ev.index, fname(P, r, s->ev.fn), sd[s->wait_pos].index,
                                s->wait_on);
    }
    if (off + 200 >= len)
        snprintf(buf + off, len - off, "; ...");
}

int vt_clockfix_compute(const vt_trace *t, const vt_matches *m, int64_t min_latency_ns, vt_clockfix **out,
                        vt_clockfix_stats *st, vt_error *err)
{
    if (out)
        *out = NULL;
    if (!t || !m || !out) {
        set_err(err, "clock repair: no trace, no matches or no result pointer");
        return -1;
    }
    if (min_latency_ns < 0) {
        set_err(err, "clock repair: minimal latency %" PRId64 " ns is negative", min_latency_ns);
        return -1;
    }
    pass P = {0};
    P.t = t;
    P.m = m;
    P.keys = vt_matches_keys(m, &P.nkeys);
    P.nranks = vt_trace_nranks(t);
    P.lat = min_latency_ns;
    P.err = err;
    int rc = -1;
    uint32_t *stack = NULL;
    vt_clockfix *f = calloc(1, sizeof *f);
    P.rs = calloc(P.nranks ? P.nranks : 1, sizeof *P.rs);
    stack = malloc((P.nranks ? P.nranks : 1) * sizeof *stack);
    if (!f || !P.rs || !stack) {
        set_err(err, "out of memory repairing the clock");
        goto out;
    }
    f->nranks = P.nranks;
    f->nsteps = calloc(P.nranks ? P.nranks : 1, sizeof *f->nsteps);
    f->steps = calloc(P.nranks ? P.nranks : 1, sizeof *f->steps);
    if (!f->nsteps || !f->steps) {
        set_err(err, "out of memory repairing the clock");
        goto out;
    }
    size_t nstack = 0;
    for (uint32_t r = 0; r < P.nranks; r++) {
        rstate *s = &P.rs[r];
        s->rank = r;
        s->sends = vt_matches_csends(m, r, &s->nsends);
        s->recvs = vt_matches_crecvs(m, r, &s->nrecvs);
        s->last_send_enter = INT64_MIN;
        s->next_waiter = s->waiters = UINT32_MAX;
        if ((s->nsends | s->nrecvs) > UINT32_MAX - 2) {
            set_err(err, "%s: clock repair: rank %u has too many messages", tname(&P), r);
            goto out;
        }
        if (vt_cursor_open(t, r, &s->cur, err))
            goto out;
    }
    for (uint32_t r = P.nranks; r-- > 0;)
        stack[nstack++] = r;
    uint32_t done = 0;
    while (nstack) {
        rstate *s = &P.rs[stack[--nstack]];
        if (s->state != R_READY)
            continue;
        uint64_t sp0 = s->sp;
        if (run(&P, s))
            goto out;
        if (s->state == R_DONE)
            done++;
        if (s->sp != sp0 || s->state == R_DONE)
            wake(&P, s, stack, &nstack);
    }
    if (done < P.nranks) {
        char where[1536];
        describe_wait(&P, where, sizeof where);
        set_err(err,
                "%s: clock repair: the messages cannot be ordered by happened-before (every unfinished rank "
                "waits for another):%s",
                tname(&P), where);
        goto out;
    }
    for (uint32_t r = 0; r < P.nranks; r++) {
        rstate *s = &P.rs[r];
        if (s->nsteps) {
            P.st.repaired_ranks++;
            if (s->shift > P.st.max_shift_ns) {
                P.st.max_shift_ns = s->shift;
                P.st.max_shift_rank = r;
            }
        }
        f->nsteps[r] = s->nsteps;
        f->steps[r] = s->steps;
        s->steps = NULL;
    }
    if (st)
        *st = P.st;
    *out = f;
    f = NULL;
    rc = 0;
out:
    for (uint32_t r = 0; P.rs && r < P.nranks; r++) {
        vt_cursor_close(P.rs[r].cur);
        free(P.rs[r].pd.h);
        free(P.rs[r].steps);
    }
    free(P.rs);
    free(P.fl.e);
    free(stack);
    vt_clockfix_free(f);
    return rc;
}

int64_t vt_clockfix_shift(const vt_clockfix *f, uint32_t rank, int64_t local_ns)
{
    if (!f || rank >= f->nranks)
        return 0;
    const vt_clockfix_step *v = f->steps[rank];
    size_t lo = 0, hi = f->nsteps[rank]; /* first step with from_ns > local_ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].from_ns <= local_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? v[lo - 1].shift_ns : 0;
}

static int64_t shift_of(const void *f, uint32_t rank, int64_t local_ns)
{
    return vt_clockfix_shift(f, rank, local_ns);
}

void vt_trace_set_clockfix(vt_trace *t, const vt_clockfix *f)
{
    vt_trace_set_time_shift(t, f ? shift_of : NULL, f);
}

size_t vt_clockfix_steps(const vt_clockfix *f, uint32_t rank, const vt_clockfix_step **steps)
{
    if (!f || rank >= f->nranks) {
        if (steps)
            *steps = NULL;
        return 0;
    }
    if (steps)
        *steps = f->steps[rank];
    return f->nsteps[rank];
}

uint32_t vt_clockfix_nranks(const vt_clockfix *f) { return f ? f->nranks : 0; }

void vt_clockfix_free(vt_clockfix *f)
{
    if (!f)
        return;
    for (uint32_t r = 0; f->steps && r < f->nranks; r++)
        free(f->steps[r]);
    free(f->steps);
    free(f->nsteps);
    free(f);
}
