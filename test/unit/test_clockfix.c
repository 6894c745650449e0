/* Clock-condition repair (src/format/clockfix.c, doc/clock-repair.md), on small traces
 * built in memory with clock offsets and known violations: the counts, the shifts,
 * no receive ending before its send once the fix is installed, local intervals kept
 * after each jump, each jump no larger than needed, no shift without violations,
 * unorderable and foreign inputs rejected, and random traces against an independent
 * oracle (the same rule applied in the order the generator made the events). The
 * checker is shown to reject the unrepaired traces, so it can fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/clockfix.h"
#include "memtrace.h"
#include "format/reader.h"

/* ---------------------------------------------------------------- building traces */

enum { F_INIT, F_SEND, F_RECV, F_ISEND, F_IRECV, F_WAITALL, F_SENDRECV, F_FINALIZE, NF };
static const char *const fn_name[NF][2] = {
    {"MPI_Init", ""},   {"MPI_Send", "cptb"},    {"MPI_Recv", "cPTB"},         {"MPI_Isend", "cptbr"},
    {"MPI_Irecv", "cr"}, {"MPI_Waitall", "k"},   {"MPI_Sendrecv", "cptbPTB"}, {"MPI_Finalize", ""},
};

#define MAXR 8
#define TAG 5

typedef struct rkb {
    mt_buf ev;
    int n;
    int64_t prev;
    int64_t t1, off1, t2, off2; /* clock: global = local + offset (interpolated) */
    int same;
} rkb;

typedef struct tbuild {
    uint32_t nranks;
    rkb r[MAXR];
    mt_trace mt;
    vt_trace *t;
    vt_matches *m;
} tbuild;

static void tb_init(tbuild *b, uint32_t nranks)
{
    memset(b, 0, sizeof *b);
    b->nranks = nranks;
    for (uint32_t r = 0; r < nranks; r++) {
        mt_uvar(&b->r[r].ev, 0); /* first record index */
        mt_svar(&b->r[r].ev, 0); /* base time */
        b->r[r].same = 1;
    }
}

/* Constant offset OFF for rank R (not the same clock as rank 0). */
static void tb_offset(tbuild *b, uint32_t r, int64_t off)
{
    b->r[r].same = 0;
    b->r[r].t1 = b->r[r].t2 = 0;
    b->r[r].off1 = b->r[r].off2 = off;
}

static void rec(tbuild *b, uint32_t r, int fn, int64_t enter, int64_t exit)
{
    rkb *k = &b->r[r];
    assert_true(exit >= enter);
    mt_uvar(&k->ev, 16 + (uint64_t)fn);
    mt_svar(&k->ev, enter - k->prev);
    mt_uvar(&k->ev, (uint64_t)(exit - enter));
    mt_uvar(&k->ev, 0); /* call site: unknown */
    k->prev = exit;
    k->n++;
}

static void r_init(tbuild *b, uint32_t r, int64_t t) { rec(b, r, F_INIT, t, t); }
static void r_fin(tbuild *b, uint32_t r, int64_t t) { rec(b, r, F_FINALIZE, t, t); }
static void r_send(tbuild *b, uint32_t r, int64_t en, int64_t ex, uint32_t to)
{
    rec(b, r, F_SEND, en, ex);
    mt_uvar(&b->r[r].ev, 0);
    mt_svar(&b->r[r].ev, to);
    mt_svar(&b->r[r].ev, TAG);
    mt_uvar(&b->r[r].ev, 8);
}
static void r_recv(tbuild *b, uint32_t r, int64_t en, int64_t ex, uint32_t from)
{
    rec(b, r, F_RECV, en, ex);
    mt_uvar(&b->r[r].ev, 0);
    mt_svar(&b->r[r].ev, from);
    mt_svar(&b->r[r].ev, TAG);
    mt_uvar(&b->r[r].ev, 8);
}
static void r_sendrecv(tbuild *b, uint32_t r, int64_t en, int64_t ex, uint32_t to, uint32_t from)
{
    rec(b, r, F_SENDRECV, en, ex);
    mt_uvar(&b->r[r].ev, 0);
    mt_svar(&b->r[r].ev, to);
    mt_svar(&b->r[r].ev, TAG);
    mt_uvar(&b->r[r].ev, 8);
    mt_svar(&b->r[r].ev, from);
    mt_svar(&b->r[r].ev, TAG);
    mt_uvar(&b->r[r].ev, 8);
}
static void r_irecv(tbuild *b, uint32_t r, int64_t en, int64_t ex, uint64_t req)
{
    rec(b, r, F_IRECV, en, ex);
    mt_uvar(&b->r[r].ev, 0);
    mt_uvar(&b->r[r].ev, req);
}
/* Waitall completing receive requests REQ[i] from FROM[i]. */
static void r_waitall_recv(tbuild *b, uint32_t r, int64_t en, int64_t ex, int n, const uint64_t *req,
                           const uint32_t *from)
{
    rec(b, r, F_WAITALL, en, ex);
    mt_uvar(&b->r[r].ev, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        mt_uvar(&b->r[r].ev, req[i]);
        mt_uvar(&b->r[r].ev, 1); /* receive side */
        mt_svar(&b->r[r].ev, from[i]);
        mt_svar(&b->r[r].ev, TAG);
        mt_uvar(&b->r[r].ev, 8);
    }
}

