/* REDUCED_COLS packing and unpacking: the reduced records' parts (evcols_priv.h, and
 * doc/format.md). */
#include "vt_config.h"
#include "format/evcols_priv.h"

/* A reduced record's values (doc/format.md, REDUCED_COLS) go two ways. The times of other
 * events it holds (each message's S - enter and P - enter, END's time) go into the times
 * column: they are what such a record costs, like an enter or a duration; since 1.5 a
 * message's S as its difference to the latency of the sender's previous message
 * (split_msg_time), the rest as stored. The others, mostly the same from one record to the next
 * (the burst's start and R* - enter are 0 unless something merged), are predicted as a
 * full trace's fields are, with the sequence numbers a record names (a message's send
 * and posting) as their difference to the record's own, in zigzag form: a regular code
 * repeats it. */
typedef struct rsplit {
    const uint8_t **p, *end; /* the REDUCED record */
    uint64_t seq;            /* the record's sequence number */
    vals *a;                 /* the predicted values */
    buf *times;              /* the times column */
    const struct comm_map *comms;
    lasts *cseq;             /* per communicator id: its next collective sequence number */
    uint64_t dur;            /* the record's exit - enter */
    lasts *snd;              /* 1.5: per sender, its last message's S - exit; NULL before */
} rsplit;


static size_t comm_home(uint64_t id, size_t cap)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdu;
    id ^= id >> 33;
    return (size_t)id & (cap - 1);
}

int vt__rcols_comm_map(comm_map *m, const vt_rcols_comms *c)
{
    *m = (comm_map){0};
    if (!c || !c->n)
        return 0;
    size_t cap = 16;
    while (cap < 2 * c->n)
        cap *= 2;
    m->id = malloc(cap * sizeof *m->id);
    m->at = calloc(cap, sizeof *m->at);
    if (!m->id || !m->at)
        return -1;
    m->cap = cap;
    for (size_t i = 0; i < c->n; i++) {
        size_t h = comm_home(c->id[i], cap);
        while (m->at[h] && m->id[h] != c->id[i])
            h = (h + 1) & (cap - 1);
        if (!m->at[h]) {
            m->id[h] = c->id[i];
            m->at[h] = i + 1;
        }
    }
    return 0;
}

static inline size_t comm_map_find(const comm_map *m, uint64_t id)
{
    if (!m->cap)
        return 0;
    for (size_t h = comm_home(id, m->cap); m->at[h]; h = (h + 1) & (m->cap - 1))
        if (m->id[h] == id)
            return m->at[h];
    return 0;
}

/* A collective sequence number is its difference (zigzag) to the one after the last
 * on its communicator in the block: 0 while a rank's collectives follow each other. */
static inline int cseq_next(lasts *t, uint64_t id, uint64_t *next)
{
    last *l = lasts_get(t, id, 0);
    if (!l)
        return -1;
    *next = l->n ? l->v[0] : 0;
    return 0;
}

static inline int cseq_set(lasts *t, uint64_t id, uint64_t seq)
{
    last *l = lasts_get(t, id, 0);
    uint64_t next = seq + 1;
    return l ? set_values(t, l, &next, 1) : -1;
}

/* A gate's communicator and collective sequence number. */
static inline int split_comm(rsplit *s)
{
    uint64_t u, c, next;
    if (get_u(s->p, s->end, &u))
        return -1;
    size_t at = comm_map_find(s->comms, u);
    if (vals_push(s->a, at) || (!at && vals_push(s->a, u)))
        return -1;
    if (get_u(s->p, s->end, &c) || cseq_next(s->cseq, u, &next))
        return -1;
    return vals_push(s->a, vt_zigzag((int64_t)(c - next))) || cseq_set(s->cseq, u, c);
}

/* Packing: a time from the record into the times column. */
static inline int split_time(rsplit *s) { return copy_var(s->p, s->end, s->times, NULL); }

/* Since 1.5 a message's send time S goes into the times column as S - exit less the same
 * of the sender's previous message in the block (0 for its first): a message that
 * arrived late ends the call a latency after it was sent, and latencies repeat. The
 * difference is taken modulo 2^64, as its inverse (join_msg_time). */
static inline last *sender_last(lasts *snd, uint64_t src)
{
    last *l = lasts_get(snd, src, 0);
    if (l && !l->n) {
        uint64_t zero = 0;
        if (set_values(snd, l, &zero, 1))
            return NULL;
    }
    return l;
}

static inline int split_msg_time(rsplit *s, uint64_t src)
{
    if (!s->snd)
        return split_time(s);
    int64_t x;
    last *l = sender_last(s->snd, src);
    if (!l || vt_get_svar(s->p, s->end, &x) || reserve(s->times, VT_UVAR_MAX))
        return -1;
    uint64_t y = (uint64_t)x - s->dur;
    s->times->len = (size_t)(vt_put_svar(s->times->p + s->times->len, (int64_t)(y - l->v[0])) - s->times->p);
    l->v[0] = y;
    return 0;
}

