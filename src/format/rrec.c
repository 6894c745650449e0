/* Encoding of reduced records; see rrec.h and doc/format.md. */
#include "vt_config.h"
#include "format/rrec.h"
#include "format/blockio.h"
#include "format/evcols.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint8_t *vt_rrec_block_begin(uint8_t *out, uint64_t first_index, int64_t base_time, uint64_t base_seq)
{
    out = vt_put_uvar(out, first_index);
    out = vt_put_svar(out, base_time);
    return vt_put_uvar(out, base_seq);
}

static size_t vt_rrec_size_max(const vt_rrec *rec)
{
    return VT_UVAR_MAX * (9 + 7 * rec->nmsgs + 4 * rec->nssends + 4 * rec->ngates + 4);
}

/* Appends rec with the kind bits KBITS (VT_RREC_K_*; VT_RREC_K_BURST: the burst's start
 * BURST_START follows, relative to the previous record's exit, which makes it 0 when
 * the call before the burst is that record); *prev_seq and *prev_time are the previous
 * record's sequence number and exit (the block's base values before its first record)
 * and are updated. Returns the new end. */
static uint8_t *vt_rrec_encode_folded(uint8_t *out, const vt_rrec *rec, unsigned kbits, int64_t burst_start,
                                      uint64_t *prev_seq, int64_t *prev_time)
{
    out = vt_put_uvar(out, rec->kind | kbits);
    out = vt_put_uvar(out, rec->seq - *prev_seq);
    *prev_seq = rec->seq;
    int64_t prev = *prev_time;
    out = vt_put_svar(out, rec->enter - prev);
    out = vt_put_uvar(out, (uint64_t)(rec->exit - rec->enter));
    *prev_time = rec->exit;
    if (kbits & VT_RREC_K_BURST)
        out = vt_put_svar(out, burst_start - prev);
    if (rec->kind == VT_RREC_START || rec->kind == VT_RREC_END)
        return out;
    out = vt_put_uvar(out, (uint64_t)(rec->fn + 1));
    out = vt_put_uvar(out, (uint64_t)(rec->callsite + 1));
    if (rec->kind == VT_RREC_CAND)
        return out;
    if (rec->kind == VT_RREC_NBCINIT) {
        out = vt_put_uvar(out, rec->flags);
        out = vt_put_uvar(out, rec->gates[0].comm);
        out = vt_put_uvar(out, rec->gates[0].collseq);
        return vt_put_uvar(out, rec->gates[0].nmembers);
    }
    out = vt_put_uvar(out, rec->flags);
    out = vt_put_uvar(out, (uint64_t)(rec->rstar - rec->enter));
    out = vt_put_uvar(out, rec->nmsgs);
    for (size_t i = 0; i < rec->nmsgs; i++) {
        const vt_rmsg *m = &rec->msgs[i];
        out = vt_put_uvar(out, m->src);
        out = vt_put_uvar(out, m->send_seq);
        out = vt_put_svar(out, m->S - rec->enter);
        out = vt_put_uvar(out, m->bytes);
        out = vt_put_uvar(out, m->sync ? 1 : 0);
        if (m->sync) {
            out = vt_put_uvar(out, m->post_seq);
            out = vt_put_svar(out, m->P - rec->enter);
        }
    }
    out = vt_put_uvar(out, rec->nssends);
    for (size_t i = 0; i < rec->nssends; i++) {
        const vt_rssend *x = &rec->ssends[i];
        out = vt_put_uvar(out, x->dst);
        out = vt_put_uvar(out, x->send_seq);
        out = vt_put_svar(out, x->S - rec->enter);
        out = vt_put_uvar(out, x->bytes);
    }
    out = vt_put_uvar(out, rec->ngates);
    for (size_t i = 0; i < rec->ngates; i++) {
        const vt_rgate *g = &rec->gates[i];
        out = vt_put_uvar(out, g->comm);
        out = vt_put_uvar(out, g->collseq);
        out = vt_put_uvar(out, g->nmembers);
        out = vt_put_uvar(out, g->nonblocking ? 1 : 0);
    }
    return out;
}

