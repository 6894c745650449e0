/* EVENTS_COLS (src/format/evcols.c): EVENTS payloads made here go through pack and unpack
 * unchanged (calls with fixed and variable fields, special records, repeated and
 * changing fields of one call site, two call sites of one function, random streams);
 * regular streams pack much smaller; damaged packed payloads are refused with a message
 * that names the column and the byte, never read past their end, never give more than
 * the allowed bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vt_config.h"
#include "format/evcols.h"
#include "util/codec.h"
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

/* function ids: 0 MPI_Send "cptb", 1 MPI_Waitall "k", 2 MPI_Startall "R", 3 MPI_Barrier "cq",
 * 4 MPI_Wtime-like "" */
static const char *const layouts[] = {"cptb", "k", "R", "cq", ""};
static const vt_evcols_funcs funcs = {layouts, 5};

typedef struct payload {
    uint8_t b[1 << 20];
    size_t len;
    uint32_t nrec;
    int64_t prev;
} payload;

static void begin(payload *p, uint64_t first, int64_t base)
{
    p->len = (size_t)(vt_put_svar(vt_put_uvar(p->b, first), base) - p->b);
    p->nrec = 0;
    p->prev = base;
}

static void u(payload *p, uint64_t v) { p->len = (size_t)(vt_put_uvar(p->b + p->len, v) - p->b); }
static void s(payload *p, int64_t v) { p->len = (size_t)(vt_put_svar(p->b + p->len, v) - p->b); }

static void rec(payload *p, uint64_t code, int64_t enter, int64_t exit)
{
    u(p, code);
    s(p, enter - p->prev);
    u(p, (uint64_t)(exit - enter));
    p->prev = exit;
    p->nrec++;
}

static void send(payload *p, int64_t t, uint64_t site, int64_t peer, int64_t tag, uint64_t bytes)
{
    rec(p, VT_CODE_FIRST_FN + 0, t, t + 100);
    u(p, site);
    u(p, 0);
    s(p, peer);
    s(p, tag);
    u(p, bytes);
}

static void waitall(payload *p, int64_t t, uint64_t site, uint64_t first_req, unsigned n)
{
    rec(p, VT_CODE_FIRST_FN + 1, t, t + 900);
    u(p, site);
    u(p, n);
    for (unsigned i = 0; i < n; i++) {
        u(p, first_req + i); /* request id */
        u(p, i & 1);         /* flags */
        s(p, (int64_t)i % 2);
        s(p, 7);
        u(p, 4096);
    }
}

#ifdef HAVE_ZSTD
static size_t zsize(const void *b, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    void *o = malloc(cap);
    size_t r = ZSTD_compress(o, cap, b, n, 3);
    free(o);
    assert_false(ZSTD_isError(r));
    return r;
}
#endif

/* Packs, unpacks, compares; returns the packed size, compressed when zstd is built in
 * (*classic: the EVENTS payload's, likewise). */
static size_t roundtrip_z(const payload *p, size_t *classic)
{
    uint8_t *packed = NULL, *back = NULL;
    size_t plen = 0, blen = 0;
    char err[256] = "";
    int rc = vt_evcols_pack(p->b, p->len, p->nrec, &funcs, &packed, &plen, err, sizeof err);
    if (rc)
        fail_msg("pack: %s", err);
    rc = vt_evcols_unpack(packed, plen, p->nrec, &funcs, 1u << 24, &back, &blen, err, sizeof err);
    if (rc)
        fail_msg("unpack: %s", err);
    assert_int_equal(blen, p->len);
    assert_memory_equal(back, p->b, p->len);
#ifdef HAVE_ZSTD
    plen = zsize(packed, plen);
    *classic = zsize(p->b, p->len);
#else
    *classic = p->len;
#endif
    free(packed);
    free(back);
    return plen;
}

static void roundtrip(const payload *p)
{
    size_t classic;
    roundtrip_z(p, &classic);
}

static payload P;

