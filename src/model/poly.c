/* Min-plus polynomials (model.md §4): canonical forms, operations, overflow, encoding.
 * See poly.h for the representation, the order and the capacity rule. */
#include "model/poly.h"

#include <stdio.h>
#include <string.h>

#include "util/codec.h"

_Static_assert(sizeof(vt_var) == 16, "vt_var must have no padding");
_Static_assert(VT_POLY_MAX_VARS <= 31, "the encoding holds at most 31 variables");
_Static_assert(VT_POLY_MAX_VARS <= 32, "masks are 32 bits");
_Static_assert(VT_POLY_MAX_TERMS <= 255 && VT_POLY_MAX_VARS <= 255, "counts are bytes");
_Static_assert(VT_VAR_NKINDS <= 8, "the encoding keeps the kind in 3 bits");

/* Working area of one operation: up to WT terms over WV variables, masks over the
 * table in insertion order (sorted only at the end). */
#define WV 64
#define WT 64
#define TERM_VARS (VT_POLY_MAX_VARS + 1) /* a term of an input plus its added variable */

typedef struct acc {
    unsigned nv, nt;
    int64_t c[WT];
    uint64_t mask[WT];
    vt_var var[WV];
} acc;

/* One term with its variables listed in ascending order. */
typedef struct mterm {
    int64_t c;
    unsigned nv;
    vt_var v[TERM_VARS];
} mterm;

/* The inputs of one operation: polynomials with a shift, a list of polynomials, or raw
 * terms. Term (k, t) is term t of input k. */
enum { SRC_SHIFT, SRC_LIST, SRC_RAW };
typedef struct src {
    int mode;
    size_t n;
    const vt_poly_shift *sh;
    const vt_poly *const *pl;
    const vt_poly_rawterm *raw;
} src;

enum { ACC_OK = 0, ACC_FULL = 1 };

const char *vt_poly_strerror(int status)
{
    switch (status) {
    case VT_POLY_OK: return "ok";
    case VT_POLY_EBIG: return "result exceeds the polynomial capacity";
    case VT_POLY_EBIGIN: return "an input exceeded the polynomial capacity";
    case VT_POLY_ERANGE: return "constant out of range";
    case VT_POLY_EINVAL: return "invalid argument";
    case VT_POLY_EVAR: return "no value for a variable";
    case VT_POLY_ETRUNC: return "truncated polynomial";
    case VT_POLY_EFORMAT: return "malformed polynomial";
    case VT_POLY_ENONCANON: return "polynomial not in canonical form";
    default: return "unknown polynomial status";
    }
}

static bool var_valid(vt_var v)
{
    enum vt_var_kind k = vt_var_kind_of(v);
    if ((unsigned)k >= VT_VAR_NKINDS)
        return false;
    return k == VT_VAR_COLL || v.owner <= UINT32_MAX;
}

static void set_big(vt_poly *out)
{
    out->nterms = 0;
    out->nvars = 0;
    out->big = 1;
}

int vt_poly_const(vt_poly *out, int64_t c)
{
    if (c < 0)
        return VT_POLY_ERANGE;
    out->nterms = 1;
    out->nvars = 0;
    out->big = 0;
    out->c[0] = c;
    out->mask[0] = 0;
    return VT_POLY_OK;
}

void vt_poly_atom(vt_poly *out, vt_var v)
{
    out->nterms = 1;
    out->nvars = 1;
    out->big = 0;
    out->c[0] = 0;
    out->mask[0] = 1;
    out->var[0] = v;
}

int vt_poly_addc(vt_poly *p, int64_t k)
{
    if (p->big)
        return VT_POLY_EBIGIN;
    if (p->nterms == 0)
        return VT_POLY_EINVAL;
    if (k < 0)
        return VT_POLY_ERANGE;
    /* Terms ascend by c: the last one is the largest. */
    if (p->c[p->nterms - 1] > INT64_MAX - k)
        return VT_POLY_ERANGE;
    for (unsigned i = 0; i < p->nterms; i++)
        p->c[i] += k;
    return VT_POLY_OK;
}

