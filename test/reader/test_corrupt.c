/* Corrupted traces: every truncation and byte flip of every file of the synthetic
 * trace (raw and zstd) and of its reduced trace (vtrace reduce's), and named corruptions (wrong major version, wrong magic, CRC
 * mismatch, missing rank file, missing END, unmatched message, ...), read in-process
 * through the whole reader (open, every cursor, matching). Each must fail with a
 * message naming the file and an offset; none may crash (run it under ASan too). */
#include "vt_config.h"
#include "format/reader.h"
#include "format/blockio.h"
#include "format/evdict.h"
#include "util/codec.h"
#include "synth.h"
#include "model/model.h"
#include "analysis/reduce.h"
#include "analysis/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define NFILES (SYNTH_NRANKS + 1)

typedef struct file {
    char name[32];
    uint8_t *data;
    size_t size;
} file;

static int failures;
static long runs;

static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (++failures > 20) {
        fprintf(stderr, "too many failures\n");
        exit(1);
    }
}

static void load(const char *dir, file f[NFILES])
{
    for (int i = 0; i < NFILES; i++) {
        if (i == 0)
            snprintf(f[i].name, sizeof f[i].name, "vtrace.defs");
        else
            snprintf(f[i].name, sizeof f[i].name, "rank-%06d.vte", i - 1);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, f[i].name);
        FILE *fp = fopen(path, "rb");
        if (!fp) {
            perror(path);
            exit(1);
        }
        fseek(fp, 0, SEEK_END);
        f[i].size = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        f[i].data = malloc(f[i].size);
        if (!f[i].data || fread(f[i].data, 1, f[i].size, fp) != f[i].size) {
            perror(path);
            exit(1);
        }
        fclose(fp);
    }
}

static int same_event(const vt_event *a, const vt_event *b)
{
#define F(x) (a->x == b->x)
    if (!(F(index) && F(callno) && F(code) && F(fn) && F(fields) && F(enter) && F(exit) && F(callsite) && F(comm) &&
          F(newcomm) && F(peer) && F(tag) && F(bytes) && F(rpeer) && F(rtag) && F(rbytes) && F(root) && F(collseq) &&
          F(request) && F(msg) && F(file) && F(offset) && F(nstarted) && F(ndone) && F(marker_kind) &&
          F(marker_value) && F(stop_reason) && F(block_offset)))
        return 0;
#undef F
    if (a->nstarted && memcmp(a->started, b->started, a->nstarted * sizeof *a->started))
        return 0;
    for (size_t i = 0; i < a->ndone; i++)
        if (a->done[i].request != b->done[i].request || a->done[i].flags != b->done[i].flags ||
            a->done[i].peer != b->done[i].peer || a->done[i].tag != b->done[i].tag ||
            a->done[i].bytes != b->done[i].bytes)
            return 0;
    return 1;
}

/* A cursor reading columns straight (vt_cursor_fast, the replay's) gives the records of
 * one that unpacks them, and the same error, after the records before the bad one of its
 * block (which the unpacking cursor refuses as a whole). */
static void check_fast(vt_trace *t, uint32_t r)
{
    vt_cursor *c, *f;
    vt_error e1, e2;
    if (vt_cursor_open(t, r, &c, &e1))
        return;
    if (vt_cursor_open(t, r, &f, &e2)) {
        vt_cursor_close(c);
        return;
    }
    vt_cursor_fast(f);
    vt_event a, b;
    int ga, gb;
    uint64_t n = 0;
    while ((ga = vt_cursor_next(c, &a, &e1)) == 1) {
        gb = vt_cursor_next(f, &b, &e2);
        if (gb != 1 || !same_event(&a, &b)) {
            failf("rank %u record %llu: the column cursor gave %s", r, (unsigned long long)n,
                  gb == 1 ? "another record" : gb ? e2.msg : "no record");
            goto out;
        }
        n++;
    }
    if (ga == 0) {
        if ((gb = vt_cursor_next(f, &b, &e2)) != 0)
            failf("rank %u: the column cursor gave %s after the last record", r, gb > 0 ? "a record" : e2.msg);
        goto out;
    }
    while ((gb = vt_cursor_next(f, &b, &e2)) == 1)
        ;
    if (gb == 0 || strcmp(e1.msg, e2.msg))
        failf("rank %u: the column cursor gave '%s', the unpacking one '%s'", r, gb ? e2.msg : "no error", e1.msg);
out:
    vt_cursor_close(c);
    vt_cursor_close(f);
}