static void regular_halo(void **state)
{
    (void)state;
    begin(&P, 0, 1000000);
    int64_t t = 1000000;
    uint64_t req = 1;
    for (int it = 0; it < 2000; it++) {
        send(&P, t += 1000 + it % 7, 11, 1, 5, 4096);
        send(&P, t += 1000 + it % 5, 12, 3, 5, 4096);
        waitall(&P, t += 2000, 13, req, 4);
        req += 4;
        t += 5000;
        rec(&P, VT_CODE_FIRST_FN + 3, t, t + 800);
        u(&P, 14);
        u(&P, 0);
        u(&P, (uint64_t)it);
    }
    size_t classic, packed = roundtrip_z(&P, &classic);
#ifdef HAVE_ZSTD
    /* every field after the first iteration is "the same" or a small difference, and each
     * column compresses by itself */
    printf("# regular stream: %zu bytes, zstd %zu, packed and zstd %zu\n", P.len, classic, packed);
    assert_true(packed * 2 < classic);
#else
    (void)packed, (void)classic;
#endif
}

static void specials_and_variable_fields(void **state)
{
    (void)state;
    begin(&P, 17, -5);
    rec(&P, VT_CODE_FLUSH, 10, 20);
    rec(&P, VT_CODE_MARKER, 30, 30);
    u(&P, 1);
    s(&P, -12);
    rec(&P, VT_CODE_MARKER, 40, 40);
    u(&P, 1);
    s(&P, -12); /* the same fields again */
    for (unsigned n = 0; n < 6; n++)
        waitall(&P, 100 + 1000 * n, 3, 10 * n, n); /* a count that changes */
    waitall(&P, 9000, 3, 50, 5);
    waitall(&P, 9100, 3, 55, 5); /* the same count: differences */
    rec(&P, VT_CODE_FIRST_FN + 2, 9500, 9600); /* Startall */
    u(&P, 3);
    u(&P, 2);
    u(&P, 70);
    u(&P, 71);
    rec(&P, VT_CODE_FIRST_FN + 4, 9700, 9710); /* no fields */
    u(&P, 0);
    send(&P, 9800, 0, -2, -1, 0); /* unknown site, MPI_PROC_NULL */
    send(&P, 9900, 99, INT64_MIN / 4, INT64_MAX / 4, UINT64_MAX); /* extremes */
    send(&P, 9990, 99, INT64_MAX / 4, INT64_MIN / 4, 0);
    rec(&P, VT_CODE_STOPPED, 10000, 10000);
    u(&P, 2);
    roundtrip(&P);
}

static void random_streams(void **state)
{
    (void)state;
    srand(7);
    for (int trial = 0; trial < 50; trial++) {
        begin(&P, (uint64_t)trial, rand() % 1000);
        int64_t t = 0;
        int n = rand() % 300;
        for (int i = 0; i < n; i++) {
            t += rand() % 100000;
            switch (rand() % 4) {
            case 0: send(&P, t, (uint64_t)(rand() % 3), rand() % 4 - 2, rand() % 3, (uint64_t)(rand() % 3) << 20); break;
            case 1: waitall(&P, t, (uint64_t)(rand() % 2), (uint64_t)rand(), (unsigned)(rand() % 4)); break;
            case 2: rec(&P, VT_CODE_FLUSH, t, t + rand() % 50); break;
            default:
                rec(&P, VT_CODE_FIRST_FN + 3, t, t + rand() % 900);
                u(&P, (uint64_t)(rand() % 2));
                u(&P, (uint64_t)(rand() % 2));
                u(&P, (uint64_t)i);
            }
        }
        roundtrip(&P);
    }
}

/* Packing keeps each code's layout (pack_rows, evcols.c): records of functions 0, 64 and
 * 128, of different layouts, alternate; varints of 9 and 10 bytes (a time jump, a huge
 * call site) and the records near the payload's end take pack()'s own loop. Pack and
 * unpack with the table give the payload back. */
