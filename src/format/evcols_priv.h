/* What EVENTS_COLS and REDUCED_COLS packing share (evcols.c; rcols.c the reduced
 * records' own): growable buffers, column cursors, the last values of each key and their
 * prediction. */
#ifndef VT_EVCOLS_PRIV_H
#define VT_EVCOLS_PRIV_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/evcols.h"
#include "format/reader.h"
#include "util/blockpool.h"
#include "util/codec.h"

/* The columns, in their order in the payload; REDUCED_COLS blocks have all but COL_FORM
 * (1.3, 1.4; REDUCED 1) or all (1.5; REDUCED 2), EVENTS_COLS blocks all but COL_SEQS,
 * COL_TIMES and COL_FORM. COL_FORM holds one byte, 1: a reader of 1.4 finds a byte
 * after the columns it knows, and refuses the block rather than misread it. */
enum { COL_CODES, COL_SEQS, COL_SITES, COL_ENTERS, COL_DURS, COL_TIMES, COL_FIELDS, COL_FORM, NCOLS };
static inline int col_in(int reduced, int c)
{
    return c == COL_FORM ? reduced == 2 : reduced || (c != COL_SEQS && c != COL_TIMES);
}

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

/* get_u() with the two-byte case inline too, for a record's fields (request ids, tags,
 * sizes: often two bytes). */
static inline int get_field(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < end && q[0] < 0x80) {
        *v = q[0];
        *p = q + 1;
        return 0;
    }
    if (end - q >= 2 && q[1] < 0x80) {
        *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
        *p = q + 2;
        return 0;
    }
    return vt_get_uvar(p, end, v);
}

/* ------------------------------------------------------------------ growable buffers */

typedef struct buf {
    uint8_t *p;
    size_t len, cap, max;
} buf;

static __attribute__((noinline, unused)) int grow(buf *b, size_t more)
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

/* Copies one varint from [*p, end) to B, its value in *V when V. One of at most 8 bytes,
 * with 8 bytes to read and room for 8, moves as one 8-byte word (the bytes past it are
 * written over next), its length found in that word: a call of memcpy for each of a
 * record's 4 varints was 65 instructions of the 340 the run time's flush packs a record
 * with, and the byte-by-byte decoding of the times another 30 (issue 18). */
static inline __attribute__((always_inline)) int copy_var(const uint8_t **p, const uint8_t *end, buf *b, uint64_t *v)
{
    const uint8_t *s = *p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (__builtin_expect(end - s >= 8 && b->cap - b->len >= 8, 1)) {
        uint64_t w;
        memcpy(&w, s, 8);
        uint64_t last = ~w & 0x8080808080808080u; /* (the high bit clear: a varint's last byte) */
        if (__builtin_expect(last != 0, 1)) {
            size_t n = (size_t)__builtin_ctzll(last) / 8 + 1;
            memcpy(b->p + b->len, &w, 8);
            b->len += n;
            *p = s + n;
            if (v) {
                uint64_t x = (w & 0x7f) | (w >> 1 & 0x7f << 7);
                for (size_t i = 2; i < n; i++)
                    x |= (w >> (8 * i) & 0x7f) << (7 * i);
                *v = n == 1 ? (w & 0x7f) : x;
            }
            return 0;
        }
    }
#endif
    uint64_t u;
    if (get_u(p, end, &u))
        return -1;
    if (put_bytes(b, s, (size_t)(*p - s)))
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
    uint32_t cap, n;
    struct vt_blockpool *pool; /* of the table and the values; NULL: malloc's */
} lasts;

static inline size_t home(uint64_t code, uint64_t site, size_t cap)
{
    uint64_t x = code * 0x9e3779b97f4a7c15u ^ (site + 0x632be59bd9b4e019u);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    return (size_t)x & (cap - 1);
}

static __attribute__((noinline, unused)) int lasts_grow(lasts *t)
{
    size_t nc = t->cap ? 2 * (size_t)t->cap : 64;
    last *ne = vt_blockpool_calloc(t->pool, nc * sizeof *ne);
    if (!ne)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].used) {
            size_t h = home(t->e[i].code, t->e[i].site, nc);
            while (ne[h].used)
                h = (h + 1) & (nc - 1);
            ne[h] = t->e[i];
        }
    vt_blockpool_free(t->pool, t->e, t->cap * sizeof *t->e);
    t->e = ne;
    t->cap = (uint32_t)nc;
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