/* Everything a tool does: open, read every record of every rank, match. */
static int read_all(vt_trace *t, vt_error *err)
{
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++)
        if (!vt_trace_rank(t, r)->reduced)
            check_fast(t, r);
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        vt_event ev;
        vt_rrec rr;
        int got;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        if (vt_trace_rank(t, r)->reduced) {
            while ((got = vt_cursor_next_reduced(c, &rr, err)) == 1)
                for (size_t i = 0; i < rr.nmsgs; i++)
                    (void)vt_global_time(t, rr.msgs[i].src, rr.msgs[i].S);
        } else {
            while ((got = vt_cursor_next(c, &ev, err)) == 1)
                (void)vt_global_time(t, r, ev.exit);
        }
        vt_cursor_close(c);
        if (got < 0)
            return -1;
    }
    vt_matches *m;
    if (vt_trace_match(t, 0, &m, err))
        return -1;
    if (vt_trace_is_reduced(t)) {
        /* a damaged reduced trace that decodes must replay or be refused, never crash */
        vt_model_params p;
        vt_model_defaults(&p);
        char msg[256];
        vt_scenario sc;
        vt_replay_result res;
        vt_error e2;
        if (vt_model_params_parse(&p, vt_trace_config(t), msg, sizeof msg) == 0 &&
            vt_scenario_parse("all=-50%", &sc, msg, sizeof msg) == 0) {
            if (vt_replay(t, m, &p, &sc, 1, &res, &e2) == 0)
                vt_replay_result_free(&res);
            vt_scenario_free(&sc);
        }
    }
    vt_matches_free(m);
    return 0;
}

/* The reduced trace of the synthetic trace in dir, written to out (θ 100 ns, so that
 * it holds records of every kind). */
