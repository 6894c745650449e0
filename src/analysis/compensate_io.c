/* What both ways of compensating share (compensate.c, the trace in memory;
 * compensate_stream.c, streamed): the rules of a message's bound, the collectives'
 * kinds and the writing of the compensated trace. compensate.c explains the rules. */
#include "vt_config.h"
#include "analysis/compensate_priv.h"
#include "format/blockio.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int vt__comp_collective_kind(const char *n)
{
    static const char *nton[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                                 "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter",
                                 "MPI_Reduce_scatter_block", NULL};
    static const char *oton[] = {"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv", NULL};
    static const char *nto1[] = {"MPI_Gather", "MPI_Gatherv", "MPI_Reduce", NULL};
    for (int i = 0; nton[i]; i++)
        if (!strcmp(n, nton[i]))
            return C_NTON;
    for (int i = 0; oton[i]; i++)
        if (!strcmp(n, oton[i]))
            return C_1TON;
    for (int i = 0; nto1[i]; i++)
        if (!strcmp(n, nto1[i]))
            return C_NTO1;
    return C_NONE;
}

/* The bound a message (or a 1-to-n pair) puts on the receiving call's exit; *waited
 * says whether it was case m.1. */
int64_t vt__comp_msg_bound(const vt__comp_rules *C, int64_t rme, int64_t rmx, int64_t rae, int64_t send_a,
                           int64_t send_me, int64_t send_mx, uint64_t bytes, int *waited)
{
    int64_t cs = C->copy_ps * (int64_t)bytes, b;
    if (rme <= send_mx) { /* m.1: the communication time was measured */
        *waited = 1;
        C->st->m1++;
        b = max64(send_a + (rmx - send_me), rae + cs);
    } else { /* m.2: the lower bound by default (see the top of the file) */
        C->st->m2++;
        int64_t lower = send_a + max64(2 * cs, C->L_ps);
        int64_t upper = send_a + max64(rmx - send_me, C->L_ps);
        if (upper > max64(lower, rae + (rmx - rme)))
            C->st->m2_upper_wider++;
        b = C->m2_upper ? upper : lower;
    }
    return max64(b, send_a + C->L_ps);
}

typedef struct obuf {
    uint8_t *p;
    size_t len, cap;
} obuf;

static int ob_room(obuf *b, size_t need)
{
    if (b->len + need <= b->cap)
        return 0;
    size_t nc = (b->cap ? 2 * b->cap : 1 << 16) + need;
    uint8_t *np = realloc(b->p, nc);
    if (!np)
        return -1;
    b->p = np;
    b->cap = nc;
    return 0;
}
#define OB_U(b, v) ((b)->len = (size_t)(vt_put_uvar((b)->p + (b)->len, (uint64_t)(v)) - (b)->p))
#define OB_S(b, v) ((b)->len = (size_t)(vt_put_svar((b)->p + (b)->len, (int64_t)(v)) - (b)->p))

int64_t vt__comp_ns_of(int64_t ps) { return ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000); }

static int encode_event(obuf *b, const vt_event *ev, const vt_function *f, int64_t enter, int64_t exit, int64_t prev)
{
    size_t need = 8 * VT_UVAR_MAX + (ev->nstarted + 1) * VT_UVAR_MAX + (ev->ndone + 1) * 5 * VT_UVAR_MAX + 64;
    if (ob_room(b, need))
        return -1;
    OB_U(b, ev->code);
    OB_S(b, enter - prev);
    OB_U(b, exit - enter);
    if (ev->fn < 0) {
        if (ev->code == VT_CODE_MARKER) {
            OB_U(b, ev->marker_kind);
            OB_S(b, ev->marker_value);
        } else if (ev->code == VT_CODE_STOPPED) {
            OB_U(b, ev->stop_reason);
        }
        return 0;
    }
    OB_U(b, ev->callsite < 0 ? 0 : ev->callsite);
    for (const char *l = f->layout; *l; l++) {
        switch (*l) {
        case 'c': OB_U(b, ev->comm); break;
        case 'n': OB_S(b, ev->newcomm); break;
        case 'p': OB_S(b, ev->peer); break;
        case 't': OB_S(b, ev->tag); break;
        case 'b': OB_U(b, ev->bytes); break;
        case 'P': OB_S(b, ev->rpeer); break;
        case 'T': OB_S(b, ev->rtag); break;
        case 'B': OB_U(b, ev->rbytes); break;
        case 'o': OB_S(b, ev->root); break;
        case 'q': OB_U(b, ev->collseq); break;
        case 'r': OB_U(b, ev->request); break;
        case 'R':
            OB_U(b, ev->nstarted);
            for (size_t i = 0; i < ev->nstarted; i++)
                OB_U(b, ev->started[i]);
            break;
        case 'k':
            OB_U(b, ev->ndone);
            for (size_t i = 0; i < ev->ndone; i++) {
                OB_U(b, ev->done[i].request);
                OB_U(b, ev->done[i].flags);
                OB_S(b, ev->done[i].peer);
                OB_S(b, ev->done[i].tag);
                OB_U(b, ev->done[i].bytes);
            }
            break;
        case 'm': OB_U(b, ev->msg); break;
        case 'f': OB_U(b, ev->file); break;
        case 'O': OB_S(b, ev->offset); break;
        default: return -2;
        }
    }
    return 0;
}