/* Writes the files, opens the trace and matches it. */
static void tb_open(tbuild *b)
{
    mt_buf g = {0}, funcs = {0};
    mt_str(&g, "test");
    mt_str(&g, "MPI test");
    mt_str(&g, "");
    mt_uvar(&g, b->nranks);
    for (uint32_t r = 0; r < b->nranks; r++) {
        mt_svar(&g, b->r[r].t1);
        mt_svar(&g, b->r[r].off1);
        mt_svar(&g, b->r[r].t2);
        mt_svar(&g, b->r[r].off2);
        mt_uvar(&g, (uint64_t)b->r[r].same);
        mt_str(&g, "host");
    }
    mt_uvar(&g, 0);
    mt_file_header(&b->mt.defs, "VTRACE\0D", b->nranks);
    mt_block(&b->mt.defs, 4, &g, 0);
    mt_block(&b->mt.defs, 15, NULL, 0);
    mt_uvar(&funcs, NF);
    for (int i = 0; i < NF; i++) {
        mt_str(&funcs, fn_name[i][0]);
        mt_str(&funcs, fn_name[i][1]);
    }
    b->mt.nranks = b->nranks;
    for (uint32_t r = 0; r < b->nranks; r++) {
        mt_buf rd = {0};
        mt_rankdefs(&rd, r, b->nranks, 0, 0);
        mt_rank_file(&b->mt.ranks[r], r, &funcs, &b->r[r].ev, b->r[r].n, &rd);
        mt_free(&rd);
    }
    mt_free(&g);
    mt_free(&funcs);
    size_t nf = mt_trace_files(&b->mt);
    vt_error err;
    if (vt_trace_open_mem(b->mt.files, nf, &b->t, &err))
        fail_msg("open: %s", err.msg);
    if (vt_trace_match(b->t, 0, &b->m, &err))
        fail_msg("match: %s", err.msg);
}

static void tb_free(tbuild *b)
{
    vt_matches_free(b->m);
    vt_trace_close(b->t);
    mt_trace_free(&b->mt);
    for (uint32_t r = 0; r < b->nranks; r++)
        mt_free(&b->r[r].ev);
}

static vt_clockfix *fix_ok(tbuild *b, int64_t lat, vt_clockfix_stats *st)
{
    vt_clockfix *f = NULL;
    vt_error err;
    if (vt_clockfix_compute(b->t, b->m, lat, &f, st, &err))
        fail_msg("clockfix: %s", err.msg);
    assert_non_null(f);
    return f;
}

/* ---------------------------------------------------------------- checking */

/* Every record's (enter, exit) by rank and index (small traces only). */
typedef struct times {
    int64_t *en[MAXR], *ex[MAXR];
    size_t n[MAXR];
} times;

static void load_times(const vt_trace *t, times *tm)
{
    memset(tm, 0, sizeof *tm);
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        vt_error err;
        vt_event ev;
        assert_int_equal(vt_cursor_open(t, r, &c, &err), 0);
        size_t cap = 16;
        tm->en[r] = malloc(cap * sizeof(int64_t));
        tm->ex[r] = malloc(cap * sizeof(int64_t));
        int rc;
        while ((rc = vt_cursor_next(c, &ev, &err)) == 1) {
            if (tm->n[r] == cap) {
                cap *= 2;
                tm->en[r] = realloc(tm->en[r], cap * sizeof(int64_t));
                tm->ex[r] = realloc(tm->ex[r], cap * sizeof(int64_t));
            }
            assert_int_equal(ev.index, tm->n[r]);
            tm->en[r][tm->n[r]] = ev.enter;
            tm->ex[r][tm->n[r]] = ev.exit;
            tm->n[r]++;
        }
        assert_int_equal(rc, 0);
        vt_cursor_close(c);
    }
}

static void free_times(times *tm)
{
    for (int r = 0; r < MAXR; r++) {
        free(tm->en[r]);
        free(tm->ex[r]);
    }
}