static int reduce_synth(const char *dir, const char *out)
{
    vt_trace *t;
    vt_matches *m;
    vt_error err;
    if (vt_trace_open(dir, &t, &err) || vt_trace_match(t, 0, &m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    vt_model_params p;
    vt_model_defaults(&p);
    p.theta = 100;
    vt_reduce_opts o = {.out_dir = out};
    vt_reduce_stats st;
    int rc = vt_reduce(t, m, &p, NULL, 0, &o, &st, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    else
        printf("reduced synthetic trace: %llu -> %llu records\n", (unsigned long long)st.records_in,
               (unsigned long long)st.records_out);
    vt_matches_free(m);
    vt_trace_close(t);
    return rc;
}

/* Runs the reader on the files (file `skip` left out); returns 0 or -1 with err. */
static int run(const file f[NFILES], int skip, vt_error *err)
{
    vt_mem_file mf[NFILES];
    size_t n = 0;
    for (int i = 0; i < NFILES; i++)
        if (i != skip)
            mf[n++] = (vt_mem_file){f[i].name, f[i].data, f[i].size};
    vt_trace *t;
    runs++;
    memset(err, 0, sizeof *err);
    if (vt_trace_open_mem(mf, n, &t, err))
        return -1;
    int rc = read_all(t, err);
    vt_trace_close(t);
    return rc;
}

/* Expects an error naming `name` and an offset, and containing `what` if given. */
static void expect_fail(const file f[NFILES], int skip, const char *name, const char *what, const char *label)
{
    vt_error err;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: offset ", name);
    if (run(f, skip, &err) != -1) {
        failf("%s: the reader accepted it", label);
        return;
    }
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        failf("%s: message does not start with '%s': %s", label, prefix, err.msg);
    else if (what && !strstr(err.msg, what))
        failf("%s: message does not contain '%s': %s", label, what, err.msg);
}

static void expect_ok(const file f[NFILES], const char *label)
{
    vt_error err;
    if (run(f, -1, &err) != 0)
        failf("%s: %s", label, err.msg);
}

/* Offset of the n-th block header of a file (0: the first after the file header). */
static size_t block_at(const file *f, int n)
{
    size_t off = VT_FILE_HEADER_SIZE;
    for (int i = 0; i < n; i++) {
        vt_block_header h;
        vt_block_header_decode(f->data + off, &h);
        off += VT_BLOCK_HEADER_SIZE + h.stored_len;
    }
    return off;
}

static int nblocks(const file *f)
{
    int n = 0;
    for (size_t off = VT_FILE_HEADER_SIZE; off < f->size; n++) {
        vt_block_header h;
        vt_block_header_decode(f->data + off, &h);
        off += VT_BLOCK_HEADER_SIZE + h.stored_len;
    }
    return n;
}

static void truncations_and_flips(file f[NFILES], const char *label)
{
    vt_error err;
    if (run(f, -1, &err) != 0) {
        failf("%s: the intact trace fails: %s", label, err.msg);
        return;
    }
    for (int i = 0; i < NFILES; i++) {
        file *x = &f[i];
        size_t size = x->size;
        char l[128];
        /* every truncation */
        for (size_t len = 0; len < size; len++) {
            x->size = len;
            snprintf(l, sizeof l, "%s: %s truncated to %zu bytes", label, x->name, len);
            expect_fail(f, -1, x->name, len >= VT_FILE_HEADER_SIZE ? "expected" : "file header", l);
        }
        x->size = size;
        /* every byte, three ways, except the minor version (a higher minor is fine) */
        static const uint8_t masks[] = {0x01, 0x80, 0xff};
        for (size_t pos = 0; pos < size; pos++) {
            if (pos == 10 || pos == 11)
                continue;
            for (size_t k = 0; k < sizeof masks; k++) {
                x->data[pos] ^= masks[k];
                snprintf(l, sizeof l, "%s: %s byte %zu ^ 0x%02x", label, x->name, pos, masks[k]);
                expect_fail(f, -1, x->name, NULL, l);
                x->data[pos] ^= masks[k];
            }
        }
    }
}

/* Random multi-byte damage: must not crash; errors must name a file and an offset. */
static void random_damage(file f[NFILES], unsigned iterations)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (unsigned it = 0; it < iterations; it++) {
        int i = (int)(s % NFILES);
        file *x = &f[i];
        uint8_t *save = malloc(x->size);
        memcpy(save, x->data, x->size);
        int n = 1 + (int)((s >> 8) % 6);
        for (int k = 0; k < n; k++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            x->data[(s >> 3) % x->size] = (uint8_t)(s >> 40);
        }
        vt_error err;
        if (run(f, -1, &err) == -1 && !strstr(err.msg, ": offset "))
            failf("random damage %u: message without an offset: %s", it, err.msg);
        memcpy(x->data, save, x->size);
        free(save);
    }
}

static void put32(uint8_t *p, uint32_t v) { vt_put_u32(p, v); }

static void named(file f[NFILES])
{
    char l[128];
    file *defs = &f[0], *r0 = &f[1], *r1 = &f[2], *r2 = &f[3];
    uint8_t save[64];

    /* wrong major version */
    memcpy(save, r1->data, 16);
    vt_put_u16(r1->data + 8, 3);
    expect_fail(f, -1, r1->name, "offset 8: expected major version 1 to 2, found 3", "major version");
    memcpy(r1->data, save, 16);
    vt_put_u16(defs->data + 8, 0);
    expect_fail(f, -1, defs->name, "expected major version 1 to 2, found 0", "major version of defs");
    vt_put_u16(defs->data + 8, VT_FORMAT_MAJOR);

    /* a higher minor version is accepted */
    vt_put_u16(r1->data + 10, 3);
    vt_put_u16(defs->data + 10, 7);
    expect_ok(f, "higher minor version");
    vt_put_u16(r1->data + 10, 0);
    vt_put_u16(defs->data + 10, 0);

    /* wrong magic */
    r0->data[0] = 'X';
    expect_fail(f, -1, r0->name, "offset 0: expected magic VTRACE\\0E, found XTRACE\\0E", "magic");
    r0->data[0] = 'V';
    defs->data[7] = 'E';
    expect_fail(f, -1, defs->name, "expected magic VTRACE\\0D, found VTRACE\\0E", "defs magic");
    defs->data[7] = 'D';

    /* CRC mismatch in RANKDEFS (the block before END) */
    size_t rd = block_at(r2, nblocks(r2) - 2);
    r2->data[rd + 16] ^= 0x10;
    snprintf(l, sizeof l, "offset %zu: expected CRC-32", rd + 16);
    expect_fail(f, -1, r2->name, l, "CRC mismatch");
    r2->data[rd + 16] ^= 0x10;

    /* 1.6: a call site naming a module past the module table. Rank 0's raw RANKDEFS
     * ends with its second site: module index + 1 (2), offset 0x5678 (3 bytes), "" */
    rd = block_at(r0, nblocks(r0) - 2);
    uint32_t rdlen = vt_get_u32(r0->data + rd + 8);
    size_t mod_at = rd + VT_BLOCK_HEADER_SIZE + rdlen - 5;
    if (r0->data[rd + 5] != VT_CODEC_RAW || r0->data[mod_at] != 2) {
        failf("bad module index: rank 0's RANKDEFS does not end with a site of module 2");
    } else {
        uint32_t crc = vt_get_u32(r0->data + rd + 16);
        r0->data[mod_at] = 3;
        put32(r0->data + rd + 16,
              (uint32_t)crc32(crc32(0L, Z_NULL, 0), r0->data + rd + VT_BLOCK_HEADER_SIZE, (uInt)rdlen));
        snprintf(l, sizeof l,
                 "offset %zu: expected a call-site module index + 1 of at most 2 (the entries of the module table), "
                 "found 3", mod_at);
        expect_fail(f, -1, r0->name, l, "call-site module index");
        r0->data[mod_at] = 2;
        put32(r0->data + rd + 16, crc);
    }

    /* CRC mismatch in an EVENTS block: found by the cursor, not at open */
    size_t ev = block_at(r0, 1);
    r0->data[ev + VT_BLOCK_HEADER_SIZE + 3] ^= 0x01;
    expect_fail(f, -1, r0->name, "expected CRC-32", "CRC of events");
    r0->data[ev + VT_BLOCK_HEADER_SIZE + 3] ^= 0x01;

    /* missing rank file */
    expect_fail(f, 3, r2->name, "offset 0: expected the rank file of rank 2, found none", "missing rank file");
    expect_fail(f, 0, "vtrace.defs", "offset 0: expected the global definitions file", "missing vtrace.defs");

    /* missing END (truncated exactly at a block boundary) */
    size_t size = r1->size;
    r1->size -= VT_BLOCK_HEADER_SIZE;
    snprintf(l, sizeof l, "offset %zu: expected block header or END, found end of file", r1->size);
    expect_fail(f, -1, r1->name, l, "missing END");
    r1->size = size;

    /* END in the middle: RANKDEFS missing */
    size_t e1 = block_at(r1, 1);
    memcpy(save, r1->data + e1, VT_BLOCK_HEADER_SIZE);
    vt_block_header h = {VT_BLOCK_MAGIC, VT_BLOCK_END, 0, 0, 0, 0, 0, 0};
    vt_block_header_encode(r1->data + e1, &h);
    expect_fail(f, -1, r1->name, "expected an EVENTS or RANKDEFS block, found a END block", "early END");
    memcpy(r1->data + e1, save, VT_BLOCK_HEADER_SIZE);

    /* huge lengths never allocate: stored length past the end of the file */
    memcpy(save, r0->data + 16, VT_BLOCK_HEADER_SIZE);
    put32(r0->data + 16 + 8, 0xffffffffu);
    r0->data[16 + 5] = VT_CODEC_ZSTD;
    expect_fail(f, -1, r0->name, "offset 16: expected block header or END, found end of file", "huge stored length");
    memcpy(r0->data + 16, save, VT_BLOCK_HEADER_SIZE);
    /* raw length over the limit */
    memcpy(save, r0->data + 16, VT_BLOCK_HEADER_SIZE);
    put32(r0->data + 16 + 12, 0x7fffffffu);
    r0->data[16 + 5] = VT_CODEC_ZSTD;
    expect_fail(f, -1, r0->name, "expected raw length at most", "raw length limit");
    memcpy(r0->data + 16, save, VT_BLOCK_HEADER_SIZE);
    /* unknown codec, block type, reserved */
    r0->data[16 + 5] = 7;
    expect_fail(f, -1, r0->name, "offset 21: expected codec 0 (raw), 1 (zstd), 2 (zstd, dictionary) or 3 (zstd, built-in "
                "dictionary), found 7",
                "codec");
    r0->data[16 + 5] = 0;
    r0->data[16 + 4] = 9;
    expect_fail(f, -1, r0->name, "offset 20: expected block type", "block type");
    r0->data[16 + 4] = VT_BLOCK_FUNCS;
    r0->data[16 + 6] = 1;
    expect_fail(f, -1, r0->name, "expected reserved field 0, found 1", "reserved");
    r0->data[16 + 6] = 0;

    /* rank number in the header */
    put32(r1->data + 12, 2);
    expect_fail(f, -1, r1->name, "offset 12: expected rank 1 in the file header, found 2", "rank number");
    put32(r1->data + 12, 1);

    /* vtrace.defs announcing another number of ranks than GLOBAL */
    put32(defs->data + 12, 4);
    expect_fail(f, -1, defs->name, "expected 4 ranks (as in the file header), found 3", "number of ranks");
    put32(defs->data + 12, 3);

    /* garbage after END */
    uint8_t *big = malloc(r2->size + 5);
    memcpy(big, r2->data, r2->size);
    memcpy(big + r2->size, "junk!", 5);
    uint8_t *orig = r2->data;
    r2->data = big;
    r2->size += 5;
    snprintf(l, sizeof l, "offset %zu: expected end of file after END, found 5 more bytes", r2->size - 5);
    expect_fail(f, -1, r2->name, l, "garbage after END");
    r2->size -= 5;
    r2->data = orig;
    free(big);

    expect_ok(f, "restored trace");
}

/* A few corruptions through vt_trace_open on a directory. */
/* The trace's table in vtrace.defs (at FUNCS_AT) replaced by one of 64 empty entries
 * (raw): the run time's names only the functions some rank used; a record or profile
 * entry of one it leaves empty is an error naming rank 0's file. */
static void unnamed_shared(file f[NFILES], size_t funcs_at)
{
    file *defs = &f[0];
    vt_block_header h;
    vt_block_header_decode(defs->data + funcs_at, &h);
    uint8_t pay[1 + 2 * 64];
    size_t n = 0;
    pay[n++] = 64;
    while (n < sizeof pay)
        pay[n++] = 0;   /* name "", layout "" */
    size_t old_end = funcs_at + VT_BLOCK_HEADER_SIZE + h.stored_len, tail = defs->size - old_end;
    uint8_t *d = malloc(funcs_at + VT_BLOCK_HEADER_SIZE + n + tail);
    if (!d) {
        failf("out of memory");
        return;
    }
    vt_block_header nh = {VT_BLOCK_MAGIC, VT_BLOCK_FUNCS, VT_CODEC_RAW, 0, (uint32_t)n, (uint32_t)n, 0, 0};
    nh.crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), pay, (uInt)n);
    memcpy(d, defs->data, funcs_at);
    vt_block_header_encode(d + funcs_at, &nh);
    memcpy(d + funcs_at + VT_BLOCK_HEADER_SIZE, pay, n);
    memcpy(d + funcs_at + VT_BLOCK_HEADER_SIZE + n, defs->data + old_end, tail);
    uint8_t *keep = defs->data;
    size_t keep_size = defs->size;
    defs->data = d;
    defs->size = funcs_at + VT_BLOCK_HEADER_SIZE + n + tail;
    expect_fail(f, -1, f[1].name, "a FUNCS block names, found function id", "shared table leaves functions empty");
    defs->data = keep;
    defs->size = keep_size;
    free(d);
}