/* ---------------------------------------------------------------- inputs */

static size_t src_nterms(const src *s, size_t k)
{
    switch (s->mode) {
    case SRC_SHIFT: return s->sh[k].p->nterms;
    case SRC_LIST: return s->pl[k]->nterms;
    default: return 1;
    }
}

/* Inserts v into the ascending list x->v unless present. */
static void mterm_addvar(mterm *x, vt_var v)
{
    unsigned i = x->nv;
    while (i > 0 && vt_var_cmp(x->v[i - 1], v) > 0)
        i--;
    if (i > 0 && vt_var_eq(x->v[i - 1], v))
        return;
    memmove(&x->v[i + 1], &x->v[i], (x->nv - i) * sizeof(vt_var));
    x->v[i] = v;
    x->nv++;
}

static int src_term(const src *s, size_t k, unsigned t, mterm *x)
{
    const vt_poly *p;
    int64_t add = 0;
    const vt_var *sv = NULL;
    if (s->mode == SRC_RAW) {
        const vt_poly_rawterm *r = &s->raw[k];
        x->c = r->c;
        x->nv = 0;
        for (size_t i = 0; i < r->nvars; i++)
            mterm_addvar(x, r->vars[i]);
        return VT_POLY_OK;
    }
    if (s->mode == SRC_SHIFT) {
        p = s->sh[k].p;
        add = s->sh[k].add;
        if (s->sh[k].has_var)
            sv = &s->sh[k].var;
    } else {
        p = s->pl[k];
    }
    if (p->c[t] > INT64_MAX - add)
        return VT_POLY_ERANGE;
    x->c = p->c[t] + add;
    x->nv = 0;
    for (uint32_t m = p->mask[t]; m; m &= m - 1)
        x->v[x->nv++] = p->var[__builtin_ctz(m)];
    if (sv)
        mterm_addvar(x, *sv);
    return VT_POLY_OK;
}

/* Checks every input before any work, so that errors leave out untouched. */
static int src_validate(const src *s)
{
    if (s->n == 0)
        return VT_POLY_EINVAL;
    for (size_t k = 0; k < s->n; k++) {
        const vt_poly *p = NULL;
        if (s->mode == SRC_RAW) {
            const vt_poly_rawterm *r = &s->raw[k];
            if (r->c < 0)
                return VT_POLY_ERANGE;
            if (r->nvars > VT_POLY_MAX_VARS || (r->nvars && !r->vars))
                return VT_POLY_EINVAL;
            for (size_t i = 0; i < r->nvars; i++)
                if (!var_valid(r->vars[i]))
                    return VT_POLY_EINVAL;
            continue;
        }
        if (s->mode == SRC_SHIFT) {
            p = s->sh[k].p;
            if (!p)
                return VT_POLY_EINVAL;
            if (s->sh[k].add < 0)
                return VT_POLY_ERANGE;
            if (s->sh[k].has_var && !var_valid(s->sh[k].var))
                return VT_POLY_EINVAL;
        } else {
            p = s->pl[k];
            if (!p)
                return VT_POLY_EINVAL;
        }
        if (p->big)
            return VT_POLY_EBIGIN;
        if (p->nterms == 0 || p->nterms > VT_POLY_MAX_TERMS || p->nvars > VT_POLY_MAX_VARS)
            return VT_POLY_EINVAL;
    }
    return VT_POLY_OK;
}

/* ---------------------------------------------------------------- working area */

static int acc_find(const acc *a, vt_var v)
{
    for (unsigned i = 0; i < a->nv; i++)
        if (vt_var_eq(a->var[i], v))
            return (int)i;
    return -1;
}

