/* Random operation sequences on min-plus polynomials (src/model/poly.c), printed as a
 * script that test/unit/poly_oracle.py replays with the reference simulation's algebra
 * (shared/design/reference/mc.py: canon, p_min, p_addc, p_addv, overflow).
 *
 * usage: poly_oracle SEED N        N sequences from SEED, script on stdout
 *
 * Each sequence has its own variable pool, limits m and K, and registers r0..r5. Every
 * step is one event: one or more operations, the result of each printed ("= nvars text"),
 * then the overflow rule, as at run time; so registers are overflow-bounded between
 * events, and a result may be BIG only as the last operation before the overflow.
 * Script lines (registers are numbers, variables k:owner:seq):
 *   seq I m M K K
 *   const D C | atom D VAR | addc D K | addv D VAR
 *   min D N S1..SN                    D = min of registers
 *   ms D N (S ADD VAR|-)*N            D = min_k (S + ADD [+ VAR]), S a register, cC
 *                                     (the constant C) or aVAR (the atom VAR)
 *   raw D N (C NV VAR*NV)*N           D = canon of raw terms
 *   ovf D RANK SEQ                    overflow rule with m, K
 *   = NV TEXT                         result of the previous operation
 *   eval S RESULT N (VAR VALUE)*N     value at a scenario
 *   eq A B 0|1                        byte equality of canonical forms
 * Every result is also checked here: vt_poly_check, and the encoding round trip. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/poly.h"

#define NREG 6
#define MAXPOOL 120

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static unsigned rn(unsigned n) { return (unsigned)(rnd() % n); }

static vt_poly reg[NREG];
static vt_var pool[MAXPOOL];
static unsigned npool, lim_m, lim_K;
static unsigned long nchecks;

static void die(const char *what)
{
    fprintf(stderr, "poly_oracle: %s\n", what);
    exit(2);
}

static void pvar(vt_var v)
{
    char b[64];
    vt_var_format(v, b, sizeof b);
    printf(" %s", b);
}

static int64_t rconst(void)
{
    switch (rn(8)) {
    case 0: return 0;
    case 1: return (int64_t)(rnd() % 1000000000000ull);
    default: return (int64_t)rn(12);
    }
}

static vt_var rvar(void) { return pool[rn(npool)]; }

/* Checks a result, prints it. */
static void result(const vt_poly *p, int rc)
{
    char text[4096];
    if (p->big) {
        if (rc != VT_POLY_EBIG)
            die("big result without VT_POLY_EBIG");
        printf("= - BIG\n");
        return;
    }
    if (rc)
        die(vt_poly_strerror(rc));
    if (vt_poly_check(p))
        die("result not canonical");
    uint8_t enc[VT_POLY_ENC_MAX];
    size_t n = vt_poly_encode(p, enc), used = 0;
    vt_poly q;
    if (!n || vt_poly_decode(&q, enc, n, &used) || used != n || !vt_poly_equal(p, &q))
        die("encoding round trip");
    nchecks++;
    if (vt_poly_format(p, text, sizeof text) >= sizeof text)
        die("text too long");
    printf("= %u %s\n", vt_poly_nvars(p), text);
}

static void overflow(unsigned d, uint32_t rank, uint64_t seq)
{
    printf("ovf %u %" PRIu32 " %" PRIu64 "\n", d, rank, seq);
    int rc = vt_poly_overflow(&reg[d], lim_m, lim_K, rank, seq);
    if (rc < 0)
        die("overflow failed");
    result(&reg[d], 0);
}

/* D = min_k (S_k + ADD_k [+ VAR_k]); a source may be a constant ("c5"): placed late, a
 * small one dominates what the working area accumulated before. */