/* Damage to what 1.5 keeps in vtrace.defs (FUNCS, DICT) and to codec 2. */
static void named_shared(file f[NFILES])
{
    file *defs = &f[0], *r0 = &f[1];
    int defs_blocks = nblocks(defs), r0_blocks = nblocks(r0);
    size_t dict_at = block_at(defs, defs_blocks - 2), funcs_at = block_at(defs, defs_blocks - 3);
    size_t rd_at = block_at(r0, r0_blocks - 2);
    uint8_t save = r0->data[rd_at + 6];
    if (r0->data[rd_at + 4] != VT_BLOCK_RANKDEFS || defs->data[dict_at + 4] != VT_BLOCK_DICT ||
        defs->data[funcs_at + 4] != VT_BLOCK_FUNCS) {
        failf("shared: the synthetic trace's blocks are not where expected");
        return;
    }
#ifdef HAVE_ZSTD
    if (r0->data[rd_at + 5] != VT_CODEC_ZSTD_DICT)
        failf("shared: rank 0's RANKDEFS is not compressed against the dictionary (codec %u)", r0->data[rd_at + 5]);
    r0->data[rd_at + 6] ^= 1;
    expect_fail(f, -1, r0->name, "expected dictionary check", "dictionary check");
    r0->data[rd_at + 6] = save;
    /* vtrace.defs without its DICT: the block becomes a second FUNCS */
    defs->data[dict_at + 4] = VT_BLOCK_FUNCS;
    expect_fail(f, -1, defs->name, "expected DICT or END after GLOBAL, found a FUNCS block", "second FUNCS");
    defs->data[dict_at + 4] = VT_BLOCK_DICT;
    size_t len = defs->size;
    uint8_t *keep = malloc(len);
    if (!keep) {
        failf("out of memory");
        return;
    }
    memcpy(keep, defs->data, len);
    /* cut after FUNCS: the DICT and END gone, END put back */
    memcpy(defs->data + dict_at, defs->data + len - VT_BLOCK_HEADER_SIZE, VT_BLOCK_HEADER_SIZE);
    defs->size = dict_at + VT_BLOCK_HEADER_SIZE;
    expect_fail(f, -1, r0->name, "vtrace.defs has no DICT block for codec 2", "no dictionary");
    /* and without FUNCS: rank 0 has no function table */
    memcpy(defs->data + funcs_at, defs->data + dict_at, VT_BLOCK_HEADER_SIZE);
    defs->size = funcs_at + VT_BLOCK_HEADER_SIZE;
    expect_fail(f, -1, r0->name, "offset 16: expected a FUNCS block (vtrace.defs has no function table)",
                "no function table");
    memcpy(defs->data, keep, len);
    defs->size = len;
    free(keep);
    unnamed_shared(f, funcs_at);
    expect_ok(f, "shared definitions restored");
#else
    (void)save;
#endif
}