/* Receives whose end (global, through vt_global_time: repaired when a fix is
 * installed) is earlier than their send's enter + LAT. */
static uint64_t count_bad(const vt_trace *t, const vt_matches *m, const times *tm, int64_t lat)
{
    const vt_match_key *keys = vt_matches_keys(m, NULL);
    uint64_t bad = 0;
    for (uint32_t d = 0; d < vt_trace_nranks(t); d++) {
        size_t n;
        const vt_match_crecv *rv = vt_matches_crecvs(m, d, &n);
        for (size_t i = 0; i < n; i++) {
            if (rv[i].send_pos == VT_MPOS_NONE)
                continue;
            uint32_t s = keys[rv[i].key].src;
            const vt_match_csend *sd = vt_matches_csends(m, s, NULL);
            int64_t se = tm->en[s][sd[rv[i].send_pos].index];
            assert_int_equal(rv[i].done_exit, tm->ex[d][rv[i].done_index]);
            if (vt_global_time(t, d, rv[i].done_exit) < vt_global_time(t, s, se) + lat)
                bad++;
        }
    }
    return bad;
}

/* Properties of an installed fix F on T (installs and removes it):
 *  - no receive ends before its send + LAT;
 *  - the shift never decreases along a rank and changes only inside a record that
 *    completes a receive (between its enter and exit): every other interval, and every
 *    interval after a jump, keeps its unrepaired global length;
 *  - each jump is no larger than needed: some receive completed by that record ends
 *    exactly at its send's enter + LAT after the repair;
 *  - computing again on the repaired trace finds nothing to do.
 * Returns the number of broken properties (0: all hold) so that the caller can also
 * show that the checks fail on a wrong fix. */
static int check_fix(tbuild *b, const vt_clockfix *f, int64_t lat, int quiet)
{
    int broken = 0;
    times tm;
    load_times(b->t, &tm);
    const vt_match_key *keys = vt_matches_keys(b->m, NULL);
    vt_trace_set_clockfix(b->t, f);
    if (count_bad(b->t, b->m, &tm, lat)) {
        if (!quiet)
            print_message("receives still end before their send\n");
        broken++;
    }
    for (uint32_t r = 0; r < b->nranks; r++) {
        size_t nrv;
        const vt_match_crecv *rv = vt_matches_crecvs(b->m, r, &nrv);
        for (size_t i = 0; i < tm.n[r]; i++) {
            int64_t en = tm.en[r][i], ex = tm.ex[r][i];
            int64_t s_en = vt_clockfix_shift(f, r, en), s_ex = vt_clockfix_shift(f, r, ex);
            vt_trace_set_clockfix(b->t, NULL);
            int64_t raw_en = vt_global_time(b->t, r, en), raw_ex = vt_global_time(b->t, r, ex);
            int64_t raw_prev = i ? vt_global_time(b->t, r, tm.ex[r][i - 1]) : 0;
            vt_trace_set_clockfix(b->t, f);
            /* vt_global_time adds the shift */
            if (vt_global_time(b->t, r, en) != raw_en + s_en || vt_global_time(b->t, r, ex) != raw_ex + s_ex)
                broken++;
            if (i && vt_global_time(b->t, r, en) - vt_global_time(b->t, r, tm.ex[r][i - 1]) != raw_en - raw_prev) {
                if (!quiet)
                    print_message("rank %u: interval before record %zu changed\n", r, i);
                broken++;
            }
            if (s_ex < s_en)
                broken++;
            if (s_ex == s_en)
                continue;
            /* a jump: at a record completing receives, and tight for one of them */
            int tight = 0, completes = 0;
            for (size_t j = 0; j < nrv; j++) {
                if (rv[j].done_index != i || rv[j].send_pos == VT_MPOS_NONE)
                    continue;
                completes = 1;
                uint32_t s = keys[rv[j].key].src;
                const vt_match_csend *sd = vt_matches_csends(b->m, s, NULL);
                int64_t se = tm.en[s][sd[rv[j].send_pos].index];
                if (vt_global_time(b->t, r, ex) == vt_global_time(b->t, s, se) + lat)
                    tight = 1;
            }
            if (!completes || !tight) {
                if (!quiet)
                    print_message("rank %u: jump at record %zu %s\n", r, i,
                                  completes ? "larger than needed" : "completes no receive");
                broken++;
            }
        }
    }
    vt_clockfix *again = NULL;
    vt_clockfix_stats st2;
    vt_error err;
    if (vt_clockfix_compute(b->t, b->m, lat, &again, &st2, &err))
        fail_msg("clockfix again: %s", err.msg);
    if (st2.violations || st2.jumps)
        broken++;
    for (uint32_t r = 0; r < b->nranks; r++)
        if (vt_clockfix_steps(again, r, NULL))
            broken++;
    vt_clockfix_free(again);
    vt_trace_set_clockfix(b->t, NULL);
    free_times(&tm);
    return broken;
}

