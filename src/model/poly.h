/* Min-plus polynomials: the symbolic difference d of doc model.md §4.
 *
 * Shared, from this one file, by the run time (every point-to-point message carries
 * one in its piggyback header) and the offline analysis (reduce, replay checks), so
 * both make the same R3 decisions and the same atom names. No MPI, no allocation.
 *
 * A polynomial is  d = min_i ( c_i + sum_{v in S_i} v ),  a non-empty set of terms,
 * each a constant c_i >= 0 (int64 ns) and a set S_i of variables. Variables stand for
 * non-negative values (candidate shortenings δ_e) or opaque atoms.
 *
 * ---- Variables (vt_var) ------------------------------------------------------------
 * 16 bytes, no padding:  ks = kind << 56 | seq  (seq < 2^56),  owner.
 *   VT_VAR_DELTA     δ_e of candidate event (rank, seq)           owner = world rank
 *   VT_VAR_COLL      blocking-collective atom (comm, n)          owner = 64-bit comm id
 *   VT_VAR_SSEND     synchronous-send atom (rank, seq of send)   owner = rank
 *   VT_VAR_PROBE     probe-window atom (rank, seq of probe)      owner = rank
 *   VT_VAR_OVERFLOW  overflow atom (rank, seq of the event)      owner = rank
 *   VT_VAR_NBC       non-blocking-collective atom (rank, seq)    owner = rank
 * Rank owners are < 2^32. Total order of variables: (kind, seq, owner), i.e. (ks, owner)
 * as unsigned integers (vt_var_cmp). Equal variables have equal bytes.
 *
 * ---- Canonical form (vt_poly) --------------------------------------------------------
 * Every vt_poly a function returns is canonical (or "big", below):
 *   - var[0..nvars) are exactly the variables used by some term, strictly ascending;
 *   - term i is (c[i], mask[i]): bit j of mask[i] set <=> var[j] in S_i;
 *   - no term is dominated by another (S_j ⊆ S_i and c_j <= c_i); equal terms collapse;
 *   - terms strictly ascending by (c, then the variable set in colex order), where colex
 *     compares the largest variable of the symmetric difference (the set holding it is
 *     larger). With masks over the sorted table colex is the unsigned order of masks, and
 *     it does not depend on the table: the order is a property of the terms alone.
 * Two polynomials are equal as functions of non-negative variables exactly when their
 * canonical forms are identical: vt_poly_equal compares the used prefixes of the arrays
 * field by field, and the encoding (vt_poly_encode) is equally unique, so R3 is a byte
 * comparison either way. (Slots past nterms/nvars are unspecified: do not memcmp the
 * whole struct.)
 *
 * ---- Capacity rule -------------------------------------------------------------------
 * A vt_poly holds at most VT_POLY_MAX_TERMS (16) terms over VT_POLY_MAX_VARS (16)
 * variables, inline. The overflow limits must satisfy  m <= VT_POLY_M_MAX (7) and
 * K <= VT_POLY_K_MAX (8)  (vt_poly_limits_ok), so that:
 *   1. one operation on overflow-bounded inputs (<= K terms, <= m variables) always fits:
 *      a min of two has <= 2K terms over <= 2m variables, plus one added variable
 *      <= 2m + 1; such results are exact;
 *   2. every operation computes the exact canonical form of its result, in a working
 *      area of 64 terms x 64 variables and, if that fills up, by an exact quadratic pass
 *      over the inputs; when that exact canonical form does not fit in a vt_poly, the
 *      result is marked big (out->big = 1) and the call returns VT_POLY_EBIG. A big
 *      result has more than 16 terms or 16 variables, hence more than K or m, so
 *      vt_poly_overflow turns it into the overflow atom exactly as if it had been stored;
 *   3. a big polynomial passed to any other operation gives VT_POLY_EBIGIN and a big
 *      result, which is no longer exact. Compute a whole event in one call instead:
 *      vt_poly_min_shifted takes any number of inputs, each with its own added constant
 *      and variable, so a completion with many contributors and its candidate rule
 *        min( min_k (D_k + slack_k + δ_e),  d_before + (E - R) )
 *      is one exact call, followed by vt_poly_overflow.
 *
 * ---- Overflow (model.md §4) ----------------------------------------------------------
 * After each event's candidate rule: a polynomial with more than m distinct variables or
 * more than K terms (or big) becomes atom(VT_VAR_OVERFLOW, rank, seq). Not at exactly m
 * or exactly K.
 *
 * ---- Encoding (piggyback header and trace) --------------------------------------------
 * Self-delimiting, every field a minimal LEB128 varint (codec.h):
 *   uvar  h = (nterms - 1) << 5 | nvars                     (nvars <= 31 in the format)
 *   nvars x { uvar (seq << 3 | kind), uvar owner }          ascending
 *   nterms x { uvar c_i - c_{i-1}  (c_{-1} = 0),
 *              uvar mask_i  only when nvars > 0 and nterms > 1 }
 * (with one term the mask is implied: all variables.) Examples: the constant 0 is 2 bytes
 * (00 00); δ(rank 3, seq 1000) + 250 is 6 bytes. At most VT_POLY_ENC_MAX bytes. The
 * decoder is strict: it accepts exactly the encodings vt_poly_encode produces (minimal
 * varints, ranges, canonical order, no dominated term, no unused variable) and returns
 * an error code otherwise; it never reads past the end it is given.
 */
