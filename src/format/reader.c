/* Trace reader: opening a trace (doc/format.md), its global definitions (vtrace.defs)
 * and then every rank file through reader_rank.c; closing it; the accessors of the
 * definitions and the global clock (the offsets of the two synchronisations, plus the
 * correction vt_trace_set_time_shift() installs). Records are decoded by the cursor
 * (reader_cursor.c). Calls reader_io.c and reader_rank.c. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/reader_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ global definitions */

static int parse_global(vt_trace *t, pp *r, uint32_t hdr_nranks)
{
    uint64_t n;
    if (vt__pp_str(r, &t->ar, &t->version, "vtrace version string") ||
        vt__pp_str(r, &t->ar, &t->mpi_version, "MPI library version string"))
        return -1;
    /* where the configuration is, for vt_trace_config_error */
    t->config_path = r->path;
    t->config_compressed = r->compressed;
    t->config_pos = (size_t)(r->p - r->begin);
    t->config_off = r->compressed ? r->block_off : r->file_off + t->config_pos;
    if (vt__pp_str(r, &t->ar, &t->config, "configuration string"))
        return -1;
    /* the run-time reduction decided with the offsets measured at MPI_Init (it runs
     * before the second synchronisation): analyses must use the same clock */
    t->init_clock = t->config && strstr(t->config, "VTRACE_MODEL_CLOCK=init\n") != NULL;
    const uint8_t *at = r->p;
    if (pp_count(r, &n, 6, "number of ranks"))
        return -1;
    if (n != hdr_nranks) {
        r->p = at;
        return vt__pp_err(r, "expected %u ranks (as in the file header), found %llu", hdr_nranks,
                          (unsigned long long)n);
    }
    t->nranks = hdr_nranks;
    t->ranks = calloc(n ? n : 1, sizeof *t->ranks);
    t->priv = calloc(n ? n : 1, sizeof *t->priv);
    if (!t->ranks || !t->priv)
        return vt__pp_nomem(r, "the rank table");
    for (uint32_t i = 0; i < t->nranks; i++) {
        vt_rank *rk = &t->ranks[i];
        uint64_t same;
        char *host;
        rk->rank = i;
        if (pp_svar(r, &rk->clock.t1, "local time of the first clock synchronisation") ||
            pp_svar(r, &rk->clock.off1, "offset at the first clock synchronisation") ||
            pp_svar(r, &rk->clock.t2, "local time of the second clock synchronisation") ||
            pp_svar(r, &rk->clock.off2, "offset at the second clock synchronisation"))
            return -1;
        at = r->p;
        if (pp_uvar(r, &same, "same-clock flag"))
            return -1;
        if (same > 1) {
            r->p = at;
            return vt__pp_err(r, "expected same-clock flag 0 or 1, found %llu", (unsigned long long)same);
        }
        rk->clock.same_clock = (int)same;
        if (vt__pp_str(r, &t->ar, &host, "hostname"))
            return -1;
        rk->global_hostname = host;
    }
    if (pp_uvar(r, &t->flags, "global flags"))
        return -1;
    return vt__pp_finish(r, t->defs_version, "GLOBAL");
}