static void expect_steps(const vt_clockfix *f, uint32_t r, size_t n, const int64_t (*want)[2])
{
    const vt_clockfix_step *v;
    size_t got = vt_clockfix_steps(f, r, &v);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i].from_ns, want[i][0]);
        assert_int_equal(v[i].shift_ns, want[i][1]);
    }
}

/* ---------------------------------------------------------------- cases */

/* Same clock, every receive after its send: nothing moves. */
static void no_violation(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 2);
    r_init(&b, 0, 0);
    r_send(&b, 0, 10, 20, 1);
    r_recv(&b, 0, 30, 60, 1);
    r_fin(&b, 0, 100);
    r_init(&b, 1, 0);
    r_recv(&b, 1, 5, 30, 0);
    r_send(&b, 1, 40, 45, 0);
    r_fin(&b, 1, 100);
    tb_open(&b);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.messages, 2);
    assert_int_equal(st.violations, 0);
    assert_int_equal(st.repaired, 0);
    assert_int_equal(st.jumps, 0);
    assert_int_equal(st.repaired_ranks, 0);
    assert_int_equal(st.max_shift_ns, 0);
    for (uint32_t r = 0; r < 2; r++) {
        assert_int_equal(vt_clockfix_steps(f, r, NULL), 0);
        for (int64_t t = -10; t < 200; t += 7)
            assert_int_equal(vt_clockfix_shift(f, r, t), 0);
    }
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    /* a latency of 20 ns: both receives end 20 ns after their send started: none */
    f = fix_ok(&b, 20, &st);
    assert_int_equal(st.violations, 0);
    assert_int_equal(vt_clockfix_steps(f, 1, NULL), 0);
    vt_clockfix_free(f);
    /* 21 ns: both are 1 ns short; rank 1's jump moves its send, so rank 0 needs 2 */
    f = fix_ok(&b, 21, &st);
    assert_int_equal(st.violations, 2);
    assert_int_equal(st.max_violation_ns, 1);
    assert_int_equal(st.repaired, 2);
    expect_steps(f, 1, 1, (const int64_t[][2]){{30, 1}});
    expect_steps(f, 0, 1, (const int64_t[][2]){{60, 2}});
    assert_int_equal(st.max_shift_ns, 2);
    assert_int_equal(st.max_shift_rank, 0);
    assert_int_equal(check_fix(&b, f, 21, 0), 0);
    vt_clockfix_free(f);
    tb_free(&b);
}

/* Rank 1's clock (offset -1000) makes its receive end 10 ns before the send started. */
static void one_violation(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 2);
    tb_offset(&b, 1, -1000);
    r_init(&b, 0, 0);
    r_send(&b, 0, 100, 110, 1);
    r_fin(&b, 0, 200);
    r_init(&b, 1, 1000);
    r_recv(&b, 1, 1050, 1090, 0); /* global [50, 90] */
    r_fin(&b, 1, 1300);
    tb_open(&b);
    assert_int_equal(vt_global_time(b.t, 1, 1090), 90);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.messages, 1);
    assert_int_equal(st.violations, 1);
    assert_int_equal(st.max_violation_ns, 10);
    assert_int_equal(st.repaired, 1);
    assert_int_equal(st.jumps, 1);
    assert_int_equal(st.repaired_ranks, 1);
    assert_int_equal(st.max_shift_ns, 10);
    assert_int_equal(st.max_shift_rank, 1);
    assert_int_equal(st.coincident, 0);
    expect_steps(f, 1, 1, (const int64_t[][2]){{1090, 10}});
    assert_int_equal(vt_clockfix_steps(f, 0, NULL), 0);
    assert_int_equal(vt_clockfix_shift(f, 1, 1089), 0);
    assert_int_equal(vt_clockfix_shift(f, 1, 1090), 10);
    assert_int_equal(vt_clockfix_shift(f, 1, 1300), 10);
    assert_int_equal(vt_clockfix_shift(f, 0, 1300), 0);
    assert_int_equal(vt_clockfix_shift(f, 7, 1300), 0); /* unknown rank */
    assert_int_equal(vt_clockfix_shift(NULL, 1, 1300), 0);
    assert_int_equal(vt_clockfix_nranks(f), 2);
    /* installed: the reader's global time moves; the enter of the receive does not */
    vt_trace_set_clockfix(b.t, f);
    assert_int_equal(vt_global_time(b.t, 1, 1050), 50);
    assert_int_equal(vt_global_time(b.t, 1, 1090), 100);
    assert_int_equal(vt_global_time(b.t, 1, 1300), 310);
    vt_trace_set_clockfix(b.t, NULL);
    assert_int_equal(vt_global_time(b.t, 1, 1090), 90);
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    /* a minimal latency of 5 ns adds 5 */
    f = fix_ok(&b, 5, &st);
    assert_int_equal(st.max_violation_ns, 15);
    expect_steps(f, 1, 1, (const int64_t[][2]){{1090, 15}});
    assert_int_equal(check_fix(&b, f, 5, 0), 0);
    /* the checker fails on the unrepaired trace, and on a fix for another latency */
    assert_int_not_equal(check_fix(&b, NULL, 5, 1), 0);
    assert_int_not_equal(check_fix(&b, f, 0, 1), 0); /* 5 ns larger than needed */
    vt_clockfix_free(f);
    tb_free(&b);
}