#ifndef VT_POLY_H
#define VT_POLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- variables ---- */

enum vt_var_kind {
    VT_VAR_DELTA = 0,
    VT_VAR_COLL = 1,
    VT_VAR_SSEND = 2,
    VT_VAR_PROBE = 3,
    VT_VAR_OVERFLOW = 4,
    VT_VAR_NBC = 5,
    VT_VAR_NKINDS = 6
};

#define VT_VAR_SEQ_BITS 56
#define VT_VAR_SEQ_MAX ((UINT64_C(1) << VT_VAR_SEQ_BITS) - 1)

typedef struct vt_var {
    uint64_t ks;    /* kind << 56 | seq */
    uint64_t owner; /* rank, or communicator id for VT_VAR_COLL */
} vt_var;

/* seq is truncated to 56 bits (2^56 events per rank are out of reach). */
static inline vt_var vt_var_make(enum vt_var_kind kind, uint64_t owner, uint64_t seq)
{
    vt_var v = {((uint64_t)kind << VT_VAR_SEQ_BITS) | (seq & VT_VAR_SEQ_MAX), owner};
    return v;
}
static inline vt_var vt_var_delta(uint32_t rank, uint64_t seq) { return vt_var_make(VT_VAR_DELTA, rank, seq); }
static inline vt_var vt_var_coll(uint64_t comm_id, uint64_t n) { return vt_var_make(VT_VAR_COLL, comm_id, n); }
static inline vt_var vt_var_ssend(uint32_t rank, uint64_t seq) { return vt_var_make(VT_VAR_SSEND, rank, seq); }
static inline vt_var vt_var_probe(uint32_t rank, uint64_t seq) { return vt_var_make(VT_VAR_PROBE, rank, seq); }
static inline vt_var vt_var_overflow(uint32_t rank, uint64_t seq) { return vt_var_make(VT_VAR_OVERFLOW, rank, seq); }
static inline vt_var vt_var_nbc(uint32_t rank, uint64_t seq) { return vt_var_make(VT_VAR_NBC, rank, seq); }

static inline enum vt_var_kind vt_var_kind_of(vt_var v) { return (enum vt_var_kind)(v.ks >> VT_VAR_SEQ_BITS); }
static inline uint64_t vt_var_seq(vt_var v) { return v.ks & VT_VAR_SEQ_MAX; }
static inline uint64_t vt_var_owner(vt_var v) { return v.owner; }

/* <0, 0, >0: the total order (kind, seq, owner). */
static inline int vt_var_cmp(vt_var a, vt_var b)
{
    if (a.ks != b.ks)
        return a.ks < b.ks ? -1 : 1;
    if (a.owner != b.owner)
        return a.owner < b.owner ? -1 : 1;
    return 0;
}
static inline bool vt_var_eq(vt_var a, vt_var b) { return a.ks == b.ks && a.owner == b.owner; }