static inline int split_val(rsplit *s)
{
    uint64_t u;
    return get_u(s->p, s->end, &u) || vals_push(s->a, u);
}

static inline int split_seq(rsplit *s)
{
    uint64_t u;
    return get_u(s->p, s->end, &u) || vals_push(s->a, vt_zigzag((int64_t)(u - s->seq)));
}

/* The values of a record of KIND after its function and call site (its END's included). */
static int split_rtail(uint64_t kind, rsplit *s)
{
    unsigned k = (unsigned)(kind & VT_RREC_K_MASK);
    int bad = 0;
    if (k == VT_RREC_NBCINIT) {
        bad = split_val(s) || split_comm(s) || split_val(s);
    } else if (k == VT_RREC_COMP) {
        bad = split_val(s) || split_val(s); /* flags, R* - enter (0 unless the record merged) */
        for (int list = 0; list < 3 && !bad; list++) {
            uint64_t n;
            if (get_u(s->p, s->end, &n) || vals_push(s->a, n) || n > (uint64_t)(s->end - *s->p))
                return -1;
            for (uint64_t i = 0; i < n && !bad; i++) {
                if (list == 2) {
                    bad = split_comm(s) || split_val(s) || split_val(s);
                    continue;
                }
                /* a message: sender, send's sequence number, S - enter (a time), bytes, sync;
                 * a synchronous send: receiver, send's sequence number, S - enter (mostly 0:
                 * the call's own enter), bytes */
                bad = split_val(s);
                uint64_t peer = bad ? 0 : s->a->v[s->a->n - 1];
                bad = bad || split_seq(s) || (list ? split_val(s) : split_msg_time(s, peer)) || split_val(s);
                if (!bad && list == 0) {
                    bad = split_val(s);
                    if (!bad && s->a->v[s->a->n - 1])
                        bad = split_seq(s) || split_time(s);
                }
            }
        }
    }
    if (!bad && (kind & VT_RREC_K_END))
        bad = split_val(s) || split_time(s);
    return bad ? -1 : 0;
}

/* Unpacking: the predicted values of a record of KIND written as they are (tag 1), read
 * from [*p, end) into A. Returns 0, or -1 when they run past end. */
int vt__rcols_read(uint64_t kind, const uint8_t **p, const uint8_t *end, vals *a)
{
    unsigned k = (unsigned)(kind & VT_RREC_K_MASK);
    uint64_t u;
#define VAL()                                                                                                          \
    do {                                                                                                               \
        if (get_u(p, end, &u) || vals_push(a, u))                                                                      \
            return -1;                                                                                                 \
    } while (0)
    if (kind & VT_RREC_K_BURST)
        VAL();
    if (k == VT_RREC_NBCINIT) {
        VAL();
        VAL(); /* communicator: 0 and a new id, or an earlier one's place */
        if (!u)
            VAL();
        VAL();
        VAL();
    } else if (k == VT_RREC_COMP) {
        VAL(); /* flags, R* - enter */
        VAL();
        for (int list = 0; list < 3; list++) {
            VAL();
            uint64_t n = u;
            if (n > (uint64_t)(end - *p))
                return -1;
            for (uint64_t i = 0; i < n; i++) {
                /* 4 each: a message's S and P are times, a synchronous send's S is not */
                VAL();
                if (list == 2 && !u) /* a gate's new communicator */
                    VAL();
                for (int j = 0; j < 3; j++)
                    VAL();
                if (list == 0 && u) /* synchronous: the posting call */
                    VAL();
            }
        }
    }
    if (kind & VT_RREC_K_END)
        VAL();
#undef VAL
    return 0;
}

/* Unpacking: the REDUCED bytes of the values V[*i..n) of a record of KIND after its
 * function and call site, its times taken from T. Returns 0, or -1 when the values do not
 * fit the kind (1: a time is missing, 2: no room). */
typedef struct rjoin {
    const uint64_t *v;
    size_t n, i;
    uint64_t seq;
    cursor *t;
    buf *out;
    const vt_rcols_comms *comms;
    lasts *cseq;
    uint64_t dur;
    lasts *snd; /* as rsplit's */
} rjoin;

static inline int join_val(rjoin *j, uint64_t *x)
{
    if (j->i >= j->n)
        return -1;
    *x = j->v[j->i++];
    return put_u(j->out, *x) ? 2 : 0;
}

static inline int join_seq(rjoin *j)
{
    if (j->i >= j->n)
        return -1;
    return put_u(j->out, j->seq + (uint64_t)vt_unzigzag(j->v[j->i++])) ? 2 : 0;
}