/* A shift propagates: rank 1's jump moves its later send, whose receive on rank 2 was
 * fine before and now needs 5 ns; a later violation on rank 1 partly absorbed by the
 * first jump needs none, a larger one needs the difference. */
static void propagation(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 3);
    tb_offset(&b, 2, 500);
    r_init(&b, 0, 0);
    r_send(&b, 0, 100, 101, 1);
    r_send(&b, 0, 300, 301, 1);
    r_send(&b, 0, 500, 501, 1);
    r_fin(&b, 0, 900);
    r_init(&b, 1, 0);
    r_recv(&b, 1, 50, 90, 0);   /* 10 short: shift 10 from 90 */
    r_send(&b, 1, 95, 96, 2);   /* repaired enter 105 */
    r_recv(&b, 1, 270, 295, 0); /* 5 short unrepaired, 305 repaired: fine */
    r_recv(&b, 1, 470, 480, 0); /* 20 short, 490 repaired: 10 more from 480 */
    r_fin(&b, 1, 900);
    r_init(&b, 2, -500);
    r_recv(&b, 2, -420, -400, 1); /* global [80, 100]: fine unrepaired, 5 short repaired */
    r_fin(&b, 2, 400);
    tb_open(&b);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.messages, 4);
    assert_int_equal(st.violations, 3);
    assert_int_equal(st.max_violation_ns, 20);
    assert_int_equal(st.repaired, 3); /* rank 1's first and third, rank 2's */
    assert_int_equal(st.jumps, 3);
    assert_int_equal(st.repaired_ranks, 2);
    assert_int_equal(st.max_shift_ns, 20);
    assert_int_equal(st.max_shift_rank, 1);
    expect_steps(f, 1, 2, (const int64_t[][2]){{90, 10}, {480, 20}});
    expect_steps(f, 2, 1, (const int64_t[][2]){{-400, 5}});
    assert_int_equal(vt_clockfix_shift(f, 1, 479), 10);
    assert_int_equal(vt_clockfix_shift(f, 1, 480), 20);
    assert_int_equal(vt_clockfix_shift(f, 1, INT64_MIN), 0);
    assert_int_equal(vt_clockfix_shift(f, 1, INT64_MAX), 20);
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    tb_free(&b);
}

/* A Waitall completing two late receives moves once, by the larger need; Irecvs are
 * posted before their sends and complete after them. */
static void waitall_once(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 3);
    tb_offset(&b, 0, -1000);
    r_init(&b, 0, 1000);
    r_irecv(&b, 0, 1010, 1011, 1);
    r_irecv(&b, 0, 1012, 1013, 2);
    r_waitall_recv(&b, 0, 1014, 1050, 2, (const uint64_t[]){1, 2}, (const uint32_t[]){1, 2});
    r_fin(&b, 0, 1100);
    r_init(&b, 1, 0);
    r_send(&b, 1, 60, 61, 0);
    r_fin(&b, 1, 100);
    r_init(&b, 2, 0);
    r_send(&b, 2, 70, 71, 0);
    r_fin(&b, 2, 100);
    tb_open(&b);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.messages, 2);
    assert_int_equal(st.violations, 2);
    assert_int_equal(st.repaired, 2);
    assert_int_equal(st.jumps, 1);
    expect_steps(f, 0, 1, (const int64_t[][2]){{1050, 20}});
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    tb_free(&b);
}

/* A Sendrecv exchange: each rank's send is passed on before its receive is checked,
 * so the two ranks can be ordered; rank 0 ends its exchange before rank 1 began it. */
