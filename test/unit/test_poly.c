/* Min-plus polynomials (src/model/poly.c, model.md §4 and §7 item 5): domination,
 * order independence, operations, evaluation, atoms, overflow, encoding, and a
 * deliberately wrong canonicalisation that the equality check must catch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "model/poly.h"

/* ---------------------------------------------------------------- helpers */

static const vt_var A = {0, 1}, B = {1, 1}, C = {2, 1}, D = {3, 1}; /* δ(1,0..3) */

static char text_buf[4][4096];
static const char *txt(const vt_poly *p)
{
    static unsigned k;
    char *b = text_buf[k++ % 4];
    vt_poly_format(p, b, sizeof text_buf[0]);
    return b;
}

#define T0(c_) {(c_), 0, NULL}
#define TV(c_, ...) {(c_), sizeof((vt_var[]){__VA_ARGS__}) / sizeof(vt_var), (const vt_var[]){__VA_ARGS__}}

static vt_poly from(const vt_poly_rawterm *t, size_t n)
{
    vt_poly p;
    assert_int_equal(vt_poly_from_terms(&p, t, n), VT_POLY_OK);
    assert_int_equal(vt_poly_check(&p), VT_POLY_OK);
    return p;
}

static vt_poly cst(int64_t c)
{
    vt_poly p;
    assert_int_equal(vt_poly_const(&p, c), VT_POLY_OK);
    return p;
}

static vt_poly atom(vt_var v)
{
    vt_poly p;
    vt_poly_atom(&p, v);
    return p;
}

static void assert_poly(const vt_poly *p, const char *want)
{
    assert_int_equal(vt_poly_check(p), VT_POLY_OK);
    assert_string_equal(txt(p), want);
}

static size_t enc(const vt_poly *p, uint8_t *buf)
{
    size_t n = vt_poly_encode(p, buf);
    assert_true(n > 0 && n <= VT_POLY_ENC_MAX);
    return n;
}

