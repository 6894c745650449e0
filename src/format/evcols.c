/* EVENTS_COLS packing and unpacking; see evcols.h and doc/format.md. */
#include "vt_config.h"
#include "format/evcols.h"
#include "format/reader.h"
#include "util/codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns, in their order in the payload; REDUCED_COLS blocks have all seven,
 * EVENTS_COLS blocks all but COL_SEQS and COL_TIMES. */
enum { COL_CODES, COL_SEQS, COL_SITES, COL_ENTERS, COL_DURS, COL_TIMES, COL_FIELDS, NCOLS };
static const char *const col_name[NCOLS] = {"codes", "sequence numbers", "call sites", "enter times", "durations",
                                            "times", "fields"};

static inline int col_in(int reduced, int c) { return reduced || (c != COL_SEQS && c != COL_TIMES); }

/* TAG_SPARSE (REDUCED_COLS only): a mask of the values that differ from the prediction
 * (bit i: value i, at most 64 values), then their differences */
enum { TAG_SAME = 0, TAG_LITERAL = 1, TAG_DELTA = 2, TAG_SPARSE = 3 };

/* vt_get_uvar with the one-byte case first: most values in MPI traces are small. */
static inline int get_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    if (*p < end && **p < 0x80) {
        *v = *(*p)++;
        return 0;
    }
    return vt_get_uvar(p, end, v);
}

/* ------------------------------------------------------------------ growable buffers */

typedef struct buf {
    uint8_t *p;
    size_t len, cap, max;
} buf;

static __attribute__((noinline)) int grow(buf *b, size_t more)
{
    if (b->len + more > b->max)
        return -1;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + more)
        nc *= 2;
    if (nc > b->max)
        nc = b->max;
    uint8_t *n = realloc(b->p, nc);
    if (!n)
        return -1;
    b->p = n;
    b->cap = nc;
    return 0;
}

static inline int reserve(buf *b, size_t more) { return b->len + more <= b->cap ? 0 : grow(b, more); }

static inline int put_bytes(buf *b, const uint8_t *p, size_t n)
{
    if (reserve(b, n))
        return -1;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static inline int put_u(buf *b, uint64_t v)
{
    if (reserve(b, VT_UVAR_MAX))
        return -1;
    b->len = (size_t)(vt_put_uvar(b->p + b->len, v) - b->p);
    return 0;
}

/* Copies one varint from [*p, end) to B. */
static inline int copy_var(const uint8_t **p, const uint8_t *end, buf *b, uint64_t *v)
{
    const uint8_t *s = *p;
    uint64_t u;
    if (get_u(p, end, &u) || put_bytes(b, s, (size_t)(*p - s)))
        return -1;
    if (v)
        *v = u;
    return 0;
}

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

/* ------------------------------------------------------------------ the last fields of each (code, call site) */

/* A (code, call site)'s last values and how much each moved from the one before: the
 * next record's values are predicted as v + step (request ids that grow by the same
 * amount, a tag that counts iterations, and unchanged peers and sizes are all "as
 * predicted"). */
typedef struct last {
    uint64_t code, site;
    uint64_t *v, *step;
    size_t n, cap;
    int used;
    int seeded; /* v is another entry's (rseed): the next values set no step */
} last;

typedef struct lasts {
    last *e;
    size_t cap, n;
} lasts;

static size_t home(uint64_t code, uint64_t site, size_t cap)
{
    uint64_t x = code * 0x9e3779b97f4a7c15u ^ (site + 0x632be59bd9b4e019u);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    return (size_t)x & (cap - 1);
}

static __attribute__((noinline)) int lasts_grow(lasts *t)
{
    size_t nc = t->cap ? 2 * t->cap : 64;
    last *ne = calloc(nc, sizeof *ne);
    if (!ne)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].used) {
            size_t h = home(t->e[i].code, t->e[i].site, nc);
            while (ne[h].used)
                h = (h + 1) & (nc - 1);
            ne[h] = t->e[i];
        }
    free(t->e);
    t->e = ne;
    t->cap = nc;
    return 0;
}