static int open_defs(vt_trace *t, const src_t *s, vt_error *err)
{
    uint32_t nranks;
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    int rc = -1;
    if (vt__read_file_header(s, VT_MAGIC_DEFS, "VTRACE\\0D", &t->defs_version, &nranks, err))
        return -1;
    if (nranks == 0)
        return vt__seterr(err, s->path, 12, "expected a number of ranks of at least 1, found 0");
    uint64_t off = VT_FILE_HEADER_SIZE;
    if (vt__load_block(s, off, VT_BLOCK_GLOBAL, &h, &stored, &raw, &data, err))
        goto out;
    pp r;
    pp_init(&r, data, h.raw_len, s->path, off, h.codec != VT_CODEC_RAW, err);
    if (parse_global(t, &r, nranks))
        goto out;
    off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    /* 1.5: the trace's function table and the dictionary of codec 2, once each */
    int have_funcs = 0, have_dict = 0;
    while (t->defs_version >= VT_VERSION(1, 5)) {
        if (vt__read_block_header(s, off, &h, err))
            goto out;
        if (h.type == VT_BLOCK_END)
            break;
        if ((h.type != VT_BLOCK_FUNCS || have_funcs) && (h.type != VT_BLOCK_DICT || have_dict)) {
            vt__seterr(err, s->path, off + 4, "expected %s%sEND after GLOBAL, found a %s block (type %u)",
                       have_funcs ? "" : "FUNCS, ", have_dict ? "" : "DICT or ", vt__block_type_name(h.type), h.type);
            goto out;
        }
        if (vt__load_payload(s, off, &h, &stored, &raw, NULL, &data, err))
            goto out;
        if (h.type == VT_BLOCK_FUNCS) {
            have_funcs = 1;
            pp_init(&r, data, h.raw_len, s->path, off, h.codec != VT_CODEC_RAW, err);
            if (vt__parse_trace_funcs(t, &r))
                goto out;
        } else {
            have_dict = 1;
            if (!h.raw_len) {
                vt__seterr(err, s->path, off + 12, "expected a DICT block of at least one byte, found an empty one");
                goto out;
            }
            t->dict = vt__arena_alloc(&t->ar, h.raw_len);
            if (!t->dict) {
                vt__seterr(err, s->path, off, "expected memory for the dictionary, found none");
                goto out;
            }
            memcpy(t->dict, data, h.raw_len);
            t->dict_len = h.raw_len;
            (void)vt__dict_init(&t->zdict, t->dict, t->dict_len); /* (-1: decoded with the raw bytes) */
        }
        off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    }
    if (vt__read_end(s, off, &stored, &raw, err))
        goto out;
    t->bytes += s->size;
    rc = 0;
out:
    free(stored.p);
    free(raw.p);
    return rc;
}

/* ------------------------------------------------------------------ opening and closing */