static void many_functions_and_long_varints(void **state)
{
    (void)state;
    static const char *many[129];
    for (int i = 0; i < 129; i++)
        many[i] = "";
    many[0] = "cptb";
    many[64] = "k";
    many[128] = "cq";
    const vt_evcols_funcs table = {many, 129};
    begin(&P, 3, 0);
    int64_t t = 0;
    for (int it = 0; it < 40; it++) {
        send(&P, t += 100, 1, 1, it, 64);
        t += 100;
        rec(&P, VT_CODE_FIRST_FN + 64, t, t + 50);
        u(&P, 2);
        u(&P, 1);
        for (int v = 0; v < 5; v++)
            u(&P, (uint64_t)(it + v));
        t += 100;
        rec(&P, VT_CODE_FIRST_FN + 128, t, t + 50);
        u(&P, 3);
        u(&P, 0);
        u(&P, (uint64_t)it);
        if (it == 20) { /* a jump of 2^60 ns: 9 bytes and more */
            t += (int64_t)1 << 60;
            rec(&P, VT_CODE_FIRST_FN + 128, t, t + ((int64_t)1 << 58));
            u(&P, UINT64_MAX >> 1); /* call site: 9 bytes */
            u(&P, 0);
            u(&P, 7);
            t += (int64_t)1 << 58;
        }
    }
    rec(&P, VT_CODE_FIRST_FN + 4, t + 1, t + 2); /* the last record: fewer than 8 bytes left */
    u(&P, 0);
    uint8_t *packed = NULL, *back = NULL;
    size_t plen = 0, blen = 0;
    char err[256] = "";
    assert_int_equal(vt_evcols_pack(P.b, P.len, P.nrec, &table, &packed, &plen, err, sizeof err), 0);
    assert_int_equal(vt_evcols_unpack(packed, plen, P.nrec, &table, 1u << 24, &back, &blen, err, sizeof err), 0);
    assert_int_equal(blen, P.len);
    assert_memory_equal(back, P.b, P.len);
    free(packed);
    free(back);
}

/* Every damaged version of a packed payload is refused or unpacks to something; none
 * crashes, reads past the end (ASan in the sanitizer build) or exceeds max_out. */
static void damaged(void **state)
{
    (void)state;
    begin(&P, 0, 0);
    for (int it = 0; it < 20; it++) {
        send(&P, 100 * it, 1, 1, 5, 8);
        waitall(&P, 100 * it + 50, 2, (uint64_t)it * 2, 2);
    }
    uint8_t *packed, *back;
    size_t plen, blen;
    char err[256];
    assert_int_equal(vt_evcols_pack(P.b, P.len, P.nrec, &funcs, &packed, &plen, err, sizeof err), 0);
    /* truncated anywhere */
    for (size_t cut = 0; cut < plen; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, packed, cut);
        err[0] = 0;
        if (vt_evcols_unpack(copy, cut, P.nrec, &funcs, 1u << 20, &back, &blen, err, sizeof err) == 0)
            free(back);
        else
            assert_true(strstr(err, "expected") != NULL);
        free(copy);
    }
    /* one byte changed anywhere */
    for (size_t i = 0; i < plen; i++) {
        for (int v = 0; v < 256; v += 51) {
            uint8_t *copy = malloc(plen);
            memcpy(copy, packed, plen);
            copy[i] = (uint8_t)v;
            if (vt_evcols_unpack(copy, plen, P.nrec, &funcs, 1u << 20, &back, &blen, err, sizeof err) == 0) {
                assert_true(blen <= 1u << 20);
                free(back);
            }
            free(copy);
        }
    }
    /* too little room: refused, saying so */
    assert_int_equal(vt_evcols_unpack(packed, plen, P.nrec, &funcs, 64, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "fit in 64 bytes"));
    /* more records than the columns hold */
    assert_int_equal(vt_evcols_unpack(packed, plen, P.nrec + 1, &funcs, 1u << 20, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "record 40: expected a value in the codes column"));
    /* fewer: the columns do not end */
    assert_int_equal(vt_evcols_unpack(packed, plen, P.nrec - 1, &funcs, 1u << 20, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "column to end after record 39"));
    /* a function the table does not have */
    vt_evcols_funcs fewer = {layouts, 1};
    assert_int_equal(vt_evcols_unpack(packed, plen, P.nrec, &fewer, 1u << 20, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "expected a known record code, found 17"));
    free(packed);
}