/* The entry of (code, site), made empty when new; NULL without memory. */
static inline last *lasts_get(lasts *t, uint64_t code, uint64_t site)
{
    if (t->cap) {
        size_t h = home(code, site, t->cap);
        for (; t->e[h].used; h = (h + 1) & (t->cap - 1))
            if (t->e[h].code == code && t->e[h].site == site)
                return &t->e[h];
    }
    if (2 * (t->n + 1) > t->cap && lasts_grow(t))
        return NULL;
    size_t h = home(code, site, t->cap);
    while (t->e[h].used)
        h = (h + 1) & (t->cap - 1);
    t->e[h] = (last){.code = code, .site = site, .used = 1};
    t->n++;
    return &t->e[h];
}

static void lasts_free(lasts *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        free(t->e[i].v);
        free(t->e[i].step);
    }
    free(t->e);
}

/* Records V[0..n) as the last values; the steps are the differences to the values
 * before when they had the same count, else 0. */
static inline int set_values(last *l, const uint64_t *v, size_t n)
{
    if (n > l->cap) {
        uint64_t *nv = realloc(l->v, n * sizeof *nv);
        if (nv)
            l->v = nv;
        uint64_t *ns = nv ? realloc(l->step, n * sizeof *ns) : NULL;
        if (!ns)
            return -1;
        l->step = ns;
        l->cap = n;
        l->n = 0;
    }
    if (l->n == n && !l->seeded) {
        for (size_t i = 0; i < n; i++) {
            l->step[i] = v[i] - l->v[i];
            l->v[i] = v[i];
        }
    } else {
        memcpy(l->v, v, n * sizeof *v);
        memset(l->step, 0, n * sizeof *l->step);
        l->n = n;
    }
    l->seeded = 0;
    return 0;
}

