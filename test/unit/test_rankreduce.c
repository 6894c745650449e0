/* One rank's reduction (src/model/rankreduce.c) fed hand-made model events, linked
 * without the trace reader (as the run time will link it): the records in order, the
 * statistics, the hooks, and records held behind two open probe windows while many
 * more are held (the probes' messages must survive the held list growing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/rankreduce.h"

#define MAXREC 256

typedef struct sinkbuf {
    vt_rrec r[MAXREC];
    vt_rmsg m[MAXREC]; /* each record's first message */
    size_t n;
    size_t events, probes; /* hook calls */
} sinkbuf;

static int collect(void *arg, const vt_rrec *r)
{
    sinkbuf *b = arg;
    assert_true(b->n < MAXREC);
    b->r[b->n] = *r;
    if (r->nmsgs)
        b->m[b->n] = r->msgs[0];
    b->n++;
    return 0;
}

static int count_event(void *arg, const vt_obs_event *e, const vt_poly *d, const vt_poly *base_atom)
{
    (void)e;
    (void)d;
    (void)base_atom;
    ((sinkbuf *)arg)->events++;
    return 0;
}

static int count_probe(void *arg, uint32_t rank, uint64_t probe_seq, const vt_poly *after)
{
    (void)rank;
    (void)probe_seq;
    (void)after;
    ((sinkbuf *)arg)->probes++;
    return 0;
}

/* Rank 0 on one clock (global == local). The call `seq` (odd) and the burst before it. */
static vt_event call_rec(uint64_t seq, int64_t enter, int64_t exit)
{
    return (vt_event){.callno = seq / 2, .enter = enter, .exit = exit, .fn = 0, .callsite = -1};
}

static vt_obs_event call_ev(const vt_event *rec, uint64_t seq, int cand)
{
    return (vt_obs_event){.seq = seq, .is_call = 1, .rec = rec, .fn = 0, .callsite = -1, .start = rec->enter,
                          .end = rec->exit, .candidate = cand};
}

static vt_obs_event burst_ev(const vt_event *next, uint64_t seq, int64_t start, int cand)
{
    return (vt_obs_event){.seq = seq, .rec = next, .fn = -1, .callsite = -1, .start = start, .end = next->enter,
                          .candidate = cand};
}

/* A synchronous message from rank 1 (never merged by R3). */
static vt_obs_con sync_msg(uint64_t send_seq, int64_t S, uint64_t post_seq, int64_t P, const vt_poly *D, int probed)
{
    return (vt_obs_con){.kind = VT_CON_MSG, .T = S + 10, .rank = 1, .seq = send_seq, .S = S, .S_local = S,
                        .bytes = 8, .sync = 1, .peer = 0, .post_seq = post_seq, .P = P, .P_local = P,
                        .probed = probed, .ext = D};
}