static inline int join_time(rjoin *j)
{
    const uint8_t *s = j->t->p;
    uint64_t u;
    if (get_u(&j->t->p, j->t->end, &u))
        return 1;
    return put_bytes(j->out, s, (size_t)(j->t->p - s)) ? 2 : 0;
}

static inline int join_msg_time(rjoin *j, uint64_t src)
{
    if (!j->snd)
        return join_time(j);
    int64_t r;
    last *l = sender_last(j->snd, src);
    if (!l)
        return 2;
    if (vt_get_svar(&j->t->p, j->t->end, &r))
        return 1;
    uint64_t y = l->v[0] + (uint64_t)r;
    l->v[0] = y;
    if (reserve(j->out, VT_UVAR_MAX))
        return 2;
    j->out->len = (size_t)(vt_put_svar(j->out->p + j->out->len, (int64_t)(y + j->dur)) - j->out->p);
    return 0;
}

static inline int join_comm(rjoin *j)
{
    if (j->i >= j->n)
        return -1;
    uint64_t x = j->v[j->i++], id;
    if (x == 0) {
        if (j->i >= j->n)
            return -1;
        id = j->v[j->i++];
    } else if (j->comms && x - 1 < j->comms->n) {
        id = j->comms->id[x - 1];
    } else {
        return 3;
    }
    uint64_t next, c;
    if (put_u(j->out, id))
        return 2;
    if (j->i >= j->n)
        return -1;
    if (cseq_next(j->cseq, id, &next))
        return 2;
    c = next + (uint64_t)vt_unzigzag(j->v[j->i++]);
    return put_u(j->out, c) || cseq_set(j->cseq, id, c) ? 2 : 0;
}

static int join_rtail(uint64_t kind, rjoin *j)
{
    unsigned k = (unsigned)(kind & VT_RREC_K_MASK);
    uint64_t x;
    int rc = 0;
    if (k == VT_RREC_NBCINIT) {
        if (!(rc = join_val(j, &x)) && !(rc = join_comm(j)))
            rc = join_val(j, &x);
    } else if (k == VT_RREC_COMP) {
        if ((rc = join_val(j, &x)) || (rc = join_val(j, &x)))
            return rc;
        for (int list = 0; list < 3 && !rc; list++) {
            uint64_t n;
            if ((rc = join_val(j, &n)))
                return rc;
            if (n > j->n - j->i)
                return -1;
            for (uint64_t i = 0; i < n && !rc; i++) {
                if (list == 2) {
                    if (!(rc = join_comm(j)) && !(rc = join_val(j, &x)))
                        rc = join_val(j, &x);
                    continue;
                }
                uint64_t peer;
                if ((rc = join_val(j, &peer)) || (rc = join_seq(j)) ||
                    (rc = list ? join_val(j, &x) : join_msg_time(j, peer)) || (rc = join_val(j, &x)))
                    return rc;
                if (list == 0 && !(rc = join_val(j, &x)) && x && !(rc = join_seq(j)))
                    rc = join_time(j);
            }
        }
    }
    if (!rc && (kind & VT_RREC_K_END) && !(rc = join_val(j, &x)))
        rc = join_time(j);
    return rc ? rc : j->i == j->n ? 0 : -1;
}

/* A reduced record of a function and call site met for the first time in the block is
 * predicted from the last record of its kind (with its bits): a rank's collectives at
 * different call sites have the same values. KIND_SITE keys the kinds' entries. */
#define KIND_SITE UINT64_MAX

int vt__rcols_seed(lasts *t, uint64_t key, uint64_t site, vals *tmp)
{
    last *k = lasts_get(t, key & 0xff, KIND_SITE);
    if (!k)
        return -1;
    tmp->n = 0;
    for (size_t i = 0; i < k->n; i++)
        if (vals_push(tmp, k->v[i]))
            return -1;
    last *l = lasts_get(t, key, site);
    if (!l)
        return -1;
    if (l->n || !tmp->n)
        return 0;
    if (set_values(t, l, tmp->v, tmp->n))
        return -1;
    l->seeded = 1;
    return 0;
}

/* After a record of KEY with the values V[0..n): the last of its kind. */
int vt__rcols_kind_set(lasts *t, uint64_t key, const uint64_t *v, size_t n)
{
    last *k = lasts_get(t, key & 0xff, KIND_SITE);
    return k ? set_values(t, k, v, n) : -1;
}

/* The same for a reduced record: also tag 3 (TAG_SPARSE) when it is shorter than tag 2,
 * and the prediction of a function and call site met first from the last record of its
 * kind (rseed), which is then this record. */
