/* The reader's lowest layer (doc/format.md, "Files" and "Blocks"): error messages, the
 * arena holding the definitions, growable buffers, reading a trace file (a descriptor or
 * a memory buffer), the payload parser's out-of-line parts, block and file headers, and
 * loading a block's payload (CRC check, zstd). Calls no other reader file. */
#include "vt_config.h"
#include "format/reader.h"
#include "format/reader_priv.h"
#include "format/evdict.h"
#include "format/blockio.h"
#include "util/blockpool.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#define VT_STR_MAX 65535u

/* ------------------------------------------------------------------ errors */

int vt__seterr(vt_error *err, const char *path, uint64_t off, const char *fmt, ...)
{
    if (!err)
        return -1;
    int n = snprintf(err->msg, sizeof err->msg, "%s: offset %llu: ", path ? path : "?", (unsigned long long)off);
    if (n < 0 || (size_t)n >= sizeof err->msg)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

int vt_error_set(vt_error *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Printable rendering of raw bytes ("VTRACE\0E"), for messages. */
const char *vt__escape_bytes(char *out, size_t cap, const uint8_t *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        uint8_t c = p[i];
        if (c == 0) {
            out[o++] = '\\';
            out[o++] = '0';
        } else if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    out[o] = 0;
    return out;
}

const char *vt__block_type_name(unsigned type)
{
    switch (type) {
    case VT_BLOCK_FUNCS: return "FUNCS";
    case VT_BLOCK_EVENTS: return "EVENTS";
    case VT_BLOCK_RANKDEFS: return "RANKDEFS";
    case VT_BLOCK_DICT: return "DICT";
    case VT_BLOCK_GLOBAL: return "GLOBAL";
    case VT_BLOCK_REDUCED: return "REDUCED";
    case VT_BLOCK_EVENTS_COLS: return "EVENTS_COLS";
    case VT_BLOCK_REDUCED_COLS: return "REDUCED_COLS";
    case VT_BLOCK_END: return "END";
    default: return "unknown";
    }
}

/* ------------------------------------------------------------------ arena */

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    alignas(max_align_t) unsigned char data[];
} chunk;

#define ARENA_CHUNK 65536u

void *vt__arena_alloc(arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        chunk *c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        if (n > ARENA_CHUNK && a->head) {
            /* a big block of its own: keep filling the current chunk */
            c->next = a->head->next;
            a->head->next = c;
            c->used = n;
            return c->data;
        }
        c->next = a->head;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

void *vt__arena_calloc(arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 2 / size)
        return NULL;
    void *p = vt__arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *vt__arena_strndup(arena *a, const void *s, size_t len)
{
    char *p = vt__arena_alloc(a, len + 1);
    if (p) {
        if (len)
            memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

void vt__arena_free(arena *a)
{
    chunk *c = a->head;
    while (c) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}

/* ------------------------------------------------------------------ growable buffer */

static int buf_reserve(buf *b, size_t n)
{
    if (n <= b->cap && b->p)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n)
        cap = cap > SIZE_MAX / 2 ? n : cap * 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* ------------------------------------------------------------------ the dictionary */

int vt__dict_init(trace_dict *d, const uint8_t *p, size_t len)
{
    d->p = p;
    d->len = len;
    d->check = vt_dict_check(p, len);
    d->ddict = NULL;
#ifdef HAVE_ZSTD
    d->ddict = ZSTD_createDDict(p, len);
    return d->ddict ? 0 : -1;
#else
    return 0;
#endif
}

/* The built-in dictionary of codec 3 (2.1), digested once a process: a race makes it
 * twice and frees the loser's. */
const trace_dict *vt__builtin_dict(void)
{
    static trace_dict *builtin;
    trace_dict *d = __atomic_load_n(&builtin, __ATOMIC_ACQUIRE);
    if (d)
        return d;
    trace_dict *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    size_t len;
    const uint8_t *p = vt_evdict(&len);
    (void)vt__dict_init(n, p, len); /* without its digest: decoded with the raw bytes */
    if (!__atomic_compare_exchange_n(&builtin, &d, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        vt__dict_free(n);
        free(n);
        return d;
    }
    return n;
}

void vt__dict_free(trace_dict *d)
{
#ifdef HAVE_ZSTD
    ZSTD_freeDDict(d->ddict);
#endif
    d->ddict = NULL;
}

/* ------------------------------------------------------------------ sources */

struct fd_pool {
    struct pool_slot {
        src_t *owner;   /* NULL: free */
        int used;       /* read since the hand last passed (the clock's second chance) */
    } *slot;
    int cap, hand;
    int dirfd;          /* the trace directory, or -1 */
    void *dctx;
    fd_scratch scratch;
};

fd_scratch *vt__fd_pool_scratch(fd_pool *p) { return &p->scratch; }

fd_pool *vt__fd_pool_new(void)
{
    fd_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    struct rlimit rl;
    rlim_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    p->cap = lim == RLIM_INFINITY || lim / 4 > 512 ? 512 : lim / 4 < 4 ? 4 : (int)(lim / 4);
    p->dirfd = -1;
    p->slot = calloc((size_t)p->cap, sizeof *p->slot);
    if (!p->slot) {
        free(p);
        return NULL;
    }
#ifdef HAVE_ZSTD
    p->dctx = ZSTD_createDCtx(); /* NULL: each block decoded without a context */
#endif
    /* the decoded blocks of the cursors: 64 MB (thousands of ranks' blocks), or
     * VTRACE_TEST_BLOCK_BUDGET bytes (the tests) */
    const char *b = getenv("VTRACE_TEST_BLOCK_BUDGET");
    p->scratch.budget = b && *b ? strtoull(b, NULL, 10) : (uint64_t)64 << 20;
    p->scratch.blocks = vt_blockpool_new(); /* NULL: the cursors' blocks are malloc's */
    return p;
}

void vt__fd_pool_free(fd_pool *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->cap; i++)
        if (p->slot[i].owner) {
            close(p->slot[i].owner->fd);
            p->slot[i].owner->fd = -1;
            p->slot[i].owner->pool = NULL;
        }
    if (p->dirfd >= 0)
        close(p->dirfd);
#ifdef HAVE_ZSTD
    ZSTD_freeDCtx(p->dctx);
#endif
    free(p->scratch.stored.p);
    free(p->scratch.raw.p);
    free(p->scratch.holders);
    free(p->scratch.opened);
    free(p->scratch.decvals.v);
    vt_blockpool_destroy(p->scratch.blocks);
    free(p->slot);
    free(p);
}

void *vt__fd_pool_dctx(fd_pool *p) { return p ? p->dctx : NULL; }

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif

void vt__fd_pool_dir(fd_pool *p, const char *dir)
{
    if (p && p->dirfd < 0 && dir && *dir)
        p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC); /* (-1: by path) */
}

/* O_NONBLOCK: a FIFO in place of a trace file must not wait for a writer */
#define SRC_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK)

static int pool_shrink(fd_pool *p);

/* Opens S's file (by its name in the trace directory P holds, or by its path). Out of
 * descriptors (the limit is shared with other pools, spill files and the caller's own
 * files), the pool gives up some of its own and the open is tried again. */
static int src_open(fd_pool *p, const src_t *s)
{
    for (;;) {
        int fd = p && p->dirfd >= 0 && s->name ? openat(p->dirfd, s->name, SRC_FLAGS) : open(s->path, SRC_FLAGS);
        if (fd >= 0 || (errno != EMFILE && errno != ENFILE) || !pool_shrink(p))
            return fd;
    }
}

/* PATH's end when it is NAME (path_join), else NULL. */
static const char *name_in(const char *path, const char *name)
{
    size_t pl = strlen(path), nl = strlen(name);
    return nl && pl >= nl && strcmp(path + pl - nl, name) == 0 && strchr(name, '/') == NULL ? path + pl - nl : NULL;
}

/* A slot for S: a free one, or the least recently read one's (its file is closed). */
static void pool_take(fd_pool *p, src_t *s)
{
    for (;;) {
        struct pool_slot *sl = &p->slot[p->hand];
        int at = p->hand;
        p->hand = (p->hand + 1) % p->cap;
        if (sl->owner && sl->used) {
            sl->used = 0;
            continue;
        }
        if (sl->owner) {
            close(sl->owner->fd);
            sl->owner->fd = -1;
        }
        sl->owner = s;
        sl->used = 1;
        s->slot = at;
        return;
    }
}

/* Halves P's slots, closing the files of the slots given up (down to one slot, whose
 * file is closed last). Returns whether a file was closed, 0 when P holds none. */
static int pool_shrink(fd_pool *p)
{
    if (!p)
        return 0;
    int closed = 0;
    while (!closed) {
        int keep = p->cap > 1 ? p->cap / 2 : 0;
        for (int i = keep; i < p->cap; i++) {
            src_t *o = p->slot[i].owner;
            if (o) {
                close(o->fd);
                o->fd = -1;
                p->slot[i].owner = NULL;
                closed = 1;
            }
        }
        if (keep == 0)
            return closed;
        p->cap = keep;
        p->hand %= keep;
    }
    return closed;
}

void vt__src_pool(src_t *s, fd_pool *p)
{
    if (!p || s->mem || s->fd < 0)
        return;
    s->pool = p;
    pool_take(p, s);
}

/* Opens a pooled source's file again, in the pool. */
static int pool_reopen(src_t *s, vt_error *err)
{
    int fd = src_open(s->pool, s);
    if (fd < 0)
        return vt__seterr(err, s->path, 0, "expected the rank file (opened again), found none (%s)", strerror(errno));
    pool_take(s->pool, s);
    s->fd = fd;
    return 0;
}

void vt__src_close(src_t *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        if (s->pool)
            s->pool->slot[s->slot].owner = NULL;
    }
    s->fd = -1;
    s->pool = NULL;
}

/* Reads len bytes at off (off + len <= s->size, checked by the caller). */
static int src_read(const src_t *s, uint64_t off, void *out, size_t len, vt_error *err)
{
    if (off > s->size || len > s->size - off)
        return vt__seterr(err, s->path, off, "expected %zu bytes, found end of file", len);
    if (s->mem) {
        if (len)
            memcpy(out, s->mem + off, len);
        return 0;
    }
    if (s->win && off + len <= s->win_len) {
        if (len)
            memcpy(out, s->win + off, len);
        return 0;
    }
    if (s->pool) {
        /* the pool's bookkeeping is the reader's, not the caller's: a const source still
         * has its descriptor opened again, and marked as read */
        src_t *m = (src_t *)s;
        if (m->fd < 0 && pool_reopen(m, err))
            return -1;
        m->pool->slot[m->slot].used = 1;
    }
    uint8_t *p = out;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(s->fd, p + done, len - done, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return vt__seterr(err, s->path, off + done, "expected %zu readable bytes, found a read error (%s)",
                              len - done, strerror(errno));
        }
        if (n == 0)
            return vt__seterr(err, s->path, off + done, "expected %zu bytes, found end of file (the file shrank)",
                              len - done);
        done += (size_t)n;
    }
    return 0;
}

/* Opens the file NAME of the trace (path for messages: dir/NAME, or NAME in memory). */
int vt__trace_src_open(const vt_trace *t, const char *path, const char *name, src_t *s, const char *what,
                       vt_error *err)
{
    s->path = path;
    s->fd = -1;
    s->mem = NULL;
    s->size = 0;
    s->pool = NULL;
    s->slot = -1;
    s->win = NULL;
    s->win_len = 0;
    s->name = name_in(path, name);
    s->dctx = t->pool ? t->pool->dctx : NULL;
    s->dict = t->zdict.p ? &t->zdict : NULL;
    if (t->mem) {
        for (size_t i = 0; i < t->nmem; i++) {
            if (t->mem[i].name && strcmp(t->mem[i].name, name) == 0) {
                s->mem = t->mem[i].data ? t->mem[i].data : (const uint8_t *)"";
                s->size = t->mem[i].data ? t->mem[i].size : 0;
                return 0;
            }
        }
        return vt__seterr(err, path, 0, "expected %s, found none (no such file)", what);
    }
    int fd = src_open(t->pool, s);
    if (fd < 0)
        return vt__seterr(err, path, 0, "expected %s, found none (%s)", what, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return vt__seterr(err, path, 0, "expected %s, found an unreadable file (%s)", what, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return vt__seterr(err, path, 0, "expected %s (a regular file), found another kind of file", what);
    }
    s->fd = fd;
    s->size = (uint64_t)st.st_size;
    return 0;
}

int vt__trace_src_pooled(const vt_trace *t, uint32_t rank, src_t *s, const char *what, vt_error *err)
{
    const char *path = t->ranks[rank].path;
    char name[32];
    vt__rank_file_name(name, rank);
    if (t->mem || !t->pool) {
        if (vt__trace_src_open(t, path, name, s, what, err))
            return -1;
        vt__src_pool(s, t->pool);
        return 0;
    }
    s->path = path;
    s->fd = -1;
    s->mem = NULL;
    s->size = 0;
    s->slot = -1;
    s->win = NULL;
    s->win_len = 0;
    s->name = name_in(path, name);
    s->dctx = t->pool->dctx;
    s->dict = t->zdict.p ? &t->zdict : NULL;
    s->pool = NULL;
    const rank_priv *rp = &t->priv[rank];
    if (rp->kept) {
        /* the bytes its cursor reads, as read when the trace was opened (a read past them
         * opens the file, in the pool) */
        s->win = rp->kept;
        s->win_len = rp->kept_len;
        s->size = t->ranks[rank].file_bytes;
        s->pool = t->pool;
        return 0;
    }
    struct stat st;
    if (t->pool->dirfd >= 0 && s->name ? fstatat(t->pool->dirfd, s->name, &st, 0) != 0 : stat(path, &st) != 0)
        return vt__seterr(err, path, 0, "expected %s, found none (%s)", what, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return vt__seterr(err, path, 0, "expected %s (a regular file), found another kind of file", what);
    s->size = (uint64_t)st.st_size;
    s->pool = t->pool; /* (opened at its first read) */
    return 0;
}

int vt__src_prefetch(src_t *s, buf *b, size_t max, vt_error *err)
{
    if (s->mem)
        return 0;
    size_t n = s->size < max ? (size_t)s->size : max;
    if (n == 0 || buf_reserve(b, n))
        return 0; /* (no memory: read piece by piece) */
    s->win_len = 0;
    if (src_read(s, 0, b->p, n, err))
        return -1;
    s->win = b->p;
    s->win_len = n;
    return 0;
}

/* "rank-%06u.vte", without snprintf (about 1,000 instructions a rank file) */
void vt__rank_file_name(char out[32], uint32_t rank)
{
    char d[10];
    int n = 0;
    do {
        d[n++] = (char)('0' + rank % 10);
        rank /= 10;
    } while (rank);
    memcpy(out, "rank-", 5);
    char *o = out + 5;
    for (int i = n; i < 6; i++)
        *o++ = '0';
    while (n)
        *o++ = d[--n];
    memcpy(o, ".vte", 5);
}

/* ------------------------------------------------------------------ payload parser (out of line) */

int vt__pp_err(pp *r, const char *fmt, ...)
{
    char msg[VT_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->compressed)
        return vt__seterr(r->err, r->path, r->block_off, "%s (at byte %zu of the %s payload of the %s block at this offset)",
                          msg, (size_t)(r->p - r->begin), r->compressed == PP_UNPACKED ? "unpacked" : "decoded",
                          r->compressed == PP_UNPACKED ? "columns" : "zstd");
    return vt__seterr(r->err, r->path, r->file_off + (uint64_t)(r->p - r->begin), "%s", msg);
}

static int pp_varint_err(pp *r, const char *what)
{
    size_t left = pp_left(r);
    if (left == 0)
        return vt__pp_err(r, "expected %s, found end of payload", what);
    size_t i = 0;
    while (i < left && i < VT_UVAR_MAX && (r->p[i] & 0x80))
        i++;
    if (i == left)
        return vt__pp_err(r, "expected %s, found a varint running past the end of the payload", what);
    return vt__pp_err(r, "expected %s, found a varint over 64 bits", what);
}

/* The varints pp_uvar() leaves (longer ones, the payload's last bytes), and the errors. */
int vt__pp_uvar_slow(pp *r, uint64_t *v, const char *what)
{
    if (vt_get_uvar(&r->p, r->end, v) == 0)
        return 0;
    return pp_varint_err(r, what);
}

/* str: uvar length (<= 65535), bytes: *at and *len, r past them. */
static int pp_span(pp *r, const uint8_t **at_out, size_t *len_out, const char *what)
{
    const uint8_t *at = r->p;
    uint64_t len;
    if (pp_uvar(r, &len, what))
        return -1;
    if (len > VT_STR_MAX) {
        r->p = at;
        return vt__pp_err(r, "expected %s of at most 65535 bytes, found length %llu", what, (unsigned long long)len);
    }
    if (len > pp_left(r)) {
        r->p = at;
        return vt__pp_err(r, "expected %s of %llu bytes, found %zu bytes left in the payload", what,
                          (unsigned long long)len, pp_left(r) - (size_t)(r->p - at));
    }
    *at_out = r->p;
    *len_out = (size_t)len;
    r->p += len;
    return 0;
}

/* str copied NUL-terminated into the arena. */
int vt__pp_strl(pp *r, arena *a, char **out, size_t *outlen, const char *what)
{
    const uint8_t *p;
    size_t len;
    if (pp_span(r, &p, &len, what))
        return -1;
    *out = vt__arena_strndup(a, p, len);
    if (!*out)
        return vt__pp_err(r, "expected %s, found no memory to hold it", what);
    if (outlen)
        *outlen = len;
    return 0;
}

static uint64_t str_hash(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

/* The entry of (P, LEN) in T: its string, or an empty slot. */
static struct strtab_ent *strtab_find(strtab *t, const uint8_t *p, size_t len, uint64_t h)
{
    for (size_t i = (size_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        struct strtab_ent *e = &t->e[i];
        if (!e->s || (e->len == len && memcmp(e->s, p, len) == 0))
            return e;
    }
}

static int strtab_grow(strtab *t)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    struct strtab_ent *old = t->e, *e = calloc(cap, sizeof *e);
    if (!e)
        return -1;
    size_t ocap = t->cap;
    t->e = e;
    t->cap = cap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].s)
            *strtab_find(t, (const uint8_t *)old[i].s, old[i].len, str_hash((const uint8_t *)old[i].s, old[i].len)) =
                old[i];
    free(old);
    return 0;
}

int vt__pp_istr(pp *r, arena *a, strtab *t, const char **out, const char *what)
{
    const uint8_t *p;
    size_t len;
    if (pp_span(r, &p, &len, what))
        return -1;
    if (2 * (t->n + 1) > t->cap && strtab_grow(t))
        return vt__pp_err(r, "expected %s, found no memory to hold it", what);
    uint64_t h = str_hash(p, len);
    struct strtab_ent *e = strtab_find(t, p, len, h);
    if (!e->s) {
        if (!(e->s = vt__arena_strndup(a, p, len)))
            return vt__pp_err(r, "expected %s, found no memory to hold it", what);
        e->len = len;
        t->n++;
    }
    *out = e->s;
    return 0;
}

void vt__strtab_free(strtab *t)
{
    free(t->e);
    t->e = NULL;
    t->cap = t->n = 0;
}

int vt__pp_str(pp *r, arena *a, char **out, const char *what) { return vt__pp_strl(r, a, out, NULL, what); }

int vt__pp_finish(pp *r, uint32_t version, const char *what)
{
    /* A higher minor version may append fields at the end of a payload (the major is
     * one this reader knows: a higher version is a higher minor of the newest). */
    if (r->p != r->end && version <= VT_FORMAT_VERSION)
        return vt__pp_err(r, "expected end of the %s payload, found %zu more bytes", what, pp_left(r));
    return 0;
}

int vt__pp_nomem(pp *r, const char *what) { return vt__pp_err(r, "expected %s, found no memory to hold it", what); }

/* ------------------------------------------------------------------ blocks */

static int check_header_fields(const src_t *s, uint64_t off, const vt_block_header *h, vt_error *err)
{
    if (h->magic != VT_BLOCK_MAGIC)
        return vt__seterr(err, s->path, off, "expected block magic VBLK, found 0x%08x", h->magic);
    switch (h->type) {
    case VT_BLOCK_FUNCS:
    case VT_BLOCK_EVENTS:
    case VT_BLOCK_RANKDEFS:
    case VT_BLOCK_GLOBAL:
    case VT_BLOCK_REDUCED:
    case VT_BLOCK_EVENTS_COLS:
    case VT_BLOCK_REDUCED_COLS:
    case VT_BLOCK_DICT:
    case VT_BLOCK_END:
        break;
    default:
        return vt__seterr(err, s->path, off + 4, "expected block type 1 to 8 or 15, found %u", h->type);
    }
    if (h->codec == VT_CODEC_ZSTD || h->codec == VT_CODEC_ZSTD_DICT || h->codec == VT_CODEC_ZSTD_BUILTIN) {
#ifndef HAVE_ZSTD
        return vt__seterr(err, s->path, off + 5, "expected codec 0 (this reader was built without zstd), found %u",
                          h->codec);
#endif
    } else if (h->codec != VT_CODEC_RAW) {
        return vt__seterr(err, s->path, off + 5, "expected codec 0 (raw), 1 (zstd), 2 (zstd, dictionary) or 3 (zstd, "
                          "built-in dictionary), found %u",
                          h->codec);
    }
    /* codecs 2 and 3: the dictionary's check, compared when the payload is loaded */
    if (h->reserved != 0 && h->codec != VT_CODEC_ZSTD_DICT && h->codec != VT_CODEC_ZSTD_BUILTIN)
        return vt__seterr(err, s->path, off + 6, "expected reserved field 0, found %u", h->reserved);
    if (h->raw_len > VT_READER_MAX_RAW)
        return vt__seterr(err, s->path, off + 12, "expected raw length at most %u, found %u",
                          (unsigned)VT_READER_MAX_RAW, h->raw_len);
    if (h->codec == VT_CODEC_RAW && h->stored_len != h->raw_len)
        return vt__seterr(err, s->path, off + 8,
                          "expected stored length equal to the raw length %u (codec 0), found %u", h->raw_len,
                          h->stored_len);
    if (h->type != VT_BLOCK_EVENTS && h->type != VT_BLOCK_EVENTS_COLS && h->type != VT_BLOCK_REDUCED &&
        h->type != VT_BLOCK_REDUCED_COLS && h->nrecords != 0)
        return vt__seterr(err, s->path, off + 20, "expected record count 0 in a %s block, found %u",
                          vt__block_type_name(h->type), h->nrecords);
    if (h->type == VT_BLOCK_END && h->stored_len != 0)
        return vt__seterr(err, s->path, off + 8, "expected an empty END block, found %u payload bytes", h->stored_len);
    return 0;
}

/* Reads and checks the block header at off (<= s->size). A header or payload cut by
 * the end of the file is reported as a truncated file at off. */
int vt__read_block_header(const src_t *s, uint64_t off, vt_block_header *h, vt_error *err)
{
    uint64_t left = s->size - off;
    if (left == 0)
        return vt__seterr(err, s->path, off, "expected block header or END, found end of file (truncated file)");
    if (left < VT_BLOCK_HEADER_SIZE)
        return vt__seterr(
            err, s->path, off,
            "expected block header or END, found end of file (truncated file: %llu bytes of a block header)",
            (unsigned long long)left);
    uint8_t hb[VT_BLOCK_HEADER_SIZE];
    if (src_read(s, off, hb, sizeof hb, err))
        return -1;
    vt_block_header_decode(hb, h);
    if (check_header_fields(s, off, h, err))
        return -1;
    if (h->stored_len > left - VT_BLOCK_HEADER_SIZE)
        return vt__seterr(err, s->path, off,
                          "expected block header or END, found end of file (truncated file: a %s block of %u payload "
                          "bytes, %llu present)",
                          vt__block_type_name(h->type), h->stored_len,
                          (unsigned long long)(left - VT_BLOCK_HEADER_SIZE));
    return 0;
}

int vt__block_cut(const src_t *s, uint64_t off, vt_error *err)
{
    uint64_t left = off < s->size ? s->size - off : 0;
    if (left < VT_BLOCK_HEADER_SIZE)
        return 1;
    uint8_t hb[VT_BLOCK_HEADER_SIZE];
    vt_block_header h;
    if (src_read(s, off, hb, sizeof hb, err))
        return -1;
    vt_block_header_decode(hb, &h);
    if (check_header_fields(s, off, &h, err))
        return -1;
    return h.stored_len > left - VT_BLOCK_HEADER_SIZE;
}

/* Loads, checks (CRC) and decodes the payload of the block at off into *data. */
int vt__load_payload(const src_t *s, uint64_t off, const vt_block_header *h, buf *stored, buf *raw, void *dctx,
                     const uint8_t **data, vt_error *err)
{
    const uint8_t *sp;
    if (s->mem) {
        sp = s->mem + off + VT_BLOCK_HEADER_SIZE;
    } else if (s->win && off + VT_BLOCK_HEADER_SIZE + h->stored_len <= s->win_len) {
        sp = s->win + off + VT_BLOCK_HEADER_SIZE; /* (the caller checked that it is in the file) */
    } else {
        if (buf_reserve(stored, h->stored_len ? h->stored_len : 1))
            return vt__seterr(err, s->path, off, "expected a %s block of %u bytes, found no memory to hold it",
                              vt__block_type_name(h->type), h->stored_len);
        if (src_read(s, off + VT_BLOCK_HEADER_SIZE, stored->p, h->stored_len, err))
            return -1;
        sp = stored->p;
    }
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), sp, h->stored_len);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    crc = h->crc; /* fuzz builds only: let mutated payloads reach the parsers */
#endif
    if (crc != h->crc)
        return vt__seterr(err, s->path, off + 16, "expected CRC-32 0x%08x (block header), found 0x%08x (payload)",
                          h->crc, crc);
    if (h->codec == VT_CODEC_RAW) {
        *data = sp;
        (void)raw;
        (void)dctx;
        return 0;
    }
#ifdef HAVE_ZSTD
    uint64_t pay = off + VT_BLOCK_HEADER_SIZE;
    int builtin = h->codec == VT_CODEC_ZSTD_BUILTIN;
    int with_dict = h->codec == VT_CODEC_ZSTD_DICT || builtin;
    const trace_dict *dict = builtin ? vt__builtin_dict() : s->dict;
    if (builtin && !dict)
        return vt__seterr(err, s->path, off, "expected memory for the built-in dictionary (codec 3), found none");
    if (with_dict && !dict)
        return vt__seterr(err, s->path, off + 5,
                          "expected codec 0 or 1 (vtrace.defs has no DICT block for codec 2), found codec 2");
    if (with_dict && h->reserved != dict->check)
        return vt__seterr(err, s->path, off + 6, "expected dictionary check 0x%04x (%s), found 0x%04x", dict->check,
                          builtin ? "the built-in dictionary of codec 3" : "vtrace.defs' DICT block", h->reserved);
    unsigned long long cs = ZSTD_getFrameContentSize(sp, h->stored_len);
    if (cs == ZSTD_CONTENTSIZE_ERROR)
        return vt__seterr(err, s->path, pay, "expected a zstd frame, found invalid data");
    if (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != h->raw_len)
        return vt__seterr(err, s->path, pay, "expected a zstd frame of %u bytes (raw length), found one of %llu bytes",
                          h->raw_len, cs);
    size_t fs = ZSTD_findFrameCompressedSize(sp, h->stored_len);
    if (ZSTD_isError(fs) || fs != h->stored_len)
        return vt__seterr(err, s->path, pay, "expected one zstd frame of %u bytes, found %s", h->stored_len,
                          ZSTD_isError(fs) ? ZSTD_getErrorName(fs) : "a shorter frame followed by other data");
    if (buf_reserve(raw, h->raw_len ? h->raw_len : 1))
        return vt__seterr(err, s->path, off, "expected a %s block of %u decoded bytes, found no memory to hold it",
                          vt__block_type_name(h->type), h->raw_len);
    if (!dctx)
        dctx = s->dctx; /* ZSTD_decompress makes (and clears) a 100 KB context a call */
    ZSTD_DCtx *own = with_dict && !dctx ? ZSTD_createDCtx() : NULL;
    if (own)
        dctx = own;
    if (with_dict && !dctx)
        return vt__seterr(err, s->path, off, "expected memory for a zstd context, found none");
    size_t n = with_dict && dict->ddict
                   ? ZSTD_decompress_usingDDict(dctx, raw->p, h->raw_len, sp, h->stored_len, dict->ddict)
               : with_dict ? ZSTD_decompress_usingDict(dctx, raw->p, h->raw_len, sp, h->stored_len, dict->p, dict->len)
               : dctx      ? ZSTD_decompressDCtx(dctx, raw->p, h->raw_len, sp, h->stored_len)
                         : ZSTD_decompress(raw->p, h->raw_len, sp, h->stored_len);
    ZSTD_freeDCtx(own);
    if (ZSTD_isError(n))
        return vt__seterr(err, s->path, pay, "expected a valid zstd frame, found %s", ZSTD_getErrorName(n));
    if (n != h->raw_len)
        return vt__seterr(err, s->path, pay, "expected %u decoded bytes, found %zu", h->raw_len, n);
    *data = raw->p;
    return 0;
#else
    (void)raw;
    (void)dctx;
    return vt__seterr(err, s->path, off + 5, "expected codec 0 (this reader was built without zstd), found %u",
                      h->codec);
#endif
}