/* Drops the variables no remaining term uses (dominated terms leave them behind). */
static void acc_compact(acc *a)
{
    uint64_t used = 0;
    for (unsigned i = 0; i < a->nt; i++)
        used |= a->mask[i];
    unsigned map[WV], nv = 0;
    for (unsigned j = 0; j < a->nv; j++) {
        if (used >> j & 1) {
            map[j] = nv;
            a->var[nv++] = a->var[j];
        }
    }
    if (nv == a->nv)
        return;
    for (unsigned i = 0; i < a->nt; i++) {
        uint64_t m = 0;
        for (uint64_t b = a->mask[i]; b; b &= b - 1)
            m |= UINT64_C(1) << map[__builtin_ctzll(b)];
        a->mask[i] = m;
    }
    a->nv = nv;
}

/* Adds term x to the antichain a: dropped if a term of a dominates it (equal included),
 * otherwise the terms it dominates leave. ACC_FULL when it does not fit. */
static int acc_insert(acc *a, const mterm *x)
{
    unsigned missing = 0;
    for (unsigned i = 0; i < x->nv; i++)
        missing += acc_find(a, x->v[i]) < 0;
    if (a->nv + missing > WV) {
        acc_compact(a);
        if (a->nv + missing > WV)
            return ACC_FULL;
    }
    uint64_t m = 0;
    for (unsigned i = 0; i < x->nv; i++) {
        int j = acc_find(a, x->v[i]);
        if (j < 0) {
            j = (int)a->nv++;
            a->var[j] = x->v[i];
        }
        m |= UINT64_C(1) << j;
    }
    /* a is an antichain: if some y dominates x, x dominates no other term of a (that
     * term would be dominated by y), so one pass may both test and remove. */
    for (unsigned i = 0; i < a->nt;) {
        if (a->c[i] <= x->c && !(a->mask[i] & ~m))
            return ACC_OK; /* dominated (or equal) */
        if (x->c <= a->c[i] && !(m & ~a->mask[i])) {
            a->nt--;
            a->c[i] = a->c[a->nt];
            a->mask[i] = a->mask[a->nt];
            continue;
        }
        i++;
    }
    if (a->nt == WT)
        return ACC_FULL;
    a->c[a->nt] = x->c;
    a->mask[a->nt] = m;
    a->nt++;
    return ACC_OK;
}

/* Writes the canonical form of the antichain a, or marks out big. */
static int acc_finish(const acc *a, vt_poly *out)
{
    uint64_t used = 0;
    for (unsigned i = 0; i < a->nt; i++)
        used |= a->mask[i];
    unsigned nv = (unsigned)__builtin_popcountll(used);
    if (a->nt > VT_POLY_MAX_TERMS || nv > VT_POLY_MAX_VARS) {
        set_big(out);
        return VT_POLY_EBIG;
    }
    /* Sort the used variables (insertion sort: at most 16). */
    unsigned idx[VT_POLY_MAX_VARS], n = 0;
    for (uint64_t b = used; b; b &= b - 1) {
        unsigned j = (unsigned)__builtin_ctzll(b), i = n++;
        while (i > 0 && vt_var_cmp(a->var[idx[i - 1]], a->var[j]) > 0) {
            idx[i] = idx[i - 1];
            i--;
        }
        idx[i] = j;
    }
    unsigned map[WV];
    for (unsigned i = 0; i < n; i++) {
        map[idx[i]] = i;
        out->var[i] = a->var[idx[i]];
    }
    /* Remap and sort the terms by (c, mask): masks over the sorted table compare in
     * colex order. */
    unsigned nt = 0;
    for (unsigned i = 0; i < a->nt; i++) {
        uint32_t m = 0;
        for (uint64_t b = a->mask[i]; b; b &= b - 1)
            m |= UINT32_C(1) << map[__builtin_ctzll(b)];
        int64_t c = a->c[i];
        unsigned k = nt++;
        while (k > 0 && (out->c[k - 1] > c || (out->c[k - 1] == c && out->mask[k - 1] > m))) {
            out->c[k] = out->c[k - 1];
            out->mask[k] = out->mask[k - 1];
            k--;
        }
        out->c[k] = c;
        out->mask[k] = m;
    }
    out->nterms = (uint8_t)nt;
    out->nvars = (uint8_t)n;
    out->big = 0;
    return VT_POLY_OK;
}

