/* vtrace synth's writer: a trace directory as the run time writes one (doc/format.md):
 * one buffer of records per rank in one slab, appended to the rank's file as an EVENTS
 * or EVENTS_COLS block when it fills. With many ranks a file is opened for each block
 * and closed after it, so no more than one descriptor is open at a time. */
#include "vt_config.h"
#include "tools/synth.h"
#include "format/blockio.h"
#include "format/commid.h"
#include "format/evcols.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const fn_name[SYN_NFN] = {"MPI_Init",      "MPI_Finalize", "MPI_Isend", "MPI_Irecv",
                                             "MPI_Waitall",   "MPI_Allreduce", "MPI_Send", "MPI_Recv"};
static const char *const fn_layout[SYN_NFN] = {"", "", "cptbr", "cr", "k", "coqbB", "cptb", "cPTB"};
static const char *const site_sym[SYN_NSITES] = {"main",          "main",          "exchange_post_recv",
                                                 "exchange_send", "exchange_wait", "residual",
                                                 "stage_send",    "stage_recv",    "task_send",
                                                 "task_recv"};

/* Keep descriptors open up to this many ranks; above it, open one per block. */
#define OPEN_RANKS_MAX 256
/* Memory for all the ranks' buffers together. */
#define SLAB_BYTES (32u << 20)
#define BLOCK_MIN 512u
#define BLOCK_MAX (1u << 20)

typedef struct syn_prof {
    uint64_t calls, time, bytes;
} syn_prof;

/* One rank: what its next record and its RANKDEFS need. */
typedef struct syn_rank {
    uint32_t len;           /* bytes in its buffer */
    uint32_t nrec;          /* records in it */
    uint64_t first_index;   /* records in earlier blocks */
    int64_t prev_exit;      /* of the last record in the buffer, or the block's base time */
    uint64_t req, coll;     /* last request id, collective sequence number */
    int created;            /* the file has its header and FUNCS block */
} syn_rank;

struct syn_out {
    syn_params p;
    char *dir;
    uint32_t n;
    size_t block;           /* payload bytes from which a buffer is written */
    size_t stride;          /* bytes per rank in the slab */
    uint8_t *slab;
    syn_rank *rk;
    syn_prof *prof;         /* n x SYN_NFN */
    int *fd;                /* n descriptors (few ranks) or NULL */
    syn_prof *cur;          /* the profile entry of the record being made */
    uint64_t records, bytes;
    char err[512];
};

