/* The pool of per-rank blocks (src/util/blockpool.c): sizes, alignment, reuse by size
 * class, grow, and the fall-back to the C allocator. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vt_config.h"
#include "util/blockpool.h"

/* Two blocks carved one after the other from a new pool's first mapping lie one
 * block apart: the block's size. At least N, at most a fifth and a line more. */
static void sizes(void **state)
{
    (void)state;
    for (size_t n = 1; n <= (64u << 10); n += n < 2048 ? 1 : 97) {
        vt_blockpool *p = vt_blockpool_new();
        assert_non_null(p);
        unsigned char *a = vt_blockpool_alloc(p, n), *b = vt_blockpool_alloc(p, n);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal((uintptr_t)a % 64, 0);
        assert_int_equal((uintptr_t)b % 64, 0);
        size_t size = (size_t)(b - a);
        if (size < n || size > n + n / 4 + 64)
            fail_msg("a block of %zu bytes takes %zu", n, size);
        vt_blockpool_destroy(p);
    }
}

/* Blocks of mixed sizes, each filled with its own byte, keep their bytes while others
 * are written, freed and handed out again. */
static void no_overlap(void **state)
{
    (void)state;
    vt_blockpool *p = vt_blockpool_new();
    enum { N = 3000 };
    unsigned char *b[N];
    size_t len[N];
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        len[i] = 1 + (seed >> 8) % (i % 10 ? 700 : 40000);
        b[i] = vt_blockpool_alloc(p, len[i]);
        assert_non_null(b[i]);
        memset(b[i], i & 0xff, len[i]);
        if (i % 3 == 2) {   /* free one of the last three, then take a block again */
            int j = i - (int)(seed % 3);
            vt_blockpool_free(p, b[j], len[j]);
            b[j] = vt_blockpool_alloc(p, len[j]);
            assert_non_null(b[j]);
            memset(b[j], j & 0xff, len[j]);
        }
    }
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < len[i]; k++)
            if (b[i][k] != (unsigned char)(i & 0xff))
                fail_msg("block %d (%zu bytes) changed at byte %zu", i, len[i], k);
    vt_blockpool_destroy(p);
}

/* A freed block is the next one of its class, and of no other class. */
static void reuse(void **state)
{
    (void)state;
    vt_blockpool *p = vt_blockpool_new();
    void *a = vt_blockpool_alloc(p, 100);
    vt_blockpool_free(p, a, 100);
    void *other = vt_blockpool_alloc(p, 300);   /* 5 lines: not a's class (2) */
    assert_ptr_not_equal(other, a);
    assert_ptr_equal(vt_blockpool_alloc(p, 120), a);   /* 2 lines, as 100 bytes */
    assert_ptr_not_equal(vt_blockpool_alloc(p, 120), a);
    unsigned char *z = vt_blockpool_calloc(p, 300);
    vt_blockpool_free(p, other, 300);
    memset(z, 0xab, 300);
    vt_blockpool_free(p, z, 300);
    z = vt_blockpool_calloc(p, 300);   /* a freed block, cleared */
    for (int i = 0; i < 300; i++)
        assert_int_equal(z[i], 0);
    vt_blockpool_destroy(p);
}

static void grow(void **state)
{
    (void)state;
    vt_blockpool *p = vt_blockpool_new();
    unsigned char *b = vt_blockpool_grow(p, NULL, 0, 64);
    assert_non_null(b);
    for (int i = 0; i < 64; i++)
        b[i] = (unsigned char)i;
    size_t cap = 64;
    while (cap < (256u << 10)) {   /* past the largest class: the C allocator */
        b = vt_blockpool_grow(p, b, cap, 2 * cap);
        assert_non_null(b);
        for (size_t i = 0; i < 64; i++)
            assert_int_equal(b[i], i);
        memset(b + cap, 0x5a, cap);
        cap *= 2;
    }
    b = vt_blockpool_grow(p, b, cap, 128);   /* shrinking keeps the first bytes */
    for (size_t i = 0; i < 64; i++)
        assert_int_equal(b[i], i);
    assert_int_equal(b[64], 0x5a);
    vt_blockpool_free(p, b, 128);
    vt_blockpool_destroy(p);
}

/* Without a pool, and above 64 KiB, blocks come from aligned_alloc and go back to free
 * (valgrind or ASan would report a mismatch). */
static void fall_back(void **state)
{
    (void)state;
    void *a = vt_blockpool_alloc(NULL, 100);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 64, 0);
    vt_blockpool_free(NULL, a, 100);
    vt_blockpool *p = vt_blockpool_new();
    void *big = vt_blockpool_calloc(p, (64u << 10) + 1);
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % 64, 0);
    vt_blockpool_free(p, big, (64u << 10) + 1);
    vt_blockpool_free(p, NULL, 10);
    vt_blockpool_destroy(p);
    vt_blockpool_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes), cmocka_unit_test(no_overlap), cmocka_unit_test(reuse),
        cmocka_unit_test(grow),  cmocka_unit_test(fall_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