static void sendrecv_exchange(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 2);
    r_init(&b, 0, 0);
    r_sendrecv(&b, 0, 100, 150, 1, 1);
    r_fin(&b, 0, 300);
    r_init(&b, 1, 0);
    r_sendrecv(&b, 1, 200, 210, 0, 0);
    r_fin(&b, 1, 300);
    tb_open(&b);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.messages, 2);
    assert_int_equal(st.violations, 1);
    expect_steps(f, 0, 1, (const int64_t[][2]){{150, 50}});
    assert_int_equal(vt_clockfix_steps(f, 1, NULL), 0);
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    tb_free(&b);
}

/* Offsets with drift (interpolated between the two synchronisations): the shift is
 * added on top of the interpolated offset. */
static void drift(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 2);
    b.r[1].same = 0;
    b.r[1].t1 = 0;
    b.r[1].off1 = 0;
    b.r[1].t2 = 1000;
    b.r[1].off2 = -100; /* global = local - local / 10 */
    r_init(&b, 0, 0);
    r_send(&b, 0, 500, 501, 1);
    r_fin(&b, 0, 1000);
    r_init(&b, 1, 0);
    r_recv(&b, 1, 400, 540, 0); /* global exit 540 - 54 = 486: 14 short */
    r_fin(&b, 1, 1000);
    tb_open(&b);
    assert_int_equal(vt_global_time(b.t, 1, 540), 486);
    vt_clockfix_stats st;
    vt_clockfix *f = fix_ok(&b, 0, &st);
    assert_int_equal(st.violations, 1);
    expect_steps(f, 1, 1, (const int64_t[][2]){{540, 14}});
    vt_trace_set_clockfix(b.t, f);
    assert_int_equal(vt_global_time(b.t, 1, 540), 500);
    assert_int_equal(vt_global_time(b.t, 1, 1000), 900 + 14);
    vt_trace_set_clockfix(b.t, NULL);
    assert_int_equal(check_fix(&b, f, 0, 0), 0);
    vt_clockfix_free(f);
    tb_free(&b);
}

/* Interpolated offsets whose product (offset drift x time since the first
 * synchronisation) needs more than 64 bits, or all of them, unsigned. */
static void drift_wide(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 3);
    b.r[1].same = b.r[2].same = 0;
    b.r[1].t1 = b.r[2].t1 = 0;
    b.r[1].off1 = b.r[2].off1 = 0;
    b.r[1].t2 = INT64_C(3000000000000000000);
    b.r[1].off2 = INT64_C(-7000000000);   /* 7e9 x 1e18: beyond 2^64 */
    b.r[2].t2 = INT64_C(10000000000);
    b.r[2].off2 = INT64_C(4000000000);    /* 4e9 x 4e9: above 2^63, below 2^64 */
    for (uint32_t r = 0; r < 3; r++) {
        r_init(&b, r, 0);
        r_fin(&b, r, 1000);
    }
    tb_open(&b);
    assert_int_equal(vt_global_time(b.t, 1, INT64_C(1000000000000000000)),
                     INT64_C(1000000000000000000) - INT64_C(2333333333));
    assert_int_equal(vt_global_time(b.t, 1, INT64_C(1000000000000000001)),
                     INT64_C(1000000000000000001) - INT64_C(2333333333));
    assert_int_equal(vt_global_time(b.t, 1, 3), 3);   /* 21e9 / 3e18: 0 */
    assert_int_equal(vt_global_time(b.t, 2, INT64_C(4000000000)), INT64_C(5600000000));
    assert_int_equal(vt_global_time(b.t, 2, INT64_C(4000000001)), INT64_C(5600000001));
    assert_int_equal(vt_global_time(b.t, 2, INT64_C(9999999999)), INT64_C(9999999999) + INT64_C(3999999999));
    tb_free(&b);
}