static int fail(syn_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(syn_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->err, sizeof o->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *syn_out_error(const syn_out *o) { return o->err; }
uint64_t syn_out_records(const syn_out *o) { return o->records; }
uint64_t syn_out_bytes(const syn_out *o) { return o->bytes; }
uint64_t syn_req(syn_out *o, uint32_t r) { return ++o->rk[r].req; }
uint64_t syn_coll_seq(syn_out *o, uint32_t r) { return o->rk[r].coll++; }

static void rank_path(const syn_out *o, uint32_t r, char *out, size_t len)
{
    snprintf(out, len, "%s/rank-%06" PRIu32 ".vte", o->dir, r);
}

syn_out *syn_out_open(const char *dir, const syn_params *p, char *err, size_t errlen)
{
    if (mkdir(dir, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the directory (%s)", dir, strerror(errno));
        return NULL;
    }
    syn_out *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->p = *p;
    o->n = p->ranks;
    o->dir = strdup(dir);
    size_t block = SLAB_BYTES / o->n;
    o->block = block < BLOCK_MIN ? BLOCK_MIN : block > BLOCK_MAX ? BLOCK_MAX : block;
    o->stride = o->block + SYN_FIELDS_MAX + 4 * VT_UVAR_MAX;
    o->slab = malloc((size_t)o->n * o->stride);
    o->rk = calloc(o->n, sizeof *o->rk);
    o->prof = calloc((size_t)o->n * SYN_NFN, sizeof *o->prof);
    if (o->n <= OPEN_RANKS_MAX && (o->fd = malloc(o->n * sizeof *o->fd)))
        for (uint32_t r = 0; r < o->n; r++)
            o->fd[r] = -1;
    if (!o->dir || !o->slab || !o->rk || !o->prof || (o->n <= OPEN_RANKS_MAX && !o->fd)) {
        snprintf(err, errlen, "out of memory for %" PRIu32 " ranks", o->n);
        syn_out_free(o);
        return NULL;
    }
    return o;
}

/* The rank's file for appending a block: created with its header the first time. Returns the descriptor or -1. */
static int rank_fd(syn_out *o, uint32_t r)
{
    if (o->fd && o->fd[r] >= 0)
        return o->fd[r];
    char path[4200];
    rank_path(o, r, path, sizeof path);
    syn_rank *k = &o->rk[r];
    int fd = open(path, k->created ? O_WRONLY | O_APPEND | O_CLOEXEC : O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(o, "%s: cannot %s the rank file (%s)", path, k->created ? "open" : "create", strerror(errno));
    if (!k->created) {
        /* no FUNCS block: the trace's function table is in vtrace.defs (1.5) */
        int rc = vt_file_header_write(fd, VT_MAGIC_RANK, r);
        if (rc) {
            close(fd);
            return fail(o, "%s: cannot write (%s)", path, strerror(-rc));
        }
        k->created = 1;
    }
    if (o->fd)
        o->fd[r] = fd;
    return fd;
}

static int rank_release(syn_out *o, uint32_t r, int fd, int rc)
{
    if (o->fd)
        return rc;
    if (close(fd) && !rc) {
        char path[4200];
        rank_path(o, r, path, sizeof path);
        return fail(o, "%s: cannot write (%s)", path, strerror(errno));
    }
    return rc;
}

static int block_write(syn_out *o, uint32_t r, int fd, uint8_t type, const void *p, size_t len, uint32_t nrec,
                       int level)
{
    int rc = vt_block_write(fd, type, p, len, nrec, level);
    if (rc) {
        char path[4200];
        rank_path(o, r, path, sizeof path);
        return fail(o, "%s: cannot write a block (%s)", path, strerror(-rc));
    }
    return 0;
}

/* The rank's buffer as a block (EVENTS_COLS when compressing, as the run time). */
static int flush_rank(syn_out *o, uint32_t r)
{
    syn_rank *k = &o->rk[r];
    if (!k->nrec)
        return 0;
    int fd = rank_fd(o, r);
    if (fd < 0)
        return -1;
    uint8_t *buf = o->slab + (size_t)r * o->stride;
    int rc = 0;
    if (o->p.zstd_level > 0) {
        static const vt_evcols_funcs fns = {fn_layout, SYN_NFN};
        uint8_t *packed;
        size_t plen;
        char perr[256];
        if (vt_evcols_pack(buf, k->len, k->nrec, &fns, &packed, &plen, perr, sizeof perr))
            rc = fail(o, "rank %" PRIu32 ": packing a block failed: %s", r, perr);
        else {
            rc = block_write(o, r, fd, VT_BLOCK_EVENTS_COLS, packed, plen, k->nrec, o->p.zstd_level);
            free(packed);
        }
    } else
        rc = block_write(o, r, fd, VT_BLOCK_EVENTS, buf, k->len, k->nrec, 0);
    k->first_index += k->nrec;
    k->nrec = 0;
    k->len = 0;
    return rank_release(o, r, fd, rc);
}

uint8_t *syn_rec_begin(syn_out *o, uint32_t r, enum syn_fn fn, unsigned site, int64_t enter, int64_t exit)
{
    syn_rank *k = &o->rk[r];
    uint8_t *base = o->slab + (size_t)r * o->stride, *p = base + k->len;
    if (!k->nrec) {
        p = vt_put_uvar(base, k->first_index);
        p = vt_put_svar(p, enter);
        k->prev_exit = enter;
    }
    p = vt_put_uvar(p, VT_CODE_FIRST_FN + (unsigned)fn);
    p = vt_put_svar(p, enter - k->prev_exit);
    p = vt_put_uvar(p, (uint64_t)(exit - enter));
    p = vt_put_uvar(p, site);
    syn_prof *pf = &o->prof[(size_t)r * SYN_NFN + fn];
    pf->calls++;
    pf->time += (uint64_t)(exit - enter);
    o->cur = pf;
    k->prev_exit = exit;
    return p;
}

int syn_rec_end(syn_out *o, uint32_t r, uint8_t *end, uint64_t bytes)
{
    syn_rank *k = &o->rk[r];
    uint8_t *base = o->slab + (size_t)r * o->stride;
    k->len = (uint32_t)(end - base);
    k->nrec++;
    o->records++;
    o->cur->bytes += bytes;
    return k->len >= o->block ? flush_rank(o, r) : 0;
}

static void put_str0(uint8_t **p, const char *s) { *p = vt_put_str(*p, s, strlen(s)); }

/* RANKDEFS of rank R (doc/format.md): the call sites, MPI_COMM_WORLD and MPI_COMM_SELF
 * as ranges, no files, the profile, placement, flags, counts, times, overheads 0. */
static size_t rankdefs(const syn_out *o, uint32_t r, uint8_t *buf, int64_t t_init, int64_t t_fin)
{
    uint8_t *p = buf;
    p = vt_put_uvar(p, SYN_NSITES);
    for (unsigned i = 0; i < SYN_NSITES; i++) {
        p = vt_put_uvar(p, 0x401000u + 0x40u * i);
        put_str0(&p, "vtrace-synth");
        p = vt_put_uvar(p, 0x1000u + 0x40u * i);
        put_str0(&p, site_sym[i]);
    }
    p = vt_put_uvar(p, 2);
    /* MPI_COMM_WORLD: ranks 0, 1, ... (2.0: the kind its id is derived from) */
    p = vt_put_uvar(p, VT_CID_WORLD);
    p = vt_put_uvar(p, VT_COMM_COMPACT);
    p = vt_put_uvar(p, o->n);
    p = vt_put_uvar(p, 1);
    p = vt_put_uvar(p, 0);
    p = vt_put_svar(p, 1);
    p = vt_put_uvar(p, 0);
    p = vt_put_svar(p, -1);
    put_str0(&p, "world");
    /* MPI_COMM_SELF */
    p = vt_put_uvar(p, VT_CID_SELF);
    p = vt_put_uvar(p, VT_COMM_COMPACT);
    p = vt_put_uvar(p, 1);
    p = vt_put_uvar(p, 0);
    p = vt_put_uvar(p, r);
    p = vt_put_uvar(p, 0);
    p = vt_put_svar(p, -1);
    put_str0(&p, "self");
    p = vt_put_uvar(p, 0); /* files */
    unsigned np = 0;
    for (unsigned f = 0; f < SYN_NFN; f++)
        np += o->prof[(size_t)r * SYN_NFN + f].calls > 0;
    p = vt_put_uvar(p, np);
    for (unsigned f = 0; f < SYN_NFN; f++) {
        const syn_prof *pf = &o->prof[(size_t)r * SYN_NFN + f];
        if (!pf->calls)
            continue;
        p = vt_put_uvar(p, f);
        p = vt_put_uvar(p, pf->calls);
        p = vt_put_uvar(p, pf->time);
        p = vt_put_uvar(p, pf->bytes);
        p = vt_put_uvar(p, pf->calls);
    }
    char host[32];
    snprintf(host, sizeof host, "node%04" PRIu32, r / 64);
    put_str0(&p, host);
    p = vt_put_svar(p, (int64_t)(r % 64));
    p = vt_put_svar(p, 0);
    put_str0(&p, "");
    p = vt_put_uvar(p, 0);
    p = vt_put_uvar(p, o->rk[r].first_index);
    p = vt_put_uvar(p, 0);
    p = vt_put_svar(p, t_init);
    p = vt_put_svar(p, t_fin);
    p = vt_put_uvar(p, 0);
    p = vt_put_uvar(p, 0);
    return (size_t)(p - buf);
}

char *syn_config_text(const syn_params *p)
{
    static const char *const names[] = {"halo1d", "halo2d", "allreduce", "pipeline", "master-worker"};
    char *s = malloc(1024);
    if (s)
        snprintf(s, 1024,
                 "VTRACE_MODE=full\nVTRACE_THRESHOLD=%" PRId64 "ns\nVTRACE_CANDIDATES=all\nVTRACE_COMPRESS=%d\n"
                 "VTRACE_MODEL_L=%" PRId64 "ns\nVTRACE_MODEL_G=%" PRId64 "ps\nVTRACE_MODEL_TRDV=8256\n"
                 "VTRACE_MODEL_M=4\nVTRACE_MODEL_K=8\n"
                 "SYNTH=pattern=%s ranks=%" PRIu32 " iterations=%" PRIu32 " seed=%" PRIu64 "\n",
                 p->threshold, p->zstd_level, p->latency, p->g_ps, names[p->pattern], p->ranks, p->iterations,
                 p->seed);
    return s;
}

static int write_defs(syn_out *o, const int64_t *t_init, const int64_t *t_fin, const uint8_t *dict, size_t dict_len)
{
    char *config = syn_config_text(&o->p);
    size_t cap = 4096 + (size_t)o->n * (4 * VT_UVAR_MAX + 2 + 16);
    uint8_t *buf = malloc(cap), *p = buf;
    if (!config || !buf) {
        free(config);
        free(buf);
        return fail(o, "out of memory for vtrace.defs");
    }
    put_str0(&p, PACKAGE_VERSION);
    put_str0(&p, "vtrace synth (no MPI library)");
    put_str0(&p, config);
    p = vt_put_uvar(p, o->n);
    for (uint32_t r = 0; r < o->n; r++) {
        char host[32];
        snprintf(host, sizeof host, "node%04" PRIu32, r / 64);
        p = vt_put_svar(p, t_init[r]);
        p = vt_put_svar(p, 0);
        p = vt_put_svar(p, t_fin[r]);
        p = vt_put_svar(p, 0);
        p = vt_put_uvar(p, 1); /* one clock: synth's times are global */
        put_str0(&p, host);
    }
    p = vt_put_uvar(p, 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/vtrace.defs", o->dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc = fd < 0 ? -errno : 0;
    if (!rc)
        rc = vt_file_header_write(fd, VT_MAGIC_DEFS, o->n);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, buf, (size_t)(p - buf), 0, o->p.zstd_level ? 3 : 0);
    /* what every rank file shares, once (1.5): the function table, the dictionary */
    if (!rc)
        rc = vt_funcs_block_write(fd, fn_name, fn_layout, SYN_NFN, NULL, 1, o->p.zstd_level ? 3 : 0);
    if (!rc && dict)
        rc = vt_block_write(fd, VT_BLOCK_DICT, dict, dict_len, 0, o->p.zstd_level ? 3 : 0);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, "", 0, 0, 0);
    struct stat st;
    if (!rc && !fstat(fd, &st))
        o->bytes += (uint64_t)st.st_size;
    if (fd >= 0 && close(fd) && !rc)
        rc = -errno;
    free(buf);
    if (!rc) {
        snprintf(path, sizeof path, "%s/config.txt", o->dir);
        FILE *f = fopen(path, "w");
        if (!f || fputs(config, f) < 0)
            rc = -EIO;
        if (f && fclose(f))
            rc = -EIO;
    }
    free(config);
    return rc ? fail(o, "%s: cannot write (%s)", path, strerror(-rc)) : 0;
}

int syn_out_finish(syn_out *o, const int64_t *t_init, const int64_t *t_fin)
{
    uint8_t defs[2048];
    o->bytes = 0;
    /* The dictionary (1.5): rank 0's RANKDEFS, which the others resemble (call sites,
     * MPI_COMM_WORLD, the profile's functions and counts), so each RANKDEFS costs what
     * differs from it. Not with --no-compress (codec 2 is zstd). */
    uint8_t dict[2048];
    size_t dict_len = 0;
    if (o->p.zstd_level > 0) {
        if (flush_rank(o, 0))
            return -1;
        dict_len = rankdefs(o, 0, dict, t_init[0], t_fin[0]);
    }
    for (uint32_t r = 0; r < o->n; r++) {
        if (flush_rank(o, r))
            return -1;
        int fd = rank_fd(o, r);
        if (fd < 0)
            return -1;
        size_t len = rankdefs(o, r, defs, t_init[r], t_fin[r]);
        int rc = vt_block_write_dict(fd, VT_BLOCK_RANKDEFS, defs, len, 0, o->p.zstd_level ? 19 : 0,
                                     dict_len ? dict : NULL, dict_len);
        if (rc) {
            char path[4200];
            rank_path(o, r, path, sizeof path);
            rc = fail(o, "%s: cannot write a block (%s)", path, strerror(-rc));
        }
        if (!rc)
            rc = block_write(o, r, fd, VT_BLOCK_END, "", 0, 0, 0);
        struct stat st;
        if (!rc && !fstat(fd, &st))
            o->bytes += (uint64_t)st.st_size;
        if (o->fd) {
            if (close(fd) && !rc)
                rc = fail(o, "rank %" PRIu32 ": cannot close its file (%s)", r, strerror(errno));
            o->fd[r] = -1;
        } else
            rc = rank_release(o, r, fd, rc);
        if (rc)
            return -1;
    }
    return write_defs(o, t_init, t_fin, dict_len ? dict : NULL, dict_len);
}

void syn_out_free(syn_out *o)
{
    if (!o)
        return;
    if (o->fd)
        for (uint32_t r = 0; r < o->n; r++)
            if (o->fd[r] >= 0)
                close(o->fd[r]);
    free(o->fd);
    free(o->slab);
    free(o->rk);
    free(o->prof);
    free(o->dir);
    free(o);
}