static void op_ms(unsigned d, unsigned n, unsigned nconst, unsigned atoms)
{
    vt_poly_shift in[160];
    vt_poly cst[8], atm[160];
    printf("ms %u %u", d, n);
    for (unsigned k = 0; k < n; k++) {
        unsigned s = rn(NREG);
        if (nconst && rn(n) < 2 * nconst && k > n / 2) {
            int64_t c = rn(2) ? rn(3) : rconst();
            nconst--;
            vt_poly_const(&cst[nconst], c);
            in[k].p = &cst[nconst];
            printf(" c%" PRId64, c);
            in[k].add = rn(2) ? 0 : (int64_t)rn(8);
            in[k].has_var = rn(2);
            in[k].var = rvar();
            printf(" %" PRId64, in[k].add);
            if (in[k].has_var)
                pvar(in[k].var);
            else
                printf(" -");
            continue;
        } else if (rn(10) < atoms) {
            vt_var v = rvar();
            char b[64];
            vt_poly_atom(&atm[k], v);
            in[k].p = &atm[k];
            vt_var_format(v, b, sizeof b);
            printf(" a%s", b);
        } else {
            in[k].p = &reg[s];
            printf(" %u", s);
        }
        in[k].add = rn(3) ? (int64_t)rn(8) : rconst();
        in[k].has_var = rn(10) < 5 + atoms / 2;
        in[k].var = rvar();
        printf(" %" PRId64, in[k].add);
        if (in[k].has_var)
            pvar(in[k].var);
        else
            printf(" -");
    }
    printf("\n");
    vt_poly out;
    int rc = vt_poly_min_shifted(&out, in, n);
    result(&out, rc);
    reg[d] = out;
}

static void op_raw(unsigned d)
{
    unsigned n = 1 + rn(rn(4) ? 6 : 30);
    vt_poly_rawterm t[32];
    vt_var vs[32][6];
    printf("raw %u %u", d, n);
    for (unsigned i = 0; i < n; i++) {
        t[i].c = rconst();
        t[i].nvars = rn(6);
        t[i].vars = vs[i];
        printf(" %" PRId64 " %zu", t[i].c, t[i].nvars);
        for (size_t j = 0; j < t[i].nvars; j++) {
            vs[i][j] = rvar();
            pvar(vs[i][j]);
        }
    }
    printf("\n");
    int rc = vt_poly_from_terms(&reg[d], t, n);
    result(&reg[d], rc);
}

typedef struct scen {
    vt_var v[VT_POLY_MAX_VARS];
    int64_t val[VT_POLY_MAX_VARS];
    unsigned n;
} scen;

static int scen_value(void *ctx, vt_var v, int64_t *val)
{
    scen *s = ctx;
    for (unsigned i = 0; i < s->n; i++)
        if (vt_var_eq(s->v[i], v)) {
            *val = s->val[i];
            return 0;
        }
    if (s->n == VT_POLY_MAX_VARS)
        return 1;
    s->v[s->n] = v;
    s->val[s->n] = rn(4) ? (int64_t)rn(20) : (int64_t)(rnd() % 1000000000000ull);
    *val = s->val[s->n++];
    return 0;
}

static void op_eval(unsigned s)
{
    scen sc;
    sc.n = 0;
    int64_t v;
    if (vt_poly_eval(&reg[s], scen_value, &sc, &v))
        die("eval failed");
    printf("eval %u %" PRId64 " %u", s, v, sc.n);
    for (unsigned i = 0; i < sc.n; i++) {
        pvar(sc.v[i]);
        printf(" %" PRId64, sc.val[i]);
    }
    printf("\n");
}