/* ---------------------------------------------------------------- canonicalisation */

static bool mterm_subset(const mterm *y, const mterm *x) /* y->v ⊆ x->v */
{
    if (y->nv > x->nv)
        return false;
    unsigned j = 0;
    for (unsigned i = 0; i < y->nv; i++) {
        while (j < x->nv && vt_var_cmp(x->v[j], y->v[i]) < 0)
            j++;
        if (j == x->nv || !vt_var_eq(x->v[j], y->v[i]))
            return false;
        j++;
    }
    return true;
}

/* Whether some term of the working area h strictly dominates x (a cheap first test of
 * canon_stream: h holds input terms, and strict domination needs no tie-break). */
static bool hint_dominates(const acc *h, const mterm *x)
{
    uint64_t hm = 0;
    unsigned in = 0;
    for (unsigned i = 0; i < x->nv; i++) {
        int j = acc_find(h, x->v[i]);
        if (j >= 0) {
            hm |= UINT64_C(1) << j;
            in++;
        }
    }
    for (unsigned i = 0; i < h->nt; i++)
        if (h->c[i] <= x->c && !(h->mask[i] & ~hm) && (h->c[i] < x->c || h->mask[i] != hm || in < x->nv))
            return true;
    return false;
}

/* Exact whatever the size of the intermediate union: term x survives when no other
 * input term dominates it (of equal terms the first survives). Domination is transitive,
 * so the survivors are exactly the canonical terms; stop as soon as they do not fit.
 * hint: input terms to try first (the working area that filled up). */
static int canon_stream(const src *s, vt_poly *out, const acc *hint)
{
    acc a;
    a.nv = a.nt = 0;
    mterm x, y;
    for (size_t k = 0; k < s->n; k++) {
        size_t nt = src_nterms(s, k);
        for (unsigned t = 0; t < nt; t++) {
            int rc = src_term(s, k, t, &x);
            if (rc)
                return rc;
            if (hint_dominates(hint, &x))
                continue;
            bool dom = false;
            for (size_t k2 = 0; k2 < s->n && !dom; k2++) {
                size_t nt2 = src_nterms(s, k2);
                for (unsigned t2 = 0; t2 < nt2; t2++) {
                    if (k2 == k && t2 == t)
                        continue;
                    if ((rc = src_term(s, k2, t2, &y)))
                        return rc;
                    if (y.c > x.c || !mterm_subset(&y, &x))
                        continue;
                    bool equal = y.c == x.c && y.nv == x.nv;
                    if (!equal || k2 < k || (k2 == k && t2 < t)) {
                        dom = true;
                        break;
                    }
                }
            }
            if (dom)
                continue;
            if (a.nt == VT_POLY_MAX_TERMS) {
                set_big(out);
                return VT_POLY_EBIG;
            }
            if (acc_insert(&a, &x) != ACC_OK || a.nv > VT_POLY_MAX_VARS) {
                set_big(out);
                return VT_POLY_EBIG;
            }
        }
    }
    return acc_finish(&a, out);
}

static int canon(const src *s, vt_poly *out)
{
    int rc = src_validate(s);
    if (rc) {
        if (rc == VT_POLY_EBIGIN)
            set_big(out);
        return rc;
    }
    acc a;
    a.nv = a.nt = 0;
    mterm x;
    for (size_t k = 0; k < s->n; k++) {
        size_t nt = src_nterms(s, k);
        for (unsigned t = 0; t < nt; t++) {
            if ((rc = src_term(s, k, t, &x)))
                return rc;
            if (acc_insert(&a, &x) != ACC_OK)
                return canon_stream(s, out, &a);
        }
    }
    return acc_finish(&a, out);
}