/* Whether V[0..n) are the predicted values of L. */
static inline int as_predicted(const last *l, const uint64_t *v, size_t n)
{
    if (l->n != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != l->v[i] + l->step[i])
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ a record's fields as values */

typedef struct vals {
    uint64_t *v;
    size_t n, cap;
} vals;

static __attribute__((noinline)) int vals_grow(vals *a)
{
    size_t nc = a->cap ? 2 * a->cap : 64;
    uint64_t *n = realloc(a->v, nc * sizeof *n);
    if (!n)
        return -1;
    a->v = n;
    a->cap = nc;
    return 0;
}

static inline int vals_push(vals *a, uint64_t x)
{
    if (a->n == a->cap && vals_grow(a))
        return -1;
    a->v[a->n++] = x;
    return 0;
}

/* The letters of a record's fields: a call's layout, or those of a special record. NULL
 * for a code that is not known. */
static const char *fields_of(uint64_t code, const vt_evcols_funcs *fn)
{
    switch (code) {
    case VT_CODE_FLUSH: return "";
    case VT_CODE_MARKER: return "uo"; /* uvar kind, svar value */
    case VT_CODE_STOPPED: return "u";
    default:
        if (code >= VT_CODE_FIRST_FN && code - VT_CODE_FIRST_FN < fn->nfn)
            return fn->layout[code - VT_CODE_FIRST_FN];
        return NULL;
    }
}

/* Reads the fields of LETTERS from [*p, end) into A, each as the uvar it is stored as
 * (signed fields in their zigzag form). Returns 0, or -1 when they run past end or do
 * not decode. */
static inline int read_fields(const char *letters, const uint8_t **p, const uint8_t *end, vals *a)
{
    uint64_t u;
    for (const char *l = letters; *l; l++) {
        if (get_u(p, end, &u) || vals_push(a, u))
            return -1;
        if (*l == 'R' || *l == 'k') {
            uint64_t n = u, per = *l == 'R' ? 1 : 5;
            if (n > (uint64_t)(end - *p))  /* each value takes a byte at least */
                return -1;
            for (uint64_t i = 0; i < n * per; i++)
                if (get_u(p, end, &u) || vals_push(a, u))
                    return -1;
        }
    }
    return 0;
}

/* Writes the values V[0..n) as the fields of LETTERS. Returns 0, or -1 when the values
 * do not fit the letters (too few, too many, or no room). Signed fields were read as
 * their zigzag encoding, so every value is written as a uvar. */
static int write_fields(const char *letters, const uint64_t *v, size_t n, buf *out)
{
    size_t i = 0;
    for (const char *l = letters; *l; l++) {
        if (i >= n || put_u(out, v[i]))
            return -1;
        uint64_t k = v[i++];
        if (*l == 'R' || *l == 'k') {
            uint64_t more = k * (*l == 'R' ? 1 : 5);
            if (k > n || more > n - i)
                return -1;
            for (uint64_t j = 0; j < more; j++)
                if (put_u(out, v[i++]))
                    return -1;
        }
    }
    return i == n ? 0 : -1;
}

/* ------------------------------------------------------------------ reduced records' values */

/* A reduced record's values (doc/format.md, REDUCED_COLS) go two ways. The times of other
 * events it holds (each message's S - enter and P - enter, END's time) go into the times
 * column as stored: they are what such a record costs, like an enter or a duration, and
 * no prediction guesses them. The others, mostly the same from one record to the next
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
} rsplit;

/* A communicator id (a 64-bit hash, doc/format.md) is a value: 1 + its place in the rank's
 * communicator table (the first with that id), or 0 and the id when it is not there.
 * Packing looks ids up in a map made for the block. */
typedef struct comm_map {
    uint64_t *id;  /* open addressing; slot empty when at[] is 0 */
    size_t *at;    /* place + 1 */
    size_t cap;
} comm_map;

static size_t comm_home(uint64_t id, size_t cap)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdu;
    id ^= id >> 33;
    return (size_t)id & (cap - 1);
}

static int comm_map_make(comm_map *m, const vt_rcols_comms *c)
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
    return l ? set_values(l, &next, 1) : -1;
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
                bad = split_val(s) || split_seq(s) || (list ? split_val(s) : split_time(s)) || split_val(s);
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
static int read_rvals(uint64_t kind, const uint8_t **p, const uint8_t *end, vals *a)
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
                if ((rc = join_val(j, &x)) || (rc = join_seq(j)) || (rc = list ? join_val(j, &x) : join_time(j)) ||
                    (rc = join_val(j, &x)))
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

/* ------------------------------------------------------------------ packing */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A reduced record's kind with its bits (VT_RREC_K_*), as the reader accepts it. */
static int rkind_ok(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    if (kind > (VT_RREC_K_MASK | VT_RREC_K_BURST | VT_RREC_K_END) || k < VT_RREC_START || k > VT_RREC_END)
        return 0;
    return !(kind & ~VT_RREC_K_MASK) || (k != VT_RREC_START && k != VT_RREC_END);
}

static int rkind_has_site(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    return k == VT_RREC_CAND || k == VT_RREC_COMP || k == VT_RREC_NBCINIT;
}

/* Whether a reduced record of KIND has values in the fields column. */
static int rkind_has_values(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    return (kind & (VT_RREC_K_BURST | VT_RREC_K_END)) || k == VT_RREC_COMP || k == VT_RREC_NBCINIT;
}

/* A reduced record of a function and call site met for the first time in the block is
 * predicted from the last record of its kind (with its bits): a rank's collectives at
 * different call sites have the same values. KIND_SITE keys the kinds' entries. */
#define KIND_SITE UINT64_MAX

static int rseed(lasts *t, uint64_t key, uint64_t site, vals *tmp)
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
    if (set_values(l, tmp->v, tmp->n))
        return -1;
    l->seeded = 1;
    return 0;
}

