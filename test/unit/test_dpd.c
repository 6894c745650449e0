/* The periodicity detector (src/util/dpd.c, seed 000): known periods are found, at
 * the sample the definition says (N + p samples seen, the last N repeating with shift
 * p), the smallest period wins, a change of period is followed, aperiodic streams and
 * periods longer than M give 0, and a brute-force d(m) agrees with the matrix's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/dpd.h"

/* The definition, computed directly: smallest m <= M with x[i] == x[i - m] for the
 * last N samples (all of them having a sample m before), else 0. */
static uint32_t brute(const uint32_t *x, uint64_t n, uint32_t N, uint32_t M)
{
    for (uint32_t m = 1; m <= M; m++) {
        if (n < (uint64_t)N + m)
            continue;
        int ok = 1;
        for (uint64_t i = n - N; i < n && ok; i++)
            ok = x[i] == x[i - m];
        if (ok)
            return m;
    }
    return 0;
}

static void periodic(void **state)
{
    (void)state;
    vt_dpd p;
    assert_int_equal(vt_dpd_init(&p, 16, 32), 0);
    static const uint32_t pat[] = {7, 3, 3, 9, 1};
    uint32_t got = 0;
    for (uint64_t i = 0; i < 200; i++) {
        got = vt_dpd_push(&p, pat[i % 5]);
        if (i + 1 < 16 + 5)
            assert_int_equal(got, 0); /* not enough samples yet */
        else
            assert_int_equal(got, 5);
    }
    vt_dpd_free(&p);
}

static void constant_and_smallest(void **state)
{
    (void)state;
    vt_dpd p;
    assert_int_equal(vt_dpd_init(&p, 8, 16), 0);
    uint32_t got = 0;
    for (int i = 0; i < 40; i++)
        got = vt_dpd_push(&p, 4);
    assert_int_equal(got, 1); /* period 1, not 2, 3, ... */
    vt_dpd_free(&p);
}

static void change_of_period(void **state)
{
    (void)state;
    vt_dpd p;
    const uint32_t N = 12, M = 20;
    assert_int_equal(vt_dpd_init(&p, N, M), 0);
    uint32_t x[400];
    uint64_t n = 0;
    for (int i = 0; i < 150; i++)
        x[n++] = (uint32_t)(i % 3);
    for (int i = 0; i < 150; i++)
        x[n++] = (uint32_t)(10 + i % 7);
    int saw3 = 0, saw7 = 0, gap = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t got = vt_dpd_push(&p, x[i]);
        assert_int_equal(got, brute(x, i + 1, N, M));
        saw3 |= got == 3;
        saw7 |= got == 7;
        gap |= i >= 150 && got == 0;
    }
    assert_true(saw3 && saw7 && gap);
    vt_dpd_free(&p);
}

static void aperiodic_and_too_long(void **state)
{
    (void)state;
    vt_dpd p;
    assert_int_equal(vt_dpd_init(&p, 32, 50), 0);
    uint64_t s = 1;
    for (int i = 0; i < 500; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        assert_int_equal(vt_dpd_push(&p, (uint32_t)(s % 1000)), 0);
    }
    vt_dpd_free(&p);
    /* a period of 60 is beyond M = 50 */
    assert_int_equal(vt_dpd_init(&p, 32, 50), 0);
    for (int i = 0; i < 600; i++)
        assert_int_equal(vt_dpd_push(&p, (uint32_t)(i % 60)), 0);
    vt_dpd_free(&p);
}

static void against_definition(void **state)
{
    (void)state;
    /* random streams made of repeated random patterns with noise: every push agrees */
    uint64_t s = 42;
    for (int round = 0; round < 40; round++) {
        uint32_t N = 1 + (uint32_t)(s % 30), M = 1 + (uint32_t)((s >> 8) % 70);
        vt_dpd p;
        assert_int_equal(vt_dpd_init(&p, N, M), 0);
        uint32_t x[2000];
        uint64_t n = 0;
        while (n < 1500) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            uint32_t len = 1 + (uint32_t)(s % 12), reps = 1 + (uint32_t)((s >> 16) % 20);
            uint32_t pat[12];
            for (uint32_t k = 0; k < len; k++)
                pat[k] = (uint32_t)((s >> (k * 3)) % 5);
            for (uint32_t r = 0; r < reps && n < 1500; r++)
                for (uint32_t k = 0; k < len && n < 1500; k++)
                    x[n++] = pat[k];
        }
        for (uint64_t i = 0; i < n; i++)
            assert_int_equal(vt_dpd_push(&p, x[i]), brute(x, i + 1, N, M));
        vt_dpd_free(&p);
    }
}

static void bad_sizes(void **state)
{
    (void)state;
    vt_dpd p;
    assert_int_equal(vt_dpd_init(&p, 0, 5), -1);
    assert_int_equal(vt_dpd_init(&p, 5, 0), -1);
    assert_int_equal(vt_dpd_init(&p, 70000, 5), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(periodic),          cmocka_unit_test(constant_and_smallest),
        cmocka_unit_test(change_of_period),  cmocka_unit_test(aperiodic_and_too_long),
        cmocka_unit_test(against_definition), cmocka_unit_test(bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