static int out_init(vt_rrec_out *o, int fd, vt_wbuf *mem, int zstd_level, const char *const *name,
                    const char *const *layout, size_t nfn, size_t cap)
{
    *o = (vt_rrec_out){.fd = fd, .mem = mem, .zstd_level = zstd_level, .cap = cap, .last_at = SIZE_MAX,
                       .fname = name, .flayout = layout, .nfn = nfn, .prov_at = -1};
    o->buf = malloc(o->cap);
    o->named = calloc(nfn ? nfn : 1, 1);
    o->pending = calloc(nfn ? nfn : 1, 1);
    if (!o->buf || !o->named || !o->pending)
        return -ENOMEM;
    if (!name) {
        /* the trace's table, in vtrace.defs (1.5): every function is named there */
        memset(o->named, 1, nfn);
        return 0;
    }
    int level = vt_rrec_zstd_level(VT_RREC_ZSTD_LEVEL, 0);
    return mem ? vt_funcs_block_put(mem, name, layout, nfn, o->pending, 1, level)
               : vt_funcs_block_write(fd, name, layout, nfn, o->pending, 1, level);
}

int vt_rrec_out_init(vt_rrec_out *o, int fd, int zstd_level, const char *const *name, const char *const *layout,
                     size_t nfn)
{
    return out_init(o, fd, NULL, zstd_level, name, layout, nfn, VT_RREC_BLOCK_BYTES);
}

int vt_rrec_out_init_detached(vt_rrec_out *o, vt_wbuf *mem, int zstd_level, const char *const *name,
                              const char *const *layout, size_t nfn)
{
    return out_init(o, -1, mem, zstd_level, name, layout, nfn, VT_RREC_SLOT_BYTES);
}

void vt_rrec_out_name(vt_rrec_out *o, int64_t fn)
{
    if (fn >= 0 && (size_t)fn < o->nfn && !o->named[fn] && !o->pending[fn]) {
        o->pending[fn] = 1;
        o->npending++;
    }
}

/* Cuts off the provisional blocks (async-signal-safe). Returns 0 or -errno. */
static int drop_provisional(vt_rrec_out *o)
{
    if (o->prov_at < 0 || o->fd < 0)
        return 0;
    off_t at = (off_t)o->prov_at;
    o->prov_at = -1;
    return ftruncate(o->fd, at) || lseek(o->fd, at, SEEK_SET) != at ? -errno : 0;
}

/* A block into O's file, or its memory (detached). */
static int put_block(vt_rrec_out *o, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int level)
{
    return o->mem ? vt_block_put(o->mem, type, payload, len, nrecords, level, NULL, 0)
                  : vt_block_write(o->fd, type, payload, len, nrecords, level);
}

/* The functions named since the last FUNCS block, before the block that uses them. */
static int name_pending(vt_rrec_out *o)
{
    if (!o->npending)
        return 0;
    int level = vt_rrec_zstd_level(VT_RREC_ZSTD_LEVEL, 0);
    int rc = o->mem ? vt_funcs_block_put(o->mem, o->fname, o->flayout, o->nfn, o->pending, 0, level)
                    : vt_funcs_block_write(o->fd, o->fname, o->flayout, o->nfn, o->pending, 0, level);
    for (size_t i = 0; i < o->nfn; i++)
        if (o->pending[i]) {
            o->named[i] = 1;
            o->pending[i] = 0;
        }
    o->npending = 0;
    return rc;
}

/* ------------------------------------------------------------------ the pool */

int vt_rrec_pool_open(vt_rrec_pool *pool)
{
    memset(pool, 0, sizeof *pool);
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/vtrace-reduce-XXXXXX", dir && *dir ? dir : "/tmp");
    pool->fd = mkstemp(path);
    if (pool->fd < 0)
        return -errno;
    unlink(path);
    return 0;
}