/* ---- polynomials ---- */

#define VT_POLY_MAX_TERMS 16
#define VT_POLY_MAX_VARS 16
#define VT_POLY_K_MAX (VT_POLY_MAX_TERMS / 2)
#define VT_POLY_M_MAX ((VT_POLY_MAX_VARS - 1) / 2)
#define VT_POLY_DEFAULT_M 4
#define VT_POLY_DEFAULT_K 8
/* h (2) + vars (9 + 10 each) + terms (9 + 3 each) */
#define VT_POLY_ENC_MAX (2 + 19 * VT_POLY_MAX_VARS + 12 * VT_POLY_MAX_TERMS)

typedef struct vt_poly {
    uint8_t nterms; /* 1..VT_POLY_MAX_TERMS; 0 (with big == 0): not a polynomial */
    uint8_t nvars;  /* 0..VT_POLY_MAX_VARS */
    uint8_t big;    /* 1: the exact result did not fit (see the capacity rule) */
    uint8_t reserved_;
    uint32_t mask[VT_POLY_MAX_TERMS];
    int64_t c[VT_POLY_MAX_TERMS];
    vt_var var[VT_POLY_MAX_VARS];
} vt_poly;

enum vt_poly_status {
    VT_POLY_OK = 0,
    VT_POLY_EBIG = -1,      /* exact result exceeds the capacity; out is big (see above) */
    VT_POLY_EBIGIN = -2,    /* an input was big; out is big and not exact */
    VT_POLY_ERANGE = -3,    /* negative constant, or a sum past INT64_MAX */
    VT_POLY_EINVAL = -4,    /* not a polynomial, no inputs, limits out of range, ... */
    VT_POLY_EVAR = -5,      /* vt_poly_eval: the callback had no value for a variable */
    VT_POLY_ETRUNC = -6,    /* decoder: the input ends inside the polynomial */
    VT_POLY_EFORMAT = -7,   /* decoder: a field out of range or a non-minimal varint */
    VT_POLY_ENONCANON = -8, /* decoder: well formed, but not the canonical form */
};

/* A short English name of a status (static string). */
const char *vt_poly_strerror(int status);

/* Constructors. c must be >= 0 (VT_POLY_ERANGE otherwise, out untouched). */
int vt_poly_const(vt_poly *out, int64_t c);
void vt_poly_atom(vt_poly *out, vt_var v); /* the single term 0 + v */

/* In place: add k >= 0 to every term (order and domination are unchanged). */
int vt_poly_addc(vt_poly *p, int64_t k);
/* In place: add v to every term (which may make terms dominated). */
int vt_poly_addv(vt_poly *p, vt_var v);

/* out = min(a, b), the union of their terms. out may alias a or b. */
int vt_poly_min(vt_poly *out, const vt_poly *a, const vt_poly *b);
/* out = min over n >= 1 polynomials. out may alias an input. */
int vt_poly_min_n(vt_poly *out, const vt_poly *const *in, size_t n);

/* One input of vt_poly_min_shifted: p + add (+ var when has_var). */
typedef struct vt_poly_shift {
    const vt_poly *p;
    int64_t add; /* >= 0 */
    vt_var var;
    bool has_var;
} vt_poly_shift;
/* out = min_k (in[k].p + in[k].add [+ in[k].var]), exact for any n >= 1 (see the
 * capacity rule). out may alias an input. */
int vt_poly_min_shifted(vt_poly *out, const vt_poly_shift *in, size_t n);

/* Canonicalisation of a raw list of terms in any order, with any duplicates (a term's
 * variables may repeat: they form a set). Each term has at most VT_POLY_MAX_VARS
 * variables before de-duplication; n >= 1. */
typedef struct vt_poly_rawterm {
    int64_t c; /* >= 0 */
    size_t nvars;
    const vt_var *vars;
} vt_poly_rawterm;
int vt_poly_from_terms(vt_poly *out, const vt_poly_rawterm *t, size_t n);

/* 0 when p is a canonical polynomial (all the invariants above), else
 * VT_POLY_ENONCANON / VT_POLY_EINVAL (and VT_POLY_EBIG for a big one). */
