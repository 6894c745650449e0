/* Unit tests of the reader (cmocka): varints, every layout letter, definitions of the
 * synthetic trace, clock interpolation, matching. */
#include "vt_config.h"
#include "format/reader.h"
#include "util/codec.h"
#include "memtrace.h"
#include "synth.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ varints */

static void roundtrip_u(uint64_t v, size_t len)
{
    uint8_t b[VT_UVAR_MAX];
    uint8_t *e = vt_put_uvar(b, v);
    assert_int_equal((size_t)(e - b), len);
    const uint8_t *p = b;
    uint64_t out = 0;
    assert_int_equal(vt_get_uvar(&p, e, &out), 0);
    assert_true(out == v);
    assert_ptr_equal(p, e);
    /* every truncation fails and leaves p alone */
    for (size_t n = 0; n < len; n++) {
        p = b;
        assert_int_equal(vt_get_uvar(&p, b + n, &out), -1);
        assert_ptr_equal(p, b);
    }
}

static void test_uvar(void **state)
{
    (void)state;
    roundtrip_u(0, 1);
    roundtrip_u(1, 1);
    roundtrip_u(127, 1);
    roundtrip_u(128, 2);
    roundtrip_u(16383, 2);
    roundtrip_u(16384, 3);
    roundtrip_u(UINT32_MAX, 5);
    roundtrip_u(1ull << 63, 10);
    roundtrip_u(UINT64_MAX, 10);
    roundtrip_u((1ull << 63) - 1, 9);

    uint64_t out;
    const uint8_t *p;
    /* 10th byte with more than the 64th bit: overflow */
    static const uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    p = over;
    assert_int_equal(vt_get_uvar(&p, over + sizeof over, &out), -1);
    /* 11 bytes: too long even when the value would fit */
    static const uint8_t longer[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    p = longer;
    assert_int_equal(vt_get_uvar(&p, longer + sizeof longer, &out), -1);
    /* a non-minimal encoding within 10 bytes is accepted */
    static const uint8_t padded[3] = {0x81, 0x80, 0x00};
    p = padded;
    assert_int_equal(vt_get_uvar(&p, padded + 3, &out), 0);
    assert_int_equal(out, 1);
    /* empty input */
    p = padded;
    assert_int_equal(vt_get_uvar(&p, padded, &out), -1);
}

static void test_svar(void **state)
{
    (void)state;
    static const int64_t vals[] = {0, -1, 1, -2, 63, -64, 64, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX};
    assert_true(vt_zigzag(0) == 0);
    assert_true(vt_zigzag(-1) == 1);
    assert_true(vt_zigzag(1) == 2);
    assert_true(vt_zigzag(INT64_MIN) == UINT64_MAX);
    assert_true(vt_zigzag(INT64_MAX) == UINT64_MAX - 1);
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint8_t b[VT_UVAR_MAX];
        uint8_t *e = vt_put_svar(b, vals[i]);
        const uint8_t *p = b;
        int64_t out;
        assert_int_equal(vt_get_svar(&p, e, &out), 0);
        assert_true(out == vals[i]);
    }
}

/* ------------------------------------------------------------------ every layout letter */

#define ALL "cnptbPTBoqrRkmfO"

static void funcs_payload(mt_buf *b)
{
    mt_uvar(b, 2);
    mt_str(b, "MPI_All");
    mt_str(b, ALL);
    mt_str(b, "MPI_Barrier");
    mt_str(b, "c");
}

static int open_mem(mt_trace *t, vt_trace **out, vt_error *err)
{
    size_t n = mt_trace_files(t);
    return vt_trace_open_mem(t->files, n, out, err);
}

/* One rank of 4, the events built by the caller. */
static void one_rank(mt_trace *t, const mt_buf *events, int nrec, int ncallsites)
{
    mt_buf f = {0}, rd = {0};
    memset(t, 0, sizeof *t);
    t->nranks = 1;
    /* vtrace.defs says 1 rank; peers are checked against it */
    mt_defs_file(&t->defs, 1);
    funcs_payload(&f);
    mt_rankdefs(&rd, 0, 1, ncallsites, 1);
    mt_rank_file(&t->ranks[0], 0, &f, events, nrec, &rd);
    mt_free(&f);
    mt_free(&rd);
}

static void all_record(mt_buf *e)
{
    mt_uvar(e, 16); /* MPI_All */
    mt_svar(e, 5);  /* enter = base + 5 */
    mt_uvar(e, 7);
    mt_uvar(e, 1);      /* call site */
    mt_uvar(e, 1);      /* c: self */
    mt_svar(e, -1);     /* n: MPI_COMM_NULL */
    mt_svar(e, 0);      /* p */
    mt_svar(e, -77);    /* t */
    mt_uvar(e, 1ull << 40); /* b */
    mt_svar(e, -2);     /* P: MPI_PROC_NULL */
    mt_svar(e, 99);     /* T */
    mt_uvar(e, 123);    /* B */
    mt_svar(e, -4);     /* o: MPI_ROOT */
    mt_uvar(e, 7);      /* q */
    mt_uvar(e, 42);     /* r */
    mt_uvar(e, 3);      /* R */
    mt_uvar(e, 5);
    mt_uvar(e, 6);
    mt_uvar(e, UINT64_MAX);
    mt_uvar(e, 2);      /* k */
    mt_uvar(e, 8);
    mt_uvar(e, 9);
    mt_svar(e, -3);
    mt_svar(e, 3);
    mt_uvar(e, 100);
    mt_uvar(e, 1);
    mt_uvar(e, 0);
    mt_svar(e, 0);
    mt_svar(e, -1);
    mt_uvar(e, 0);
    mt_uvar(e, 11);     /* m */
    mt_uvar(e, 0);      /* f */
    mt_svar(e, -1);     /* O */
}