static void write_file(const char *dir, const file *f, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(f->data, 1, size, fp) != size || fclose(fp) != 0) {
        perror(path);
        exit(1);
    }
}

static void expect_dir_fail(const char *dir, const char *name, const char *what, const char *label)
{
    vt_trace *t;
    vt_error err;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s/%s: offset ", dir, name);
    int rc = vt_trace_open(dir, &t, &err);
    if (rc == 0) {
        rc = read_all(t, &err);
        vt_trace_close(t);
    }
    if (rc != -1)
        failf("%s: the reader accepted it", label);
    else if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, what))
        failf("%s: unexpected message: %s", label, err.msg);
}

static void directory(const char *dir, file f[NFILES])
{
    char path[256];
    write_file(dir, &f[2], f[2].size - 1);
    expect_dir_fail(dir, f[2].name, "expected block header or END", "dir: truncated");
    write_file(dir, &f[2], f[2].size);
    f[3].data[f[3].size / 2] ^= 0x40;
    write_file(dir, &f[3], f[3].size);
    expect_dir_fail(dir, f[3].name, "expected CRC-32", "dir: flipped byte");
    f[3].data[f[3].size / 2] ^= 0x40;
    snprintf(path, sizeof path, "%s/%s", dir, f[3].name);
    unlink(path);
    expect_dir_fail(dir, f[3].name, "offset 0: expected the rank file of rank 2, found none (No such file or directory)",
                    "dir: missing rank file");
    mkdir(path, 0755);
    expect_dir_fail(dir, f[3].name, "regular file", "dir: rank file is a directory");
    rmdir(path);
    write_file(dir, &f[3], f[3].size);
    vt_trace *t;
    vt_error err;
    if (vt_trace_open(dir, &t, &err) || read_all(t, &err))
        failf("dir: restored trace: %s", err.msg);
    else
        vt_trace_close(t);
}