static void pack_refuses_what_does_not_decode(void **state)
{
    (void)state;
    uint8_t *out;
    size_t olen;
    char err[256];
    begin(&P, 0, 0);
    rec(&P, 5, 1, 2); /* no such special record */
    assert_int_equal(vt_evcols_pack(P.b, P.len, P.nrec, &funcs, &out, &olen, err, sizeof err), -1);
    assert_non_null(strstr(err, "record 0"));
    begin(&P, 0, 0);
    send(&P, 1, 1, 1, 1, 1);
    assert_int_equal(vt_evcols_pack(P.b, P.len - 1, P.nrec, &funcs, &out, &olen, err, sizeof err), -1);
    assert_int_equal(vt_evcols_pack(P.b, P.len, P.nrec + 1, &funcs, &out, &olen, err, sizeof err), -1);
    P.b[P.len++] = 0;
    assert_int_equal(vt_evcols_pack(P.b, P.len, P.nrec, &funcs, &out, &olen, err, sizeof err), -1);
    assert_non_null(strstr(err, "1 bytes after the last record"));
}

/* REDUCED_COLS 1.5 (rcols.c): COMP records receiving messages from two senders whose
 * send times are far from the receiving call's enter go through pack and unpack (minor 5)
 * unchanged, their send times costing about a byte after the first of each sender; a
 * reader of 1.4 refuses the block; the split time columns, damaged, are refused naming
 * the column. */
static void reduced_message_times(void **state)
{
    (void)state;
    uint8_t *packed, *back;
    size_t plen, blen;
    char err[256];
    P.len = (size_t)(vt_put_uvar(vt_put_svar(vt_put_uvar(P.b, 0), 1000000), 0) - P.b);
    P.nrec = 0;
    int64_t prev = 1000000;
    for (int i = 0; i < 200; i++) {
        int64_t enter = prev + 300000 + (i * 7919) % 5000, exit = enter + 200000 + (i * 104729) % 3000;
        u(&P, 3);                    /* COMP */
        u(&P, 2);                    /* seq delta */
        s(&P, enter - prev);
        u(&P, (uint64_t)(exit - enter));
        u(&P, 1 + 3);                /* MPI function 3 */
        u(&P, 1 + 1);                /* call site 1 */
        u(&P, 1);                    /* flags: candidate */
        u(&P, 0);                    /* R* - enter */
        u(&P, 2);                    /* two messages */
        for (int m = 1; m <= 2; m++) {
            u(&P, (uint64_t)m);      /* sender */
            u(&P, (uint64_t)(2 * i + 1));
            s(&P, exit - enter - 3000 - m * 500 - (i * 31) % 97); /* arrived a latency before exit */
            u(&P, 512);
            u(&P, 0);
        }
        u(&P, 0);
        u(&P, 0);
        P.nrec++;
        prev = exit;
    }
    vt_rcols_comms comms = {NULL, 0};
    assert_int_equal(vt_rcols_pack(P.b, P.len, P.nrec, &comms, &packed, &plen, err, sizeof err), 0);
    assert_int_equal(vt_rcols_unpack(packed, plen, P.nrec, &comms, VT_VERSION(1, 5), sizeof P.b, &back, &blen, err, sizeof err), 0);
    assert_int_equal(blen, P.len);
    assert_memory_equal(back, P.b, P.len);
    free(back);
    /* the times column: a count, 400 low bytes, 400 high parts, most of them 0 */
    const uint8_t *q = packed;
    uint64_t v, len[8];
    for (int k = 0; k < 3; k++)
        assert_int_equal(vt_get_uvar(&q, packed + plen, &v), 0);
    for (int k = 0; k < 8; k++)
        assert_int_equal(vt_get_uvar(&q, packed + plen, &len[k]), 0);
    printf("reduced: %zu bytes, packed %zu, times column %llu\n", P.len, plen, (unsigned long long)len[5]);
    assert_true(len[5] < 2 + 400 + 400 + 16);
    assert_int_equal(len[7], 1); /* the form column */
    /* a reader of 1.4 refuses the block: a byte after the columns it knows */
    assert_int_equal(vt_rcols_unpack(packed, plen, P.nrec, &comms, VT_VERSION(1, 4), sizeof P.b, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "expected the payload to end after the columns"));
    packed[plen - 1] = 2; /* a form this reader does not know */
    assert_int_equal(vt_rcols_unpack(packed, plen, P.nrec, &comms, VT_VERSION(1, 5), sizeof P.b, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "form column"));
    packed[plen - 1] = 1;
    /* the times column's count past its bytes */
    size_t at = (size_t)(q - packed) + (size_t)(len[0] + len[1] + len[2] + len[3] + len[4]);
    uint8_t keep = packed[at];
    packed[at] = 0x7f;
    assert_int_equal(vt_rcols_unpack(packed, plen, P.nrec, &comms, VT_VERSION(1, 5), sizeof P.b, &back, &blen, err, sizeof err), -1);
    assert_non_null(strstr(err, "times column"));
    packed[at] = keep;
    /* one byte less in the payload: refused, never read past */
    assert_int_equal(vt_rcols_unpack(packed, plen - 1, P.nrec, &comms, VT_VERSION(1, 5), sizeof P.b, &back, &blen, err, sizeof err),
                     -1);
    free(packed);
}