int vt_poly_min_shifted(vt_poly *out, const vt_poly_shift *in, size_t n)
{
    src s = {SRC_SHIFT, n, in, NULL, NULL};
    if (!in)
        return VT_POLY_EINVAL;
    return canon(&s, out);
}

int vt_poly_min_n(vt_poly *out, const vt_poly *const *in, size_t n)
{
    src s = {SRC_LIST, n, NULL, in, NULL};
    if (!in)
        return VT_POLY_EINVAL;
    return canon(&s, out);
}

int vt_poly_min(vt_poly *out, const vt_poly *a, const vt_poly *b)
{
    const vt_poly *in[2] = {a, b};
    return vt_poly_min_n(out, in, 2);
}

int vt_poly_from_terms(vt_poly *out, const vt_poly_rawterm *t, size_t n)
{
    src s = {SRC_RAW, n, NULL, NULL, t};
    if (!t)
        return VT_POLY_EINVAL;
    return canon(&s, out);
}

int vt_poly_addv(vt_poly *p, vt_var v)
{
    if (p->big)
        return VT_POLY_EBIGIN;
    if (p->nterms == 0)
        return VT_POLY_EINVAL;
    if (!var_valid(v))
        return VT_POLY_EINVAL;
    if (p->nterms == 1) {
        /* The common case: one term keeps all the variables, sorted. */
        unsigned i = p->nvars;
        while (i > 0 && vt_var_cmp(p->var[i - 1], v) > 0)
            i--;
        if (i > 0 && vt_var_eq(p->var[i - 1], v))
            return VT_POLY_OK;
        if (p->nvars == VT_POLY_MAX_VARS) {
            set_big(p);
            return VT_POLY_EBIG;
        }
        memmove(&p->var[i + 1], &p->var[i], (p->nvars - i) * sizeof(vt_var));
        p->var[i] = v;
        p->nvars++;
        p->mask[0] = (uint32_t)((UINT64_C(1) << p->nvars) - 1);
        return VT_POLY_OK;
    }
    vt_poly_shift sh = {p, 0, v, true};
    return vt_poly_min_shifted(p, &sh, 1);
}

/* ---------------------------------------------------------------- checks, equality */

int vt_poly_check(const vt_poly *p)
{
    if (p->big)
        return VT_POLY_EBIG;
    if (p->nterms == 0 || p->nterms > VT_POLY_MAX_TERMS || p->nvars > VT_POLY_MAX_VARS)
        return VT_POLY_EINVAL;
    for (unsigned j = 0; j < p->nvars; j++) {
        if (!var_valid(p->var[j]))
            return VT_POLY_EINVAL;
        if (j > 0 && vt_var_cmp(p->var[j - 1], p->var[j]) >= 0)
            return VT_POLY_ENONCANON;
    }
    uint32_t all = (uint32_t)((UINT64_C(1) << p->nvars) - 1), used = 0;
    for (unsigned i = 0; i < p->nterms; i++) {
        if (p->c[i] < 0 || (p->mask[i] & ~all))
            return VT_POLY_ENONCANON;
        used |= p->mask[i];
        if (i > 0 && (p->c[i - 1] > p->c[i] || (p->c[i - 1] == p->c[i] && p->mask[i - 1] >= p->mask[i])))
            return VT_POLY_ENONCANON;
        for (unsigned j = 0; j < i; j++) {
            /* j < i: c_j <= c_i, so only j can dominate i */
            if (!(p->mask[j] & ~p->mask[i]))
                return VT_POLY_ENONCANON;
        }
    }
    if (used != all)
        return VT_POLY_ENONCANON;
    return VT_POLY_OK;
}

/* ---------------------------------------------------------------- evaluation, overflow */