static char *path_join(arena *a, const char *dir, const char *name)
{
    if (!dir)
        return vt__arena_strndup(a, name, strlen(name));
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = dl > 0 && dir[dl - 1] != '/';
    char *p = vt__arena_alloc(a, dl + (size_t)slash + nl + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    if (slash)
        p[dl] = '/';
    memcpy(p + dl + (size_t)slash, name, nl + 1);
    return p;
}

/* The event blocks of small rank files kept from when the trace is opened: at 16K ranks
 * a rank file is a few hundred bytes, and its cursor would stat it, open it, read a block
 * header and a payload and close it again (5 system calls and 600 bytes a rank). Its
 * RANKDEFS block is kept with them where it fits too: `vtrace reduce` and `vtrace
 * compensate` copy every rank's (vt_trace_raw_block), which would open the file again
 * (openat, fstat, two pread, close). Files whose kept bytes take at most KEEP_FILE, while
 * the trace keeps at most KEEP_TRACE. */
#define KEEP_FILE ((uint64_t)16 << 10)
#define KEEP_TRACE ((uint64_t)32 << 20)

/* What the trace keeps at most: KEEP_TRACE, or for the tests VTRACE_TEST_KEEP bytes (0:
 * nothing kept; test/model/reduce_kept.sh reduces one trace with and without). */
static uint64_t keep_budget(void)
{
    const char *v = getenv("VTRACE_TEST_KEEP");
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end ? (uint64_t)n : KEEP_TRACE;
}

/* Whether N of rank R's first bytes may be kept, with KEPT kept already. */
static int keep_fits(const rank_priv *rp, const src_t *s, uint64_t n, uint64_t kept, uint64_t budget)
{
    return s->win && n <= s->win_len && n <= KEEP_FILE && kept + n <= budget && rp->ev_begin < n;
}

/* Rank R's first bytes, read at once into S's window, kept in the trace: up to the end of
 * its RANKDEFS block where that fits, else up to ev_end (its event blocks). */
static void trace_keep(vt_trace *t, uint32_t r, const src_t *s, uint64_t *kept, uint64_t budget)
{
    rank_priv *rp = &t->priv[r];
    uint64_t n = rp->ev_end;
    vt_block_header h;
    /* (the header was read and checked when the rank was opened: from the window) */
    if (t->ranks[r].has_defs && s->win && rp->ev_end + VT_BLOCK_HEADER_SIZE <= s->win_len &&
        vt__read_block_header(s, rp->ev_end, &h, NULL) == 0 &&
        keep_fits(rp, s, rp->ev_end + VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len, *kept, budget))
        n = rp->ev_end + VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (!keep_fits(rp, s, n, *kept, budget))
        return;
    uint8_t *p = vt__arena_alloc(&t->ar, (size_t)n);
    if (!p)
        return; /* (read from the file) */
    memcpy(p, s->win, (size_t)n);
    rp->kept = p;
    rp->kept_len = (uint32_t)n;
    *kept += n;
}

static int trace_load(vt_trace *t, vt_error *err)
{
    const char *dir = t->mem ? NULL : t->dir;
    char *path = path_join(&t->ar, dir, "vtrace.defs");
    if (!path)
        return vt__seterr(err, "vtrace.defs", 0, "expected vtrace.defs, found no memory to open it");
    t->defs_path = path;
    if (dir)
        vt__fd_pool_dir(t->pool, dir);
    src_t s;
    if (vt__trace_src_open(t, path, "vtrace.defs", &s, "the global definitions file vtrace.defs", err))
        return -1;
    int rc = open_defs(t, &s, err);
    vt__src_close(&s);
    if (rc)
        return -1;
    funcs_cache fc = {0};
    buf pre = {0}; /* each rank file's beginning */
    uint64_t kept = 0, budget = keep_budget();
    for (uint32_t r = 0; r < t->nranks && rc == 0; r++) {
        char name[32];
        vt__rank_file_name(name, r);
        path = path_join(&t->ar, dir, name);
        if (!path) {
            rc = vt__seterr(err, name, 0, "expected %s, found no memory to open it", name);
            break;
        }
        char what[64];
        snprintf(what, sizeof what, "the rank file of rank %u", r);
        if (vt__trace_src_open(t, path, name, &s, what, err) || vt__src_prefetch(&s, &pre, 64 << 10, err)) {
            vt__src_close(&s);
            rc = -1;
            break;
        }
        rc = vt__open_rank(t, r, &s, &fc, err);
        if (rc == 0)
            trace_keep(t, r, &s, &kept, budget);
        vt__src_close(&s);
    }
    free(fc.payload);
    free(pre.p);
    /* a rank whose run did not end in MPI_Finalize, or whose file is cut, is incomplete,
     * and so is the trace (analyses then match what they can: VT_MATCH_PARTIAL) */
    for (uint32_t r = 0; r < t->nranks && rc == 0; r++) {
        vt_rank *rk = &t->ranks[r];
        if (!rk->nblocks && (t->flags & VT_GLOBAL_REDUCED))
            rk->reduced = 1; /* no records: the kind vtrace.defs says */
        if (rk->cut_at || rk->end_reason != VT_END_FINALIZE || rk->write_errno)
            rk->flags |= VT_RANK_INCOMPLETE;
        if (rk->flags & VT_RANK_INCOMPLETE)
            t->flags |= VT_GLOBAL_INCOMPLETE;
    }
    if (t->flags & VT_GLOBAL_RUNNING)
        t->flags |= VT_GLOBAL_INCOMPLETE;
    return rc;
}

static int trace_new(vt_trace **out, vt_error *err, const char *dir)
{
    *out = NULL;
    vt_trace *t = calloc(1, sizeof *t);
    if (!t)
        return vt__seterr(err, dir, 0, "expected a trace, found no memory to open it");
    t->dir = strdup(dir);
    t->pool = vt__fd_pool_new();
    if (!t->dir || !t->pool) {
        vt__fd_pool_free(t->pool);
        free(t->dir);
        free(t);
        return vt__seterr(err, dir, 0, "expected a trace, found no memory to open it");
    }
    *out = t;
    return 0;
}

int vt_trace_open(const char *dir, vt_trace **out, vt_error *err)
{
    vt_trace *t;
    if (!out)
        return vt__seterr(err, dir, 0, "expected an output pointer, found NULL");
    *out = NULL;
    if (!dir)
        return vt__seterr(err, "(null)", 0, "expected a trace directory, found NULL");
    if (trace_new(&t, err, dir))
        return -1;
    if (trace_load(t, err)) {
        vt_trace_close(t);
        return -1;
    }
    *out = t;
    return 0;
}

int vt_trace_open_mem(const vt_mem_file *files, size_t nfiles, vt_trace **out, vt_error *err)
{
    vt_trace *t;
    if (!out)
        return vt__seterr(err, "(memory)", 0, "expected an output pointer, found NULL");
    *out = NULL;
    if (trace_new(&t, err, ""))
        return -1;
    static const vt_mem_file none = {NULL, NULL, 0};
    t->mem = files && nfiles ? files : &none;
    t->nmem = files ? nfiles : 0;
    if (trace_load(t, err)) {
        vt_trace_close(t);
        return -1;
    }
    *out = t;
    return 0;
}

void vt_trace_close(vt_trace *t)
{
    if (!t)
        return;
    vt__fd_pool_free(t->pool);
    vt__dict_free(&t->zdict);
    vt__strtab_free(&t->callsite_strs);
    vt__arena_free(&t->ar);
    free(t->ranks);
    free(t->ranges);
    free(t->priv);
    free(t->dir);
    free(t);
}

/* ------------------------------------------------------------------ accessors */

uint32_t vt_trace_nranks(const vt_trace *t) { return t ? t->nranks : 0; }
const char *vt_trace_dir(const vt_trace *t) { return t && t->dir ? t->dir : ""; }
const char *vt_trace_version(const vt_trace *t) { return t && t->version ? t->version : ""; }
const char *vt_trace_mpi_version(const vt_trace *t) { return t && t->mpi_version ? t->mpi_version : ""; }
const char *vt_trace_config(const vt_trace *t) { return t && t->config ? t->config : ""; }

int vt_trace_config_error(const vt_trace *t, vt_error *err, const char *fmt, ...)
{
    char msg[VT_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!t || !t->config_path)
        return vt_error_set(err, "%s", msg);
    if (t->config_compressed)
        return vt__seterr(err, t->config_path, t->config_off,
                          "%s (in the configuration string, at byte %zu of the decoded payload of the zstd block at this "
                          "offset)", msg, t->config_pos);
    return vt__seterr(err, t->config_path, t->config_off, "%s (in the configuration string)", msg);
}
uint64_t vt_trace_flags(const vt_trace *t) { return t ? t->flags : 0; }

int vt_rank_status(const vt_trace *t, uint32_t rank, char *out, size_t len)
{
    const vt_rank *rk = t && rank < t->nranks ? &t->ranks[rank] : NULL;
    if (!len)
        return rk && (rk->flags & VT_RANK_INCOMPLETE);
    out[0] = '\0';
    if (!rk)
        return 0;
    size_t n = 0;
#define SAY(...) \
    do { \
        if (n < len) \
            n += (size_t)snprintf(out + n, len - n, __VA_ARGS__); \
    } while (0)
    switch (rk->end_reason) {
    case VT_END_FINALIZE:
        if (!rk->cut_at)
            SAY("ended in MPI_Finalize");
        break;
    case VT_END_SIGNAL:
        SAY("killed by signal %lld (%s)", (long long)rk->end_detail,
            rk->end_detail > 0 && rk->end_detail < 65 ? strsignal((int)rk->end_detail) : "unknown");
        break;
    case VT_END_ABORT:
        SAY("MPI_Abort with code %lld", (long long)rk->end_detail);
        break;
    case VT_END_EXIT:
        SAY("exited without MPI_Finalize (status %lld)", (long long)rk->end_detail);
        break;
    default:
        break;
    }
    if (rk->cut_at) {
        if (rk->cut_at == rk->file_bytes)
            SAY("%sno end after its last flushed block (byte %llu)", n ? "; " : "", (unsigned long long)rk->cut_at);
        else
            SAY("%scut short at byte %llu of %llu", n ? "; " : "", (unsigned long long)rk->cut_at,
                (unsigned long long)rk->file_bytes);
        if (!n || rk->end_reason == VT_END_RUNNING)
            SAY(" (killed by SIGKILL, still running or out of disk space)");
        if (rk->has_defs && rk->lost_bytes)
            SAY("; read up to its last definitions, the %llu bytes after them are not",
                (unsigned long long)rk->lost_bytes);
        else if (!rk->has_defs && rk->lost_bytes)
            SAY("; no definitions were written: none of its %llu bytes of records is readable",
                (unsigned long long)rk->lost_bytes);
        else if (!rk->has_defs)
            SAY("; nothing was flushed");
    }
    if (rk->write_errno)
        SAY("%swriting the trace failed after %llu bytes (%s); recording stopped there", n ? "; " : "",
            (unsigned long long)rk->write_at, strerror((int)rk->write_errno));
    else if ((rk->flags & VT_RANK_INCOMPLETE) && rk->end_reason == VT_END_FINALIZE && !rk->cut_at)
        SAY("; recording stopped early");
    if (rk->has_defs && (rk->flags & VT_RANK_INCOMPLETE))
        SAY("; last record at %.6f s", (double)(rk->fini_time - rk->init_time) * 1e-9);
#undef SAY
    return (rk->flags & VT_RANK_INCOMPLETE) != 0;
}
uint64_t vt_trace_bytes(const vt_trace *t) { return t ? t->bytes : 0; }
uint64_t vt_trace_nrecords(const vt_trace *t) { return t ? t->nrecords : 0; }

const vt_rank *vt_trace_rank(const vt_trace *t, uint32_t rank)
{
    return t && rank < t->nranks ? &t->ranks[rank] : NULL;
}

const vt_function *vt_trace_functions(const vt_trace *t, size_t *n)
{
    *n = t->nfuncs;
    return t->funcs;
}

const uint8_t *vt_trace_dict(const vt_trace *t, size_t *len)
{
    *len = t->dict ? t->dict_len : 0;
    return t->dict;
}

const vt_function *vt_trace_function(const vt_trace *t, uint32_t rank, int64_t fn)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    return r && fn >= 0 && (uint64_t)fn < r->nfuncs ? &r->funcs[fn] : NULL;
}