void vt_rrec_pool_close(vt_rrec_pool *pool)
{
    if (pool->fd >= 0)
        close(pool->fd);
    free(pool->free_slots);
    free(pool->block);
    memset(pool, 0, sizeof *pool);
    pool->fd = -1;
}

static int full_io(int fd, uint8_t *p, size_t n, uint64_t off, int wr)
{
    while (n) {
        ssize_t k = wr ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        p += k, n -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

/* The bytes of the open block in memory go to a slot of the pool (a larger piece, from
 * a record larger than a slot, to the end of the file). */
static int spill(vt_rrec_out *o)
{
    vt_rrec_pool *P = o->pool;
    size_t n = o->len - o->base;
    if (o->nspill == o->capspill) {
        size_t nc = o->capspill ? 2 * o->capspill : 16;
        struct vt_rrec_chunk *nv = realloc(o->spill, nc * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        o->spill = nv;
        o->capspill = nc;
    }
    uint64_t off;
    if (n <= VT_RREC_SLOT_BYTES && P->nfree)
        off = P->free_slots[--P->nfree];
    else
        off = P->end, P->end += n <= VT_RREC_SLOT_BYTES ? VT_RREC_SLOT_BYTES : n;
    int rc = full_io(P->fd, o->buf, n, off, 1);
    if (rc)
        return rc;
    o->spill[o->nspill++] = (struct vt_rrec_chunk){off, (uint32_t)n};
    o->base = o->len;
    return 0;
}

/* The open block in one piece: buf, or gathered from the pool into its block buffer
 * (the slots freed). */
static int gather(vt_rrec_out *o, const uint8_t **data)
{
    *data = o->buf;
    if (!o->nspill)
        return 0;
    vt_rrec_pool *P = o->pool;
    if (o->len > P->blockcap) {
        uint8_t *nb = realloc(P->block, o->len);
        if (!nb)
            return -ENOMEM;
        P->block = nb;
        P->blockcap = o->len;
    }
    size_t at = 0;
    for (size_t i = 0; i < o->nspill; i++) {
        int rc = full_io(P->fd, P->block + at, o->spill[i].len, o->spill[i].off, 0);
        if (rc)
            return rc;
        at += o->spill[i].len;
        if (o->spill[i].len <= VT_RREC_SLOT_BYTES) {
            if (P->nfree == P->capfree) {
                size_t nc = P->capfree ? 2 * P->capfree : 64;
                uint64_t *nv = realloc(P->free_slots, nc * sizeof *nv);
                if (!nv)
                    return -ENOMEM;
                P->free_slots = nv;
                P->capfree = nc;
            }
            P->free_slots[P->nfree++] = o->spill[i].off;
        }
    }
    memcpy(P->block + at, o->buf, o->len - o->base);
    o->nspill = 0;
    *data = P->block;
    return 0;
}

/* The open block: packed in columns (REDUCED_COLS) when blocks are compressed, as the
 * full trace's events are (evcols.h), as it is otherwise or if packing fails. */
static int write_block(vt_rrec_out *o)
{
    if (!o->len)
        return 0;
    int rc = drop_provisional(o);
    if (!rc)
        rc = name_pending(o);
    const uint8_t *data;
    if (!rc)
        rc = gather(o, &data);
    if (rc)
        return rc;
    rc = 1;
#ifdef HAVE_ZSTD
    uint8_t *packed = NULL; /* (set when vt_rcols_pack returns 0; LTO cannot tell) */
    size_t plen = 0;
    char err[256];
    vt_rcols_comms comms = {NULL, 0};
    if (o->comm_ids)
        comms.id = o->comm_ids(o->comm_arg, &comms.n);
    if (o->zstd_level > 0 && !vt_rcols_pack(data, o->len, o->nblock, &comms, &packed, &plen, err, sizeof err)) {
        rc = put_block(o, VT_BLOCK_REDUCED_COLS, packed, plen, o->nblock, vt_rrec_zstd_level(o->zstd_level, plen));
        free(packed);
    }
#endif
    if (rc == 1)
        rc = put_block(o, VT_BLOCK_REDUCED, data, o->len, o->nblock, vt_rrec_zstd_level(o->zstd_level, o->len));
    o->len = 0;
    o->base = 0;
    o->nblock = 0;
    o->last_at = SIZE_MAX;
    return rc;
}

/* Stores REC with the kind bits KBITS (VT_RREC_K_BURST: the burst starting at BURST_START
 * goes into it). */
static int store(vt_rrec_out *o, const vt_rrec *rec, unsigned kbits, int64_t burst_start)
{
    size_t need = vt_rrec_size_max(rec) + 3 * VT_UVAR_MAX;
    if (o->len && o->len + need > VT_RREC_BLOCK_BYTES) {
        int rc = write_block(o);
        if (rc)
            return rc;
    }
    if (o->pool && o->len > o->base && o->len - o->base + need > o->cap) {
        int rc = spill(o);
        if (rc)
            return rc;
    }
    if (o->len - o->base + need > o->cap) {
        size_t cap = 2 * o->cap < VT_RREC_BLOCK_BYTES ? 2 * o->cap : VT_RREC_BLOCK_BYTES;
        if (cap < o->len - o->base + need)
            cap = o->len - o->base + need;
        uint8_t *nb = realloc(o->buf, cap);
        if (!nb)
            return -ENOMEM;
        o->buf = nb;
        o->cap = cap;
    }
    if (!o->index && !o->started)
        o->prev_time = rec->enter; /* no START: the first block's base time is the first record's */
    if (!o->len)
        o->len = (size_t)(vt_rrec_block_begin(o->buf, o->index, o->prev_time, o->prev_seq) - o->buf);
    o->last_at = o->len;
    o->len = o->base + (size_t)(vt_rrec_encode_folded(o->buf + (o->len - o->base), rec, kbits, burst_start,
                                                      &o->prev_seq, &o->prev_time) -
                                o->buf);
    o->last_seq = rec->seq;
    o->last_exit = rec->exit;
    vt_rrec_out_name(o, rec->fn);
    o->nblock++;
    o->index++;
    return 0;
}

static int store_burst(vt_rrec_out *o)
{
    if (!o->have_burst)
        return 0;
    o->have_burst = 0;
    return store(o, &o->burst, 0, 0);
}

int vt_rrec_out_flush(vt_rrec_out *o)
{
    int rc = drop_provisional(o);
    if (!rc)
        rc = store_burst(o);
    if (!rc)
        rc = write_block(o);
    return rc ? rc : name_pending(o);
}

int vt_rrec_out_put(vt_rrec_out *o, const vt_rrec *rec)
{
    int rc;
    if (rec->kind == VT_RREC_START && !o->index && !o->started && !o->have_burst && rec->seq == 0 &&
        rec->enter == rec->exit) {
        /* the first block's base time says it */
        o->started = 1;
        o->prev_time = rec->enter;
        return 0;
    }
    if (rec->kind == VT_RREC_CAND && rec->fn < 0) {
        /* a burst: kept until the next record says whether it is the call ending it */
        if ((rc = store_burst(o)))
            return rc;
        o->burst = *rec;
        o->burst.msgs = NULL, o->burst.ssends = NULL, o->burst.gates = NULL;
        o->have_burst = 1;
        return 0;
    }
    if (o->have_burst && rec->kind != VT_RREC_START && rec->kind != VT_RREC_END && rec->seq == o->burst.seq + 1 &&
        rec->enter == o->burst.exit && o->burst.exit >= o->burst.enter && rec->callsite == o->burst.callsite) {
        o->have_burst = 0;
        return store(o, rec, VT_RREC_K_BURST, o->burst.enter);
    }
    if ((rc = store_burst(o)))
        return rc;
    if (rec->kind == VT_RREC_END && o->last_at != SIZE_MAX && rec->seq >= o->last_seq &&
        rec->enter >= o->last_exit && rec->exit == rec->enter) {
        /* END goes after the last record's fields; its kind is one byte (kinds and bits
         * stay below 128) */
        size_t inmem = o->len - o->base; /* the last record is in buf: a spill comes before a record */
        if (inmem + 2 * VT_UVAR_MAX > o->cap) {
            uint8_t *nb = realloc(o->buf, inmem + 2 * VT_UVAR_MAX);
            if (!nb)
                return -ENOMEM;
            o->buf = nb;
            o->cap = inmem + 2 * VT_UVAR_MAX;
        }
        o->buf[o->last_at - o->base] |= VT_RREC_K_END;
        uint8_t *p = vt_put_uvar(o->buf + inmem, rec->seq - o->last_seq);
        p = vt_put_uvar(p, (uint64_t)(rec->enter - o->last_exit));
        o->len = o->base + (size_t)(p - o->buf);
        o->prev_seq = rec->seq;
        o->prev_time = rec->exit;
        o->last_at = SIZE_MAX;
        return 0;
    }
    return store(o, rec, 0, 0);
}

void vt_rrec_out_free(vt_rrec_out *o)
{
    free(o->buf);
    free(o->named);
    free(o->pending);
    free(o->spill);
    o->buf = o->named = o->pending = NULL;
    o->spill = NULL;
}


int vt_rrec_out_write_raw(vt_rrec_out *o, uint8_t *scratch, size_t cap)
{
    if (o->fd < 0)
        return -EBADF; /* detached (vtrace reduce): not the run time's */
    int drc = drop_provisional(o);
    if (drc)
        return drc;
    if (o->npending) {
        size_t need = vt_funcs_payload_size(o->fname, o->flayout, o->nfn, o->pending);
        if (need > cap)
            return -ENOMEM;
        size_t len = vt_funcs_payload_write(scratch, o->fname, o->flayout, o->nfn, o->pending);
        int rc = vt_block_write(o->fd, VT_BLOCK_FUNCS, scratch, len, 0, 0);
        if (rc)
            return rc;
        for (size_t i = 0; i < o->nfn; i++)
            if (o->pending[i]) {
                o->named[i] = 1;
                o->pending[i] = 0;
            }
        o->npending = 0;
    }
    int rc = o->len ? vt_block_write(o->fd, VT_BLOCK_REDUCED, o->buf, o->len, o->nblock, 0) : 0;
    o->len = 0;
    o->nblock = 0;
    return rc;
}

int vt_rrec_out_provisional(vt_rrec_out *o, const uint8_t *define, const uint8_t *rankdefs, size_t len)
{
    if (o->fd < 0)
        return -EBADF;
    int rc = drop_provisional(o);
    if (rc)
        return rc;
    off_t at = lseek(o->fd, 0, SEEK_CUR);
    if (at < 0)
        return -errno;
    uint8_t *names = malloc(o->nfn ? o->nfn : 1);
    if (!names)
        return -ENOMEM;
    for (size_t i = 0; i < o->nfn; i++)
        names[i] = o->pending[i] || (define && define[i] && !o->named[i]);
    rc = vt_funcs_block_write(o->fd, o->fname, o->flayout, o->nfn, names, 0, vt_rrec_zstd_level(VT_RREC_ZSTD_LEVEL, 0));
    free(names);
    if (!rc && o->len)
        rc = vt_block_write(o->fd, VT_BLOCK_REDUCED, o->buf, o->len, o->nblock, 0);
    if (!rc)
        rc = vt_block_write(o->fd, VT_BLOCK_RANKDEFS, rankdefs, len, 0, vt_rrec_zstd_level(VT_RREC_ZSTD_LEVEL, len));
    o->prov_at = (int64_t)at;
    if (rc)
        drop_provisional(o);
    return rc;
}