int vt_poly_check(const vt_poly *p);

/* Byte comparison of canonical forms: equal as functions. Big or invalid: false. */
static inline bool vt_poly_equal(const vt_poly *a, const vt_poly *b)
{
    if (a->big || b->big || a->nterms == 0)
        return false;
    if (a->nterms != b->nterms || a->nvars != b->nvars)
        return false;
    /* loops, not memcmp: a term or two is the common case, on every message */
    for (unsigned i = 0; i < a->nterms; i++)
        if (a->c[i] != b->c[i] || a->mask[i] != b->mask[i])
            return false;
    for (unsigned j = 0; j < a->nvars; j++)
        if (a->var[j].owner != b->var[j].owner || a->var[j].ks != b->var[j].ks)
            return false;
    return true;
}

/* dst = src, copying the terms and variables in use only (a whole vt_poly is 456 bytes;
 * the common one has a term or two). */
static inline void vt_poly_copy(vt_poly *dst, const vt_poly *src)
{
    dst->nterms = src->nterms;
    dst->nvars = src->nvars;
    dst->big = src->big;
    dst->reserved_ = src->reserved_;
    for (unsigned i = 0; i < src->nterms && i < VT_POLY_MAX_TERMS; i++) {
        dst->mask[i] = src->mask[i];
        dst->c[i] = src->c[i];
    }
    for (unsigned j = 0; j < src->nvars && j < VT_POLY_MAX_VARS; j++)
        dst->var[j] = src->var[j];
}

static inline unsigned vt_poly_nterms(const vt_poly *p) { return p->nterms; }
static inline unsigned vt_poly_nvars(const vt_poly *p) { return p->nvars; } /* distinct variables */
static inline bool vt_poly_is_big(const vt_poly *p) { return p->big != 0; }
/* The polynomial is a constant (one term, no variable): *c receives it. */
static inline bool vt_poly_is_const(const vt_poly *p, int64_t *c)
{
    if (p->big || p->nterms != 1 || p->nvars != 0)
        return false;
    if (c)
        *c = p->c[0];
    return true;
}

/* Value of variable v in a scenario: return 0 and set *val, or nonzero if unknown. */
typedef int (*vt_poly_value_fn)(void *ctx, vt_var v, int64_t *val);
/* *out = min_i (c_i + sum of values). Each variable's value is asked once per call.
 * VT_POLY_ERANGE when a sum leaves int64, VT_POLY_EBIGIN for a big polynomial. */
int vt_poly_eval(const vt_poly *p, vt_poly_value_fn value, void *ctx, int64_t *out);

/* Overflow rule: 1 if p had more than m variables or more than K terms (or was big)
 * and is now atom(VT_VAR_OVERFLOW, rank, seq), 0 if unchanged, VT_POLY_EINVAL if the
 * limits are out of range or p is not a polynomial. */
bool vt_poly_limits_ok(unsigned m, unsigned K);
int vt_poly_overflow(vt_poly *p, unsigned m, unsigned K, uint32_t rank, uint64_t seq);

/* Encoding. Writes at most VT_POLY_ENC_MAX bytes; returns the length, 0 for a big or
 * invalid polynomial. */
size_t vt_poly_encode(const vt_poly *p, uint8_t *out);
/* Decodes one polynomial from [buf, buf + len); on success returns 0 and sets *used to
 * the bytes consumed (trailing bytes are the caller's). Errors: ETRUNC, EFORMAT,
 * ENONCANON; out is then unspecified. */
int vt_poly_decode(vt_poly *out, const uint8_t *buf, size_t len, size_t *used);

/* Text form, one line: terms in canonical order separated by " ", each the constant then
 * "+k:owner:seq" per variable in ascending order, k one of v C S P O N (kinds above), e.g.
 * "0+v:1:7 250". "BIG" for a big polynomial, "INVALID" otherwise. snprintf semantics:
 * returns the length the full text needs. */
size_t vt_poly_format(const vt_poly *p, char *buf, size_t cap);
size_t vt_var_format(vt_var v, char *buf, size_t cap);

#endif