/* Each rank receives before it sends what the other receives: no order exists. */
static void unorderable(void **state)
{
    (void)state;
    tbuild b;
    tb_init(&b, 3);
    r_init(&b, 0, 0);
    r_recv(&b, 0, 10, 20, 1);
    r_send(&b, 0, 30, 40, 1);
    r_fin(&b, 0, 100);
    r_init(&b, 1, 0);
    r_recv(&b, 1, 10, 20, 0);
    r_send(&b, 1, 30, 40, 0);
    r_fin(&b, 1, 100);
    r_init(&b, 2, 0); /* an idle rank finishes */
    r_fin(&b, 2, 100);
    tb_open(&b);
    vt_clockfix *f = (vt_clockfix *)1;
    vt_error err;
    assert_int_equal(vt_clockfix_compute(b.t, b.m, 0, &f, NULL, &err), -1);
    assert_null(f);
    print_message("expected error: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "cannot be ordered"));
    assert_non_null(strstr(err.msg, "rank 0 at record 1 (MPI_Recv) waits for the send at record 2 of rank 1"));
    assert_non_null(strstr(err.msg, "rank 1 at record 1 (MPI_Recv) waits for the send at record 2 of rank 0"));
    assert_null(strstr(err.msg, "rank 2"));
    tb_free(&b);
}

/* Bad arguments, and matches of another trace. */
static void bad_input(void **state)
{
    (void)state;
    tbuild a, b;
    tb_init(&a, 2);
    r_init(&a, 0, 0);
    r_send(&a, 0, 10, 20, 1);
    r_fin(&a, 0, 100);
    r_init(&a, 1, 0);
    r_recv(&a, 1, 5, 30, 0);
    r_fin(&a, 1, 100);
    tb_open(&a);
    tb_init(&b, 2); /* the message goes the other way */
    r_init(&b, 0, 0);
    r_recv(&b, 0, 5, 30, 1);
    r_fin(&b, 0, 100);
    r_init(&b, 1, 0);
    r_send(&b, 1, 10, 20, 0);
    r_fin(&b, 1, 100);
    tb_open(&b);
    vt_clockfix *f = NULL;
    vt_error err;
    assert_int_equal(vt_clockfix_compute(a.t, a.m, -1, &f, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "negative"));
    assert_int_equal(vt_clockfix_compute(NULL, a.m, 0, &f, NULL, &err), -1);
    assert_int_equal(vt_clockfix_compute(a.t, NULL, 0, &f, NULL, &err), -1);
    assert_int_equal(vt_clockfix_compute(a.t, a.m, 0, NULL, NULL, &err), -1);
    assert_int_equal(vt_clockfix_compute(a.t, b.m, 0, &f, NULL, &err), -1);
    assert_null(f);
    print_message("expected error: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "do not belong to this trace"));
    vt_clockfix_free(NULL);
    vt_trace_set_clockfix(NULL, NULL);
    tb_free(&a);
    tb_free(&b);
}

/* ---------------------------------------------------------------- random traces */

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng >> 33) % n);
}

/* The oracle: the same rule applied in the order the generator made the events (a
 * happened-before order by construction), from the true times and the clock errors. */
typedef struct oracle {
    int64_t shift[MAXR];
    int64_t steps[MAXR][256][2];
    size_t nsteps[MAXR];
    uint64_t violations, repaired, jumps;
} oracle;

typedef struct gen {
    tbuild *b;
    oracle *o;
    int64_t now[MAXR];  /* true time of each rank */
    int64_t err[MAXR];  /* clock error: recorded global = true + err */
    int64_t lat, L;     /* true latency, latency asked of the repair */
} gen;

static int64_t loc(gen *g, uint32_t r, int64_t tt) { return tt + g->err[r] - g->b->r[r].off1; }
static int64_t glob(gen *g, uint32_t r, int64_t tt) { return tt + g->err[r]; }

/* Receive on D ending at true time EXIT_T, of a send that started at SEND_T on S (the
 * send's oracle value SFIX), possibly together with others of the same record. */
static void o_recv(gen *g, uint32_t d, int64_t exit_t, uint32_t s, int64_t send_t, int64_t sfix, int64_t *need)
{
    oracle *o = g->o;
    int64_t raw_exit = glob(g, d, exit_t);
    if (raw_exit < glob(g, s, send_t) + g->L)
        o->violations++;
    int64_t miss = sfix + g->L - (raw_exit + o->shift[d]);
    if (miss > 0) {
        o->repaired++;
        if (miss > *need)
            *need = miss;
    }
}

static void o_jump(gen *g, uint32_t d, int64_t exit_t, int64_t need)
{
    oracle *o = g->o;
    if (need <= 0)
        return;
    o->shift[d] += need;
    o->jumps++;
    assert_true(o->nsteps[d] < 256);
    o->steps[d][o->nsteps[d]][0] = loc(g, d, exit_t);
    o->steps[d][o->nsteps[d]][1] = o->shift[d];
    o->nsteps[d]++;
}