#define BLOCK_RECORDS 8192

int vt__comp_write_rank(const vt_trace *t, const char *dir, uint32_t r, int level, uint64_t nrec_max,
                        vt__comp_times times, void *arg, vt_error *err)
{
    const vt_rank *rk = vt_trace_rank(t, r);
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%06u.vte", dir, r);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return vt_error_set(err, "%s: cannot create it (%s)", path, strerror(errno));
    uint8_t *raw = NULL;
    size_t rawlen;
    obuf b = {0};
    vt_cursor *cur = NULL;
    int rc = vt_file_header_write(fd, VT_MAGIC_RANK, r);
    if (rc)
        goto io;
    /* a rank file that uses the trace's function table (1.5) keeps using it: it goes
     * into vtrace.defs (vt__comp_write_defs) */
    size_t ntab;
    const vt_function *tab = vt_trace_functions(t, &ntab);
    if (!tab || rk->funcs != tab) {
        if (vt_trace_raw_block(t, r, VT_BLOCK_FUNCS, &raw, &rawlen, err))
            goto bad;
        rc = vt_block_write(fd, VT_BLOCK_FUNCS, raw, rawlen, 0, level);
        free(raw);
        raw = NULL;
        if (rc)
            goto io;
    }
    if (!rk->has_defs) {
        /* nothing of it was readable: cut before any RANKDEFS, as in the trace read */
        if (close(fd))
            return vt_error_set(err, "%s: %s", path, strerror(errno));
        return 0;
    }
    if (vt_cursor_open(t, r, &cur, err))
        goto bad;
    vt_event ev;
    int got = 0;
    uint64_t idx = 0, first = 0;
    uint32_t nrec = 0;
    int64_t prev = 0;
    while (idx < nrec_max && (got = vt_cursor_next(cur, &ev, err)) == 1) {
        int64_t e, x;
        if (times(arg, r, idx, &e, &x, err))
            goto bad;
        if (nrec == 0) {
            b.len = 0;
            if (ob_room(&b, 2 * VT_UVAR_MAX))
                goto oom;
            OB_U(&b, first);
            OB_S(&b, e);
            prev = e;
        }
        int er = encode_event(&b, &ev, vt_trace_function(t, r, ev.fn), e, x, prev);
        if (er == -1)
            goto oom;
        if (er) {
            vt_error_set(err, "%s: a layout letter this version cannot write", rk->path);
            goto bad;
        }
        prev = x;
        idx++;
        if (++nrec == BLOCK_RECORDS) {
            if ((rc = vt_block_write(fd, VT_BLOCK_EVENTS, b.p, b.len, nrec, level)))
                goto io;
            first += nrec;
            nrec = 0;
        }
    }
    if (idx < nrec_max && got < 0)
        goto bad;
    if (nrec && (rc = vt_block_write(fd, VT_BLOCK_EVENTS, b.p, b.len, nrec, level)))
        goto io;
    /* RANKDEFS: as read, with the overhead fields (format 1.2) set to 0: the written
     * trace holds no overhead any more, so compensating it again removes nothing. */
    if (vt_trace_raw_block(t, r, VT_BLOCK_RANKDEFS, &raw, &rawlen, err))
        goto bad;
    /* what follows the overhead (1.4: the module table) is kept */
    size_t at = rk->has_overhead ? rk->overhead_at : rawlen;
    size_t skip = rk->has_overhead ? rk->overhead_len : 0;
    if (at + skip > rawlen) {
        vt_error_set(err, "%s: RANKDEFS is shorter than when it was read", rk->path);
        goto bad;
    }
    uint8_t *nraw = malloc(rawlen - skip + 2);
    if (!nraw)
        goto oom;
    memcpy(nraw, raw, at);
    nraw[at] = 0;     /* overhead per event: 0 ps */
    nraw[at + 1] = 0; /* copy cost per byte: 0 ps */
    memcpy(nraw + at + 2, raw + at + skip, rawlen - at - skip);
    rawlen = rawlen - skip + 2;
    free(raw);
    raw = nraw;
    /* the file written is 2.0's: an older input's communicator ids as 2.0 stores them */
    if (vt_trace_rankdefs_upgrade(t, r, &raw, &rawlen, err))
        goto bad;
    /* compressed, against the dictionary the input's are compressed against (written
     * into vtrace.defs too): they differ from its by the overhead fields only */
    size_t dlen;
    const uint8_t *dict = vt_trace_dict(t, &dlen);
    if ((rc = vt_block_write_dict(fd, VT_BLOCK_RANKDEFS, raw, rawlen, 0, level, level > 0 ? dict : NULL, dlen)))
        goto io;
    /* a file cut short (a run killed) stays so: its last RANKDEFS is a snapshot */
    if (!rk->cut_at && (rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0)))
        goto io;
    free(raw);
    free(b.p);
    vt_cursor_close(cur);
    if (close(fd))
        return vt_error_set(err, "%s: %s", path, strerror(errno));
    return 0;