const vt_callsite *vt_trace_callsite(const vt_trace *t, uint32_t rank, int64_t index)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    return r && index >= 0 && (uint64_t)index < r->ncallsites ? &r->callsites[index] : NULL;
}

const vt_comm *vt_trace_comm(const vt_trace *t, uint32_t rank, int64_t index)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    return r && index >= 0 && (uint64_t)index < r->ncomms ? &r->comms[index] : NULL;
}

const vt_file *vt_trace_file(const vt_trace *t, uint32_t rank, int64_t index)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    return r && index >= 0 && (uint64_t)index < r->nfiles ? &r->files[index] : NULL;
}

int vt_trace_is_reduced(const vt_trace *t)
{
    if (!t || t->nranks == 0)
        return 0;
    for (uint32_t r = 0; r < t->nranks; r++)
        if (!t->ranks[r].reduced)
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ the global clock */

void vt_trace_set_time_shift(vt_trace *t, vt_time_shift_fn fn, const void *arg)
{
    if (t) {
        t->shift = fn;
        t->shift_arg = arg;
    }
}

int vt_global_offset(const vt_trace *t, uint32_t rank, int64_t *off)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    if (!t || t->shift)
        return 0;
    if (!r || r->clock.same_clock)
        *off = 0;
    else if (r->clock.t2 <= r->clock.t1 || t->init_clock || r->clock.off1 == r->clock.off2)
        *off = r->clock.off1;
    else
        return 0;
    return 1;
}