static void sequence(unsigned idx)
{
    /* limits: small ones overflow often; sometimes the defaults or the largest */
    switch (rn(4)) {
    case 0: lim_m = VT_POLY_DEFAULT_M; lim_K = VT_POLY_DEFAULT_K; break;
    case 1: lim_m = VT_POLY_M_MAX; lim_K = VT_POLY_K_MAX; break;
    default: lim_m = rn(5); lim_K = 1 + rn(6); break;
    }
    /* variable pool: few variables give many dominations, many give overflows */
    npool = 2 + rn(rn(3) ? 10 : rn(2) ? 40 : MAXPOOL - 2);
    for (unsigned i = 0; i < npool; i++) {
        enum vt_var_kind k = (enum vt_var_kind)rn(VT_VAR_NKINDS);
        uint64_t owner = k == VT_VAR_COLL && rn(2) ? rnd() : rn(4);
        uint64_t seq = rn(8) ? rn(60) : (rnd() & VT_VAR_SEQ_MAX);
        pool[i] = vt_var_make(k, owner, seq);
    }
    printf("seq %u m %u K %u\n", idx, lim_m, lim_K);
    for (unsigned d = 0; d < NREG; d++) {
        if (rn(3)) {
            int64_t c = rconst();
            printf("const %u %" PRId64 "\n", d, c);
            result(&reg[d], vt_poly_const(&reg[d], c));
        } else {
            vt_var v = rvar();
            printf("atom %u", d);
            pvar(v);
            printf("\n");
            vt_poly_atom(&reg[d], v);
            result(&reg[d], 0);
        }
    }
    unsigned nev = 5 + rn(60);
    for (unsigned e = 0; e < nev; e++) {
        unsigned d = rn(NREG), a = rn(NREG), b = rn(NREG);
        uint32_t rank = rn(4);
        uint64_t seq = 1000 + e;
        switch (rn(12)) {
        case 0: { /* local candidate */
            vt_var v = rvar();
            printf("addv %u", d);
            pvar(v);
            printf("\n");
            result(&reg[d], vt_poly_addv(&reg[d], v));
            break;
        }
        case 1: {
            int64_t k = rconst();
            printf("addc %u %" PRId64 "\n", d, k);
            result(&reg[d], vt_poly_addc(&reg[d], k));
            break;
        }
        case 2: /* min, then a candidate variable, then min with a capped term */
            printf("min %u 2 %u %u\n", d, a, b);
            result(&reg[d], vt_poly_min(&reg[d], &reg[a], &reg[b]));
            if (rn(2)) {
                vt_var v = rvar();
                printf("addv %u", d);
                pvar(v);
                printf("\n");
                result(&reg[d], vt_poly_addv(&reg[d], v));
                if (rn(2)) {
                    unsigned c2 = rn(NREG);
                    printf("min %u 2 %u %u\n", d, d, c2);
                    result(&reg[d], vt_poly_min(&reg[d], &reg[d], &reg[c2]));
                }
            }
            break;
        case 3: { /* min of several registers */
            unsigned n = 1 + rn(NREG);
            const vt_poly *in[NREG];
            printf("min %u %u", d, n);
            for (unsigned k = 0; k < n; k++) {
                unsigned s = rn(NREG);
                in[k] = &reg[s];
                printf(" %u", s);
            }
            printf("\n");
            vt_poly out;
            result(&out, vt_poly_min_n(&out, in, n));
            reg[d] = out;
            break;
        }
        case 4: case 5: case 6: /* a completion with its candidate rule, in one call */
            op_ms(d, 1 + rn(4), 0, 0);
            break;
        case 7: /* many contributors: big results, the exact fallback past 64 terms */
            if (rn(3))
                op_ms(d, 8 + rn(40), rn(3), rn(4));
            else
                op_ms(d, 40 + rn(120), 1 + rn(8), 6 + rn(5));
            break;
        case 8: {
            vt_var v = rvar();
            printf("atom %u", d);
            pvar(v);
            printf("\n");
            vt_poly_atom(&reg[d], v);
            result(&reg[d], 0);
            break;
        }
        case 9:
            op_raw(d);
            break;
        case 10:
            op_eval(a);
            continue;
        case 11:
            printf("eq %u %u %d\n", a, b, vt_poly_equal(&reg[a], &reg[b]));
            continue;
        }
        overflow(d, rank, seq);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: poly_oracle SEED N\n");
        return 2;
    }
    rng_state = strtoull(argv[1], NULL, 0);
    unsigned n = (unsigned)strtoul(argv[2], NULL, 0);
    for (unsigned i = 0; i < n; i++)
        sequence(i);
    printf("end %u %lu\n", n, nchecks);
    return fflush(stdout) ? 2 : 0;
}