static void test_layout_letters(void **state)
{
    (void)state;
    mt_buf e = {0};
    mt_uvar(&e, 0);       /* first record index */
    mt_svar(&e, 1000);    /* base time */
    all_record(&e);
    mt_uvar(&e, 17);      /* MPI_Barrier on world */
    mt_svar(&e, -10);     /* enter before the previous exit: allowed */
    mt_uvar(&e, 0);
    mt_uvar(&e, 0);
    mt_uvar(&e, 0);
    mt_uvar(&e, VT_CODE_FLUSH);
    mt_svar(&e, 1);
    mt_uvar(&e, 50);
    mt_uvar(&e, VT_CODE_MARKER);
    mt_svar(&e, 0);
    mt_uvar(&e, 0);
    mt_uvar(&e, 1);
    mt_svar(&e, -5);
    mt_uvar(&e, VT_CODE_STOPPED);
    mt_svar(&e, 2);
    mt_uvar(&e, 0);
    mt_uvar(&e, 2);
    mt_trace t;
    one_rank(&t, &e, 5, 2);

    vt_trace *tr;
    vt_error err;
    assert_int_equal(open_mem(&t, &tr, &err), 0);
    const vt_rank *rk = vt_trace_rank(tr, 0);
    assert_int_equal(rk->nfuncs, 2);
    assert_string_equal(rk->funcs[0].layout, ALL);
    assert_int_equal(rk->funcs[0].fields, 0xffff);
    assert_int_equal(rk->nrecords, 5);

    vt_cursor *c;
    vt_event ev;
    assert_int_equal(vt_cursor_open(tr, 0, &c, &err), 0);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(ev.index, 0);
    assert_int_equal(ev.fn, 0);
    assert_int_equal(ev.enter, 1005);
    assert_int_equal(ev.exit, 1012);
    assert_int_equal(ev.callsite, 1);
    assert_int_equal(ev.fields, 0xffff | VT_F_CALLSITE);
    assert_int_equal(ev.comm, 1);
    assert_int_equal(ev.newcomm, -1);
    assert_int_equal(ev.peer, 0);
    assert_int_equal(ev.tag, -77);
    assert_true(ev.bytes == 1ull << 40);
    assert_int_equal(ev.rpeer, -2);
    assert_int_equal(ev.rtag, 99);
    assert_int_equal(ev.rbytes, 123);
    assert_int_equal(ev.root, -4);
    assert_int_equal(ev.collseq, 7);
    assert_int_equal(ev.request, 42);
    assert_int_equal(ev.nstarted, 3);
    assert_int_equal(ev.started[0], 5);
    assert_int_equal(ev.started[1], 6);
    assert_true(ev.started[2] == UINT64_MAX);
    assert_int_equal(ev.ndone, 2);
    assert_int_equal(ev.done[0].request, 8);
    assert_int_equal(ev.done[0].flags, 9);
    assert_int_equal(ev.done[0].peer, -3);
    assert_int_equal(ev.done[0].tag, 3);
    assert_int_equal(ev.done[0].bytes, 100);
    assert_int_equal(ev.done[1].request, 1);
    assert_int_equal(ev.done[1].tag, -1);
    assert_int_equal(ev.msg, 11);
    assert_int_equal(ev.file, 0);
    assert_int_equal(ev.offset, -1);

    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(ev.index, 1);
    assert_int_equal(ev.fn, 1);
    assert_int_equal(ev.enter, 1002);
    assert_int_equal(ev.exit, 1002);
    assert_int_equal(ev.fields, VT_F_COMM | VT_F_CALLSITE);
    assert_int_equal(ev.comm, 0);
    /* absent fields hold their none values */
    assert_int_equal(ev.peer, -1);
    assert_int_equal(ev.tag, -1);
    assert_int_equal(ev.bytes, 0);
    assert_int_equal(ev.rpeer, -1);
    assert_int_equal(ev.root, -1);
    assert_true(ev.collseq == VT_SEQ_NONE);
    assert_int_equal(ev.request, 0);
    assert_int_equal(ev.msg, 0);
    assert_int_equal(ev.file, -1);
    assert_int_equal(ev.offset, -1);
    assert_int_equal(ev.nstarted, 0);
    assert_null(ev.started);
    assert_int_equal(ev.ndone, 0);
    assert_null(ev.done);

    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(ev.code, VT_CODE_FLUSH);
    assert_int_equal(ev.fn, -1);
    assert_int_equal(ev.callsite, -1);
    assert_int_equal(ev.fields, 0);
    assert_int_equal(ev.enter, 1003);
    assert_int_equal(ev.exit, 1053);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(ev.code, VT_CODE_MARKER);
    assert_int_equal(ev.marker_kind, 1);
    assert_int_equal(ev.marker_value, -5);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(ev.code, VT_CODE_STOPPED);
    assert_int_equal(ev.stop_reason, 2);
    assert_int_equal(ev.index, 4);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 0);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 0);
    vt_cursor_close(c);
    vt_trace_close(tr);
    mt_trace_free(&t);
    mt_free(&e);
}

/* A single-record trace whose record is given raw; returns the cursor's result and
 * the error message. */
static int decode_one(const uint8_t *rec, size_t len, int nrec, int ncallsites, vt_error *err)
{
    mt_buf e = {0};
    mt_uvar(&e, 0);
    mt_svar(&e, 0);
    mt_bytes(&e, rec, len);
    mt_trace t;
    one_rank(&t, &e, nrec, ncallsites);
    vt_trace *tr;
    int rc = open_mem(&t, &tr, err);
    if (rc == 0) {
        vt_cursor *c;
        vt_event ev;
        rc = vt_cursor_open(tr, 0, &c, err);
        if (rc == 0) {
            while ((rc = vt_cursor_next(c, &ev, err)) == 1)
                ;
            vt_cursor_close(c);
        }
        vt_trace_close(tr);
    }
    mt_trace_free(&t);
    mt_free(&e);
    return rc;
}

static void expect_error(const uint8_t *rec, size_t len, int nrec, const char *what)
{
    vt_error err;
    int rc = decode_one(rec, len, nrec, 2, &err);
    if (rc != -1 || !strstr(err.msg, what) || !strstr(err.msg, "rank-000000.vte: offset ")) {
        print_error("rc %d, message: %s\nwanted: %s\n", rc, rc == -1 ? err.msg : "", what);
        fail();
    }
}