/* vt_put_uvar_2 (the tracing layer's record times) writes vt_put_uvar's bytes */
static void uvar_2_same_bytes(void **state)
{
    (void)state;
    uint8_t a[VT_UVAR_MAX + 2], b[VT_UVAR_MAX + 2];
    uint64_t v = 0;
    for (int i = 0; i < 40000; i++, v = i < 33000 ? (uint64_t)i : v * 3 + 1) {
        memset(a, 0xee, sizeof a);
        memset(b, 0xee, sizeof b);
        size_t na = (size_t)(vt_put_uvar(a, v) - a), nb = (size_t)(vt_put_uvar_2(b, v) - b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, sizeof a);
    }
}

/* vt_put_uvar_4 (the layer's completion entries) writes four vt_put_uvar's bytes: every
 * one of the four below, at and above the one-byte limit */
static void uvar_4_same_bytes(void **state)
{
    (void)state;
    static const uint64_t vals[] = {0, 1, 2, 63, 126, 127, 128, 129, 255, 16383, 16384, UINT64_MAX};
    const int nv = (int)(sizeof vals / sizeof vals[0]);
    uint8_t a[4 * VT_UVAR_MAX + 4], b[4 * VT_UVAR_MAX + 4];
    for (int i = 0; i < nv * nv * nv * nv; i++) {
        uint64_t v[4] = {vals[i % nv], vals[i / nv % nv], vals[i / nv / nv % nv], vals[i / nv / nv / nv]};
        memset(a, 0xee, sizeof a);
        memset(b, 0xee, sizeof b);
        uint8_t *e = a;
        for (int k = 0; k < 4; k++)
            e = vt_put_uvar(e, v[k]);
        size_t na = (size_t)(e - a), nb = (size_t)(vt_put_uvar_4(b, v[0], v[1], v[2], v[3]) - b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, sizeof a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_halo),
        cmocka_unit_test(specials_and_variable_fields),
        cmocka_unit_test(random_streams),
        cmocka_unit_test(many_functions_and_long_varints),
        cmocka_unit_test(damaged),
        cmocka_unit_test(pack_refuses_what_does_not_decode),
        cmocka_unit_test(reduced_message_times),
        cmocka_unit_test(uvar_2_same_bytes),
        cmocka_unit_test(uvar_4_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