/* After a record of KEY with the values V[0..n): the last of its kind. */
static int rkind_set(lasts *t, uint64_t key, const uint64_t *v, size_t n)
{
    last *k = lasts_get(t, key & 0xff, KIND_SITE);
    return k ? set_values(k, v, n) : -1;
}

/* The values A of a record of KEY into the fields column F: "as predicted", the
 * differences to the prediction, or the values themselves. */
static int put_values(lasts *t, uint64_t code, uint64_t site, const vals *a, buf *f, int sparse)
{
    last *l = lasts_get(t, code, site);
    if (!l)
        return -1;
    uint64_t mask = 0;
    size_t same = 0;
    if (sparse && l->n == a->n && a->n <= 64)
        for (size_t i = 0; i < a->n; i++) {
            if (a->v[i] != l->v[i] + l->step[i])
                mask |= (uint64_t)1 << i;
            else
                same++;
        }
    uint8_t tmp[VT_UVAR_MAX];
    if (as_predicted(l, a->v, a->n)) {
        if (put_u(f, TAG_SAME))
            return -1;
    } else if (mask && (size_t)(vt_put_uvar(tmp, mask) - tmp) < same) {
        if (put_u(f, TAG_SPARSE) || put_u(f, mask))
            return -1;
        for (size_t i = 0; i < a->n; i++) {
            if (!(mask >> i & 1))
                continue;
            if (reserve(f, VT_UVAR_MAX))
                return -1;
            f->len = (size_t)(vt_put_svar(f->p + f->len, (int64_t)(a->v[i] - l->v[i] - l->step[i])) - f->p);
        }
    } else if (l->n == a->n) {
        if (put_u(f, TAG_DELTA))
            return -1;
        for (size_t i = 0; i < a->n; i++) {
            if (reserve(f, VT_UVAR_MAX))
                return -1;
            f->len = (size_t)(vt_put_svar(f->p + f->len, (int64_t)(a->v[i] - l->v[i] - l->step[i])) - f->p);
        }
    } else {
        if (put_u(f, TAG_LITERAL))
            return -1;
        for (size_t i = 0; i < a->n; i++)
            if (put_u(f, a->v[i]))
                return -1;
    }
    return set_values(l, a->v, a->n);
}

/* Packing: a reduced record after its kind, sequence-number delta, enter and duration:
 * its function and call site into the call-sites column (the function into *CODE, above
 * its kind), its times into COL's times column, its other values into A. Kept out of
 * pack()'s loop, which a full trace's records run through at every buffer flush. */