static void test_bad_records(void **state)
{
    (void)state;
    vt_error err;
    /* MPI_Barrier on world, valid */
    static const uint8_t ok[] = {17, 0, 0, 0, 0};
    assert_int_equal(decode_one(ok, sizeof ok, 1, 2, &err), 0);
    /* header says more records than there are / fewer */
    expect_error(ok, sizeof ok, 2, "expected 1 more records");
    expect_error(ok, sizeof ok, 0, "expected end of the EVENTS payload");
    /* communicator index past the table (2 communicators) */
    static const uint8_t comm[] = {17, 0, 0, 0, 2};
    expect_error(comm, sizeof comm, 1, "expected communicator index below 2, found 2");
    /* function id past the table */
    static const uint8_t fn[] = {18, 0, 0, 0};
    expect_error(fn, sizeof fn, 1, "expected a function id below 2");
    /* unknown special codes */
    static const uint8_t code0[] = {0, 0, 0};
    expect_error(code0, sizeof code0, 1, "expected record code 1, 2, 3 or 16 and above, found 0");
    static const uint8_t code15[] = {15, 0, 0};
    expect_error(code15, sizeof code15, 1, "found 15");
    /* call-site index past the table */
    static const uint8_t site[] = {17, 0, 0, 2, 0};
    expect_error(site, sizeof site, 1, "expected call-site index below 2, found 2");
    /* varint running past the payload */
    static const uint8_t runs[] = {17, 0, 0, 0, 0x80};
    expect_error(runs, sizeof runs, 1, "varint running past the end of the payload");
    /* varint over 64 bits */
    static const uint8_t big[] = {17, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0};
    expect_error(big, sizeof big, 1, "varint over 64 bits");
    /* send peer past the ranks (1 rank) */
    mt_buf r = {0};
    mt_uvar(&r, 16);
    mt_svar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);
    mt_svar(&r, -1);
    mt_svar(&r, 1); /* p = 1 with 1 rank */
    expect_error(r.p, r.n, 1, "expected send peer (world rank below 1, or -1 to -4), found 1");
    /* completion count larger than the payload could hold */
    r.n = 0;
    mt_uvar(&r, 16);
    mt_svar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);
    mt_svar(&r, -1);
    mt_svar(&r, 0);
    mt_svar(&r, 0);
    mt_uvar(&r, 0);
    mt_svar(&r, 0);
    mt_svar(&r, 0);
    mt_uvar(&r, 0);
    mt_svar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);
    mt_uvar(&r, 0);  /* R: none */
    mt_uvar(&r, 1u << 30); /* k: a billion completions */
    expect_error(r.p, r.n, 1, "expected number of completions at most");
    mt_free(&r);
    /* no call sites: index 0 means unknown, anything else is an error */
    assert_int_equal(decode_one(ok, sizeof ok, 1, 0, &err), 0);
    static const uint8_t site1[] = {17, 0, 0, 1, 0};
    assert_int_equal(decode_one(site1, sizeof site1, 1, 0, &err), -1);
    assert_non_null(strstr(err.msg, "expected call-site index 0 (the rank has no call sites)"));
}

/* The offset in a message is the file offset of the offending byte. */
static void test_error_offset(void **state)
{
    (void)state;
    static const uint8_t comm[] = {17, 0, 0, 0, 9};
    mt_buf e = {0};
    mt_uvar(&e, 0);
    mt_svar(&e, 0);
    mt_bytes(&e, comm, sizeof comm);
    mt_trace t;
    one_rank(&t, &e, 1, 2);
    mt_buf f = {0};
    funcs_payload(&f);
    /* file header, FUNCS block, EVENTS header, 2 bytes of block start, 4 record bytes */
    size_t want = VT_FILE_HEADER_SIZE + VT_BLOCK_HEADER_SIZE + f.n + VT_BLOCK_HEADER_SIZE + 2 + 4;
    char expect[128];
    snprintf(expect, sizeof expect, "rank-000000.vte: offset %zu: expected communicator index below 2, found 9", want);
    vt_trace *tr;
    vt_cursor *c;
    vt_event ev;
    vt_error err;
    assert_int_equal(open_mem(&t, &tr, &err), 0);
    assert_int_equal(vt_cursor_open(tr, 0, &c, &err), 0);
    assert_int_equal(vt_cursor_next(c, &ev, &err), -1);
    assert_string_equal(err.msg, expect);
    /* errors are sticky */
    memset(&err, 0, sizeof err);
    assert_int_equal(vt_cursor_next(c, &ev, &err), -1);
    assert_string_equal(err.msg, expect);
    vt_cursor_close(c);
    vt_trace_close(tr);
    mt_trace_free(&t);
    mt_free(&e);
    mt_free(&f);
}

static void test_bad_layouts(void **state)
{
    (void)state;
    static const char *const bad[] = {"cz", "cc", "c\x01", "pp"};
    static const char *const msg[] = {"expected layout letters", "found 'c' twice", "found '\\x01'", "twice"};
    for (int i = 0; i < 4; i++) {
        mt_buf f = {0}, rd = {0};
        mt_trace t;
        memset(&t, 0, sizeof t);
        t.nranks = 1;
        mt_defs_file(&t.defs, 1);
        mt_uvar(&f, 1);
        mt_str(&f, "MPI_X");
        mt_str(&f, bad[i]);
        mt_rankdefs(&rd, 0, 1, 0, 0);
        mt_rank_file(&t.ranks[0], 0, &f, NULL, -1, &rd);
        vt_trace *tr;
        vt_error err;
        assert_int_equal(open_mem(&t, &tr, &err), -1);
        assert_non_null(strstr(err.msg, msg[i]));
        assert_non_null(strstr(err.msg, "rank-000000.vte: offset "));
        mt_trace_free(&t);
        mt_free(&f);
        mt_free(&rd);
    }
}

/* Format 2.0: a communicator entry holds what its id is derived from. FNV-1a of the
 * inputs' little-endian bytes, computed here independently of format/commid.c. */