static inline void lasts_free(lasts *t)
{
    for (size_t i = 0; i < t->cap; i++) /* (v and step, side by side in one block) */
        vt_blockpool_free(t->pool, t->e[i].v, 2 * t->e[i].cap * sizeof *t->e[i].v);
    vt_blockpool_free(t->pool, t->e, t->cap * sizeof *t->e);
}

/* Records V[0..n) as the last values; the steps are the differences to the values
 * before when they had the same count, else 0. */
static inline int set_values(const lasts *t, last *l, const uint64_t *v, size_t n)
{
    if (n > l->cap) {
        /* the values and their steps in one block, side by side: a record reads both */
        uint64_t *nv = vt_blockpool_alloc(t->pool, 2 * n * sizeof *nv);
        if (!nv)
            return -1;
        vt_blockpool_free(t->pool, l->v, 2 * l->cap * sizeof *l->v);
        l->v = nv;
        l->step = nv + n;
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

typedef vt_evcols_vals vals;

static __attribute__((noinline, unused)) int vals_grow(vals *a)
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

static inline int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The letters of a record's fields: a call's layout, or those of a special record. NULL
 * for a code that is not known. */
static inline const char *fields_of(uint64_t code, const vt_evcols_funcs *fn)
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
        if (get_field(p, end, &u) || vals_push(a, u))
            return -1;
        if (*l == 'R' || *l == 'k') {
            uint64_t n = u, per = *l == 'R' ? 1 : 5;
            if (n > (uint64_t)(end - *p) / per)  /* each value takes a byte at least */
                return -1;
            /* (room for the list made once) */
            while (a->cap - a->n < n * per)
                if (vals_grow(a))
                    return -1;
            uint64_t *v = a->v + a->n;
            for (uint64_t i = 0; i < n * per; i++)
                if (get_field(p, end, &v[i]))
                    return -1;
            a->n += (size_t)(n * per);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ record by record */

/* The decoder of vt_evcols_dec_start (evcols.c) and vt__fast_next (reader_fast.c): the
 * columns' cursors, the last values of each (code, call site) and, as a shortcut to
 * them, the entry last used of each hash of (code, call site) (its index + 1, 0 none;
 * all cleared when the table moves: a new block, or the table grown). */
/* vt__fast_next's shortcut for a (code, call site) whose records come as predicted
 * (TAG_SAME, the steps unchanged): where each value goes in the event, the checks of its
 * values made once, by the record the plan was made after (every value checked has step
 * 0, so that they stay as checked). A plan is dropped with its entry's steps (a record
 * of another tag) and with the table (a new block, or the table grown). One line, at a
 * line boundary, with what a record of the plan reads: its entry's code, call site and
 * values too (at 16K ranks the decoder is cold when its rank's turn comes; the entry
 * would be one or two lines more). */
enum { FAST_PLANS = 8, FAST_PLAN_OPS = 11, FAST_PLAN_NONE = 0xff };
typedef struct fast_plan {
    _Alignas(64) uint64_t *v; /* the entry's values, its steps at v + stepoff */
    uint32_t code, site;      /* the entry's */
    int32_t callsite;         /* its records' callsite and fields (vt_event's) */
    unsigned fields;
    uint8_t owner;  /* the entry's index in t + 1 (0: none) */
    uint8_t live;   /* owner when its records have a plan, 0 when not (taken the long way until dropped) */
    uint8_t stepoff;
    uint8_t nops, nplain;        /* its ops: the first nplain copies, the others zigzags */
    uint8_t started_at, done_at; /* the value index of the count of R, of k (FAST_PLAN_NONE) */
    uint8_t nmove;               /* the values whose step is not 0 (FAST_PLAN_NONE: too many) */
    uint8_t vi[FAST_PLAN_OPS];   /* an op's value index */
    uint8_t at[FAST_PLAN_OPS];   /* its field's byte offset in vt_event */
    uint8_t move[FAST_PLAN_OPS - 1];
} fast_plan;
_Static_assert(sizeof(fast_plan) == 64, "a plan is one line");

struct vt_evcols_dec {
    /* (what each record reads, from a line boundary, in three lines: a decoder per rank,
     * cold when its rank's turn comes at 16K ranks. vt__fast_next reads a call's layout
     * from the rank's function table, not from fn.) */
    _Alignas(64) cursor c[NCOLS];
    lasts t;
    vals *a;             /* own, or shared scratch */
    uint8_t hint[32];    /* the entry of t last used for a hash, its index + 1 (0 none) */
    /* (line 3) */
    vt_evcols_funcs fn;
    vals own;
    fast_plan plan[FAST_PLANS]; /* by the entry's index in t, modulo FAST_PLANS */
};

/* A reduced record's kind with its bits (VT_RREC_K_*), as the reader accepts it. */
static inline int rkind_ok(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    if (kind > (VT_RREC_K_MASK | VT_RREC_K_BURST | VT_RREC_K_END) || k < VT_RREC_START || k > VT_RREC_END)
        return 0;
    return !(kind & ~VT_RREC_K_MASK) || (k != VT_RREC_START && k != VT_RREC_END);
}

static inline int rkind_has_site(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    return k == VT_RREC_CAND || k == VT_RREC_COMP || k == VT_RREC_NBCINIT;
}

/* Whether a reduced record of KIND has values in the fields column. */
static inline int rkind_has_values(uint64_t kind)
{
    uint64_t k = kind & VT_RREC_K_MASK;
    return (kind & (VT_RREC_K_BURST | VT_RREC_K_END)) || k == VT_RREC_COMP || k == VT_RREC_NBCINIT;
}


/* A communicator id (a 64-bit hash, doc/format.md) is a value: 1 + its place in the rank's
 * communicator table (the first with that id), or 0 and the id when it is not there.
 * Packing looks ids up in a map made for the block. */
typedef struct comm_map {
    uint64_t *id;  /* open addressing; slot empty when at[] is 0 */
    size_t *at;    /* place + 1 */
    size_t cap;
} comm_map;

/* rcols.c: the reduced records' parts of pack() and unpack() (evcols.c) */
int vt__rcols_comm_map(comm_map *m, const vt_rcols_comms *c);
/* Packing: a reduced record after its kind, sequence-number delta, enter and duration. */
int vt__rcols_split(uint64_t *code, uint64_t *site, const uint8_t **p, const uint8_t *end, uint64_t seq, vals *a,
                    buf *col, const comm_map *comms, lasts *cseq, uint64_t dur, lasts *snd);
/* Packing: the values A of a record of CODE and SITE into the fields column F. */
int vt__rcols_put(lasts *t, uint64_t code, uint64_t site, const vals *a, buf *f, vals *tmp);
/* Unpacking: the prediction of a key met first; the last record of its kind. */
int vt__rcols_seed(lasts *t, uint64_t key, uint64_t site, vals *tmp);
int vt__rcols_kind_set(lasts *t, uint64_t key, const uint64_t *v, size_t n);
/* Unpacking: the values of a record of KIND written as they are (tag 1). */
int vt__rcols_read(uint64_t kind, const uint8_t **p, const uint8_t *end, vals *a);
/* Unpacking: the REDUCED bytes of a record's values V[0..n) after its duration (its
 * function FNP and call site SITE when SITED), times from T. Returns 0; -1 the values do
 * not fit the kind, 1 a time is missing, 2 no room, 3 a communicator past COMMS. */
int vt__rcols_join(uint64_t kind, int sited, uint64_t fnp, uint64_t site, const uint64_t *v, size_t n, uint64_t seq,
                   cursor *t, buf *out, const vt_rcols_comms *comms, lasts *cseq, uint64_t dur, lasts *snd);

/* 1.5: a time column split into low bytes and high parts, and back (rcols.c) */
int vt__rcols_squeeze(buf *b);
int vt__rcols_expand(cursor *c, buf *out);
/* the columns split so since 1.5 */
static inline int col_squeezed(int c) { return c == COL_ENTERS || c == COL_DURS || c == COL_TIMES; }

/* The values A of a record of KEY into the fields column F: "as predicted", the
 * differences to the prediction, or the values themselves. */
static inline int put_values(lasts *t, uint64_t code, uint64_t site, const vals *a, buf *f)
{
    last *l = lasts_get(t, code, site);
    if (!l)
        return -1;
    size_t n = a->n;
    if (l->n == n && !l->seeded) { /* (as predicted, the common case: the steps stay) */
        size_t i = 0;
        while (i < n && a->v[i] == l->v[i] + l->step[i])
            i++;
        if (i == n) {
            if (reserve(f, 1))
                return -1;
            f->p[f->len++] = TAG_SAME;
            memcpy(l->v, a->v, n * sizeof *a->v);
            return 0;
        }
    }
    if (as_predicted(l, a->v, a->n)) {
        if (put_u(f, TAG_SAME))
            return -1;
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
    return set_values(t, l, a->v, a->n);
}

#endif