/* 2.1: compressed EVENTS_COLS blocks are codec 3, against the built-in dictionary,
 * which their reserved field names */
static void builtin_dict(file f[NFILES])
{
    file *r0 = &f[1];
    size_t at = block_at(r0, 0);
    for (int i = 1; r0->data[at + 4] != VT_BLOCK_EVENTS_COLS && i < nblocks(r0); i++)
        at = block_at(r0, i);
    size_t len;
    const uint8_t *d = vt_evdict(&len);
    if (vt_dict_check(d, len) != VT_EVDICT_CHECK)
        failf("builtin: the dictionary's check is 0x%04x, not VT_EVDICT_CHECK", vt_dict_check(d, len));
#ifdef HAVE_ZSTD
    if (r0->data[at + 4] != VT_BLOCK_EVENTS_COLS || r0->data[at + 5] != VT_CODEC_ZSTD_BUILTIN) {
        failf("builtin: rank 0's first EVENTS_COLS block is not codec 3 (type %u, codec %u)", r0->data[at + 4],
              r0->data[at + 5]);
        return;
    }
    r0->data[at + 6] ^= 1;
    char what[200];
    snprintf(what, sizeof what, "offset %zu: expected dictionary check 0x%04x (the built-in dictionary of codec 3)",
             at + 6, VT_EVDICT_CHECK);
    expect_fail(f, -1, r0->name, what, "built-in dictionary check");
    r0->data[at + 6] ^= 1;
    /* the same frame read as codec 1 lacks the dictionary's content and tables */
    r0->data[at + 5] = VT_CODEC_ZSTD;
    r0->data[at + 6] = r0->data[at + 7] = 0;
    expect_fail(f, -1, r0->name, "expected a valid zstd frame", "codec 3 frame read as codec 1");
    r0->data[at + 5] = VT_CODEC_ZSTD_BUILTIN;
    vt_put_u16(r0->data + at + 6, VT_EVDICT_CHECK);
#endif
}