int64_t vt_global_time(const vt_trace *t, uint32_t rank, int64_t local_ns)
{
    const vt_rank *r = vt_trace_rank(t, rank);
    /* the clock-condition repair, added after the offsets (0 when none is installed) */
    int64_t fix = t && t->shift ? t->shift(t->shift_arg, rank, local_ns) : 0;
    if (!r || r->clock.same_clock)
        return (int64_t)((uint64_t)local_ns + (uint64_t)fix);
    const vt_clock *c = &r->clock;
    int64_t off;
    if (c->t2 <= c->t1 || local_ns <= c->t1 || t->init_clock) {
        off = c->off1;
    } else if (local_ns >= c->t2) {
        off = c->off2;
    } else {
        /* off1 + (off2 - off1) * (t - t1) / (t2 - t1), without overflow: each factor is
         * below 2^64 in magnitude, so the product fits an unsigned 128-bit integer. The
         * 128-bit division is a library call (twice a record): only when the product
         * needs it (offsets drift by microseconds, not seconds). */
        __int128 d = (__int128)c->off2 - c->off1;
        unsigned __int128 ad = (unsigned __int128)(d < 0 ? -d : d), mag;
        uint64_t x = (uint64_t)local_ns - (uint64_t)c->t1, span = (uint64_t)c->t2 - (uint64_t)c->t1, p;
        if (ad <= UINT64_MAX && !__builtin_mul_overflow((uint64_t)ad, x, &p))
            mag = p / span;
        else
            mag = ad * x / span;
        off = (int64_t)(c->off1 + (d < 0 ? -(__int128)mag : (__int128)mag));
    }
    return (int64_t)((uint64_t)local_ns + (uint64_t)off + (uint64_t)fix);
}

