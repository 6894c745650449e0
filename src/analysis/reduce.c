/* vtrace reduce: the run-time reduction applied to a full trace, as an observer of the
 * replay (replay.h) that feeds one reducer per rank (rankreduce.h); here, what only the
 * offline tool does: the files, the totals, the check and the polynomial stream; see
 * reduce.h. */
#include "vt_config.h"
#include "analysis/reduce.h"
#include "analysis/reduce_polys.h"
#include "format/stored.h"
#include "format/blockio.h"
#include "util/codec.h"
#include "model/rankreduce.h"
#include "format/rrec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* A rank's reduced trace file: the records of its reducer, in REDUCED blocks. */
typedef struct rank_out {
    vt_rankreduce rr;
    struct reducer *Z;
    char *path;             /* its file */
    vt_rrec_out out;        /* its REDUCED blocks */
    vt_wbuf held;           /* the file's bytes not written yet */
    int created;            /* the file is in OUT */
    uint64_t written;       /* bytes of it there */
    const char **fname, **flayout; /* the full trace's function table, for out */
    uint64_t *comm_ids;     /* the ids of its communicator table, for out */
    size_t ncomms;
} rank_out;

static const uint64_t *rank_comm_ids(void *arg, size_t *n)
{
    const rank_out *ro = arg;
    *n = ro->ncomms;
    return ro->comm_ids;
}

/* Atom values for the check: variable -> nsc values. */
typedef struct atomtab {
    vt_var *keys;
    size_t *at;             /* offset in vals */
    size_t cap, n;
    int64_t *vals;
    size_t nvals, capvals;
} atomtab;

typedef struct reducer {
    const vt_trace *t;
    const vt_model_params *p;
    const vt_reduce_opts *o;
    vt_reduce_stats *st;
    size_t nsc;
    uint32_t nranks;
    rank_out *ro;
    vt_rrec_pool pool; /* the ranks' open blocks */
    atomtab atoms;
    vt_error *err;
    int failed;             /* a write failed: stop writing, report once */
    size_t held;            /* bytes of rank files held in memory (rank_out.held) */
    const vt_par_comm *par; /* parallel: this process reduces ranks [lo, hi) */
    uint32_t lo, hi;
    int want_polys;         /* the polynomial stream, kept in polys until the end */
    vt__polys polys;
} reducer;

/* ------------------------------------------------------------------ atom values */

static uint64_t var_hash(vt_var v)
{
    uint64_t x = v.ks * 0x9e3779b97f4a7c15ull ^ v.owner * 0xc2b2ae3d27d4eb4full;
    x ^= x >> 29;
    return x * 0xbf58476d1ce4e5b9ull;
}

static int64_t *atom_get(const atomtab *a, vt_var v, size_t nsc)
{
    if (!a->n)
        return NULL;
    for (size_t j = var_hash(v) & (a->cap - 1);; j = (j + 1) & (a->cap - 1)) {
        if (!a->at[j])
            return NULL;
        if (vt_var_eq(a->keys[j], v))
            return a->vals + (a->at[j] - 1) * nsc;
    }
}