/* Reads the header of the block at off, which must be a TYPE block, and loads its
 * payload into *data. */
int vt__load_block(const src_t *s, uint64_t off, unsigned type, vt_block_header *h, buf *stored, buf *raw,
                   const uint8_t **data, vt_error *err)
{
    if (vt__read_block_header(s, off, h, err))
        return -1;
    if (h->type != type)
        return vt__seterr(err, s->path, off + 4, "expected %s %s block, found a %s block (type %u)",
                          type == VT_BLOCK_END ? "an" : "a", vt__block_type_name(type), vt__block_type_name(h->type),
                          h->type);
    return vt__load_payload(s, off, h, stored, raw, NULL, data, err);
}

/* The END block at off that closes a file, and the end of the file right after it. */
int vt__read_end(const src_t *s, uint64_t off, buf *stored, buf *raw, vt_error *err)
{
    vt_block_header h;
    const uint8_t *data;
    if (vt__load_block(s, off, VT_BLOCK_END, &h, stored, raw, &data, err)) /* CRC and codec of the empty payload */
        return -1;
    off += VT_BLOCK_HEADER_SIZE;
    if (off != s->size)
        return vt__seterr(err, s->path, off, "expected end of file after END, found %llu more bytes",
                          (unsigned long long)(s->size - off));
    return 0;
}

int vt__read_file_header(const src_t *s, const char magic[VT_MAGIC_LEN], const char *magic_text, uint32_t *version,
                         uint32_t *value, vt_error *err)
{
    if (s->size < VT_FILE_HEADER_SIZE)
        return vt__seterr(err, s->path, 0, "expected a file header of 16 bytes, found %llu bytes",
                          (unsigned long long)s->size);
    uint8_t h[VT_FILE_HEADER_SIZE];
    if (src_read(s, 0, h, sizeof h, err))
        return -1;
    if (memcmp(h, magic, VT_MAGIC_LEN) != 0) {
        char e[64];
        return vt__seterr(err, s->path, 0, "expected magic %s, found %s", magic_text,
                          vt__escape_bytes(e, sizeof e, h, 8));
    }
    unsigned major = vt_get_u16(h + 8);
    if (major < VT_FORMAT_MAJOR_OLDEST || major > VT_FORMAT_MAJOR)
        return vt__seterr(err, s->path, 8, "expected major version %d to %d, found %u", VT_FORMAT_MAJOR_OLDEST,
                          VT_FORMAT_MAJOR, major);
    *version = VT_VERSION(major, vt_get_u16(h + 10));
    *value = vt_get_u32(h + 12);
    return 0;
}