static void random_trace(uint64_t seed, tbuild *b, oracle *o, int64_t *L)
{
    gen g = {b, o, {0}, {0}, 0, 0};
    rng = seed * 2654435761u + 1;
    uint32_t n = 2 + rnd(MAXR - 1);
    tb_init(b, n);
    memset(o, 0, sizeof *o);
    g.lat = rnd(20);
    g.L = rnd(2) ? g.lat : 0;
    *L = g.L;
    for (uint32_t r = 0; r < n; r++) {
        g.err[r] = r ? (int64_t)rnd(601) - 300 : 0;
        if (r)
            tb_offset(b, r, (int64_t)rnd(2001) - 1000);
        g.now[r] = 1000;
        r_init(b, r, loc(&g, r, g.now[r]));
    }
    int nops = 10 + (int)rnd(60);
    for (int op = 0; op < nops; op++) {
        uint32_t s = rnd(n), d = rnd(n - 1);
        d += d >= s; /* d != s */
        int64_t se = g.now[s] + rnd(50), sx = se + 1 + rnd(5);
        if (rnd(4) == 0) {
            /* Sendrecv exchange between s and d */
            int64_t de = g.now[d] + rnd(50);
            sx = (se > de + g.lat ? se : de + g.lat) + 1 + rnd(5);
            int64_t dx = (de > se + g.lat ? de : se + g.lat) + 1 + rnd(5);
            r_sendrecv(b, s, loc(&g, s, se), loc(&g, s, sx), d, d);
            r_sendrecv(b, d, loc(&g, d, de), loc(&g, d, dx), s, s);
            int64_t sfix = glob(&g, s, se) + o->shift[s], dfix = glob(&g, d, de) + o->shift[d];
            int64_t need = 0;
            o_recv(&g, s, sx, d, de, dfix, &need);
            int64_t need2 = 0;
            o_recv(&g, d, dx, s, se, sfix, &need2);
            o_jump(&g, s, sx, need);
            o_jump(&g, d, dx, need2);
            g.now[s] = sx;
            g.now[d] = dx;
            continue;
        }
        r_send(b, s, loc(&g, s, se), loc(&g, s, sx), d);
        int64_t sfix = glob(&g, s, se) + o->shift[s];
        g.now[s] = sx;
        int64_t de = g.now[d] + rnd(50);
        int64_t dx = (de > se + g.lat ? de : se + g.lat) + 1 + rnd(5);
        r_recv(b, d, loc(&g, d, de), loc(&g, d, dx), s);
        int64_t need = 0;
        o_recv(&g, d, dx, s, se, sfix, &need);
        o_jump(&g, d, dx, need);
        g.now[d] = dx;
    }
    for (uint32_t r = 0; r < n; r++)
        r_fin(b, r, loc(&g, r, g.now[r] + 10));
    tb_open(b);
}

static void random_traces(void **state)
{
    (void)state;
    uint64_t with_violations = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        tbuild b;
        oracle o;
        int64_t L;
        random_trace(seed, &b, &o, &L);
        vt_clockfix_stats st;
        vt_clockfix *f = fix_ok(&b, L, &st);
        if (st.violations != o.violations || st.repaired != o.repaired || st.jumps != o.jumps)
            fail_msg("seed %llu: violations %llu/%llu, repaired %llu/%llu, jumps %llu/%llu (got/oracle)",
                     (unsigned long long)seed, (unsigned long long)st.violations,
                     (unsigned long long)o.violations, (unsigned long long)st.repaired,
                     (unsigned long long)o.repaired, (unsigned long long)st.jumps, (unsigned long long)o.jumps);
        uint64_t ranks = 0;
        int64_t maxs = 0;
        for (uint32_t r = 0; r < b.nranks; r++) {
            expect_steps(f, r, o.nsteps[r], (const int64_t(*)[2])o.steps[r]);
            ranks += o.nsteps[r] > 0;
            if (o.shift[r] > maxs)
                maxs = o.shift[r];
        }
        assert_int_equal(st.repaired_ranks, ranks);
        assert_int_equal(st.max_shift_ns, maxs);
        assert_int_equal(st.coincident, 0);
        if (check_fix(&b, f, L, 0))
            fail_msg("seed %llu: the repaired trace breaks a property", (unsigned long long)seed);
        if (st.violations) {
            with_violations++;
            /* the checker rejects the unrepaired trace */
            assert_int_not_equal(check_fix(&b, NULL, L, 1), 0);
        }
        vt_clockfix_free(f);
        tb_free(&b);
    }
    /* the generator does produce violations (most seeds have some) */
    assert_true(with_violations > 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_violation),      cmocka_unit_test(one_violation), cmocka_unit_test(propagation),
        cmocka_unit_test(waitall_once),      cmocka_unit_test(sendrecv_exchange), cmocka_unit_test(drift),
        cmocka_unit_test(drift_wide),
        cmocka_unit_test(unorderable),       cmocka_unit_test(bad_input),     cmocka_unit_test(random_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