/* Registers v = vals, or, when it is known already, compares: 1 equal or new, 0 differs, -1. */
static int atom_put(atomtab *a, vt_var v, const int64_t *vals, size_t nsc)
{
    int64_t *old = atom_get(a, v, nsc);
    if (old)
        return memcmp(old, vals, nsc * sizeof *vals) == 0;
    if ((a->n + 1) * 2 > a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 1024;
        vt_var *k = calloc(nc, sizeof *k);
        size_t *at = calloc(nc, sizeof *at);
        if (!k || !at) {
            free(k);
            free(at);
            return -1;
        }
        for (size_t i = 0; i < a->cap; i++) {
            if (!a->at[i])
                continue;
            size_t j = var_hash(a->keys[i]) & (nc - 1);
            while (at[j])
                j = (j + 1) & (nc - 1);
            k[j] = a->keys[i];
            at[j] = a->at[i];
        }
        free(a->keys);
        free(a->at);
        a->keys = k;
        a->at = at;
        a->cap = nc;
    }
    if ((a->nvals + 1) * nsc > a->capvals) {
        size_t nc = a->capvals ? 2 * a->capvals : 1024 * (nsc ? nsc : 1);
        while (nc < (a->nvals + 1) * nsc)
            nc *= 2;
        int64_t *nv = realloc(a->vals, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->vals = nv;
        a->capvals = nc;
    }
    memcpy(a->vals + a->nvals * nsc, vals, nsc * sizeof *vals);
    a->nvals++;
    size_t j = var_hash(v) & (a->cap - 1);
    while (a->at[j])
        j = (j + 1) & (a->cap - 1);
    a->keys[j] = v;
    a->at[j] = a->nvals;
    a->n++;
    return 1;
}

typedef struct evalctx {
    const atomtab *a;
    size_t nsc, k;
} evalctx;

static int atom_value(void *ctx, vt_var v, int64_t *val)
{
    const evalctx *c = ctx;
    const int64_t *x = atom_get(c->a, v, c->nsc);
    if (!x)
        return -1;
    *val = x[c->k];
    return 0;
}

static void check_note(reducer *Z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check_note(reducer *Z, const char *fmt, ...)
{
    if (Z->st->check_failures++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(Z->st->first_failure, sizeof Z->st->first_failure, fmt, ap);
    va_end(ap);
}

static int register_atom(reducer *Z, vt_var v, const int64_t *vals, uint32_t rank, uint64_t seq)
{
    int rc = atom_put(&Z->atoms, v, vals, Z->nsc);
    if (rc < 0)
        return vt_error_set(Z->err, "out of memory checking the reduction");
    if (rc == 0) {
        char name[96];
        vt_var_format(v, name, sizeof name);
        check_note(Z, "event %" PRIu32 ":%" PRIu64 ": atom %s has two different values", rank, seq, name);
    }
    return 0;
}

/* model.md §7.4: the polynomial p, evaluated at every scenario, equals want. */
static void check_poly(reducer *Z, const vt_poly *p, const int64_t *want, uint32_t rank, uint64_t seq, const char *what)
{
    for (size_t k = 0; k < Z->nsc; k++) {
        evalctx c = {&Z->atoms, Z->nsc, k};
        int64_t v;
        int rc = vt_poly_eval(p, atom_value, &c, &v);
        Z->st->checked++;
        if (rc != VT_POLY_OK || v != want[k]) {
            char text[256];
            vt_poly_format(p, text, sizeof text);
            if (rc != VT_POLY_OK)
                check_note(Z, "event %" PRIu32 ":%" PRIu64 ": %s %s cannot be evaluated (%s) in scenario %zu", rank,
                           seq, what, text, vt_poly_strerror(rc), k);
            else
                check_note(
                    Z, "event %" PRIu32 ":%" PRIu64 ": %s %s = %" PRId64 " in scenario %zu, the replay has %" PRId64,
                    rank, seq, what, text, v, k, want[k]);
            return;
        }
    }
}

/* ------------------------------------------------------------------ hooks of the reducers */

/* V in decimal at BUF; its length. (snprintf took a fifth of --polys.) */
static size_t put_dec(char *buf, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while (v /= 10);
    for (size_t i = 0; i < n; i++)
        buf[i] = d[n - 1 - i];
    return n;
}

/* "RANK:SEQ POLY" into the polynomial stream. */
static int put_poly(reducer *Z, uint32_t rank, uint64_t seq, const vt_poly *p)
{
    char line[1100];
    size_t n = put_dec(line, rank);
    line[n++] = ':';
    n += put_dec(line + n, seq);
    line[n++] = ' ';
    size_t k = vt_poly_format(p, line + n, 1024);
    n += k < 1024 ? k : 1023;   /* (snprintf's truncation, as the text always was) */
    line[n++] = '\n';
    if (vt__polys_put(&Z->polys, rank, line, n))
        return vt_error_set(Z->err, "cannot keep the polynomial lines in a temporary file: %s", strerror(errno));
    return 0;
}

/* Registers the atoms event e made (check mode) and checks d after it; with a poly
 * stream, puts "RANK:SEQ d" (the polynomial after the event) into it. */
static int check_event(void *arg, const vt_obs_event *e, const vt_poly *d, const vt_poly *after_base_atom)
{
    reducer *Z = arg;
    if (Z->want_polys && put_poly(Z, e->rank, e->seq, d))
        return -1;
    if (!Z->o->check)
        return 0;
    if (e->candidate && register_atom(Z, vt_var_delta(e->rank, e->seq), e->delta, e->rank, e->seq))
        return -1;
    if (after_base_atom && register_atom(Z, after_base_atom->var[0], e->base, e->rank, e->seq))
        return -1;
    if (d->nterms == 1 && d->nvars == 1 && d->c[0] == 0 &&
        (vt_var_eq(d->var[0], vt_var_overflow(e->rank, e->seq)) ||
         vt_var_eq(d->var[0], vt_var_probe(e->rank, e->seq))) &&
        register_atom(Z, d->var[0], e->d_after, e->rank, e->seq))
        return -1;
    check_poly(Z, d, e->d_after, e->rank, e->seq, "d");
    return 0;
}

/* The probe's own difference, known at the receive of its message: a second poly line
 * for its event, and checked against the value the probe's event registered. */
static int check_probe(void *arg, uint32_t rank, uint64_t ps, const vt_poly *after)
{
    reducer *Z = arg;
    if (Z->want_polys && put_poly(Z, rank, ps, after))
        return -1;
    if (!Z->o->check)
        return 0;
    const int64_t *want = atom_get(&Z->atoms, vt_var_probe(rank, ps), Z->nsc);
    if (want) {
        /* an overflow at the probe names the probe's own value */
        if (after->nterms == 1 && after->nvars == 1 && vt_var_eq(after->var[0], vt_var_overflow(rank, ps)) &&
            register_atom(Z, after->var[0], want, rank, ps))
            return -1;
        check_poly(Z, after, want, rank, ps, "the probe's d");
    }
    return 0;
}

/* ------------------------------------------------------------------ writing */

static int out_failed(rank_out *r, int rc)
{
    r->Z->failed = 1;
    return vt_error_set(r->Z->err, "%s: cannot write the reduced trace: %s", r->Z->o->out_dir, strerror(-rc));
}

/* A process holds at most this many bytes of rank files in memory (and a block more):
 * all of them, for a trace of that size, which is written only once the reduction is
 * known to be the smaller (format/stored.h); past it, rank files are written as their
 * blocks come and unlinked if the full trace is stored instead. */
#define HELD_MAX ((size_t)32 << 20)

/* R's bytes held in memory appended to its file, created with the first of them: one
 * open, one write and one close. */
static int write_held(rank_out *r)
{
    reducer *Z = r->Z;
    int fd = open(r->path, O_WRONLY | O_CLOEXEC | (r->created ? O_APPEND : O_CREAT | O_TRUNC), 0644);
    int rc = fd < 0 ? -errno : vt_write_all(fd, r->held.p, r->held.len);
    if (fd >= 0 && close(fd) && !rc)
        rc = -errno;
    Z->held -= r->held.len;
    r->written += r->held.len;
    vt_wbuf_free(&r->held);
    if (rc) {
        Z->failed = 1;
        return vt_error_set(Z->err, "%s: cannot write: %s", r->path, strerror(-rc));
    }
    r->created = 1;
    return 0;
}

/* R's held bytes grew from BEFORE: written when the process holds too many. */
static int held_grew(rank_out *r, size_t before)
{
    r->Z->held += r->held.len - before;
    return r->Z->held > HELD_MAX ? write_held(r) : 0;
}

/* The sink of a rank's reducer. */
static int out_record(void *arg, const vt_rrec *rec)
{
    rank_out *r = arg;
    if (r->Z->failed)
        return -1;
    size_t before = r->held.len;
    int rc = vt_rrec_out_put(&r->out, rec);
    return rc ? out_failed(r, rc) : held_grew(r, before);
}

/* ------------------------------------------------------------------ the observer */

static void on_publish(void *arg, uint32_t rank, uint64_t send_seq, void *ext)
{
    (void)send_seq;
    reducer *Z = arg;
    vt_rr_publish(&Z->ro[rank].rr, ext);
}

/* A sender's difference to the receiver's process (parallel): encoded (1, then
 * vt_poly_encode's bytes: a few for the common one), or as it is (0, then the struct)
 * when it does not encode (big). */
static size_t poly_pack(const void *ext, uint8_t *out)
{
    size_t n = vt_poly_encode(ext, out + 1);
    out[0] = n != 0;
    if (!n) {
        memcpy(out + 1, ext, sizeof(vt_poly));
        n = sizeof(vt_poly);
    }
    return n + 1;
}

static int poly_unpack(const uint8_t *in, size_t n, void *ext)
{
    size_t used;
    if (n > 1 && in[0] == 1)
        return vt_poly_decode(ext, in + 1, n - 1, &used) || used != n - 1 ? -1 : 0;
    if (n != 1 + sizeof(vt_poly) || in[0] != 0)
        return -1;
    memcpy(ext, in + 1, sizeof(vt_poly));
    return 0;
}

#define POLY_WIRE_MAX (1 + (VT_POLY_ENC_MAX > sizeof(vt_poly) ? VT_POLY_ENC_MAX : sizeof(vt_poly)))

/* The size of the communicator of the non-blocking collective e initiates (both groups
 * of an intercommunicator), 0 unknown. */
static uint32_t nbc_members(const vt_trace *t, const vt_obs_event *e)
{
    const vt_rank *rk = vt_trace_rank(t, e->rank);
    for (size_t i = 0; i < rk->ncomms; i++) {
        const vt_comm *c = &rk->comms[i];
        if (c->id == e->nbc_comm)
            return c->size + ((c->flags & 1) ? c->remote_size : 0);
    }
    return 0;
}

static int on_event(void *arg, const vt_obs_event *e, vt_error *err)
{
    reducer *Z = arg;
    return vt_rr_event(&Z->ro[e->rank].rr, e, e->initiates_nbc ? nbc_members(Z->t, e) : 0, err);
}

static void add_stats(vt_reduce_stats *st, const vt_rr_stats *s)
{
    st->events += s->events;
    st->records_in += s->calls;
    st->records_out += s->records_out;
    st->messages += s->messages;
    st->messages_kept += s->messages_kept;
    st->folded += s->folded;
    st->completions += s->completions;
    st->completions_kept += s->completions_kept;
    st->overflows += s->overflows;
}

/* ------------------------------------------------------------------ files */

static int write_file(const char *dir, const char *name, const char *magic, uint32_t value, const uint8_t *payload,
                      size_t len, unsigned type, int zstd_level, int *keep_fd, vt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return vt_error_set(err, "%s: cannot create: %s", path, strerror(errno));
    int rc = vt_file_header_write(fd, magic, value);
    if (!rc && payload)
        rc = vt_block_write(fd, (uint8_t)type, payload, len, 0, zstd_level);
    if (rc) {
        close(fd);
        return vt_error_set(err, "%s: cannot write: %s", path, strerror(-rc));
    }
    if (keep_fd) {
        *keep_fd = fd;
        return 0;
    }
    rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0);
    if (close(fd) || rc)
        return vt_error_set(err, "%s: cannot write: %s", path, rc ? strerror(-rc) : strerror(errno));
    return 0;
}

static int line_key_is(const char *l, const char *key)
{
    size_t n = strlen(key);
    return !strncmp(l, key, n) && l[n] == '=';
}

char *vt_reduce_config_text(const char *config, const vt_model_params *p)
{
    enum { NKEYS = 8 };
    static const char *const keys[NKEYS] = {"VTRACE_THRESHOLD", "VTRACE_CANDIDATES", "VTRACE_MODEL_L",
                                            "VTRACE_MODEL_G",   "VTRACE_MODEL_TRDV", "VTRACE_MODEL_M",
                                            "VTRACE_MODEL_K",   "VTRACE_MODEL_PBYTES"};
    char vals[NKEYS][64];
    snprintf(vals[0], sizeof vals[0], "%" PRId64 "ns", p->theta);
    snprintf(vals[1], sizeof vals[1], "%s", p->cand_calls ? "all" : "bursts");
    snprintf(vals[2], sizeof vals[2], "%" PRId64 "ns", p->L);
    snprintf(vals[3], sizeof vals[3], "%" PRId64 "ps", p->G_ps);
    snprintf(vals[4], sizeof vals[4], "%" PRId64, p->T_rdv);
    snprintf(vals[5], sizeof vals[5], "%d", p->m);
    snprintf(vals[6], sizeof vals[6], "%d", p->K);
    snprintf(vals[7], sizeof vals[7], "%d", p->pbytes);
    int have[NKEYS] = {0};
    have[7] = p->pbytes <= 0; /* no room limit: no line */
    size_t len = config ? strlen(config) : 0;
    char *out = malloc(len + NKEYS * 96 + 1);
    if (!out)
        return NULL;
    /* each model key where the configuration has it (a trace reduced at run time keeps its
     * text), the others after it */
    size_t o = 0;
    for (const char *l = config; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        int k = 0;
        while (k < NKEYS && !line_key_is(l, keys[k]))
            k++;
        if (k == NKEYS) {
            memcpy(out + o, l, n);
            o += n;
            if (!e)
                out[o++] = '\n';
        } else if (!have[k]) {
            o += (size_t)sprintf(out + o, "%s=%s\n", keys[k], vals[k]);
            have[k] = 1;
        }
        l += n;
    }
    for (int k = 0; k < NKEYS; k++)
        if (!have[k])
            o += (size_t)sprintf(out + o, "%s=%s\n", keys[k], vals[k]);
    out[o] = '\0';
    return out;
}

/* The GLOBAL payload with the new configuration text and the reduced flag. */
static int global_payload(const vt_trace *t, const vt_model_params *p, uint8_t **out, size_t *outlen, vt_error *err)
{
    uint8_t *raw;
    size_t len;
    if (vt_trace_raw_block(t, 0, VT_BLOCK_GLOBAL, &raw, &len, err))
        return -1;
    const uint8_t *q = raw, *end = raw + len;
    uint64_t sl[3];
    const uint8_t *str[3];
    int64_t sv;
    uint64_t u, nranks;
    for (int i = 0; i < 3; i++) {
        if (vt_get_uvar(&q, end, &sl[i]) || sl[i] > (uint64_t)(end - q))
            goto bad;
        str[i] = q;
        q += sl[i];
    }
    const uint8_t *rest = q;
    if (vt_get_uvar(&q, end, &nranks))
        goto bad;
    for (uint64_t r = 0; r < nranks; r++) {
        for (int i = 0; i < 4; i++)
            if (vt_get_svar(&q, end, &sv))
                goto bad;
        if (vt_get_uvar(&q, end, &u) || vt_get_uvar(&q, end, &u) || u > (uint64_t)(end - q))
            goto bad;
        q += u;
    }
    const uint8_t *flags_at = q;
    uint64_t flags;
    if (vt_get_uvar(&q, end, &flags))
        goto bad;
    char *cfg = vt_reduce_config_text(vt_trace_config(t), p);
    if (!cfg) {
        free(raw);
        return vt_error_set(err, "out of memory");
    }
    size_t cl = strlen(cfg);
    uint8_t *o = malloc(len + cl + 64), *w = o;
    if (!o) {
        free(cfg);
        free(raw);
        return vt_error_set(err, "out of memory");
    }
    w = vt_put_str(w, (const char *)str[0], sl[0]);
    w = vt_put_str(w, (const char *)str[1], sl[1]);
    w = vt_put_str(w, cfg, cl);
    memcpy(w, rest, (size_t)(flags_at - rest));
    w += flags_at - rest;
    w = vt_put_uvar(w, (flags & ~(uint64_t)VT_GLOBAL_STORED) | VT_GLOBAL_REDUCED);   /* (of a stored input) */
    memcpy(w, q, (size_t)(end - q));
    w += end - q;
    free(cfg);
    free(raw);
    *out = o;
    *outlen = (size_t)(w - o);
    return 0;
bad:
    free(raw);
    return vt_error_set(err, "%s/vtrace.defs: the GLOBAL block does not parse as this version's", vt_trace_dir(t));
}

static int open_outputs(reducer *Z)
{
    const char *dir = Z->o->out_dir;
    if (mkdir(dir, 0755) && errno != EEXIST)
        return vt_error_set(Z->err, "%s: cannot create the directory: %s", dir, strerror(errno));
    for (uint32_t r = Z->lo; r < Z->hi; r++) {
        const vt_rank *rk = vt_trace_rank(Z->t, r);
        rank_out *ro = &Z->ro[r];
        ro->fname = malloc((rk->nfuncs ? rk->nfuncs : 1) * sizeof *ro->fname);
        ro->flayout = malloc((rk->nfuncs ? rk->nfuncs : 1) * sizeof *ro->flayout);
        if (!ro->fname || !ro->flayout)
            return vt_error_set(Z->err, "out of memory");
        for (size_t i = 0; i < rk->nfuncs; i++) {
            ro->fname[i] = rk->funcs[i].name;
            ro->flayout[i] = rk->funcs[i].layout;
        }
        char name[32];
        snprintf(name, sizeof name, "rank-%06u.vte", r);
        /* a rank file that used the trace's table (1.5) uses it in the output too */
        size_t ntab;
        const vt_function *tab = vt_trace_functions(Z->t, &ntab);
        int shared = tab && rk->funcs == tab;
        /* the file is written once it is known to be kept (write_held), not before */
        uint8_t h[VT_FILE_HEADER_SIZE];
        vt_file_header_encode(h, VT_MAGIC_RANK, r);
        int rc = (ro->path = malloc(strlen(dir) + sizeof name + 1)) ? vt_wbuf_put(&ro->held, h, sizeof h) : -ENOMEM;
        if (!rc) {
            sprintf(ro->path, "%s/%s", dir, name);
            rc = vt_rrec_out_init_detached(&ro->out, &ro->held, Z->o->zstd_level, shared ? NULL : ro->fname,
                                           ro->flayout, rk->nfuncs);
            ro->out.pool = &Z->pool;
        }
        if (rc || (rc = held_grew(ro, 0)))
            return rc == -1 ? -1 : vt_error_set(Z->err, "%s/%s: cannot write: %s", dir, name, strerror(-rc));
        ro->comm_ids = malloc((rk->ncomms ? rk->ncomms : 1) * sizeof *ro->comm_ids);
        if (!ro->comm_ids)
            return vt_error_set(Z->err, "out of memory");
        for (size_t i = 0; i < rk->ncomms; i++)
            ro->comm_ids[i] = rk->comms[i].id;
        ro->ncomms = rk->ncomms;
        ro->out.comm_ids = rank_comm_ids;
        ro->out.comm_arg = ro;
    }
    return 0;
}

/* Rank R's last blocks, its RANKDEFS and END, held with the rest of its file (written
 * when the process holds too many), its file's bytes added to *BYTES. */
static int close_rank(reducer *Z, uint32_t r, uint64_t *bytes)
{
    rank_out *ro = &Z->ro[r];
    size_t before = ro->held.len;
    /* the profile's functions are named before RANKDEFS, as the run time names them */
    const vt_rank *rk = vt_trace_rank(Z->t, r);
    for (size_t i = 0; i < rk->nprofile; i++)
        vt_rrec_out_name(&ro->out, rk->profile[i].fn);
    int rc = Z->failed ? 0 : vt_rrec_out_flush(&ro->out);
    Z->st->records_stored += ro->out.index;
    if (Z->failed || rc)
        return rc ? out_failed(ro, rc) : -1;
    /* a rank file of an incomplete trace cut before any definitions stays so (no
     * readable record); one cut after them ends there, without END */
    if (rk->has_defs) {
        uint8_t *defs = NULL;
        size_t len, dlen;
        if (vt_trace_raw_block(Z->t, r, VT_BLOCK_RANKDEFS, &defs, &len, Z->err) ||
            /* the file written is 2.0's: an older input's communicator ids as 2.0 stores them */
            vt_trace_rankdefs_upgrade(Z->t, r, &defs, &len, Z->err)) {
            free(defs);
            return -1;
        }
        /* against the input's dictionary, as the run time compresses it (1.5) */
        const uint8_t *dict = vt_trace_dict(Z->t, &dlen);
        rc = vt_block_put(&ro->held, VT_BLOCK_RANKDEFS, defs, len, 0, vt_rrec_zstd_level(Z->o->zstd_level, len),
                          dict, dlen);
        free(defs);
        if (!rc && !rk->cut_at)
            rc = vt_block_put(&ro->held, VT_BLOCK_END, NULL, 0, 0, 0, NULL, 0);
    }
    if (rc)
        return vt_error_set(Z->err, "%s/rank-%06u.vte: cannot write: %s", Z->o->out_dir, r, strerror(-rc));
    *bytes += ro->written + ro->held.len;
    return held_grew(ro, before);
}

/* The rank files of [lo, hi) finished, and vtrace.defs (process 0); *BYTES: the bytes
 * this process wrote, as vt_trace_bytes counts them. */
static int close_outputs(reducer *Z, uint64_t *bytes)
{
    const char *dir = Z->o->out_dir;
    for (uint32_t r = Z->lo; r < Z->hi; r++)
        if (close_rank(Z, r, bytes))
            return -1;
    if (Z->par && Z->par->me != 0)
        return 0;
    uint8_t *g = NULL;
    size_t glen = 0;
    if (global_payload(Z->t, Z->p, &g, &glen, Z->err))
        return -1;
    int fd = -1;
    int rc = write_file(dir, "vtrace.defs", VT_MAGIC_DEFS, Z->nranks, g, glen, VT_BLOCK_GLOBAL, 0, &fd, Z->err);
    free(g);
    if (rc)
        return rc;
    /* the trace's function table (1.5), as the run time writes it */
    size_t ntab;
    const vt_function *tab = vt_trace_functions(Z->t, &ntab);
    const char **nm = tab ? malloc((ntab ? ntab : 1) * sizeof *nm) : NULL, **ly = tab ? malloc((ntab ? ntab : 1) * sizeof *ly) : NULL;
    rc = tab && (!nm || !ly) ? -ENOMEM : 0;
    for (size_t i = 0; !rc && tab && i < ntab; i++) {
        nm[i] = tab[i].name;
        ly[i] = tab[i].layout;
    }
    if (!rc && tab)
        rc = vt_funcs_block_write(fd, nm, ly, ntab, NULL, 1, 3);
    free(nm);
    free(ly);
    size_t dlen;
    const uint8_t *dict = vt_trace_dict(Z->t, &dlen);
    if (!rc && dict)
        rc = vt_block_write(fd, VT_BLOCK_DICT, dict, dlen, 0, 3);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0);
    off_t end = rc ? 0 : lseek(fd, 0, SEEK_CUR);
    if (!rc && end < 0)
        rc = -errno;
    if (close(fd) && !rc)
        rc = -errno;
    *bytes += (uint64_t)end;
    return rc ? vt_error_set(Z->err, "%s/vtrace.defs: cannot write: %s", dir, strerror(-rc)) : 0;
}

/* One reducer per rank, writing into its rank file when there is an output; the check
 * and the polynomial stream hooked in when asked for. */
static int start_reducers(reducer *Z)
{
    const vt_rr_hooks hooks = {.event = check_event, .probe = check_probe, .arg = Z};
    int hooked = Z->o->check || Z->want_polys;
    for (uint32_t r = 0; r < Z->nranks; r++) {
        Z->ro[r].Z = Z;
    }
    for (uint32_t r = Z->lo; r < Z->hi; r++) {
        rank_out *ro = &Z->ro[r];
        const vt_rr_sink sink = {.record = Z->o->out_dir ? out_record : NULL, .arg = ro};
        if (vt_rr_init(&ro->rr, r, (unsigned)Z->p->m, (unsigned)Z->p->K, Z->o->broken, &sink,
                       hooked ? &hooks : NULL))
            return vt_error_set(Z->err, "model limits m=%d, K=%d out of range (m 1-7, K 1-8)", Z->p->m, Z->p->K);
        vt_sym_set_room(&ro->rr.sym, (unsigned)Z->p->pbytes);
    }
    return 0;
}

/* The local time whose global time is G on rank R (the clock map is monotonic; the
 * clock-condition repair may shift it), or INT64_MIN when none maps exactly. */
static int64_t local_time(const vt_trace *t, uint32_t r, int64_t g)
{
    int64_t l = g - (vt_global_time(t, r, g) - g);
    for (int i = 0; i < 4; i++) {
        int64_t e = g - vt_global_time(t, r, l);
        if (!e)
            return l;
        l += e;
    }
    return INT64_MIN;
}

/* A rank of an incomplete trace that the replay stopped in a call ends, as there, at
 * that call's enter (MEASURED: where the replay ended each rank). */
static int finish_reducers(reducer *Z, const int64_t *measured)
{
    for (uint32_t r = Z->lo; r < Z->hi; r++) {
        int64_t stop = vt_trace_rank(Z->t, r)->cut_at ? local_time(Z->t, r, measured[r]) : INT64_MIN;
        if (vt_rr_finish(&Z->ro[r].rr, stop))
            return -1;
        add_stats(Z->st, &Z->ro[r].rr.stats);
    }
    return 0;
}

/* The statistics summed over the processes (each counted its ranks; *BYTES: the bytes
 * each wrote). */
static int sum_stats(const vt_par_comm *pc, vt_reduce_stats *st, uint64_t *bytes)
{
    int64_t v[11] = {(int64_t)st->events, (int64_t)st->records_in, (int64_t)st->records_out,
                     (int64_t)st->records_stored, (int64_t)st->messages, (int64_t)st->messages_kept,
                     (int64_t)st->folded, (int64_t)st->completions, (int64_t)st->completions_kept,
                     (int64_t)st->overflows, (int64_t)*bytes};
    if (pc->sum(pc->arg, v, 11))
        return -1;
    *bytes = (uint64_t)v[10];
    uint64_t *f[10] = {&st->events, &st->records_in, &st->records_out, &st->records_stored, &st->messages,
                       &st->messages_kept, &st->folded, &st->completions, &st->completions_kept, &st->overflows};
    for (int i = 0; i < 10; i++)
        *f[i] = (uint64_t)v[i];
    return 0;
}

/* OUT, once every process has closed its rank files (BYTES: the reduced trace's, summed):
 * the reduced trace, its files held in memory written; or, when it is no smaller (bytes
 * or records), the full trace in its place, marked stored (format/stored.h), copied by
 * process 0 without writing them. A copy that fails leaves the reduced trace (*STORE_FAILED
 * set on process 0, its error in Z->err). Every process learns how the copy went. */
static int finish_output(reducer *Z, uint64_t bytes, int *store_failed)
{
    const vt_reduce_opts *o = Z->o;
    int64_t failed = 0;
    if (!o->no_store && (bytes > vt_trace_bytes(Z->t) || Z->st->records_stored > vt_trace_nrecords(Z->t))) {
        char why[sizeof Z->err->msg];
        uint64_t stored_bytes = 0; /* (the store's count: its files are not stat'ed again) */
        if ((!Z->par || Z->par->me == 0) &&
            vt_trace_store(vt_trace_dir(Z->t), o->out_dir, &stored_bytes, why, sizeof why)) {
            vt_error_set(Z->err, "%s (the reduced trace, %llu bytes, is larger than the full one)", why,
                         (unsigned long long)bytes);
            *store_failed = failed = 1;
        }
        if (Z->par && Z->par->sum(Z->par->arg, &failed, 1))
            return -1;
        if (!failed) {
            Z->st->stored = 1;
            if (!Z->par || Z->par->me == 0)
                Z->st->bytes_out = stored_bytes;
            return 0;
        }
    }
    int64_t bad = 0;
    for (uint32_t r = Z->lo; r < Z->hi && !bad; r++)
        if (Z->ro[r].held.len)
            bad = write_held(&Z->ro[r]) != 0;
    if (Z->par && Z->par->sum(Z->par->arg, &bad, 1))
        bad = 1;
    return bad ? -1 : 0;
}

/* One reduction: serial (par NULL), or this process's share of a parallel one, which
 * returns 0 or -1 on every process alike. */
static int reduce_run(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                      const vt_reduce_opts *o, const vt_par_comm *par, vt_reduce_stats *st, int *store_failed,
                      vt_error *err)
{
    memset(st, 0, sizeof *st);
    reducer Z = {.t = t, .p = p, .o = o, .st = st, .nsc = o->check ? nsc : 0, .nranks = vt_trace_nranks(t), .err = err,
                 .par = par, .hi = vt_trace_nranks(t), .want_polys = o->polys || (par && o->polys_on_0)};
    Z.pool.fd = -1;
    if (par) {
        Z.lo = (uint32_t)((uint64_t)par->me * Z.nranks / (uint32_t)par->nproc);
        Z.hi = (uint32_t)((uint64_t)(par->me + 1) * Z.nranks / (uint32_t)par->nproc);
    }
    Z.ro = calloc(Z.nranks ? Z.nranks : 1, sizeof *Z.ro);
    int rc = -1, prc;
    uint64_t bytes = 0;   /* of the reduced trace, as the files were closed */
    /* (parallel: the replay agrees on its own outcome; what comes before and after it
     * may fail on one process only, and every process must learn it) */
    int64_t bad = 0;
    if (!Z.ro)
        bad = vt_error_set(err, "out of memory");
    else if (o->out_dir && (prc = vt_rrec_pool_open(&Z.pool)) != 0)
        bad = vt_error_set(err, "cannot create a temporary file: %s", strerror(-prc));
    else if (Z.want_polys && vt__polys_open(&Z.polys))
        bad = vt_error_set(err, "cannot create a temporary file: %s", strerror(errno));
    else
        bad = start_reducers(&Z) || (o->out_dir && open_outputs(&Z));
    if (par && par->sum(par->arg, &bad, 1))
        bad = 1;
    if (bad)
        goto out;
    vt_observer obs = {.arg = &Z, .ext_size = sizeof(vt_poly), .publish = on_publish, .event = on_event,
                       .ext_wire_max = POLY_WIRE_MAX, .ext_pack = poly_pack, .ext_unpack = poly_unpack};
    vt_replay_result res;
    if (par ? vt_replay_par_observe(t, p, sc, 0, &obs, par, &res, err)
            : vt_replay_observe(t, m, p, sc, o->check ? nsc : 0, &obs, &res, err))
        goto out;
    st->par_rounds = res.par_rounds;
    st->par_bytes = res.par_bytes;
    bad = finish_reducers(&Z, res.measured) || (o->out_dir && close_outputs(&Z, &bytes));
    vt_replay_result_free(&res);
    if (par && par->sum(par->arg, &bad, 1))
        bad = 1;
    if (bad || (par && sum_stats(par, st, &bytes)))
        goto out;
    if (Z.want_polys && vt__polys_write(&Z.polys, o->polys, par, &st->par_rounds, &st->par_bytes, err))
        goto out;
    if (o->out_dir && finish_output(&Z, bytes, store_failed))
        goto out;
    rc = 0;
out:
    /* what the reduced trace takes on disk, as vt_trace_bytes counts the full one: its
     * files' sizes (summed as they were closed, not by opening the trace again) */
    if (rc == 0 && o->out_dir && (!par || par->me == 0)) {
        st->bytes_reduced = bytes;
        if (!st->stored)
            st->bytes_out = bytes;
    }
    st->bytes_in = vt_trace_bytes(t);
    for (uint32_t r = 0; Z.ro && r < Z.nranks; r++) {
        vt_wbuf_free(&Z.ro[r].held);
        vt_rrec_out_free(&Z.ro[r].out);
        free(Z.ro[r].fname);
        free(Z.ro[r].flayout);
        free(Z.ro[r].comm_ids);
        free(Z.ro[r].path);
        vt_rr_free(&Z.ro[r].rr);
    }
    free(Z.ro);
    vt_rrec_pool_close(&Z.pool);
    vt__polys_close(&Z.polys);
    free(Z.atoms.keys);
    free(Z.atoms.at);
    free(Z.atoms.vals);
    return rc;
}

int vt_reduce(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              const vt_reduce_opts *o, vt_reduce_stats *st, vt_error *err)
{
    memset(st, 0, sizeof *st);
    if (vt_trace_is_reduced(t))
        return vt_error_set(err, "%s: already a reduced trace", vt_trace_dir(t));
    const vt_par_comm *pc = o->par;
    int store_failed = 0;   /* (the reduced trace stays: an error of process 0's) */
    if (!pc || m || o->check)   /* (m: its pairs are the replay's) */
        return reduce_run(t, m, p, sc, nsc, o, NULL, st, &store_failed, err) || store_failed ? -1 : 0;
    if (reduce_run(t, NULL, p, sc, nsc, o, pc, st, &store_failed, err) == 0)
        return store_failed ? -1 : 0;
    /* Not finished in parallel: process 0 reduces alone (the serial answer or error) */
    int64_t v = 0;
    int rc = -1;
    err->msg[0] = 0;
    if (pc->me == 0) {
        rc = reduce_run(t, NULL, p, sc, nsc, o, NULL, st, &store_failed, err);
        v = rc != 0;
        rc = rc || store_failed ? -1 : 0;
    }
    if (pc->sum(pc->arg, &v, 1))
        v = 1;
    return pc->me == 0 ? rc : v ? -1 : 0;
}