static uint64_t rng = 12345;
static uint64_t rnd(void)
{
    uint64_t z = (rng += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- domination */

static void domination(void **state)
{
    (void)state;
    /* equal constants: the smaller set wins; equal terms collapse */
    vt_poly_rawterm t1[] = {TV(5, A, B), TV(5, A), TV(5, A), TV(5, B, A)};
    vt_poly p = from(t1, 4);
    assert_poly(&p, "5+v:1:0");
    vt_poly_rawterm t2[] = {TV(5, A), T0(5)};
    p = from(t2, 2);
    assert_poly(&p, "5");
    /* subset with a smaller constant dominates; with a larger one both stay */
    vt_poly_rawterm t3[] = {TV(5, A, B), TV(3, A)};
    p = from(t3, 2);
    assert_poly(&p, "3+v:1:0");
    vt_poly_rawterm t4[] = {TV(5, A), TV(3, A, B)};
    p = from(t4, 2);
    assert_poly(&p, "3+v:1:0+v:1:1 5+v:1:0");
    /* a constant term dominates every term with a larger constant */
    vt_poly_rawterm t5[] = {TV(9, A), TV(7, B, C), T0(7), TV(2, D)};
    p = from(t5, 4);
    assert_poly(&p, "2+v:1:3 7");
    /* dominated by two others (each alone suffices), and kept when neither does */
    vt_poly_rawterm t6[] = {TV(10, A, B), TV(3, A), TV(4, B)};
    p = from(t6, 3);
    assert_poly(&p, "3+v:1:0 4+v:1:1");
    assert_int_equal(vt_poly_nvars(&p), 2);
    vt_poly_rawterm t7[] = {TV(10, A, B), TV(3, A, C), TV(4, B, C)};
    p = from(t7, 3);
    assert_int_equal(vt_poly_nterms(&p), 3);
    assert_int_equal(vt_poly_nvars(&p), 3);
    /* a chain: each dominated by the next, transitively by the last */
    vt_poly_rawterm t8[] = {TV(9, A, B, C), TV(8, A, B), TV(7, A), T0(6)};
    p = from(t8, 4);
    assert_poly(&p, "6");
    /* duplicates inside one term's variable list form a set */
    vt_poly_rawterm t9[] = {TV(1, B, A, B, A)};
    p = from(t9, 1);
    assert_poly(&p, "1+v:1:0+v:1:1");
    /* no variable left behind by a dropped term */
    vt_poly_rawterm t10[] = {TV(5, C, D), TV(1, C)};
    p = from(t10, 2);
    assert_int_equal(vt_poly_nvars(&p), 1);
    /* terms with equal constants ascend in colex order of their sets */
    vt_poly_rawterm t11[] = {TV(1, A, B), TV(1, C), TV(1, B, D), TV(1, A, D)};
    p = from(t11, 4);
    assert_poly(&p, "1+v:1:0+v:1:1 1+v:1:2 1+v:1:0+v:1:3 1+v:1:1+v:1:3");
    /* bad inputs */
    vt_poly_rawterm bad[] = {T0(-1)};
    assert_int_equal(vt_poly_from_terms(&p, bad, 1), VT_POLY_ERANGE);
    assert_int_equal(vt_poly_from_terms(&p, t1, 0), VT_POLY_EINVAL);
    vt_var badv = vt_var_make((enum vt_var_kind)7, 0, 0);
    vt_poly_rawterm bad2[] = {{0, 1, &badv}};
    assert_int_equal(vt_poly_from_terms(&p, bad2, 1), VT_POLY_EINVAL);
    vt_var badr = vt_var_make(VT_VAR_DELTA, UINT64_C(1) << 32, 0);
    vt_poly_rawterm bad3[] = {{0, 1, &badr}};
    assert_int_equal(vt_poly_from_terms(&p, bad3, 1), VT_POLY_EINVAL);
}

/* ---------------------------------------------------------------- order independence */

static int next_perm(unsigned *a, unsigned n)
{
    int i = (int)n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = (int)n - 1;
    while (a[j] <= a[i])
        j--;
    unsigned t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (unsigned l = (unsigned)i + 1, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

static void order_independence(void **state)
{
    (void)state;
    vt_var coll = vt_var_coll(UINT64_C(0xfedcba9876543210), 3);
    vt_poly_rawterm t[] = {
        TV(4, A, B), TV(2, C), TV(4, A, B), TV(7, C, D), TV(3, coll), T0(9), TV(1, A, B, C, D),
    };
    enum { N = sizeof t / sizeof t[0] };
    unsigned perm[N];
    for (unsigned i = 0; i < N; i++)
        perm[i] = i;
    vt_poly ref = from(t, N);
    assert_poly(&ref, "1+v:1:0+v:1:1+v:1:2+v:1:3 2+v:1:2 3+C:18364758544493064720:3 4+v:1:0+v:1:1 9");
    uint8_t eref[VT_POLY_ENC_MAX], e[VT_POLY_ENC_MAX];
    size_t nref = enc(&ref, eref);
    unsigned count = 0;
    do {
        vt_poly_rawterm u[N];
        vt_poly single[N];
        const vt_poly *ps[N];
        for (unsigned i = 0; i < N; i++) {
            u[i] = t[perm[i]];
            single[i] = from(&u[i], 1);
            ps[i] = &single[i];
        }
        /* canonicalisation of a raw list */
        vt_poly p = from(u, N);
        assert_true(vt_poly_equal(&p, &ref));
        assert_int_equal(enc(&p, e), nref);
        assert_memory_equal(e, eref, nref);
        /* n-ary min, and a chain of binary mins in this order */
        vt_poly q;
        assert_int_equal(vt_poly_min_n(&q, ps, N), VT_POLY_OK);
        assert_true(vt_poly_equal(&q, &ref));
        vt_poly r = single[0];
        for (unsigned i = 1; i < N; i++)
            assert_int_equal(vt_poly_min(&r, &r, &single[i]), VT_POLY_OK);
        assert_true(vt_poly_equal(&r, &ref));
        assert_int_equal(enc(&r, e), nref);
        assert_memory_equal(e, eref, nref);
        count++;
    } while (next_perm(perm, N));
    assert_int_equal(count, 5040);
}

/* ---------------------------------------------------------------- add const / var */

static void add_const_var(void **state)
{
    (void)state;
    vt_poly_rawterm t[] = {TV(0, A), T0(5)};
    vt_poly p = from(t, 2);
    assert_int_equal(vt_poly_addc(&p, 10), VT_POLY_OK);
    assert_poly(&p, "10+v:1:0 15");
    assert_int_equal(vt_poly_addc(&p, 0), VT_POLY_OK);
    assert_poly(&p, "10+v:1:0 15");
    assert_int_equal(vt_poly_addc(&p, -1), VT_POLY_ERANGE);
    assert_int_equal(vt_poly_addc(&p, INT64_MAX - 14), VT_POLY_ERANGE);
    assert_poly(&p, "10+v:1:0 15"); /* unchanged by the errors */
    assert_int_equal(vt_poly_addc(&p, INT64_MAX - 15), VT_POLY_OK);
    assert_int_equal(p.c[1], INT64_MAX);

    /* new variable on one term; an existing one is a no-op */
    p = cst(3);
    assert_int_equal(vt_poly_addv(&p, B), VT_POLY_OK);
    assert_poly(&p, "3+v:1:1");
    assert_int_equal(vt_poly_addv(&p, A), VT_POLY_OK);
    assert_poly(&p, "3+v:1:0+v:1:1");
    assert_int_equal(vt_poly_addv(&p, B), VT_POLY_OK);
    assert_poly(&p, "3+v:1:0+v:1:1");
    /* adding a variable can make terms dominated: min(0 + a, 1) + a = 0 + a */
    vt_poly_rawterm t2[] = {TV(0, A), T0(1)};
    p = from(t2, 2);
    assert_int_equal(vt_poly_addv(&p, A), VT_POLY_OK);
    assert_poly(&p, "0+v:1:0");
    /* ... and leave a variable unused: min(0 + c, 1 + a) + c = 0 + c */
    vt_poly_rawterm t3[] = {TV(0, C), TV(1, A)};
    p = from(t3, 2);
    assert_int_equal(vt_poly_addv(&p, C), VT_POLY_OK);
    assert_poly(&p, "0+v:1:2");
    /* and keep the rest: min(0 + a, 2 + b) + c */
    vt_poly_rawterm t4[] = {TV(0, A), TV(2, B)};
    p = from(t4, 2);
    assert_int_equal(vt_poly_addv(&p, C), VT_POLY_OK);
    assert_poly(&p, "0+v:1:0+v:1:2 2+v:1:1+v:1:2");
}

/* ---------------------------------------------------------------- min */

static void min_ops(void **state)
{
    (void)state;
    vt_poly a = atom(A), b = cst(4), r;
    assert_int_equal(vt_poly_addc(&a, 2), VT_POLY_OK);
    assert_int_equal(vt_poly_min(&r, &a, &b), VT_POLY_OK);
    assert_poly(&r, "2+v:1:0 4");
    assert_int_equal(vt_poly_min(&r, &r, &r), VT_POLY_OK); /* idempotent, aliasing */
    assert_poly(&r, "2+v:1:0 4");
    vt_poly z = cst(0);
    assert_int_equal(vt_poly_min(&a, &a, &z), VT_POLY_OK); /* aliasing the output */
    assert_poly(&a, "0");
    const vt_poly *none[1] = {NULL};
    assert_int_equal(vt_poly_min_n(&r, none, 0), VT_POLY_EINVAL);
    assert_int_equal(vt_poly_min_n(&r, none, 1), VT_POLY_EINVAL);
    vt_poly bad = {0};
    assert_int_equal(vt_poly_min(&r, &bad, &b), VT_POLY_EINVAL);

    /* a receive completion with its candidate rule, as one call (model.md §2):
     * d_before = 0, message D = atom S, slacks 10 (local) and 0 (remote), candidate
     * δ_e, cap E - R = 100:  min(0 + 10 + δ, S + 0 + δ, 0 + 100) */
    vt_poly db = cst(0), dm = atom(vt_var_ssend(2, 9));
    vt_var de = vt_var_delta(1, 42);
    vt_poly_shift in[] = {{&db, 10, de, true}, {&dm, 0, de, true}, {&db, 100, {0, 0}, false}};
    assert_int_equal(vt_poly_min_shifted(&r, in, 3), VT_POLY_OK);
    assert_poly(&r, "0+v:1:42+S:2:9 10+v:1:42 100");
    /* with the remote slack 7 instead, the local term dominates */
    in[0].add = 0;
    in[1].add = 7;
    vt_poly r7;
    assert_int_equal(vt_poly_min_shifted(&r7, in, 3), VT_POLY_OK);
    assert_poly(&r7, "0+v:1:42 100");
    in[0].add = 10;
    in[1].add = 0;
    /* the same by binary steps */
    vt_poly x = db, y = dm, w = db;
    assert_int_equal(vt_poly_addc(&x, 10), VT_POLY_OK);
    assert_int_equal(vt_poly_min(&x, &x, &y), VT_POLY_OK);
    assert_int_equal(vt_poly_addv(&x, de), VT_POLY_OK);
    assert_int_equal(vt_poly_addc(&w, 100), VT_POLY_OK);
    assert_int_equal(vt_poly_min(&x, &x, &w), VT_POLY_OK);
    assert_true(vt_poly_equal(&x, &r));
    in[1].add = -1;
    assert_int_equal(vt_poly_min_shifted(&x, in, 3), VT_POLY_ERANGE);
    assert_true(vt_poly_equal(&x, &r)); /* out untouched on error */
    in[1].add = INT64_MAX;
    assert_int_equal(vt_poly_addc(&dm, 1), VT_POLY_OK);
    assert_int_equal(vt_poly_min_shifted(&x, in, 3), VT_POLY_ERANGE);
}

/* Exact beyond the 64-term / 64-variable working area (the quadratic pass). */
static void min_many(void **state)
{
    (void)state;
    enum { N = 100 };
    vt_poly at[N], r;
    vt_poly_shift in[N + 1];
    vt_poly five = cst(5);
    /* N distinct atoms + i, then the constant 5: survivors i < 5, and 5 */
    for (unsigned i = 0; i < N; i++) {
        at[i] = atom(vt_var_probe(0, i));
        in[i] = (vt_poly_shift){&at[i], i, {0, 0}, false};
    }
    in[N] = (vt_poly_shift){&five, 0, {0, 0}, false};
    assert_int_equal(vt_poly_min_shifted(&r, in, N + 1), VT_POLY_OK);
    assert_poly(&r, "0+P:0:0 1+P:0:1 2+P:0:2 3+P:0:3 4+P:0:4 5");
    /* the constant first: no fallback needed, same result */
    vt_poly_shift in2[N + 1];
    in2[0] = in[N];
    memcpy(in2 + 1, in, N * sizeof in[0]);
    vt_poly r2;
    assert_int_equal(vt_poly_min_shifted(&r2, in2, N + 1), VT_POLY_OK);
    assert_true(vt_poly_equal(&r, &r2));
    /* duplicates across the inputs past the working area collapse */
    for (unsigned i = 0; i < N; i++)
        in[i].add = 3 + (i % 2);
    in[N].add = 0;
    five = cst(4);
    in2[0] = (vt_poly_shift){&at[7], 3, {0, 0}, false};
    assert_int_equal(vt_poly_min_shifted(&r, in, N + 1), VT_POLY_EBIG);
    assert_true(vt_poly_is_big(&r));
    /* many terms over few variables: the 66 pairs of 12 variables, then c1 + pair0 */
    vt_poly pairs[70];
    unsigned np = 0;
    for (unsigned i = 0; i < 12; i++)
        for (unsigned j = i + 1; j < 12; j++) {
            vt_poly_rawterm t = TV(2, vt_var_delta(0, i), vt_var_delta(0, j));
            pairs[np] = from(&t, 1);
            in[np] = (vt_poly_shift){&pairs[np], 0, {0, 0}, false};
            np++;
        }
    assert_int_equal(np, 66);
    vt_poly_rawterm t1 = TV(1, vt_var_delta(0, 0));
    vt_poly_rawterm t2 = TV(1, vt_var_delta(0, 1));
    vt_poly_rawterm t3 = TV(1, vt_var_delta(0, 2));
    vt_poly d1 = from(&t1, 1), d2 = from(&t2, 1), d3 = from(&t3, 1), c0 = cst(2);
    in[np] = (vt_poly_shift){&d1, 0, {0, 0}, false};
    in[np + 1] = (vt_poly_shift){&d2, 0, {0, 0}, false};
    in[np + 2] = (vt_poly_shift){&d3, 0, {0, 0}, false};
    in[np + 3] = (vt_poly_shift){&c0, 0, {0, 0}, false};
    assert_int_equal(vt_poly_min_shifted(&r, in, np + 4), VT_POLY_OK);
    assert_poly(&r, "1+v:0:0 1+v:0:1 1+v:0:2 2");
    /* and without the constant: 55 pairs without variables 0..2 survive: big */
    assert_int_equal(vt_poly_min_shifted(&r, in, np + 3), VT_POLY_EBIG);
    /* a big polynomial is refused as an input, and overflows to an atom */
    vt_poly s;
    assert_int_equal(vt_poly_min(&s, &r, &d1), VT_POLY_EBIGIN);
    assert_true(vt_poly_is_big(&s));
    assert_int_equal(vt_poly_addc(&r, 1), VT_POLY_EBIGIN);
    assert_int_equal(vt_poly_addv(&r, A), VT_POLY_EBIGIN);
    assert_false(vt_poly_equal(&r, &r));
    assert_int_equal(vt_poly_encode(&r, (uint8_t[VT_POLY_ENC_MAX]){0}), 0);
    assert_string_equal(txt(&r), "BIG");
    assert_int_equal(vt_poly_overflow(&r, 4, 8, 3, 77), 1);
    assert_poly(&r, "0+O:3:77");
}

/* ---------------------------------------------------------------- evaluation */

typedef struct tab {
    vt_var v[8];
    int64_t val[8];
    unsigned n, asked;
} tab;

static int tab_value(void *ctx, vt_var v, int64_t *val)
{
    tab *t = ctx;
    t->asked++;
    for (unsigned i = 0; i < t->n; i++)
        if (vt_var_eq(t->v[i], v)) {
            *val = t->val[i];
            return 0;
        }
    return -1;
}

static void evaluation(void **state)
{
    (void)state;
    vt_poly_rawterm t[] = {TV(10, A), TV(2, A, B), TV(30, C)};
    vt_poly p = from(t, 3);
    tab s = {{A, B, C}, {5, 20, 0}, 3, 0};
    int64_t v = -1;
    assert_int_equal(vt_poly_eval(&p, tab_value, &s, &v), VT_POLY_OK);
    assert_int_equal(v, 15); /* min(15, 27, 30) */
    assert_int_equal(s.asked, 3); /* each variable once */
    s.val[0] = 100;
    assert_int_equal(vt_poly_eval(&p, tab_value, &s, &v), VT_POLY_OK);
    assert_int_equal(v, 30);
    s.val[2] = -40; /* atoms may stand for any value */
    assert_int_equal(vt_poly_eval(&p, tab_value, &s, &v), VT_POLY_OK);
    assert_int_equal(v, -10);
    /* the baseline scenario (all zero) gives the smallest constant */
    tab zero = {{A, B, C}, {0, 0, 0}, 3, 0};
    assert_int_equal(vt_poly_eval(&p, tab_value, &zero, &v), VT_POLY_OK);
    assert_int_equal(v, 2);
    tab missing = {{A, B}, {0, 0}, 2, 0};
    assert_int_equal(vt_poly_eval(&p, tab_value, &missing, &v), VT_POLY_EVAR);
    tab huge = {{A, B, C}, {INT64_MAX, INT64_MAX, 0}, 3, 0};
    assert_int_equal(vt_poly_eval(&p, tab_value, &huge, &v), VT_POLY_ERANGE);
    vt_poly c = cst(17);
    assert_int_equal(vt_poly_eval(&c, tab_value, &missing, &v), VT_POLY_OK);
    assert_int_equal(v, 17);
    int64_t k;
    assert_true(vt_poly_is_const(&c, &k));
    assert_int_equal(k, 17);
    assert_false(vt_poly_is_const(&p, &k));
    /* evaluation agrees with the operations: eval(min(p + 3, q)) = min(eval p + 3, eval q) */
    for (unsigned it = 0; it < 2000; it++) {
        vt_poly_rawterm rt[6];
        vt_var vs[6][3];
        vt_var pool[5] = {A, B, C, D, vt_var_coll(99, 1)};
        for (unsigned i = 0; i < 6; i++) {
            rt[i].c = (int64_t)(rnd() % 20);
            rt[i].nvars = rnd() % 4;
            rt[i].vars = vs[i];
            for (unsigned j = 0; j < rt[i].nvars; j++)
                vs[i][j] = pool[rnd() % 5];
        }
        vt_poly x = from(rt, 3), y = from(rt + 3, 3), m;
        tab sc = {{A, B, C, D, vt_var_coll(99, 1)}, {0}, 5, 0};
        for (unsigned i = 0; i < 5; i++)
            sc.val[i] = (int64_t)(rnd() % 30);
        int64_t ex, ey, em;
        assert_int_equal(vt_poly_eval(&x, tab_value, &sc, &ex), 0);
        assert_int_equal(vt_poly_eval(&y, tab_value, &sc, &ey), 0);
        assert_int_equal(vt_poly_addc(&x, 3), 0);
        assert_int_equal(vt_poly_min(&m, &x, &y), 0);
        assert_int_equal(vt_poly_eval(&m, tab_value, &sc, &em), 0);
        assert_int_equal(em, ex + 3 < ey ? ex + 3 : ey);
        /* a fresh variable adds its value (a variable already present is not added
         * twice: terms are sets, min(3 + c, 9) + c = 3 + c) */
        vt_var fresh = vt_var_delta(1, 99);
        sc.v[5] = fresh;
        sc.val[5] = (int64_t)(rnd() % 30);
        sc.n = 6;
        assert_int_equal(vt_poly_addv(&m, fresh), 0);
        assert_int_equal(vt_poly_eval(&m, tab_value, &sc, &ex), 0);
        assert_int_equal(ex, em + sc.val[5]);
    }
}

/* ---------------------------------------------------------------- atoms, variables */

static void atoms(void **state)
{
    (void)state;
    vt_var v[] = {
        vt_var_delta(3, 1000), vt_var_coll(UINT64_MAX, 5), vt_var_ssend(2, 7),
        vt_var_probe(2, 8), vt_var_overflow(1, 9), vt_var_nbc(0, 10),
    };
    const char *names[] = {"v:3:1000", "C:18446744073709551615:5", "S:2:7", "P:2:8", "O:1:9", "N:0:10"};
    for (unsigned i = 0; i < 6; i++) {
        char b[64];
        assert_int_equal(vt_var_kind_of(v[i]), (enum vt_var_kind)i);
        vt_var_format(v[i], b, sizeof b);
        assert_string_equal(b, names[i]);
        vt_poly p = atom(v[i]);
        assert_int_equal(vt_poly_nvars(&p), 1);
        assert_int_equal(vt_poly_nterms(&p), 1);
        assert_int_equal(vt_poly_check(&p), VT_POLY_OK);
        if (i > 0)
            assert_true(vt_var_cmp(v[i - 1], v[i]) < 0); /* kind first */
    }
    assert_int_equal(vt_var_owner(v[1]), UINT64_MAX);
    assert_int_equal(vt_var_seq(v[0]), 1000);
    assert_int_equal(vt_var_seq(vt_var_delta(0, VT_VAR_SEQ_MAX)), VT_VAR_SEQ_MAX);
    /* then seq, then owner */
    assert_true(vt_var_cmp(vt_var_delta(9, 1), vt_var_delta(0, 2)) < 0);
    assert_true(vt_var_cmp(vt_var_delta(0, 2), vt_var_delta(1, 2)) < 0);
    assert_int_equal(vt_var_cmp(vt_var_delta(1, 2), vt_var_delta(1, 2)), 0);
    /* the same name from two sides (run time, offline reduce) is the same polynomial */
    vt_poly a = atom(vt_var_coll(0x1234, 6)), b = atom(vt_var_coll(0x1234, 6)), c = atom(vt_var_coll(0x1234, 7));
    assert_true(vt_poly_equal(&a, &b));
    assert_false(vt_poly_equal(&a, &c));
    /* members that are candidates stop sharing the atom (model.md §4) */
    vt_poly_shift in[] = {{&a, 0, vt_var_delta(0, 3), true}, {&b, 0, {0, 0}, false}};
    vt_poly cand, db = cst(0);
    in[1].p = &db;
    in[1].add = 50;
    assert_int_equal(vt_poly_min_shifted(&cand, in, 2), VT_POLY_OK);
    assert_poly(&cand, "0+v:0:3+C:4660:6 50");
    assert_false(vt_poly_equal(&cand, &b));
}

/* ---------------------------------------------------------------- overflow */

static vt_poly nvars_poly(unsigned n) /* one term with n variables */
{
    vt_poly p = cst(1);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(vt_poly_addv(&p, vt_var_delta(5, i)), VT_POLY_OK);
    assert_int_equal(vt_poly_nvars(&p), n);
    return p;
}

static vt_poly nterms_poly(unsigned n, unsigned base) /* n terms, a variable each */
{
    vt_poly_rawterm t[VT_POLY_MAX_TERMS];
    vt_var vs[VT_POLY_MAX_TERMS];
    for (unsigned i = 0; i < n; i++) {
        vs[i] = vt_var_delta(6, base + i);
        t[i] = (vt_poly_rawterm){(int64_t)i, 1, &vs[i]};
    }
    vt_poly p = from(t, n);
    assert_int_equal(vt_poly_nterms(&p), n);
    return p;
}

/* An antichain: term i has the variables base + j for the bits j of masks[i] and the
 * constant 10 - |S| (a subset has fewer variables and a larger constant, so none
 * dominates another). */
static vt_poly antichain(const unsigned *masks, unsigned n, unsigned base)
{
    vt_poly_rawterm t[16];
    vt_var sets[16][8];
    for (unsigned i = 0; i < n; i++) {
        unsigned nv = 0;
        for (unsigned j = 0; j < 8; j++)
            if (masks[i] >> j & 1)
                sets[i][nv++] = vt_var_delta(0, base + j);
        t[i] = (vt_poly_rawterm){(int64_t)(10 - nv), nv, sets[i]};
    }
    vt_poly p = from(t, n);
    assert_int_equal(vt_poly_nterms(&p), n);
    return p;
}

/* 9 subsets of 4 variables; 8 subsets of 7 variables */
static const unsigned sub4[] = {1, 2, 4, 8, 3, 5, 6, 9, 10};
static const unsigned sub7[] = {1, 2, 4, 8, 16, 32, 64, 3};

static void overflow(void **state)
{
    (void)state;
    vt_poly p;
    /* small limits m = 2, K = 3: not at exactly m or K, past either */
    p = nvars_poly(2);
    assert_int_equal(vt_poly_overflow(&p, 2, 3, 1, 10), 0);
    assert_int_equal(vt_poly_nvars(&p), 2);
    p = nvars_poly(3);
    assert_int_equal(vt_poly_overflow(&p, 2, 3, 1, 10), 1);
    assert_poly(&p, "0+O:1:10");
    p = nterms_poly(3, 0);
    assert_int_equal(vt_poly_overflow(&p, 3, 3, 1, 11), 0);
    assert_int_equal(vt_poly_nterms(&p), 3);
    p = nterms_poly(4, 0);
    assert_int_equal(vt_poly_overflow(&p, 4, 3, 1, 11), 1);
    assert_poly(&p, "0+O:1:11");
    /* the defaults m = 4, K = 8 */
    p = nvars_poly(VT_POLY_DEFAULT_M);
    assert_int_equal(vt_poly_overflow(&p, VT_POLY_DEFAULT_M, VT_POLY_DEFAULT_K, 2, 20), 0);
    p = nvars_poly(VT_POLY_DEFAULT_M + 1); /* one term, 5 variables */
    assert_int_equal(vt_poly_overflow(&p, VT_POLY_DEFAULT_M, VT_POLY_DEFAULT_K, 2, 20), 1);
    assert_poly(&p, "0+O:2:20");
    p = antichain(sub4, VT_POLY_DEFAULT_K, 0); /* exactly 8 terms over exactly 4 variables */
    assert_int_equal(vt_poly_nvars(&p), 4);
    assert_int_equal(vt_poly_overflow(&p, VT_POLY_DEFAULT_M, VT_POLY_DEFAULT_K, 0, 3), 0);
    assert_int_equal(vt_poly_nterms(&p), 8);
    p = antichain(sub4, VT_POLY_DEFAULT_K + 1, 0); /* 9 terms, 4 variables: K alone */
    assert_int_equal(vt_poly_nvars(&p), 4);
    assert_int_equal(vt_poly_overflow(&p, VT_POLY_DEFAULT_M, VT_POLY_DEFAULT_K, 0, 3), 1);
    assert_poly(&p, "0+O:0:3");
    /* an overflowed rank shares nothing: two ranks' atoms differ */
    vt_poly o1 = nvars_poly(5), o2 = nvars_poly(5);
    assert_int_equal(vt_poly_overflow(&o1, 4, 8, 0, 3), 1);
    assert_int_equal(vt_poly_overflow(&o2, 4, 8, 1, 3), 1);
    assert_false(vt_poly_equal(&o1, &o2));
    /* limits */
    assert_true(vt_poly_limits_ok(VT_POLY_M_MAX, VT_POLY_K_MAX));
    assert_true(vt_poly_limits_ok(0, 1));
    assert_false(vt_poly_limits_ok(VT_POLY_M_MAX + 1, 4));
    assert_false(vt_poly_limits_ok(4, VT_POLY_K_MAX + 1));
    assert_false(vt_poly_limits_ok(4, 0));
    assert_int_equal(vt_poly_overflow(&p, 4, 0, 0, 3), VT_POLY_EINVAL);
    vt_poly bad = {0};
    assert_int_equal(vt_poly_overflow(&bad, 4, 8, 0, 3), VT_POLY_EINVAL);
    /* capacity: 16 variables fit, the 17th makes a big result, which overflows */
    p = nvars_poly(VT_POLY_MAX_VARS);
    assert_int_equal(vt_poly_check(&p), VT_POLY_OK);
    assert_int_equal(vt_poly_addv(&p, vt_var_delta(9, 9)), VT_POLY_EBIG);
    assert_true(vt_poly_is_big(&p));
    assert_int_equal(vt_poly_overflow(&p, VT_POLY_M_MAX, VT_POLY_K_MAX, 4, 5), 1);
    assert_poly(&p, "0+O:4:5");
    /* the capacity rule: the min of two overflow-bounded polynomials (K_MAX terms over
     * M_MAX variables each, none shared), plus a variable, fits */
    vt_poly x = antichain(sub7, VT_POLY_K_MAX, 0), y = antichain(sub7, VT_POLY_K_MAX, 100), z;
    assert_int_equal(vt_poly_nvars(&x), VT_POLY_M_MAX);
    assert_int_equal(vt_poly_overflow(&x, VT_POLY_M_MAX, VT_POLY_K_MAX, 1, 2), 0);
    assert_int_equal(vt_poly_min(&z, &x, &y), VT_POLY_OK);
    assert_int_equal(vt_poly_nterms(&z), 2 * VT_POLY_K_MAX);
    assert_int_equal(vt_poly_addv(&z, vt_var_delta(8, 0)), VT_POLY_OK);
    assert_int_equal(vt_poly_nvars(&z), 2 * VT_POLY_M_MAX + 1);
    assert_int_equal(vt_poly_nterms(&z), 2 * VT_POLY_K_MAX);
    assert_int_equal(vt_poly_overflow(&z, VT_POLY_M_MAX, VT_POLY_K_MAX, 1, 2), 1);
    /* and one more such input is big, exactly when the result does not fit */
    vt_poly w = antichain(sub7, VT_POLY_K_MAX, 200);
    vt_poly_shift in[] = {{&x, 0, {0, 0}, false}, {&y, 0, {0, 0}, false}, {&w, 0, {0, 0}, false}};
    assert_int_equal(vt_poly_min_shifted(&z, in, 3), VT_POLY_EBIG);
    in[2].add = 1; /* w + 1 is dominated by ... nothing: still big */
    assert_int_equal(vt_poly_min_shifted(&z, in, 3), VT_POLY_EBIG);
    in[2].p = &x; /* x twice: 16 terms */
    assert_int_equal(vt_poly_min_shifted(&z, in, 3), VT_POLY_OK);
    assert_int_equal(vt_poly_nterms(&z), 2 * VT_POLY_K_MAX);
}

/* ---------------------------------------------------------------- encoding */

static vt_poly random_poly(void)
{
    vt_poly_rawterm t[12];
    vt_var vs[12][5];
    vt_var pool[8] = {
        vt_var_delta(0, 1), vt_var_delta(1, 123456), vt_var_coll(UINT64_MAX - 3, 2),
        vt_var_ssend(7, 8), vt_var_probe(UINT32_MAX, VT_VAR_SEQ_MAX), vt_var_overflow(3, 3),
        vt_var_nbc(2, 0), vt_var_coll(0, 0),
    };
    unsigned n = 1 + (unsigned)(rnd() % 12);
    for (unsigned i = 0; i < n; i++) {
        switch (rnd() % 4) {
        case 0: t[i].c = (int64_t)(rnd() >> 1); break;
        case 1: t[i].c = (int64_t)(rnd() % 100000); break;
        default: t[i].c = (int64_t)(rnd() % 10); break;
        }
        t[i].nvars = rnd() % 5;
        t[i].vars = vs[i];
        for (unsigned j = 0; j < t[i].nvars; j++)
            vs[i][j] = pool[rnd() % 8];
    }
    return from(t, n);
}

static int try_decode(const uint8_t *b, size_t n, vt_poly *out, size_t *used)
{
    /* decode from an exactly-sized heap copy, so that a read past the end is caught by
     * tools such as valgrind or ASan */
    uint8_t *copy = test_malloc(n ? n : 1);
    memcpy(copy, b, n);
    int rc = vt_poly_decode(out, copy, n, used);
    test_free(copy);
    return rc;
}

static void encoding(void **state)
{
    (void)state;
    uint8_t b[VT_POLY_ENC_MAX + 8];
    vt_poly p = cst(0), q;
    size_t used;
    /* the common cases are a few bytes */
    assert_int_equal(enc(&p, b), 2);
    assert_memory_equal(b, "\x00\x00", 2);
    p = atom(vt_var_delta(3, 1000));
    assert_int_equal(vt_poly_addc(&p, 250), 0);
    assert_int_equal(enc(&p, b), 6);
    assert_memory_equal(b, "\x01\xc0\x3e\x03\xfa\x01", 6);
    assert_int_equal(try_decode(b, 6, &q, &used), 0);
    assert_int_equal(used, 6);
    assert_true(vt_poly_equal(&p, &q));
    p = cst(123456789);
    assert_int_equal(enc(&p, b), 5);
    vt_poly_rawterm t[] = {TV(0, vt_var_delta(0, 17)), T0(4000)};
    p = from(t, 2);
    assert_int_equal(enc(&p, b), 9); /* h, var (2 + 1), c, mask, c delta (2), mask */
    /* the longest encoding is VT_POLY_ENC_MAX: 16 variables of 19 bytes, 16 terms of
     * a 9-byte constant and a 3-byte mask */
    vt_poly big;
    vt_poly_rawterm tb[VT_POLY_MAX_TERMS];
    vt_var vb[VT_POLY_MAX_TERMS][VT_POLY_MAX_VARS];
    for (unsigned i = 0; i < VT_POLY_MAX_TERMS; i++) {
        tb[i].c = (int64_t)(i + 1) << 58; /* 9-byte constants and differences */
        tb[i].nvars = VT_POLY_MAX_VARS - 1;
        tb[i].vars = vb[i];
        unsigned k = 0;
        for (unsigned j = 0; j < VT_POLY_MAX_VARS; j++)
            if (j != i)
                vb[i][k++] = vt_var_coll(UINT64_MAX - j, VT_VAR_SEQ_MAX - j);
    }
    big = from(tb, VT_POLY_MAX_TERMS);
    assert_int_equal(vt_poly_nterms(&big), VT_POLY_MAX_TERMS);
    assert_int_equal(vt_poly_nvars(&big), VT_POLY_MAX_VARS);
    size_t nb = enc(&big, b);
    assert_int_equal(nb, VT_POLY_ENC_MAX);
    assert_int_equal(try_decode(b, nb, &q, &used), 0);
    assert_true(vt_poly_equal(&big, &q));

    for (unsigned it = 0; it < 3000; it++) {
        p = random_poly();
        size_t n = enc(&p, b);
        /* round trip, with trailing bytes left to the caller */
        b[n] = 0x55;
        assert_int_equal(try_decode(b, n + 1, &q, &used), VT_POLY_OK);
        assert_int_equal(used, n);
        assert_true(vt_poly_equal(&p, &q));
        /* every truncation is rejected */
        for (size_t k = 0; k < n; k++)
            assert_int_equal(try_decode(b, k, &q, &used), VT_POLY_ETRUNC);
        /* a flipped byte never crashes, and what decodes is canonical and re-encodes
         * to the same bytes (uniqueness of the encoding) */
        uint8_t f[VT_POLY_ENC_MAX + 8];
        memcpy(f, b, n);
        f[rnd() % n] ^= (uint8_t)(1 + rnd() % 255);
        if (try_decode(f, n, &q, &used) == VT_POLY_OK) {
            uint8_t g[VT_POLY_ENC_MAX];
            assert_int_equal(vt_poly_check(&q), VT_POLY_OK);
            assert_int_equal(vt_poly_encode(&q, g), used);
            assert_memory_equal(g, f, used);
        }
    }
    /* random bytes: never a crash; accepted ones are canonical */
    for (unsigned it = 0; it < 20000; it++) {
        uint8_t r[40];
        size_t n = rnd() % sizeof r;
        for (size_t k = 0; k < n; k++)
            r[k] = (uint8_t)(rnd() % 4 ? rnd() % 8 : rnd());
        if (try_decode(r, n, &q, &used) == VT_POLY_OK)
            assert_int_equal(vt_poly_check(&q), VT_POLY_OK);
    }
}

static void decoder_rejects(void **state)
{
    (void)state;
    vt_poly q;
    size_t used;
    static const struct {
        const char *what;
        size_t n;
        const uint8_t b[16];
        int rc;
    } cases[] = {
        {"empty", 0, {0}, VT_POLY_ETRUNC},
        {"over-long h", 3, {0x80, 0x00, 0x00}, VT_POLY_EFORMAT},
        {"over-long constant", 3, {0x00, 0x85, 0x00}, VT_POLY_EFORMAT},
        {"17 terms", 2, {0x80, 0x04}, VT_POLY_EFORMAT},
        {"17 variables", 1, {0x11}, VT_POLY_EFORMAT},
        {"kind 6", 4, {0x01, 0x06, 0x00, 0x00}, VT_POLY_EFORMAT},
        {"kind 7", 4, {0x01, 0x07, 0x00, 0x00}, VT_POLY_EFORMAT},
        {"seq past 2^56", 13, {0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x00}, VT_POLY_EFORMAT},
        {"rank past 2^32", 9, {0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00}, VT_POLY_EFORMAT},
        {"varint past 64 bits", 11, {0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, VT_POLY_EFORMAT},
        {"constant past INT64_MAX", 11, {0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, VT_POLY_EFORMAT},
        {"constant sum past INT64_MAX", 12, {0x20, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, VT_POLY_EFORMAT},
        {"mask past the table", 7, {0x21, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02}, VT_POLY_EFORMAT},
        /* well formed, not canonical */
        {"two constants", 3, {0x20, 0x01, 0x01}, VT_POLY_ENONCANON},
        {"equal constants", 3, {0x20, 0x01, 0x00}, VT_POLY_ENONCANON},
        {"variables out of order", 6, {0x02, 0x08, 0x00, 0x00, 0x00, 0x05}, VT_POLY_ENONCANON},
        {"duplicate variable", 6, {0x02, 0x00, 0x00, 0x00, 0x00, 0x05}, VT_POLY_ENONCANON},
        {"unused variable", 9, {0x22, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x01, 0x00}, VT_POLY_ENONCANON},
        {"dominated term", 7, {0x21, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01}, VT_POLY_ENONCANON},
        {"terms out of order", 9, {0x22, 0x00, 0x00, 0x08, 0x00, 0x01, 0x02, 0x00, 0x01}, VT_POLY_ENONCANON},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = try_decode(cases[i].b, cases[i].n, &q, &used);
        if (rc != cases[i].rc)
            fail_msg("%s: got %d (%s), want %d", cases[i].what, rc, vt_poly_strerror(rc), cases[i].rc);
    }
    /* and the good neighbour of some of them */
    static const uint8_t ok2[] = {0x22, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x01, 0x02};
    assert_int_equal(try_decode(ok2, sizeof ok2, &q, &used), VT_POLY_OK);
    assert_string_equal(txt(&q), "0+v:0:0 1+v:0:1");
}

/* ---------------------------------------------------------------- checks can fail */

/* A deliberately wrong canonicalisation: sorts and collapses equal terms, but keeps the
 * dominated ones. */
static int broken_from_terms(vt_poly *out, const vt_poly_rawterm *t, size_t n)
{
    vt_poly each[16];
    vt_poly_rawterm single;
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        single = t[i];
        assert_int_equal(vt_poly_from_terms(&each[i], &single, 1), 0);
    }
    /* union of variable tables, then each term as a mask over it, sorted */
    vt_var vars[VT_POLY_MAX_VARS];
    unsigned nv = 0;
    for (size_t i = 0; i < n; i++)
        for (unsigned j = 0; j < each[i].nvars; j++) {
            unsigned k = 0;
            while (k < nv && vt_var_cmp(vars[k], each[i].var[j]) < 0)
                k++;
            if (k < nv && vt_var_eq(vars[k], each[i].var[j]))
                continue;
            memmove(&vars[k + 1], &vars[k], (nv - k) * sizeof vars[0]);
            vars[k] = each[i].var[j];
            nv++;
        }
    out->nvars = (uint8_t)nv;
    out->big = 0;
    memcpy(out->var, vars, nv * sizeof vars[0]);
    unsigned nt = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t m = 0;
        for (unsigned j = 0; j < each[i].nvars; j++)
            for (unsigned k = 0; k < nv; k++)
                if (vt_var_eq(vars[k], each[i].var[j]))
                    m |= 1u << k;
        int64_t c = each[i].c[0];
        unsigned k = 0;
        while (k < nt && (out->c[k] < c || (out->c[k] == c && out->mask[k] < m)))
            k++;
        if (k < nt && out->c[k] == c && out->mask[k] == m)
            continue;
        memmove(&out->c[k + 1], &out->c[k], (nt - k) * sizeof out->c[0]);
        memmove(&out->mask[k + 1], &out->mask[k], (nt - k) * sizeof out->mask[0]);
        out->c[k] = c;
        out->mask[k] = m;
        nt++;
    }
    out->nterms = (uint8_t)nt;
    return 0;
}

typedef int (*canon_fn)(vt_poly *, const vt_poly_rawterm *, size_t);

/* The R3 identities a run time relies on, checked by byte equality: min(d, d + x) = d,
 * and the same polynomial reached in two orders. Returns how many hold. */
static int identities_hold(canon_fn canon)
{
    vt_poly p, q;
    int ok = 0;
    vt_poly_rawterm d[] = {TV(2, A), T0(9)};
    vt_poly_rawterm dx[] = {TV(2, A), T0(9), TV(5, A, B), T0(12)}; /* d and d + 3 (+ B) */
    canon(&p, d, 2);
    canon(&q, dx, 4);
    ok += vt_poly_equal(&p, &q);
    vt_poly_rawterm o1[] = {TV(1, A, B), TV(3, A), TV(1, B)};
    vt_poly_rawterm o2[] = {TV(1, B), TV(3, A)};
    canon(&p, o1, 3);
    canon(&q, o2, 2);
    ok += vt_poly_equal(&p, &q);
    return ok;
}

static void checks_can_fail(void **state)
{
    (void)state;
    assert_int_equal(identities_hold(vt_poly_from_terms), 2);
    assert_int_equal(identities_hold(broken_from_terms), 0);
    /* the broken forms are the same functions, yet not byte-equal: only canonical forms
     * make R3 a byte comparison; the checker and the decoder refuse them */
    vt_poly_rawterm dx[] = {TV(2, A), T0(9), TV(5, A, B), T0(12)};
    vt_poly good, bad;
    assert_int_equal(vt_poly_from_terms(&good, dx, 4), 0);
    broken_from_terms(&bad, dx, 4);
    assert_false(vt_poly_equal(&good, &bad));
    tab s = {{A, B}, {0, 0}, 2, 0};
    for (int64_t a = 0; a < 12; a++)
        for (int64_t b = 0; b < 12; b++) {
            int64_t x, y;
            s.val[0] = a;
            s.val[1] = b;
            assert_int_equal(vt_poly_eval(&good, tab_value, &s, &x), 0);
            assert_int_equal(vt_poly_eval(&bad, tab_value, &s, &y), 0);
            assert_int_equal(x, y);
        }
    assert_int_equal(vt_poly_check(&bad), VT_POLY_ENONCANON);
    uint8_t b[VT_POLY_ENC_MAX];
    size_t n = vt_poly_encode(&bad, b), used;
    vt_poly q;
    assert_int_equal(vt_poly_decode(&q, b, n, &used), VT_POLY_ENONCANON);
}

static void format(void **state)
{
    (void)state;
    vt_poly_rawterm t[] = {TV(0, vt_var_delta(1, 7)), T0(250)};
    vt_poly p = from(t, 2);
    char small[8];
    size_t need = vt_poly_format(&p, small, sizeof small);
    assert_int_equal(need, strlen("0+v:1:7 250"));
    assert_string_equal(small, "0+v:1:7");
    assert_string_equal(txt(&p), "0+v:1:7 250");
    vt_poly bad = {0};
    assert_string_equal(txt(&bad), "INVALID");
    assert_int_equal(vt_poly_check(&bad), VT_POLY_EINVAL);
    assert_string_equal(vt_poly_strerror(VT_POLY_ENONCANON), "polynomial not in canonical form");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domination),
        cmocka_unit_test(order_independence),
        cmocka_unit_test(add_const_var),
        cmocka_unit_test(min_ops),
        cmocka_unit_test(min_many),
        cmocka_unit_test(evaluation),
        cmocka_unit_test(atoms),
        cmocka_unit_test(overflow),
        cmocka_unit_test(encoding),
        cmocka_unit_test(decoder_rejects),
        cmocka_unit_test(checks_can_fail),
        cmocka_unit_test(format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