/* A reducer of rank 0 with both hooks, into a sinkbuf; D: a sender's difference 0. */
typedef struct fixture {
    vt_rankreduce rr;
    sinkbuf b;
    vt_error err;
    vt_poly D;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    const vt_rr_sink sink = {.record = collect, .arg = &f->b};
    const vt_rr_hooks hooks = {.event = count_event, .probe = count_probe, .arg = &f->b};
    assert_int_equal(vt_rr_init(&f->rr, 0, 4, 4, VT_SYM_CORRECT, &sink, &hooks), 0);
    vt_poly_const(&f->D, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    vt_rr_free(&f->rr);
    free(f);
    return 0;
}

static void test_records_in_order(void **state)
{
    fixture *f = *state;
    vt_rankreduce *rr = &f->rr;
    const sinkbuf *b = &f->b;
    vt_event c1 = call_rec(1, 100, 110), c3 = call_rec(3, 150, 200);
    vt_obs_event e0 = burst_ev(&c1, 0, 100, 1), e1 = call_ev(&c1, 1, 0), e2 = burst_ev(&c3, 2, 110, 1),
                 e3 = call_ev(&c3, 3, 0);
    vt_obs_con con = sync_msg(7, 120, 3, 150, &f->D, 0);
    e3.cons = &con;
    e3.ncons = 1;
    const vt_obs_event *evs[] = {&e0, &e1, &e2, &e3};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(vt_rr_event(rr, evs[i], 0, &f->err), 0);
    assert_int_equal(vt_rr_finish(rr, INT64_MIN), 0);

    static const unsigned kinds[] = {VT_RREC_START, VT_RREC_CAND, VT_RREC_CAND, VT_RREC_COMP, VT_RREC_END};
    assert_int_equal(b->n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(b->r[i].kind, kinds[i]);
    assert_int_equal(b->r[0].enter, 100);
    assert_int_equal(b->r[2].enter, 110); /* a burst: from the previous call's exit */
    assert_int_equal(b->r[2].exit, 150);
    assert_int_equal(b->r[3].seq, 3);
    assert_int_equal(b->r[3].nmsgs, 1);
    assert_int_equal(b->m[3].send_seq, 7);
    assert_int_equal(b->m[3].P, 150);
    assert_int_equal(b->r[4].seq, 3);
    assert_int_equal(b->r[4].exit, 200);
    assert_int_equal(rr->stats.events, 4);
    assert_int_equal(rr->stats.calls, 2);
    assert_int_equal(rr->stats.records_out, 5);
    assert_int_equal(rr->stats.messages, 1);
    assert_int_equal(rr->stats.messages_kept, 1);
    assert_int_equal(rr->stats.completions, 1);
    assert_int_equal(rr->stats.completions_kept, 1);
    assert_int_equal(b->events, 4);
}

/* A rank of an incomplete trace cut in the call after a candidate burst (a rank killed
 * while waiting): the END comes after the burst's record, never before it in sequence
 * (the records' sequence numbers are written as unsigned deltas). */
static void test_cut_after_burst(void **state)
{
    fixture *f = *state;
    vt_rankreduce *rr = &f->rr;
    const sinkbuf *b = &f->b;
    vt_event c1 = call_rec(1, 100, 110), c3 = call_rec(3, 5000, 5000);
    vt_obs_event e0 = burst_ev(&c1, 0, 100, 0), e1 = call_ev(&c1, 1, 0), e2 = burst_ev(&c3, 2, 110, 1);
    const vt_obs_event *evs[] = {&e0, &e1, &e2};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(vt_rr_event(rr, evs[i], 0, &f->err), 0);
    assert_int_equal(vt_rr_finish(rr, 5000), 0);
    assert_true(b->n >= 2);
    assert_int_equal(b->r[b->n - 2].kind, VT_RREC_CAND);
    assert_int_equal(b->r[b->n - 2].seq, 2);
    assert_int_equal(b->r[b->n - 1].kind, VT_RREC_END);
    assert_true(b->r[b->n - 1].seq >= b->r[b->n - 2].seq);
    assert_int_equal(b->r[b->n - 1].enter, 5000);
}

/* Probes A (seq 1) and B (seq 3), NC candidate calls, the receive of A's message, NC
 * more, the receive of B's: every record waits for B, in sequence order. */
static void test_nested_probes(void **state)
{
    enum { NC = 40 };
    fixture *f = *state;
    vt_rankreduce *rr = &f->rr;
    const sinkbuf *b = &f->b;
    vt_event rec[2 * NC + 4];
    uint64_t seq = 1;
    int64_t t = 100;
    size_t nev = 0;
    for (size_t i = 0; i < 2 * NC + 4; i++, seq += 2, t += 10) {
        rec[i] = call_rec(seq, t, t + 5);
        vt_obs_event e = call_ev(&rec[i], seq, 1);
        vt_obs_con con;
        uint64_t probed_by;
        if (i < 2) {
            con = sync_msg(11 + 2 * i, 50, seq, t, &f->D, 1);
            e.cons = &con;
            e.ncons = 1;
            e.candidate = 0;
        } else if (i == NC + 2 || i == 2 * NC + 3) {
            probed_by = i == NC + 2 ? 1 : 3;
            e.probed_by = &probed_by;
            e.nprobed = 1;
            e.candidate = 0;
        }
        assert_int_equal(vt_rr_event(rr, &e, 0, &f->err), 0);
        nev++;
        if (i < 2 * NC + 3)
            assert_int_equal(b->n, 1); /* START only: the rest waits for probe B */
    }
    assert_int_equal(vt_rr_finish(rr, INT64_MIN), 0);

    assert_int_equal(b->n, 2 * NC + 4);
    for (size_t i = 0; i < 2; i++) {
        const vt_rrec *p = &b->r[1 + i];
        assert_int_equal(p->kind, VT_RREC_COMP);
        assert_int_equal(p->seq, 1 + 2 * i);
        assert_true(p->flags & VT_RREC_F_PROBE);
        assert_int_equal(p->nmsgs, 1);
        assert_int_equal(b->m[1 + i].send_seq, 11 + 2 * i);
        assert_int_equal(b->m[1 + i].S, 50);
        assert_int_equal(b->m[1 + i].P, p->enter);
    }
    for (size_t i = 3; i < b->n; i++)
        assert_true(b->r[i].seq > b->r[i - 1].seq);
    assert_int_equal(b->r[b->n - 1].kind, VT_RREC_END);
    assert_int_equal(b->events, nev);
    assert_int_equal(b->probes, 2);
    assert_int_equal(rr->stats.completions, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_records_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_probes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_after_burst, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