static __attribute__((noinline)) int split_rrec(uint64_t *code, uint64_t *site, const uint8_t **p, const uint8_t *end,
                                                uint64_t seq, vals *a, buf *col, const comm_map *comms, lasts *cseq)
{
    rsplit sp = {p, end, seq, a, &col[COL_TIMES], comms, cseq};
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

static int pack(int reduced, const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn,
                const vt_rcols_comms *rcomms, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    const uint8_t *p = in, *end = in + len;
    buf col[NCOLS] = {{0}}, hdr = {0};
    for (int c = 0; c < NCOLS; c++)
        col[c].max = (size_t)VT_BLOCK_MAX_RAW;
    hdr.max = 4 * VT_UVAR_MAX + NCOLS * VT_UVAR_MAX;
    lasts t = {0}, cseq = {0};
    vals a = {0}, tmp = {0};
    comm_map comms = {0};
    int rc = -1;
    uint64_t first, base_seq = 0, seq;
    int64_t base;
    if (reduced && comm_map_make(&comms, rcomms))
        goto nomem;
    if (vt_get_uvar(&p, end, &first) || vt_get_svar(&p, end, &base) ||
        (reduced && vt_get_uvar(&p, end, &base_seq))) {
        fail(err, errlen, "the block header does not decode");
        goto out;
    }
    seq = base_seq;
    for (uint32_t r = 0; r < nrec; r++) {
        uint64_t code = 0, site = 0;
        int bad = copy_var(&p, end, &col[COL_CODES], &code);
        if (reduced && !bad) {
            uint64_t dseq;
            bad = copy_var(&p, end, &col[COL_SEQS], &dseq);
            seq += dseq;
        }
        bad = bad || copy_var(&p, end, &col[COL_ENTERS], NULL) || copy_var(&p, end, &col[COL_DURS], NULL);
        a.n = 0;
        if (!bad && !reduced) {
            const char *letters = fields_of(code, fn);
            bad = (code >= VT_CODE_FIRST_FN && copy_var(&p, end, &col[COL_SITES], &site)) || !letters ||
                  read_fields(letters, &p, end, &a);
        } else if (!bad) {
            bad = split_rrec(&code, &site, &p, end, seq, &a, col, &comms, &cseq);
        }
        if (bad) {
            fail(err, errlen, "record %u does not decode", r);
            goto out;
        }
        if (a.n && ((reduced && rseed(&t, code, site, &tmp)) || put_values(&t, code, site, &a, &col[COL_FIELDS], reduced) ||
                    (reduced && rkind_set(&t, code, a.v, a.n))))
            goto nomem;
    }
    if (p != end) {
        fail(err, errlen, "%zu bytes after the last record", (size_t)(end - p));
        goto out;
    }
    if (reserve(&hdr, hdr.max))
        goto nomem;
    hdr.len = (size_t)(vt_put_svar(vt_put_uvar(hdr.p, first), base) - hdr.p);
    if (reduced)
        hdr.len = (size_t)(vt_put_uvar(hdr.p + hdr.len, base_seq) - hdr.p);
    size_t total = 0;
    for (int c = 0; c < NCOLS; c++) {
        if (!col_in(reduced, c))
            continue;
        hdr.len = (size_t)(vt_put_uvar(hdr.p + hdr.len, col[c].len) - hdr.p);
        total += col[c].len;
    }
    uint8_t *o = malloc(hdr.len + total + 1);
    if (!o)
        goto nomem;
    memcpy(o, hdr.p, hdr.len);
    size_t at = hdr.len;
    for (int c = 0; c < NCOLS; c++) {
        if (col[c].len)
            memcpy(o + at, col[c].p, col[c].len);
        at += col[c].len;
    }
    *out = o;
    *outlen = at;
    rc = 0;
    goto out;
nomem:
    fail(err, errlen, "out of memory");
out:
    for (int c = 0; c < NCOLS; c++)
        free(col[c].p);
    free(hdr.p);
    free(a.v);
    free(tmp.v);
    free(comms.id);
    free(comms.at);
    lasts_free(&t);
    lasts_free(&cseq);
    return rc;
}

int vt_evcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen)
{
    return pack(0, in, len, nrec, fn, NULL, out, outlen, err, errlen);
}

int vt_rcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, uint8_t **out,
                  size_t *outlen, char *err, size_t errlen)
{
    return pack(1, in, len, nrec, NULL, comms, out, outlen, err, errlen);
}

/* ------------------------------------------------------------------ unpacking */