oom:
    vt_error_set(err, "out of memory writing %s", path);
    goto bad;
io:
    vt_error_set(err, "%s: cannot write it (%s)", path, strerror(-rc));
bad:
    free(raw);
    free(b.p);
    vt_cursor_close(cur);
    close(fd);
    return -1;
}

/* The GLOBAL payload: offsets set to 0 (the written times are global already), the
 * configuration text noting the compensation. */
int vt__comp_write_defs(const vt_trace *t, const char *dir, const vt_comp_opts *o, vt_error *err)
{
    uint32_t nranks = vt_trace_nranks(t);
    obuf b = {0};
    const char *cfg = vt_trace_config(t);
    char note[160];
    snprintf(note, sizeof note, "%sVTRACE_COMPENSATED=%" PRId64 "ps\n",
             *cfg && cfg[strlen(cfg) - 1] != '\n' ? "\n" : "", o->overhead_ps);
    if (o->overhead_ps < 0)
        snprintf(note, sizeof note, "%sVTRACE_COMPENSATED=measured\n",
                 *cfg && cfg[strlen(cfg) - 1] != '\n' ? "\n" : "");
    size_t need = strlen(vt_trace_version(t)) + strlen(vt_trace_mpi_version(t)) + strlen(cfg) + strlen(note) +
                  8 * VT_UVAR_MAX;
    for (uint32_t r = 0; r < nranks; r++)
        need += 6 * VT_UVAR_MAX + strlen(vt_trace_rank(t, r)->global_hostname);
    if (ob_room(&b, need))
        return vt_error_set(err, "out of memory");
    uint8_t *p = b.p;
    p = vt_put_str(p, vt_trace_version(t), strlen(vt_trace_version(t)));
    p = vt_put_str(p, vt_trace_mpi_version(t), strlen(vt_trace_mpi_version(t)));
    size_t cl = strlen(cfg), nl = strlen(note);
    p = vt_put_uvar(p, cl + nl);
    memcpy(p, cfg, cl);
    memcpy(p + cl, note, nl);
    p += cl + nl;
    p = vt_put_uvar(p, nranks);
    for (uint32_t r = 0; r < nranks; r++) {
        const vt_rank *rk = vt_trace_rank(t, r);
        p = vt_put_svar(p, rk->clock.t1);
        p = vt_put_svar(p, 0);
        p = vt_put_svar(p, rk->clock.t2);
        p = vt_put_svar(p, 0);
        p = vt_put_uvar(p, (uint64_t)rk->clock.same_clock);
        p = vt_put_str(p, rk->global_hostname, strlen(rk->global_hostname));
    }
    p = vt_put_uvar(p, vt_trace_flags(t) & ~(uint64_t)VT_GLOBAL_STORED);   /* (a stored input: the output is not) */
    char path[4200];
    snprintf(path, sizeof path, "%s/vtrace.defs", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;
    if (fd < 0) {
        free(b.p);
        return vt_error_set(err, "%s: cannot create it (%s)", path, strerror(errno));
    }
    rc = vt_file_header_write(fd, VT_MAGIC_DEFS, nranks);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, b.p, (size_t)(p - b.p), 0, 0);
    /* what the rank files share (1.5), as in the input: the function table, the
     * dictionary */
    size_t ntab, dlen;
    const vt_function *tab = vt_trace_functions(t, &ntab);
    const uint8_t *dict = vt_trace_dict(t, &dlen);
    if (!rc && tab) {
        const char **nm = malloc((ntab ? ntab : 1) * sizeof *nm), **ly = malloc((ntab ? ntab : 1) * sizeof *ly);
        rc = nm && ly ? 0 : -ENOMEM;
        for (size_t i = 0; !rc && i < ntab; i++) {
            nm[i] = tab[i].name;
            ly[i] = tab[i].layout;
        }
        if (!rc)
            rc = vt_funcs_block_write(fd, nm, ly, ntab, NULL, 1, 3);
        free(nm);
        free(ly);
    }
    if (!rc && dict && o->zstd_level > 0)
        rc = vt_block_write(fd, VT_BLOCK_DICT, dict, dlen, 0, 3);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_END, NULL, 0, 0, 0);
    if (close(fd) && !rc)
        rc = -errno;
    free(b.p);
    if (rc)
        return vt_error_set(err, "%s: cannot write it (%s)", path, strerror(-rc));
    snprintf(path, sizeof path, "%s/config.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(cfg, f);
        fputs(note, f);
        fclose(f);
    }
    return 0;
}

int64_t vt__comp_config_latency_ns(const char *cfg)
{
    const char *p = strstr(cfg, "VTRACE_MODEL_L=");
    if (!p)
        return 0;
    long long v = strtoll(p + strlen("VTRACE_MODEL_L="), NULL, 10);
    return v > 0 ? v : 0;
}