static uint64_t fnv(const uint64_t *v, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            h = (h ^ ((v[i] >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    return h;
}

/* A trace of one rank whose communicator table adds EXTRA (N entries) after world and self. */
static int open_comms(const mt_buf *extra, int n, vt_trace **tr, vt_error *err)
{
    mt_buf f = {0}, rd = {0};
    mt_trace t;
    memset(&t, 0, sizeof t);
    t.nranks = 1;
    mt_defs_file(&t.defs, 1);
    funcs_payload(&f);
    mt_rankdefs_comms(&rd, 0, 1, 0, 0, extra, n);
    mt_rank_file(&t.ranks[0], 0, &f, NULL, -1, &rd);
    int rc = open_mem(&t, tr, err);
    mt_trace_free(&t);
    mt_free(&f);
    mt_free(&rd);
    return rc;
}

/* flags 0, members {0}, no remote group, PARENT, HOW */
static void comm_tail(mt_buf *e, int64_t parent, int members, const char *how)
{
    mt_uvar(e, 0);
    mt_uvar(e, (uint64_t)members);
    for (int i = 0; i < members; i++)
        mt_uvar(e, 0);
    mt_uvar(e, 0);
    mt_svar(e, parent);
    mt_str(e, how);
}

static void test_comm_origins(void **state)
{
    (void)state;
    mt_buf e = {0};
    mt_uvar(&e, 3); /* 2: made over world, the 6th creation call on it */
    mt_uvar(&e, 5);
    comm_tail(&e, 0, 1, "MPI_Comm_dup");
    mt_uvar(&e, 4); /* 3: create_group over 2, tag -7, 2 made before with that key */
    mt_svar(&e, -7);
    mt_uvar(&e, 2);
    comm_tail(&e, 2, 1, "MPI_Comm_create_group");
    mt_uvar(&e, 5); /* 4: from its members */
    comm_tail(&e, -1, 1, "unknown");
    mt_uvar(&e, 0); /* 5: the id itself */
    mt_uvar(&e, 0x123456789abcdefull);
    comm_tail(&e, -1, 0, "unknown");
    mt_uvar(&e, 3); /* 6: over world, count 5 + 1 + 2: stored as its difference to 2's + 1 */
    mt_uvar(&e, 2);
    comm_tail(&e, 0, 1, "MPI_Comm_dup");
    mt_uvar(&e, 4); /* 7: over 2, tag -7 + 10 (the difference to 3's), count 0 */
    mt_svar(&e, 10);
    mt_uvar(&e, 0);
    comm_tail(&e, 2, 1, "MPI_Comm_create_group");
    vt_trace *tr;
    vt_error err;
    assert_int_equal(open_comms(&e, 6, &tr, &err), 0);
    const vt_rank *rk = vt_trace_rank(tr, 0);
    assert_int_equal(rk->ncomms, 8);
    assert_int_equal(rk->comms[0].id, 1);
    assert_int_equal(rk->comms[1].id, 1ull << 63);
    uint64_t dup[] = {1, 5, 0};
    assert_int_equal(rk->comms[2].id, fnv(dup, 3));
    uint64_t key[] = {0, (uint64_t)-7, fnv(dup, 3)};
    uint64_t grp[] = {2, 0x67};
    uint64_t h = fnv(key, 3);
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((grp[k] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    assert_int_equal(rk->comms[3].id, h);
    uint64_t mem[] = {0x75, 0};
    assert_int_equal(rk->comms[4].id, fnv(mem, 2));
    assert_int_equal(rk->comms[5].id, 0x123456789abcdefull);
    uint64_t dup8[] = {1, 8, 0};
    assert_int_equal(rk->comms[6].id, fnv(dup8, 3));
    uint64_t key3[] = {0, 3, fnv(dup, 3)}, grp0[] = {0, 0x67};
    h = fnv(key3, 3);
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((grp0[k] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
    assert_int_equal(rk->comms[7].id, h);
    vt_trace_close(tr);
    mt_free(&e);

    /* errors: each names the file and the offset of the entry's kind */
    static const char *const msg[] = {
        "expected communicator id kind 0 to 5, found 9",
        "expected an earlier communicator as the parent of communicator 2 (its id is derived from the parent's), "
        "found parent index -1",
        "expected an earlier communicator as the parent of communicator 2 (its id is derived from the parent's), "
        "found parent index 2",
        "expected members of communicator 2 (its id is derived from the lowest), found none",
        "expected an earlier communicator as the parent of communicator 2 (its id is derived from the parent's), "
        "found parent index -1",
    };
    for (int i = 0; i < 5; i++) {
        mt_buf b = {0};
        mt_uvar(&b, i == 0 ? 9 : i == 4 ? 4 : 3);
        if (i == 4)
            mt_svar(&b, 1);
        if (i)
            mt_uvar(&b, 0);
        comm_tail(&b, i == 1 || i == 4 ? -1 : i == 2 ? 2 : 0, i == 3 ? 0 : 1, "MPI_Comm_dup");
        assert_int_equal(open_comms(&b, 1, &tr, &err), -1);
        if (!strstr(err.msg, msg[i]))
            fail_msg("case %d: %s", i, err.msg);
        assert_non_null(strstr(err.msg, "rank-000000.vte: offset "));
        mt_free(&b);
    }
}

/* ------------------------------------------------------------------ synthetic trace */

typedef struct fixture {
    char dir[64];
    vt_trace *t;
} fixture;

static int setup_synth(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    char err[4200];
    snprintf(fx->dir, sizeof fx->dir, "/tmp/vt-reader-test.XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    if (synth_write(fx->dir, NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    vt_error e;
    if (vt_trace_open(fx->dir, &fx->t, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown_synth(void **state)
{
    fixture *fx = *state;
    char cmd[128];
    vt_trace_close(fx->t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0)
        return -1;
    free(fx);
    return 0;
}

static void test_definitions(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    assert_int_equal(vt_trace_nranks(t), 3);
    assert_string_equal(vt_trace_version(t), "0.1.0-synth");
    assert_string_equal(vt_trace_mpi_version(t), "MPICH Version: 4.0.2 (synthetic)");
    assert_string_equal(vt_trace_config(t), "VT_BUFFER_SIZE=1048576\nVT_COMPRESS=0\n");
    assert_int_equal(vt_trace_flags(t), 0);
    assert_null(vt_trace_rank(t, 3));

    const vt_rank *r0 = vt_trace_rank(t, 0), *r1 = vt_trace_rank(t, 1), *r2 = vt_trace_rank(t, 2);
    assert_int_equal(r0->nrecords, 33);
    assert_int_equal(r1->nrecords, 26);
    assert_int_equal(r2->nrecords, 23);
    assert_int_equal(vt_trace_nrecords(t), 82);
    assert_int_equal(r0->nblocks, 5);
    assert_string_equal(r0->hostname, "node0");
    assert_string_equal(r1->binding, "4-5");
    assert_int_equal(r1->core, 4);
    assert_int_equal(r1->numa, 1);
    assert_int_equal(r2->core, -1);
    assert_int_equal(r2->flags, VT_RANK_LATE_INIT);
    assert_int_equal(r0->records_written, 33);

    /* function tables are per rank: rank 2 lists them in reverse */
    assert_int_equal(r0->nfuncs, 21);
    assert_string_equal(vt_trace_function(t, 0, 2)->name, "MPI_Send");
    assert_string_equal(vt_trace_function(t, 0, 2)->layout, "cptb");
    assert_string_equal(vt_trace_function(t, 2, 18)->name, "MPI_Send");
    assert_null(vt_trace_function(t, 0, 21));
    assert_null(vt_trace_function(t, 0, -1));

    /* call sites */
    assert_int_equal(r0->ncallsites, 2);
    assert_int_equal(r2->ncallsites, 0);
    assert_int_equal(r1->ncallsites, 2);
    /* rank 0 (1.6): module index and offset, no address */
    const vt_callsite *cs = vt_trace_callsite(t, 0, 0);
    assert_true(cs->address == 0);
    assert_int_equal(cs->module_index, 0);
    assert_string_equal(cs->module, "/usr/bin/app");
    assert_true(cs->offset == 0x1234);
    assert_string_equal(cs->symbol, "main");
    cs = vt_trace_callsite(t, 0, 1);
    assert_int_equal(cs->module_index, 1);
    assert_string_equal(cs->module, "/usr/lib/libfoo.so");
    assert_true(cs->offset == 0x5678);
    assert_string_equal(cs->symbol, "");
    assert_int_equal(r0->nmodules, 2);
    assert_int_equal(r0->modules[0].build_id_len, 4);
    assert_int_equal(r0->modules[0].build_id[3], 0xef);
    /* rank 1 (the list of 1.0): the address too, no module table */
    cs = vt_trace_callsite(t, 1, 0);
    assert_true(cs->address == 0x401234);
    assert_int_equal(cs->module_index, -1);
    assert_string_equal(cs->module, "/usr/bin/app");
    assert_true(cs->offset == 0x1234);
    assert_string_equal(cs->symbol, "main");
    assert_string_equal(vt_trace_callsite(t, 1, 1)->symbol, "");

    /* communicators */
    assert_int_equal(r0->ncomms, 3);
    assert_int_equal(r1->ncomms, 2);
    const vt_comm *w = vt_trace_comm(t, 1, 0);
    assert_int_equal(w->id, 1);
    assert_int_equal(w->size, 3);
    assert_int_equal(w->members[2], 2);
    assert_int_equal(w->parent, -1);
    assert_string_equal(w->how, "world");
    assert_true(vt_trace_comm(t, 1, 1)->id == (1ull << 63) + 1);
    const vt_comm *sp = vt_trace_comm(t, 2, 2);
    assert_true(sp->id == 0x9e3779b97f4a7c15ull);
    assert_int_equal(sp->size, 2);
    assert_int_equal(sp->members[0], 0);
    assert_int_equal(sp->members[1], 2);
    assert_int_equal(sp->parent, 0);
    assert_string_equal(sp->how, "MPI_Comm_split");

    /* files and profile */
    assert_int_equal(r0->nfiles, 1);
    assert_string_equal(vt_trace_file(t, 0, 0)->name, "out.dat");
    assert_int_equal(vt_trace_file(t, 0, 0)->comm, 1);
    assert_null(vt_trace_file(t, 1, 0));
    int found = 0;
    for (size_t i = 0; i < r1->nprofile; i++) {
        const vt_profile *p = &r1->profile[i];
        if (strcmp(r1->funcs[p->fn].name, "MPI_Wait") == 0) {
            assert_int_equal(p->calls, 2);
            assert_int_equal(p->time_ns, 600);
            assert_int_equal(p->bytes, 80);
            assert_int_equal(p->records, 2);
            found++;
        }
        if (strcmp(r1->funcs[p->fn].name, "MPI_Comm_rank") == 0) {
            assert_int_equal(p->calls, 3);
            assert_int_equal(p->records, 0);
            found++;
        }
    }
    assert_int_equal(found, 2);
}

static void test_global_time(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    /* rank 0: same clock */
    assert_int_equal(vt_global_time(t, 0, 12345), 12345);
    /* rank 1: offset 10000 at 500, 10100 at 100500; constant outside */
    assert_int_equal(vt_global_time(t, 1, 0), 10000);
    assert_int_equal(vt_global_time(t, 1, 500), 10500);
    assert_int_equal(vt_global_time(t, 1, 50500), 50500 + 10050);
    assert_int_equal(vt_global_time(t, 1, 100500), 110600);
    assert_int_equal(vt_global_time(t, 1, 200000), 210100);
    /* rank 2: same-clock flag, offsets ignored */
    assert_int_equal(vt_global_time(t, 2, 5), 5);
    /* unknown rank: unchanged */
    assert_int_equal(vt_global_time(t, 7, 5), 5);
    const vt_rank *r1 = vt_trace_rank(t, 1);
    assert_int_equal(r1->clock.t1, 500);
    assert_int_equal(r1->clock.off2, 10100);
    assert_int_equal(r1->clock.same_clock, 0);
    assert_string_equal(r1->global_hostname, "node1");
}

static void test_synth_events(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    vt_cursor *c;
    vt_event ev;
    vt_error err;
    uint64_t n = 0;
    assert_int_equal(vt_cursor_open(t, 0, &c, &err), 0);
    while (vt_cursor_next(c, &ev, &err) == 1) {
        assert_int_equal(ev.index, n);
        if (n == 4) { /* MPI_Waitall of the Isend and the Irecv */
            assert_string_equal(vt_trace_function(t, 0, ev.fn)->name, "MPI_Waitall");
            assert_int_equal(ev.ndone, 2);
            assert_int_equal(ev.done[1].request, 2);
            assert_int_equal(ev.done[1].flags, VT_COMPL_RECV);
            assert_int_equal(ev.done[1].peer, 1);
            assert_int_equal(ev.done[1].tag, 9);
            assert_int_equal(ev.callsite, 1);
        }
        if (n == 7)
            assert_int_equal(ev.code, VT_CODE_FLUSH);
        if (n == 10) {
            assert_int_equal(ev.comm, 0);
            assert_int_equal(ev.newcomm, 2);
            assert_int_equal(ev.collseq, 1);
        }
        if (n == 17) {
            assert_int_equal(ev.file, 0);
            assert_int_equal(ev.offset, 1024);
            assert_int_equal(ev.bytes, 64);
        }
        n++;
    }
    assert_int_equal(n, 33);
    vt_cursor_close(c);
    assert_int_equal(vt_cursor_open(t, 3, &c, &err), -1);
}

/* A record's lists taken by the caller (vt_cursor_take_lists) stay as they were while
 * the cursor reads on, and the cursor reads the same records after. */
static void test_take_lists(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    vt_cursor *c;
    vt_event ev, kept = {0};
    vt_error err;
    uint64_t *st = NULL;
    vt_completion *dn = NULL;
    size_t capst = 0, capdn = 0, n = 0;
    assert_int_equal(vt_cursor_open(t, 0, &c, &err), 0);
    while (vt_cursor_next(c, &ev, &err) == 1) {
        if (n == 4) {
            assert_int_equal(ev.ndone, 2);
            vt_cursor_take_lists(c, &st, &capst, &dn, &capdn);
            kept = ev;
            assert_ptr_equal(kept.done, dn);
            assert_true(capdn >= 2);
        }
        n++;
    }
    assert_int_equal(n, 33);
    assert_non_null(kept.done);
    assert_int_equal(kept.done[1].request, 2);
    assert_int_equal(kept.done[1].flags, VT_COMPL_RECV);
    assert_int_equal(kept.done[1].peer, 1);
    assert_int_equal(kept.done[1].tag, 9);
    vt_cursor_close(c);
    free(st);
    free(dn);
}

/* Descriptors open in this process. */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* A cursor opens no descriptor when it is opened (a trace of 64K ranks opens a cursor on
 * each before reading any), and none at all for a rank file whose event blocks the trace
 * kept when it was opened (the fixture's are a few hundred bytes; reader.c's
 * trace_keep). A larger file is opened at the first read: few_descriptors.sh and
 * test/scale/many_ranks.sh read such traces with a bounded pool. */
static void test_cursor_open_lazy(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    vt_cursor *c;
    vt_event ev;
    vt_error err;
    int before = open_fds();
    if (before < 0)
        skip();
    assert_int_equal(vt_cursor_open(t, 0, &c, &err), 0);
    assert_int_equal(open_fds(), before);
    assert_int_equal(vt_cursor_next(c, &ev, &err), 1);
    assert_int_equal(open_fds(), before);
    while (vt_cursor_next(c, &ev, &err) == 1)
        ;
    assert_int_equal(open_fds(), before);
    vt_cursor_close(c);
    assert_int_equal(open_fds(), before);
}

/* The same trace with zstd blocks reads the same. */
static void test_zstd(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    char dir[64], emsg[4200];
    snprintf(dir, sizeof dir, "/tmp/vt-reader-zstd.XXXXXX");
    assert_non_null(mkdtemp(dir));
    synth_opts o = {.zstd_level = 3, .records_per_block = 1000};
    assert_int_equal(synth_write(dir, &o, emsg, sizeof emsg), 0);
    vt_trace *z;
    vt_error err;
    assert_int_equal(vt_trace_open(dir, &z, &err), 0);
#ifdef HAVE_ZSTD
    assert_true(vt_trace_bytes(z) < vt_trace_bytes(t));
#endif
    for (uint32_t r = 0; r < 3; r++) {
        vt_cursor *a, *b;
        vt_event ea, eb;
        assert_int_equal(vt_cursor_open(t, r, &a, &err), 0);
        assert_int_equal(vt_cursor_open(z, r, &b, &err), 0);
        int ra, rb;
        do {
            ra = vt_cursor_next(a, &ea, &err);
            rb = vt_cursor_next(b, &eb, &err);
            assert_int_equal(ra, rb);
            if (ra == 1) {
                assert_int_equal(ea.index, eb.index);
                assert_int_equal(ea.code, eb.code);
                assert_int_equal(ea.enter, eb.enter);
                assert_int_equal(ea.exit, eb.exit);
                assert_int_equal(ea.fields, eb.fields);
                assert_int_equal(ea.ndone, eb.ndone);
            }
        } while (ra == 1);
        assert_int_equal(ra, 0);
        vt_cursor_close(a);
        vt_cursor_close(b);
    }
    vt_matches *m;
    assert_int_equal(vt_trace_match(z, 0, &m, &err), 0);
    assert_int_equal(vt_matches_count(m), 10);
    vt_matches_free(m);
    vt_trace_close(z);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Compact member lists (format 1.3): the synthetic trace with --cols lists MPI_COMM_WORLD
 * and the split communicator as ranges; the reader gives the same members as from the
 * lists of the plain trace, and one array for MPI_COMM_WORLD in every rank's table. */
static void test_compact_members(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    char dir[64], emsg[4200];
    snprintf(dir, sizeof dir, "/tmp/vt-reader-members.XXXXXX");
    assert_non_null(mkdtemp(dir));
    synth_opts o = {.records_per_block = 8, .cols = 1};
    assert_int_equal(synth_write(dir, &o, emsg, sizeof emsg), 0);
    vt_trace *c;
    vt_error err;
    assert_int_equal(vt_trace_open(dir, &c, &err), 0);
    for (uint32_t r = 0; r < 3; r++) {
        const vt_rank *a = vt_trace_rank(t, r), *b = vt_trace_rank(c, r);
        assert_int_equal(a->ncomms, b->ncomms);
        for (size_t i = 0; i < a->ncomms; i++) {
            assert_int_equal(a->comms[i].flags, b->comms[i].flags); /* the compact bit is the reader's */
            assert_int_equal(a->comms[i].size, b->comms[i].size);
            assert_memory_equal(a->comms[i].members, b->comms[i].members, a->comms[i].size * sizeof(uint32_t));
        }
        assert_ptr_equal(b->comms[0].members, vt_trace_rank(c, 0)->comms[0].members);
    }
    static const uint32_t split[] = {0, 2};
    assert_int_equal(vt_trace_rank(c, 2)->comms[2].size, 2);
    assert_memory_equal(vt_trace_rank(c, 2)->comms[2].members, split, sizeof split);
    vt_trace_close(c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Interpolation with offsets and spans near the 64-bit limits does not overflow. */
static void test_global_time_extremes(void **state)
{
    (void)state;
    mt_trace t;
    memset(&t, 0, sizeof t);
    t.nranks = 1;
    mt_buf g = {0}, f = {0}, rd = {0};
    mt_str(&g, "v");
    mt_str(&g, "mpi");
    mt_str(&g, "");
    mt_uvar(&g, 1);
    mt_svar(&g, 0);
    mt_svar(&g, -(INT64_C(1) << 62));
    mt_svar(&g, INT64_MAX);
    mt_svar(&g, INT64_C(1) << 62);
    mt_uvar(&g, 0);
    mt_str(&g, "h");
    mt_uvar(&g, 0);
    mt_file_header(&t.defs, VT_MAGIC_DEFS, 1);
    mt_block(&t.defs, VT_BLOCK_GLOBAL, &g, 0);
    mt_block(&t.defs, VT_BLOCK_END, NULL, 0);
    mt_uvar(&f, 0);
    mt_rankdefs(&rd, 0, 1, 0, 0);
    mt_rank_file(&t.ranks[0], 0, &f, NULL, -1, &rd);
    vt_trace *tr;
    vt_error err;
    assert_int_equal(open_mem(&t, &tr, &err), 0);
    /* offset -2^62 + 2^63 * 2^62 / (2^63 - 1) = 0 (rounded toward zero) */
    assert_true(vt_global_time(tr, 0, INT64_C(1) << 62) == INT64_C(1) << 62);
    assert_true(vt_global_time(tr, 0, -5) == -5 - (INT64_C(1) << 62));
    assert_true(vt_global_time(tr, 0, INT64_MAX) == (int64_t)((uint64_t)INT64_MAX + (UINT64_C(1) << 62)));
    assert_true(vt_global_time(tr, 0, 1) == 2 - (INT64_C(1) << 62)); /* offset -2^62 + 1 */
    vt_trace_close(tr);
    mt_trace_free(&t);
    mt_free(&g);
    mt_free(&f);
    mt_free(&rd);
}

/* ------------------------------------------------------------------ matching */

typedef struct want {
    uint32_t rank;
    uint64_t index;
    uint32_t sub;
    uint64_t post, done;
    uint32_t src;
    uint64_t send_index;
    int64_t tag;
    uint64_t bytes;
} want;

static void test_match_synth(void **state)
{
    const vt_trace *t = ((fixture *)*state)->t;
    static const want w[] = {
        {0, 3, 0, 3, 4, 1, 2, 9, 8},        /* Irecv + Waitall <- MPI_Send */
        {0, 5, 0, 5, 5, 1, 3, 4, 4},        /* Sendrecv <- Sendrecv */
        {0, 9, 0, 8, 9, 2, 6, 11, 12},      /* Mrecv (posted by the Mprobe) <- Send */
        {1, 1, 0, 1, 1, 0, 1, 5, 80},       /* Recv <- Send */
        {1, 3, 0, 3, 3, 0, 5, 3, 4},        /* Sendrecv <- Sendrecv */
        {1, 6, 0, 6, 7, 0, 13, 21, 40},     /* Startall(Recv_init) <- Start(Send_init) */
        {1, 8, 0, 8, 9, 0, 15, 21, 40},     /* second Start <- second Start */
        {1, 11, 0, 11, 11, 2, 7, 13, 4},    /* Recv after Probe <- Send */
        {2, 1, 0, 1, 3, 0, 2, 7, 16},       /* Irecv + Wait <- Isend */
        {2, 9, 0, 9, 9, 0, 11, 0, 8},       /* Recv on the split communicator */
    };
    vt_matches *m;
    vt_error err;
    assert_int_equal(vt_trace_match(t, 0, &m, &err), 0);
    assert_int_equal(vt_matches_count(m), 10);
    assert_int_equal(vt_matches_unmatched(m), 0);
    size_t total = 0;
    for (uint32_t r = 0; r < 3; r++) {
        size_t n;
        vt_matches_recvs(m, r, &n);
        total += n;
    }
    assert_int_equal(total, sizeof w / sizeof w[0]);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        const vt_match_recv *rv = vt_matches_find_recv(m, w[i].rank, w[i].index, w[i].sub);
        if (!rv) {
            print_error("no receive at rank %u index %llu\n", w[i].rank, (unsigned long long)w[i].index);
            fail();
        }
        assert_int_equal(rv->post_index, w[i].post);
        assert_int_equal(rv->done_index, w[i].done);
        assert_int_equal(rv->src, w[i].src);
        assert_int_equal(rv->send_rank, w[i].src);
        assert_int_equal(rv->tag, w[i].tag);
        assert_int_equal(rv->bytes, w[i].bytes);
        size_t ns;
        const vt_match_send *sends = vt_matches_sends(m, rv->send_rank, &ns);
        assert_true(rv->send_pos < ns);
        const vt_match_send *s = &sends[rv->send_pos];
        assert_int_equal(s->index, w[i].send_index);
        assert_int_equal(rv->send_index, w[i].send_index);
        assert_int_equal(s->recv_index, w[i].index);
        assert_int_equal(s->dst, w[i].rank);
        assert_int_equal(s->tag, w[i].tag);
        assert_int_equal(s->comm_id, rv->comm_id);
        /* and back */
        size_t nr;
        const vt_match_recv *recvs = vt_matches_recvs(m, w[i].rank, &nr);
        assert_ptr_equal(&recvs[s->recv_pos], rv);
        assert_ptr_equal(vt_matches_find_send(m, rv->send_rank, s->index, s->sub), s);
    }
    /* the split communicator's id, the cancelled Irecv and the MPI_PROC_NULL send */
    assert_true(vt_matches_find_recv(m, 2, 9, 0)->comm_id == 0x9e3779b97f4a7c15ull);
    assert_null(vt_matches_find_recv(m, 2, 2, 0));
    assert_null(vt_matches_find_send(m, 0, 19, 0));
    assert_null(vt_matches_find_recv(m, 9, 0, 0));
    /* arrays are sorted by (index, sub) */
    for (uint32_t r = 0; r < 3; r++) {
        size_t n;
        const vt_match_send *s = vt_matches_sends(m, r, &n);
        for (size_t i = 1; i < n; i++)
            assert_true(s[i - 1].index < s[i].index || (s[i - 1].index == s[i].index && s[i - 1].sub < s[i].sub));
    }
    vt_matches_free(m);
}

static void test_match_unmatched(void **state)
{
    (void)state;
    char dir[64], emsg[4200];
    snprintf(dir, sizeof dir, "/tmp/vt-reader-unm.XXXXXX");
    assert_non_null(mkdtemp(dir));
    synth_opts o = {.unmatched = 1};
    assert_int_equal(synth_write(dir, &o, emsg, sizeof emsg), 0);
    vt_trace *t;
    vt_matches *m;
    vt_error err;
    assert_int_equal(vt_trace_open(dir, &t, &err), 0);
    assert_int_equal(vt_trace_match(t, 0, &m, &err), -1);
    assert_null(m);
    assert_non_null(strstr(err.msg, "rank-000000.vte: offset "));
    assert_non_null(strstr(err.msg, "send record 1 of rank 0 (to 1, tag 5, communicator 0x1)"));
    assert_int_equal(vt_trace_match(t, VT_MATCH_PARTIAL, &m, &err), 0);
    assert_int_equal(vt_matches_count(m), 9);
    assert_int_equal(vt_matches_unmatched(m), 1);
    const vt_match_send *s = vt_matches_find_send(m, 0, 1, 0);
    assert_non_null(s);
    assert_true(s->recv_pos == SIZE_MAX);
    assert_true(s->recv_index == UINT64_MAX);
    vt_matches_free(m);
    vt_trace_close(t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void fn_entry(mt_buf *f, const char *name, const char *layout)
{
    mt_str(f, name);
    mt_str(f, layout);
}

static void call_hdr(mt_buf *e, unsigned fn)
{
    mt_uvar(e, 16 + fn);
    mt_svar(e, 10);
    mt_uvar(e, 5);
    mt_uvar(e, 0);
}

/* Receives match in posting order, not completion order; an Mrecv is posted by its
 * Mprobe; a receive matched from MPI_ANY_SOURCE goes by the resolved source. */
static void test_match_posting_order(void **state)
{
    (void)state;
    mt_trace t;
    memset(&t, 0, sizeof t);
    t.nranks = 3;
    mt_defs_file(&t.defs, 3);
    mt_buf f = {0};
    mt_uvar(&f, 5);
    fn_entry(&f, "MPI_Send", "cptb");       /* 0 */
    fn_entry(&f, "MPI_Irecv_c", "cr");      /* 1 */
    fn_entry(&f, "MPI_Improbe", "cPTm");    /* 2 */
    fn_entry(&f, "MPI_Mrecv", "Bm");        /* 3 */
    fn_entry(&f, "MPI_Waitall", "k");       /* 4 */
    mt_buf e[3] = {{0}};
    int nrec[3] = {0};
    /* ranks 0 and 2 send three messages with tag 1 to rank 1 */
    for (int s = 0; s < 3; s += 2) {
        mt_uvar(&e[s], 0);
        mt_svar(&e[s], 0);
        for (int i = 0; i < 3; i++) {
            call_hdr(&e[s], 0);
            mt_uvar(&e[s], 0);
            mt_svar(&e[s], 1);
            mt_svar(&e[s], 1);
            mt_uvar(&e[s], 100 * (unsigned)s + (unsigned)i); /* bytes identify the send */
            nrec[s]++;
        }
    }
    mt_buf *r = &e[1];
    mt_uvar(r, 0);
    mt_svar(r, 0);
    call_hdr(r, 1); /* 0: Irecv r1 */
    mt_uvar(r, 0);
    mt_uvar(r, 1);
    call_hdr(r, 2); /* 1: Improbe m1 from 0 */
    mt_uvar(r, 0);
    mt_svar(r, 0);
    mt_svar(r, 1);
    mt_uvar(r, 1);
    call_hdr(r, 1); /* 2: Irecv r2 */
    mt_uvar(r, 0);
    mt_uvar(r, 2);
    call_hdr(r, 1); /* 3: Irecv r3 */
    mt_uvar(r, 0);
    mt_uvar(r, 3);
    call_hdr(r, 3); /* 4: Mrecv m1 (bytes of rank 0's send 1) */
    mt_uvar(r, 1);
    mt_uvar(r, 1);
    call_hdr(r, 1); /* 5: Irecv r4 */
    mt_uvar(r, 0);
    mt_uvar(r, 4);
    call_hdr(r, 1); /* 6: Irecv r5 */
    mt_uvar(r, 0);
    mt_uvar(r, 5);
    call_hdr(r, 4); /* 7: Waitall, completed in another order */
    static const int64_t done[5][3] = {{4, 2, 1}, {2, 0, 2}, {5, 2, 2}, {1, 0, 0}, {3, 2, 0}};
    mt_uvar(r, 5);
    for (int i = 0; i < 5; i++) {
        mt_uvar(r, (uint64_t)done[i][0]);
        mt_uvar(r, VT_COMPL_RECV);
        mt_svar(r, done[i][1]);
        mt_svar(r, 1);
        mt_uvar(r, (uint64_t)(100 * done[i][1] + done[i][2]));
    }
    nrec[1] = 8;
    for (uint32_t k = 0; k < 3; k++) {
        mt_buf rd = {0};
        mt_rankdefs(&rd, k, 3, 1, 0);
        mt_rank_file(&t.ranks[k], k, &f, &e[k], nrec[k], &rd);
        mt_free(&rd);
        mt_free(&e[k]);
    }
    mt_free(&f);

    vt_trace *tr;
    vt_matches *m;
    vt_error err;
    assert_int_equal(open_mem(&t, &tr, &err), 0);
    if (vt_trace_match(tr, 0, &m, &err)) {
        print_error("%s\n", err.msg);
        fail();
    }
    assert_int_equal(vt_matches_count(m), 6);
    /* rank 1 receive index -> (sender, sender index) */
    static const struct { uint64_t index, post, done; uint32_t src; uint64_t sidx; } w[] = {
        {0, 0, 7, 0, 0}, {2, 2, 7, 0, 2}, {3, 3, 7, 2, 0}, {4, 1, 4, 0, 1}, {5, 5, 7, 2, 1}, {6, 6, 7, 2, 2},
    };
    for (size_t i = 0; i < 6; i++) {
        const vt_match_recv *rv = vt_matches_find_recv(m, 1, w[i].index, 0);
        assert_non_null(rv);
        assert_int_equal(rv->post_index, w[i].post);
        assert_int_equal(rv->done_index, w[i].done);
        assert_int_equal(rv->send_rank, w[i].src);
        const vt_match_send *s = &vt_matches_sends(m, rv->send_rank, NULL)[rv->send_pos];
        assert_int_equal(s->index, w[i].sidx);
        assert_int_equal(rv->bytes, s->bytes);
    }
    vt_matches_free(m);
    vt_trace_close(tr);
    mt_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(test_uvar),
        cmocka_unit_test(test_svar),
        cmocka_unit_test(test_layout_letters),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_error_offset),
        cmocka_unit_test(test_bad_layouts),
        cmocka_unit_test(test_comm_origins),
        cmocka_unit_test(test_global_time_extremes),
        cmocka_unit_test(test_match_posting_order),
        cmocka_unit_test(test_match_unmatched),
    };
    const struct CMUnitTest synth[] = {
        cmocka_unit_test(test_definitions), cmocka_unit_test(test_global_time), cmocka_unit_test(test_synth_events),
        cmocka_unit_test(test_take_lists), cmocka_unit_test(test_cursor_open_lazy),
        cmocka_unit_test(test_zstd),
        cmocka_unit_test(test_compact_members),        cmocka_unit_test(test_match_synth),
    };
    int failed = cmocka_run_group_tests_name("reader", pure, NULL, NULL);
    failed += cmocka_run_group_tests_name("synthetic trace", synth, setup_synth, teardown_synth);
    return failed ? 1 : 0;
}