int vt__rcols_put(lasts *t, uint64_t code, uint64_t site, const vals *a, buf *f, vals *tmp)
{
    if (vt__rcols_seed(t, code, site, tmp))
        return -1;
    last *l = lasts_get(t, code, site);
    if (!l)
        return -1;
    uint64_t mask = 0;
    size_t same = 0;
    if (l->n == a->n && a->n <= 64)
        for (size_t i = 0; i < a->n; i++) {
            if (a->v[i] != l->v[i] + l->step[i])
                mask |= (uint64_t)1 << i;
            else
                same++;
        }
    uint8_t u[VT_UVAR_MAX];
    if (!mask || (size_t)(vt_put_uvar(u, mask) - u) >= same)
        return put_values(t, code, site, a, f) || vt__rcols_kind_set(t, code, a->v, a->n);
    if (put_u(f, TAG_SPARSE) || put_u(f, mask))
        return -1;
    for (size_t i = 0; i < a->n; i++) {
        if (!(mask >> i & 1))
            continue;
        if (reserve(f, VT_UVAR_MAX))
            return -1;
        f->len = (size_t)(vt_put_svar(f->p + f->len, (int64_t)(a->v[i] - l->v[i] - l->step[i])) - f->p);
    }
    return set_values(t, l, a->v, a->n) || vt__rcols_kind_set(t, code, a->v, a->n);
}

/* Packing: a reduced record after its kind, sequence-number delta, enter and duration:
 * its function and call site into the call-sites column (the function into *CODE, above
 * its kind), its times into COL's times column, its other values into A. Kept out of
 * pack()'s loop, which a full trace's records run through at every buffer flush. */
int vt__rcols_split(uint64_t *code, uint64_t *site, const uint8_t **p, const uint8_t *end, uint64_t seq, vals *a,
                    buf *col, const comm_map *comms, lasts *cseq, uint64_t dur, lasts *snd)
{
    rsplit sp = {p, end, seq, a, &col[COL_TIMES], comms, cseq, dur, snd};
    if (!rkind_ok(*code) || ((*code & VT_RREC_K_BURST) && split_val(&sp)))
        return -1;
    if (rkind_has_site(*code)) {
        uint64_t fnp;
        if (copy_var(p, end, &col[COL_SITES], &fnp) || copy_var(p, end, &col[COL_SITES], site))
            return -1;
        *code |= fnp << 8;
    }
    return split_rtail(*code, &sp);
}

int vt__rcols_join(uint64_t kind, int sited, uint64_t fnp, uint64_t site, const uint64_t *v, size_t n, uint64_t seq,
                   cursor *t, buf *out, const vt_rcols_comms *comms, lasts *cseq, uint64_t dur, lasts *snd)
{
    rjoin j = {v, n, 0, seq, t, out, comms, cseq, dur, snd};
    uint64_t x;
    int bad = (kind & VT_RREC_K_BURST) ? join_val(&j, &x) : 0;
    if (!bad && sited && (put_u(out, fnp) || put_u(out, site)))
        bad = 2;
    return bad ? bad : join_rtail(kind, &j);
}

/* Since 1.5 the enter, duration and times columns of a REDUCED_COLS block hold their
 * values split: uvar n, the low bytes of the n values, then each value shifted right by
 * 8 as a uvar. The low bytes of times are noise a compressor leaves as they are; the high
 * parts are small and repeat. In place; 0, or -1 without memory. */
int vt__rcols_squeeze(buf *b)
{
    const uint8_t *p = b->p, *end = b->p + b->len;
    uint64_t n = 0, u;
    while (p < end && !get_u(&p, end, &u))
        n++;
    buf o = {.max = b->max};
    if (put_u(&o, n) || reserve(&o, (size_t)n))
        goto nomem;
    size_t lo = o.len;
    o.len += (size_t)n;
    p = b->p;
    for (size_t i = 0; i < n; i++) {
        get_u(&p, end, &u);
        o.p[lo + i] = (uint8_t)u;
        if (put_u(&o, u >> 8))
            goto nomem;
    }
    free(b->p);
    *b = o;
    return 0;
nomem:
    free(o.p);
    return -1;
}

/* The inverse: the column at C made back into uvars in OUT, and C pointed at them. 0, or
 * -1 when it does not decode (no count, fewer bytes than it says, a high part past 56
 * bits, bytes after the last value), -2 without memory. */
int vt__rcols_expand(cursor *c, buf *out)
{
    const uint8_t *p = c->p, *end = c->end;
    uint64_t n, hi;
    out->len = 0;
    if (p == end)
        return 0;
    if (get_u(&p, end, &n) || n > (uint64_t)(end - p))
        return -1;
    const uint8_t *lo = p;
    p += n;
    for (uint64_t i = 0; i < n; i++) {
        if (get_u(&p, end, &hi) || hi >> 56)
            return -1;
        if (put_u(out, hi << 8 | lo[i]))
            return -2;
    }
    if (p != end)
        return -1;
    *c = (cursor){out->p, out->p + out->len};
    return 0;
}