int vt_poly_eval(const vt_poly *p, vt_poly_value_fn value, void *ctx, int64_t *out)
{
    if (p->big)
        return VT_POLY_EBIGIN;
    if (p->nterms == 0 || !value)
        return VT_POLY_EINVAL;
    int64_t val[VT_POLY_MAX_VARS];
    for (unsigned j = 0; j < p->nvars; j++)
        if (value(ctx, p->var[j], &val[j]))
            return VT_POLY_EVAR;
    int64_t best = INT64_MAX;
    for (unsigned i = 0; i < p->nterms; i++) {
        int64_t s = p->c[i];
        for (uint32_t m = p->mask[i]; m; m &= m - 1)
            if (__builtin_add_overflow(s, val[__builtin_ctz(m)], &s))
                return VT_POLY_ERANGE;
        if (i == 0 || s < best)
            best = s;
    }
    *out = best;
    return VT_POLY_OK;
}

bool vt_poly_limits_ok(unsigned m, unsigned K)
{
    return m <= VT_POLY_M_MAX && K >= 1 && K <= VT_POLY_K_MAX;
}

int vt_poly_overflow(vt_poly *p, unsigned m, unsigned K, uint32_t rank, uint64_t seq)
{
    if (!vt_poly_limits_ok(m, K))
        return VT_POLY_EINVAL;
    if (!p->big) {
        if (p->nterms == 0)
            return VT_POLY_EINVAL;
        if (p->nvars <= m && p->nterms <= K)
            return 0;
    }
    vt_poly_atom(p, vt_var_overflow(rank, seq));
    return 1;
}

/* ---------------------------------------------------------------- encoding */

size_t vt_poly_encode(const vt_poly *p, uint8_t *out)
{
    if (p->big || p->nterms == 0 || p->nterms > VT_POLY_MAX_TERMS || p->nvars > VT_POLY_MAX_VARS)
        return 0;
    uint8_t *q = out;
    q = vt_put_uvar(q, (uint64_t)(p->nterms - 1) << 5 | p->nvars);
    for (unsigned j = 0; j < p->nvars; j++) {
        q = vt_put_uvar(q, vt_var_seq(p->var[j]) << 3 | (uint64_t)vt_var_kind_of(p->var[j]));
        q = vt_put_uvar(q, p->var[j].owner);
    }
    int64_t prev = 0;
    for (unsigned i = 0; i < p->nterms; i++) {
        q = vt_put_uvar(q, (uint64_t)(p->c[i] - prev));
        prev = p->c[i];
        if (p->nvars > 0 && p->nterms > 1)
            q = vt_put_uvar(q, p->mask[i]);
    }
    return (size_t)(q - out);
}

/* A varint as vt_get_uvar reads it, but only in its minimal form; tells a truncation
 * (the input ends inside it) from a malformed one. */
static int get_uvar_strict(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    if (vt_get_uvar(&q, end, v)) {
        size_t avail = (size_t)(end - *p);
        for (size_t i = 0; i < avail && i < VT_UVAR_MAX; i++)
            if (!((*p)[i] & 0x80))
                return VT_POLY_EFORMAT; /* terminated, yet rejected: too large */
        return avail < VT_UVAR_MAX ? VT_POLY_ETRUNC : VT_POLY_EFORMAT;
    }
    if (q - *p > 1 && q[-1] == 0)
        return VT_POLY_EFORMAT; /* over-long */
    *p = q;
    return VT_POLY_OK;
}