static void free_files(file f[NFILES])
{
    for (int i = 0; i < NFILES; i++)
        free(f[i].data);
}

int main(void)
{
    char dir[64], emsg[4200];
    snprintf(dir, sizeof dir, "/tmp/vt-corrupt.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    file f[NFILES];

    synth_opts raw = {.records_per_block = 8};
    if (synth_write(dir, &raw, emsg, sizeof emsg)) {
        fprintf(stderr, "%s\n", emsg);
        return 1;
    }
    load(dir, f);
    named(f);
    truncations_and_flips(f, "raw");
    random_damage(f, 3000);
    directory(dir, f);
    free_files(f);

    synth_opts z = {.zstd_level = 3, .records_per_block = 1000};
    if (synth_write(dir, &z, emsg, sizeof emsg)) {
        fprintf(stderr, "%s\n", emsg);
        return 1;
    }
    load(dir, f);
    truncations_and_flips(f, "zstd");
    random_damage(f, 3000);
    free_files(f);

    /* event blocks in columns (EVENTS_COLS), as they are and compressed */
    synth_opts cols = {.records_per_block = 8, .cols = 1};
    synth_opts colsz = {.zstd_level = 3, .records_per_block = 1000, .cols = 1};
    const synth_opts *col_opts[] = {&cols, &colsz};
    for (int k = 0; k < 2; k++) {
        if (synth_write(dir, col_opts[k], emsg, sizeof emsg)) {
            fprintf(stderr, "%s\n", emsg);
            return 1;
        }
        load(dir, f);
        if (k)
            builtin_dict(f);
        truncations_and_flips(f, k ? "columns, zstd" : "columns");
        random_damage(f, 3000);
        free_files(f);
    }

    /* 1.5: the function table and a dictionary in vtrace.defs, RANKDEFS against it */
    synth_opts sh = {.zstd_level = 3, .records_per_block = 8, .shared = 1};
    if (synth_write(dir, &sh, emsg, sizeof emsg)) {
        fprintf(stderr, "%s\n", emsg);
        return 1;
    }
    load(dir, f);
    expect_ok(f, "shared definitions");
    named_shared(f);
    truncations_and_flips(f, "shared definitions");
    random_damage(f, 3000);
    free_files(f);

    /* the reduced trace of the raw synthetic trace */
    synth_opts raw2 = {.records_per_block = 8};
    char rdir[80];
    snprintf(rdir, sizeof rdir, "%s/reduced", dir);
    if (synth_write(dir, &raw2, emsg, sizeof emsg) || reduce_synth(dir, rdir)) {
        fprintf(stderr, "%s\n", emsg);
        return 1;
    }
    load(rdir, f);
    truncations_and_flips(f, "reduced");
    random_damage(f, 3000);
    free_files(f);

    /* an unmatched message */
    synth_opts u = {.records_per_block = 8, .unmatched = 1};
    if (synth_write(dir, &u, emsg, sizeof emsg)) {
        fprintf(stderr, "%s\n", emsg);
        return 1;
    }
    load(dir, f);
    expect_fail(f, -1, "rank-000000.vte",
                "expected a receive matching send record 1 of rank 0 (to 1, tag 5, communicator 0x1), found none",
                "unmatched message");
    free_files(f);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failf("cannot remove %s", dir);
    printf("%ld reader runs, %d failures\n", runs, failures);
    return failures ? 1 : 0;
}