static int unpack(int reduced, const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn,
                  const vt_rcols_comms *comms, size_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    const uint8_t *p = in, *end = in + len;
    buf o = {.max = max_out};
    lasts t = {0}, cseq = {0};
    vals a = {0}, tmp = {0};
    cursor c[NCOLS] = {{0}};
    uint64_t first, base_seq = 0, seq, clen[NCOLS] = {0};
    int64_t base;
    int rc = -1;
    if (vt_get_uvar(&p, end, &first) || vt_get_svar(&p, end, &base) ||
        (reduced && vt_get_uvar(&p, end, &base_seq))) {
        fail(err, errlen, "expected the block header at byte 0");
        goto out;
    }
    for (int k = 0; k < NCOLS; k++)
        if (col_in(reduced, k) && vt_get_uvar(&p, end, &clen[k])) {
            fail(err, errlen, "expected the length of the %s column at byte %zu", col_name[k], (size_t)(p - in));
            goto out;
        }
    for (int k = 0; k < NCOLS; k++) {
        if (clen[k] > (uint64_t)(end - p)) {
            fail(err, errlen, "expected %llu bytes of the %s column at byte %zu, found %zu",
                 (unsigned long long)clen[k], col_name[k], (size_t)(p - in), (size_t)(end - p));
            goto out;
        }
        c[k] = (cursor){p, p + clen[k]};
        p += clen[k];
    }
    if (p != end) {
        fail(err, errlen, "expected the payload to end after the columns at byte %zu, found %zu more bytes",
             (size_t)(p - in), (size_t)(end - p));
        goto out;
    }
    if (put_u(&o, first) || reserve(&o, VT_UVAR_MAX))
        goto room;
    o.len = (size_t)(vt_put_svar(o.p + o.len, base) - o.p);
    if (reduced && put_u(&o, base_seq))
        goto room;
    seq = base_seq;
    for (uint32_t r = 0; r < nrec; r++) {
        uint64_t code = 0, site = 0, fnp = 0, u = 0, dseq = 0;
        int k = -1;
        if (get_u(&c[COL_CODES].p, c[COL_CODES].end, &code))
            k = COL_CODES;
        else if (put_u(&o, code))
            goto room;
        else if (reduced && get_u(&c[COL_SEQS].p, c[COL_SEQS].end, &dseq))
            k = COL_SEQS;
        else if (reduced && put_u(&o, dseq))
            goto room;
        else if (get_u(&c[COL_ENTERS].p, c[COL_ENTERS].end, &u))
            k = COL_ENTERS;
        else if (put_u(&o, u))
            goto room;
        else if (get_u(&c[COL_DURS].p, c[COL_DURS].end, &u))
            k = COL_DURS;
        else if (put_u(&o, u))
            goto room;
        seq += dseq;
        int sited = reduced ? rkind_ok(code) && rkind_has_site(code) : code >= VT_CODE_FIRST_FN;
        if (k < 0 && sited && reduced && get_u(&c[COL_SITES].p, c[COL_SITES].end, &fnp))
            k = COL_SITES;
        if (k < 0 && sited && get_u(&c[COL_SITES].p, c[COL_SITES].end, &site))
            k = COL_SITES;
        if (k >= 0) {
            fail(err, errlen, "record %u: expected a value in the %s column at byte %zu", r, col_name[k],
                 (size_t)(c[k].p - in));
            goto out;
        }
        const char *letters = NULL;
        int has_values;
        if (reduced) {
            if (!rkind_ok(code)) {
                fail(err, errlen, "record %u: expected a reduced record kind, found %llu", r, (unsigned long long)code);
                goto out;
            }
            has_values = rkind_has_values(code);
        } else {
            if (!(letters = fields_of(code, fn))) {
                fail(err, errlen, "record %u: expected a known record code, found %llu", r, (unsigned long long)code);
                goto out;
            }
            if (sited && put_u(&o, site))
                goto room;
            has_values = *letters != 0;
        }
        a.n = 0;
        uint64_t key = reduced ? code | fnp << 8 : code;
        if (has_values) {
            cursor *f = &c[COL_FIELDS];
            const uint8_t *at = f->p;
            uint64_t tag, mask = ~(uint64_t)0;
            if (get_u(&f->p, f->end, &tag) || tag > (reduced ? TAG_SPARSE : TAG_DELTA) ||
                (tag == TAG_SPARSE && get_u(&f->p, f->end, &mask))) {
                fail(err, errlen, "record %u: expected a tag 0-%d in the fields column at byte %zu", r,
                     reduced ? TAG_SPARSE : TAG_DELTA, (size_t)(at - in));
                goto out;
            }
            if (reduced && rseed(&t, key, site, &tmp))
                goto nomem;
            last *l = lasts_get(&t, key, site);
            if (!l)
                goto nomem;
            if (tag == TAG_LITERAL) {
                int bad = reduced ? read_rvals(code, &f->p, f->end, &a) : read_fields(letters, &f->p, f->end, &a);
                if (bad) {
                    fail(err, errlen, "record %u: expected the values of code %llu in the fields column at byte %zu", r,
                         (unsigned long long)code, (size_t)(at - in));
                    goto out;
                }
            } else if (!l->n || (tag == TAG_SPARSE && (l->n > 64 || (l->n < 64 && mask >> l->n)))) {
                fail(err, errlen, "record %u: values given as %s an earlier record of code %llu at byte %zu, found %s", r,
                     tag == TAG_SAME ? "those of" : "differences to", (unsigned long long)code, (size_t)(at - in),
                     l->n ? "a mask past its values" : "none");
                goto out;
            } else {
                for (size_t i = 0; i < l->n; i++) {
                    int64_t d = 0;
                    int differs = tag == TAG_DELTA || (tag == TAG_SPARSE && (mask >> i & 1));
                    if (differs && vt_get_svar(&f->p, f->end, &d)) {
                        fail(err, errlen, "record %u: expected %zu differences in the fields column at byte %zu", r,
                             l->n, (size_t)(at - in));
                        goto out;
                    }
                    if (vals_push(&a, l->v[i] + l->step[i] + (uint64_t)d))
                        goto nomem;
                }
            }
            if (set_values(l, a.v, a.n) || (reduced && rkind_set(&t, key, a.v, a.n)))
                goto nomem;
        }
        /* the values where the record has them */
        int bad;
        if (reduced) {
            rjoin j = {a.v, a.n, 0, seq, &c[COL_TIMES], &o, comms, &cseq};
            uint64_t x;
            bad = (code & VT_RREC_K_BURST) ? join_val(&j, &x) : 0;
            if (!bad && sited && (put_u(&o, fnp) || put_u(&o, site)))
                bad = 2;
            if (!bad)
                bad = join_rtail(code, &j);
            if (bad == 1) {
                fail(err, errlen, "record %u: expected a time in the times column at byte %zu", r,
                     (size_t)(c[COL_TIMES].p - in));
                goto out;
            }
            if (bad == 2)
                goto room;
            if (bad == 3) {
                fail(err, errlen, "record %u: expected a communicator of the rank's table (%zu entries), found one past it",
                     r, comms ? comms->n : 0);
                goto out;
            }
        } else {
            bad = has_values && write_fields(letters, a.v, a.n, &o);
        }
        if (bad) {
            if (o.len + VT_UVAR_MAX > o.max)
                goto room;
            fail(err, errlen, "record %u: its values in the fields column do not fit its code %llu", r,
                 (unsigned long long)code);
            goto out;
        }
    }
    for (int k = 0; k < NCOLS; k++)
        if (c[k].p != c[k].end) {
            fail(err, errlen, "expected the %s column to end after record %u at byte %zu, found %zu more bytes",
                 col_name[k], nrec, (size_t)(c[k].p - in), (size_t)(c[k].end - c[k].p));
            goto out;
        }
    *out = o.p;
    *outlen = o.len;
    o.p = NULL;
    rc = 0;
    goto out;
room:
    fail(err, errlen, "expected the unpacked records to fit in %zu bytes", max_out);
    goto out;
nomem:
    fail(err, errlen, "out of memory");
out:
    free(o.p);
    free(tmp.v);
    free(a.v);
    lasts_free(&t);
    lasts_free(&cseq);
    return rc;
}

int vt_evcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, size_t max_out,
                     uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    return unpack(0, in, len, nrec, fn, NULL, max_out, out, outlen, err, errlen);
}

int vt_rcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, size_t max_out,
                    uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    return unpack(1, in, len, nrec, NULL, comms, max_out, out, outlen, err, errlen);
}