int vt_poly_decode(vt_poly *out, const uint8_t *buf, size_t len, size_t *used)
{
    const uint8_t *q = buf, *end = buf + len;
    uint64_t h, u;
    int rc;
    if (!buf && len)
        return VT_POLY_EINVAL;
    if ((rc = get_uvar_strict(&q, end, &h)))
        return rc;
    if ((h >> 5) >= VT_POLY_MAX_TERMS || (h & 31) > VT_POLY_MAX_VARS)
        return VT_POLY_EFORMAT;
    unsigned nterms = (unsigned)(h >> 5) + 1, nvars = (unsigned)(h & 31);
    for (unsigned j = 0; j < nvars; j++) {
        if ((rc = get_uvar_strict(&q, end, &u)))
            return rc;
        unsigned kind = (unsigned)(u & 7);
        uint64_t seq = u >> 3;
        if (kind >= VT_VAR_NKINDS || seq > VT_VAR_SEQ_MAX)
            return VT_POLY_EFORMAT;
        uint64_t owner;
        if ((rc = get_uvar_strict(&q, end, &owner)))
            return rc;
        if (kind != VT_VAR_COLL && owner > UINT32_MAX)
            return VT_POLY_EFORMAT;
        out->var[j] = vt_var_make((enum vt_var_kind)kind, owner, seq);
    }
    uint32_t all = (uint32_t)((UINT64_C(1) << nvars) - 1);
    int64_t c = 0;
    for (unsigned i = 0; i < nterms; i++) {
        if ((rc = get_uvar_strict(&q, end, &u)))
            return rc;
        if (u > (uint64_t)(INT64_MAX - c))
            return VT_POLY_EFORMAT;
        c += (int64_t)u;
        out->c[i] = c;
        if (nvars > 0 && nterms > 1) {
            if ((rc = get_uvar_strict(&q, end, &u)))
                return rc;
            if (u & ~(uint64_t)all)
                return VT_POLY_EFORMAT;
            out->mask[i] = (uint32_t)u;
        } else {
            out->mask[i] = all;
        }
    }
    out->nterms = (uint8_t)nterms;
    out->nvars = (uint8_t)nvars;
    out->big = 0;
    if (vt_poly_check(out))
        return VT_POLY_ENONCANON;
    if (used)
        *used = (size_t)(q - buf);
    return VT_POLY_OK;
}

/* ---------------------------------------------------------------- text */

static const char kind_letter[VT_VAR_NKINDS] = {'v', 'C', 'S', 'P', 'O', 'N'};

size_t vt_var_format(vt_var v, char *buf, size_t cap)
{
    unsigned k = (unsigned)vt_var_kind_of(v);
    int n = snprintf(buf, cap, "%c:%llu:%llu", k < VT_VAR_NKINDS ? kind_letter[k] : '?',
                     (unsigned long long)v.owner, (unsigned long long)vt_var_seq(v));
    return n < 0 ? 0 : (size_t)n;
}

/* Appends to buf[*len..cap) with snprintf semantics, counting what would be written. */
static void put_text(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len < cap) {
        size_t room = cap - *len - 1;
        memcpy(buf + *len, s, n < room ? n : room);
        buf[*len + (n < room ? n : room)] = 0;
    }
    *len += n;
}

size_t vt_poly_format(const vt_poly *p, char *buf, size_t cap)
{
    size_t len = 0;
    char tmp[80];
    if (cap)
        buf[0] = 0;
    if (p->big || p->nterms == 0 || p->nvars > VT_POLY_MAX_VARS || p->nterms > VT_POLY_MAX_TERMS) {
        const char *s = p->big ? "BIG" : "INVALID";
        put_text(buf, cap, &len, s, strlen(s));
        return len;
    }
    for (unsigned i = 0; i < p->nterms; i++) {
        int n = snprintf(tmp, sizeof tmp, "%s%lld", i ? " " : "", (long long)p->c[i]);
        put_text(buf, cap, &len, tmp, (size_t)n);
        for (uint32_t m = p->mask[i]; m; m &= m - 1) {
            tmp[0] = '+';
            size_t k = vt_var_format(p->var[__builtin_ctz(m)], tmp + 1, sizeof tmp - 1);
            put_text(buf, cap, &len, tmp, k + 1);
        }
    }
    return len;
}
