/* Trace reader: definitions at open time, streaming event cursor (doc/format.md). */
#include "vt_config.h"
#include "format/reader.h"
#include "format/reader_priv.h"
#include "util/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

/* Largest raw block accepted; the format's limit. The fuzz build lowers it so that a
 * tiny input cannot make every run allocate a gigabyte. */
#ifndef VT_READER_MAX_RAW
#define VT_READER_MAX_RAW VT_BLOCK_MAX_RAW
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

/* Printable rendering of raw bytes ("VTRACE\0E"), for messages. */
static const char *escape_bytes(char *out, size_t cap, const uint8_t *p, size_t n)
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

static const char *block_type_name(unsigned type)
{
    switch (type) {
    case VT_BLOCK_FUNCS: return "FUNCS";
    case VT_BLOCK_EVENTS: return "EVENTS";
    case VT_BLOCK_RANKDEFS: return "RANKDEFS";
    case VT_BLOCK_GLOBAL: return "GLOBAL";
    case VT_BLOCK_REDUCED: return "REDUCED";
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

typedef struct arena {
    chunk *head;
} arena;

#define ARENA_CHUNK 65536u

static void *arena_alloc(arena *a, size_t n)
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

static void *arena_calloc(arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 2 / size)
        return NULL;
    void *p = arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

static char *arena_strndup(arena *a, const void *s, size_t len)
{
    char *p = arena_alloc(a, len + 1);
    if (p) {
        if (len)
            memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

static void arena_free(arena *a)
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

typedef struct buf {
    uint8_t *p;
    size_t cap;
} buf;

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

/* ------------------------------------------------------------------ sources */

/* A file to read: a descriptor or a memory buffer. */
typedef struct src {
    const char *path;
    int fd;
    const uint8_t *mem;
    uint64_t size;
} src_t;

static void src_close(src_t *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
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

/* ------------------------------------------------------------------ trace */

typedef struct rank_priv {
    uint64_t ev_begin, ev_end; /* offsets of the first EVENTS block and of RANKDEFS */
} rank_priv;

struct vt_trace {
    arena ar;
    char *dir;              /* "" in memory */
    const vt_mem_file *mem; /* memory files, or NULL */
    size_t nmem;
    const char *defs_path;
    char *version, *mpi_version, *config;
    uint64_t flags;
    uint32_t nranks;
    uint32_t defs_minor;
    uint64_t bytes;
    uint64_t nrecords;
    vt_rank *ranks;
    rank_priv *priv;
    vt_time_shift_fn shift;      /* vt_trace_set_time_shift(), NULL none */
    const void *shift_arg;
    int init_clock;             /* VTRACE_MODEL_CLOCK=init: offsets of the first synchronisation only */
};

/* Opens the file NAME of the trace (path for messages: dir/NAME, or NAME in memory). */
static int trace_src_open(const vt_trace *t, const char *path, const char *name, src_t *s, const char *what,
                          vt_error *err)
{
    s->path = path;
    s->fd = -1;
    s->mem = NULL;
    s->size = 0;
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
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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

/* ------------------------------------------------------------------ payload parser */

typedef struct pp {
    const uint8_t *begin, *p, *end;
    const char *path;
    uint64_t file_off;  /* file offset of begin (raw blocks) */
    uint64_t block_off; /* offset of the block header */
    int compressed;
    vt_error *err;
} pp;

static void pp_init(pp *r, const uint8_t *data, size_t len, const char *path, uint64_t block_off, int compressed,
                    vt_error *err)
{
    r->begin = r->p = data;
    r->end = data + len;
    r->path = path;
    r->block_off = block_off;
    r->file_off = block_off + VT_BLOCK_HEADER_SIZE;
    r->compressed = compressed;
    r->err = err;
}

static size_t pp_left(const pp *r) { return (size_t)(r->end - r->p); }

__attribute__((format(printf, 2, 3))) static int pp_err(pp *r, const char *fmt, ...)
{
    char msg[VT_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->compressed)
        return vt__seterr(r->err, r->path, r->block_off,
                          "%s (at byte %zu of the decoded payload of the zstd block at this offset)", msg,
                          (size_t)(r->p - r->begin));
    return vt__seterr(r->err, r->path, r->file_off + (uint64_t)(r->p - r->begin), "%s", msg);
}

static int pp_varint_err(pp *r, const char *what)
{
    size_t left = pp_left(r);
    if (left == 0)
        return pp_err(r, "expected %s, found end of payload", what);
    size_t i = 0;
    while (i < left && i < VT_UVAR_MAX && (r->p[i] & 0x80))
        i++;
    if (i == left)
        return pp_err(r, "expected %s, found a varint running past the end of the payload", what);
    return pp_err(r, "expected %s, found a varint over 64 bits", what);
}

/* Varints: most are one byte (deltas, small ids), decoded inline; the rest, and the
 * errors, out of line. */
static int pp_uvar_slow(pp *r, uint64_t *v, const char *what)
{
    if (vt_get_uvar(&r->p, r->end, v) == 0)
        return 0;
    return pp_varint_err(r, what);
}

static inline int pp_uvar(pp *r, uint64_t *v, const char *what)
{
    const uint8_t *p = r->p;
    if (r->end - p >= 3) {
        if (p[0] < 0x80) {
            *v = p[0];
            r->p = p + 1;
            return 0;
        }
        if (p[1] < 0x80) {
            *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
            r->p = p + 2;
            return 0;
        }
        if (p[2] < 0x80) {
            *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
            r->p = p + 3;
            return 0;
        }
    }
    return pp_uvar_slow(r, v, what);
}

static inline int pp_svar(pp *r, int64_t *v, const char *what)
{
    uint64_t u;
    if (pp_uvar(r, &u, what))
        return -1;
    *v = vt_unzigzag(u);
    return 0;
}

/* uvar that must be below limit. */
static int pp_index(pp *r, uint64_t *v, uint64_t limit, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_uvar(r, v, what))
        return -1;
    if (*v >= limit) {
        r->p = at;
        return pp_err(r, "expected %s below %llu, found %llu", what, (unsigned long long)limit, (unsigned long long)*v);
    }
    return 0;
}

/* Element count: each element takes at least min_bytes of the payload. */
static int pp_count(pp *r, uint64_t *n, size_t min_bytes, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_uvar(r, n, what))
        return -1;
    size_t most = pp_left(r) / (min_bytes ? min_bytes : 1);
    if (*n > most) {
        r->p = at;
        return pp_err(r, "expected %s at most %zu (bytes left in the payload), found %llu", what, most,
                      (unsigned long long)*n);
    }
    return 0;
}

/* str: uvar length (<= 65535), bytes; copied NUL-terminated into the arena. */
static int pp_strl(pp *r, arena *a, char **out, size_t *outlen, const char *what)
{
    const uint8_t *at = r->p;
    uint64_t len;
    if (pp_uvar(r, &len, what))
        return -1;
    if (len > VT_STR_MAX) {
        r->p = at;
        return pp_err(r, "expected %s of at most 65535 bytes, found length %llu", what, (unsigned long long)len);
    }
    if (len > pp_left(r)) {
        r->p = at;
        return pp_err(r, "expected %s of %llu bytes, found %zu bytes left in the payload", what,
                      (unsigned long long)len, pp_left(r) - (size_t)(r->p - at));
    }
    *out = arena_strndup(a, r->p, (size_t)len);
    if (!*out)
        return pp_err(r, "expected %s, found no memory to hold it", what);
    r->p += len;
    if (outlen)
        *outlen = (size_t)len;
    return 0;
}

static int pp_str(pp *r, arena *a, char **out, const char *what) { return pp_strl(r, a, out, NULL, what); }

/* svar holding a world rank or one of the negative peer values -1 to -4. */
static int pp_peer(pp *r, int64_t *v, uint32_t nranks, const char *what)
{
    const uint8_t *at = r->p;
    if (pp_svar(r, v, what))
        return -1;
    if (*v < VT_PEER_ROOT || *v >= (int64_t)nranks) {
        r->p = at;
        return pp_err(r, "expected %s (world rank below %u, or -1 to -4), found %lld", what, nranks, (long long)*v);
    }
    return 0;
}

static int pp_finish(pp *r, uint32_t minor, const char *what)
{
    /* A higher minor version may append fields at the end of a payload. */
    if (r->p != r->end && minor <= VT_FORMAT_MINOR)
        return pp_err(r, "expected end of the %s payload, found %zu more bytes", what, pp_left(r));
    return 0;
}

static int pp_nomem(pp *r, const char *what) { return pp_err(r, "expected %s, found no memory to hold it", what); }

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
    case VT_BLOCK_END:
        break;
    default:
        return vt__seterr(err, s->path, off + 4, "expected block type 1, 2, 3, 4, 5 or 15, found %u", h->type);
    }
    if (h->codec == VT_CODEC_ZSTD) {
#ifndef HAVE_ZSTD
        return vt__seterr(err, s->path, off + 5, "expected codec 0 (this reader was built without zstd), found 1");
#endif
    } else if (h->codec != VT_CODEC_RAW) {
        return vt__seterr(err, s->path, off + 5, "expected codec 0 (raw) or 1 (zstd), found %u", h->codec);
    }
    if (h->reserved != 0)
        return vt__seterr(err, s->path, off + 6, "expected reserved field 0, found %u", h->reserved);
    if (h->raw_len > VT_READER_MAX_RAW)
        return vt__seterr(err, s->path, off + 12, "expected raw length at most %u, found %u",
                          (unsigned)VT_READER_MAX_RAW, h->raw_len);
    if (h->codec == VT_CODEC_RAW && h->stored_len != h->raw_len)
        return vt__seterr(err, s->path, off + 8,
                          "expected stored length equal to the raw length %u (codec 0), found %u", h->raw_len,
                          h->stored_len);
    if (h->type != VT_BLOCK_EVENTS && h->type != VT_BLOCK_REDUCED && h->nrecords != 0)
        return vt__seterr(err, s->path, off + 20, "expected record count 0 in a %s block, found %u",
                          block_type_name(h->type), h->nrecords);
    if (h->type == VT_BLOCK_END && h->stored_len != 0)
        return vt__seterr(err, s->path, off + 8, "expected an empty END block, found %u payload bytes", h->stored_len);
    return 0;
}

/* Reads and checks the block header at off (<= s->size). A header or payload cut by
 * the end of the file is reported as a truncated file at off. */
static int read_block_header(const src_t *s, uint64_t off, vt_block_header *h, vt_error *err)
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
                          block_type_name(h->type), h->stored_len,
                          (unsigned long long)(left - VT_BLOCK_HEADER_SIZE));
    return 0;
}

/* Loads, checks (CRC) and decodes the payload of the block at off into *data. */
static int load_payload(const src_t *s, uint64_t off, const vt_block_header *h, buf *stored, buf *raw, void *dctx,
                        const uint8_t **data, vt_error *err)
{
    const uint8_t *sp;
    if (s->mem) {
        sp = s->mem + off + VT_BLOCK_HEADER_SIZE;
    } else {
        if (buf_reserve(stored, h->stored_len ? h->stored_len : 1))
            return vt__seterr(err, s->path, off, "expected a %s block of %u bytes, found no memory to hold it",
                              block_type_name(h->type), h->stored_len);
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
                          block_type_name(h->type), h->raw_len);
    size_t n = dctx ? ZSTD_decompressDCtx(dctx, raw->p, h->raw_len, sp, h->stored_len)
                    : ZSTD_decompress(raw->p, h->raw_len, sp, h->stored_len);
    if (ZSTD_isError(n))
        return vt__seterr(err, s->path, pay, "expected a valid zstd frame, found %s", ZSTD_getErrorName(n));
    if (n != h->raw_len)
        return vt__seterr(err, s->path, pay, "expected %u decoded bytes, found %zu", h->raw_len, n);
    *data = raw->p;
    return 0;
#else
    (void)raw;
    (void)dctx;
    return vt__seterr(err, s->path, off + 5, "expected codec 0 (this reader was built without zstd), found 1");
#endif
}

static int read_file_header(const src_t *s, const char magic[VT_MAGIC_LEN], const char *magic_text, uint32_t *minor,
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
        return vt__seterr(err, s->path, 0, "expected magic %s, found %s", magic_text, escape_bytes(e, sizeof e, h, 8));
    }
    unsigned major = vt_get_u16(h + 8);
    if (major != VT_FORMAT_MAJOR)
        return vt__seterr(err, s->path, 8, "expected major version %d, found %u", VT_FORMAT_MAJOR, major);
    *minor = vt_get_u16(h + 10);
    *value = vt_get_u32(h + 12);
    return 0;
}

/* ------------------------------------------------------------------ definitions */

static int parse_global(vt_trace *t, pp *r, uint32_t hdr_nranks)
{
    uint64_t n;
    if (pp_str(r, &t->ar, &t->version, "vtrace version string") ||
        pp_str(r, &t->ar, &t->mpi_version, "MPI library version string") ||
        pp_str(r, &t->ar, &t->config, "configuration string"))
        return -1;
    /* the run-time reduction decided with the offsets measured at MPI_Init (it runs
     * before the second synchronisation): analyses must use the same clock */
    t->init_clock = t->config && strstr(t->config, "VTRACE_MODEL_CLOCK=init\n") != NULL;
    const uint8_t *at = r->p;
    if (pp_count(r, &n, 6, "number of ranks"))
        return -1;
    if (n != hdr_nranks) {
        r->p = at;
        return pp_err(r, "expected %u ranks (as in the file header), found %llu", hdr_nranks, (unsigned long long)n);
    }
    t->nranks = hdr_nranks;
    t->ranks = calloc(n ? n : 1, sizeof *t->ranks);
    t->priv = calloc(n ? n : 1, sizeof *t->priv);
    if (!t->ranks || !t->priv)
        return pp_nomem(r, "the rank table");
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
            return pp_err(r, "expected same-clock flag 0 or 1, found %llu", (unsigned long long)same);
        }
        rk->clock.same_clock = (int)same;
        if (pp_str(r, &t->ar, &host, "hostname"))
            return -1;
        rk->global_hostname = host;
    }
    if (pp_uvar(r, &t->flags, "global flags"))
        return -1;
    return pp_finish(r, t->defs_minor, "GLOBAL");
}

/* The one-sided calls, whose p letter names a target rank and no message. */
static int is_one_sided(const char *name)
{
    static const char *const rma[] = {"MPI_Put", "MPI_Rput", "MPI_Get", "MPI_Rget", "MPI_Accumulate",
                                      "MPI_Raccumulate", "MPI_Get_accumulate", "MPI_Rget_accumulate",
                                      "MPI_Fetch_and_op", "MPI_Compare_and_swap"};
    for (size_t i = 0; i < sizeof rma / sizeof rma[0]; i++) {
        size_t n = strlen(rma[i]);
        if (!strncmp(name, rma[i], n) && (!name[n] || !strcmp(name + n, "_c")))
            return 1;
    }
    return 0;
}

static int parse_funcs(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    if (pp_count(r, &n, 2, "number of functions"))
        return -1;
    vt_function *f = arena_calloc(&t->ar, n ? n : 1, sizeof *f);
    if (!f)
        return pp_nomem(r, "the function table");
    for (uint64_t i = 0; i < n; i++) {
        char *name, *layout;
        if (pp_str(r, &t->ar, &name, "function name"))
            return -1;
        const uint8_t *at = r->p;
        size_t len;
        if (pp_strl(r, &t->ar, &layout, &len, "function layout"))
            return -1;
        unsigned fields = 0;
        for (size_t k = 0; k < len; k++) {
            unsigned bit = vt_layout_field(layout[k]);
            if (!bit) {
                char e[16];
                uint8_t c = (uint8_t)layout[k];
                r->p = at;
                return pp_err(r, "expected layout letters from \"cnptbPTBoqrRkmfO\" for %s, found '%s'", name,
                              escape_bytes(e, sizeof e, &c, 1));
            }
            if (fields & bit) {
                r->p = at;
                return pp_err(r, "expected each layout letter once for %s, found '%c' twice", name, layout[k]);
            }
            fields |= bit;
        }
        if ((fields & VT_F_PEER) && is_one_sided(name))
            fields = (fields & ~VT_F_PEER) | VT_F_TARGET;
        f[i].name = name;
        f[i].layout = layout;
        f[i].fields = fields;
    }
    rk->nfuncs = (size_t)n;
    rk->funcs = f;
    return pp_finish(r, rk->minor, "FUNCS");
}

static int parse_members(vt_trace *t, pp *r, uint32_t *size, const uint32_t **members, const char *what)
{
    uint64_t n;
    const uint8_t *at = r->p;
    if (pp_count(r, &n, 1, what))
        return -1;
    if (n > t->nranks) {
        r->p = at;
        return pp_err(r, "expected %s at most %u (number of ranks), found %llu", what, t->nranks,
                      (unsigned long long)n);
    }
    uint32_t *m = arena_calloc(&t->ar, n ? n : 1, sizeof *m);
    if (!m)
        return pp_nomem(r, what);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        if (pp_index(r, &v, t->nranks, "member world rank"))
            return -1;
        m[i] = (uint32_t)v;
    }
    *size = (uint32_t)n;
    *members = m;
    return 0;
}

static int parse_rankdefs(vt_trace *t, vt_rank *rk, pp *r)
{
    uint64_t n;
    char *s;

    if (pp_count(r, &n, 4, "number of call sites"))
        return -1;
    vt_callsite *cs = arena_calloc(&t->ar, n ? n : 1, sizeof *cs);
    if (!cs)
        return pp_nomem(r, "the call-site table");
    for (uint64_t i = 0; i < n; i++) {
        if (pp_uvar(r, &cs[i].address, "call-site address") || pp_str(r, &t->ar, &s, "call-site module path"))
            return -1;
        cs[i].module = s;
        if (pp_uvar(r, &cs[i].offset, "call-site offset in module") || pp_str(r, &t->ar, &s, "call-site symbol"))
            return -1;
        cs[i].symbol = s;
    }
    rk->ncallsites = (size_t)n;
    rk->callsites = cs;

    if (pp_count(r, &n, 6, "number of communicators"))
        return -1;
    vt_comm *cm = arena_calloc(&t->ar, n ? n : 1, sizeof *cm);
    if (!cm)
        return pp_nomem(r, "the communicator table");
    for (uint64_t i = 0; i < n; i++) {
        if (pp_uvar(r, &cm[i].id, "communicator id") || pp_uvar(r, &cm[i].flags, "communicator flags") ||
            parse_members(t, r, &cm[i].size, &cm[i].members, "communicator size") ||
            parse_members(t, r, &cm[i].remote_size, &cm[i].remote_members, "communicator remote size"))
            return -1;
        const uint8_t *at = r->p;
        if (pp_svar(r, &cm[i].parent, "parent communicator index"))
            return -1;
        if (cm[i].parent < -1 || cm[i].parent >= (int64_t)n) {
            r->p = at;
            return pp_err(r, "expected parent communicator index -1 to %lld, found %lld", (long long)n - 1,
                          (long long)cm[i].parent);
        }
        if (pp_str(r, &t->ar, &s, "communicator origin"))
            return -1;
        cm[i].how = s;
    }
    rk->ncomms = (size_t)n;
    rk->comms = cm;

    if (pp_count(r, &n, 2, "number of files"))
        return -1;
    vt_file *fl = arena_calloc(&t->ar, n ? n : 1, sizeof *fl);
    if (!fl)
        return pp_nomem(r, "the file table");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c;
        if (pp_str(r, &t->ar, &s, "file name") || pp_index(r, &c, rk->ncomms, "file communicator index"))
            return -1;
        fl[i].name = s;
        fl[i].comm = (uint32_t)c;
    }
    rk->nfiles = (size_t)n;
    rk->files = fl;

    if (pp_count(r, &n, 5, "number of profile entries"))
        return -1;
    vt_profile *pr = arena_calloc(&t->ar, n ? n : 1, sizeof *pr);
    if (!pr)
        return pp_nomem(r, "the profile");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t fn;
        if (pp_index(r, &fn, rk->nfuncs, "profile function id") || pp_uvar(r, &pr[i].calls, "profile calls") ||
            pp_uvar(r, &pr[i].time_ns, "profile time") || pp_uvar(r, &pr[i].bytes, "profile bytes") ||
            pp_uvar(r, &pr[i].records, "profile records written"))
            return -1;
        pr[i].fn = (uint32_t)fn;
    }
    rk->nprofile = (size_t)n;
    rk->profile = pr;

    char *host, *binding;
    if (pp_str(r, &t->ar, &host, "hostname") || pp_svar(r, &rk->core, "core") || pp_svar(r, &rk->numa, "NUMA node") ||
        pp_str(r, &t->ar, &binding, "binding") || pp_uvar(r, &rk->flags, "rank flags") ||
        pp_uvar(r, &rk->records_written, "records written") ||
        pp_uvar(r, &rk->calls_not_recorded, "calls not recorded") ||
        pp_svar(r, &rk->init_time, "initialisation time") || pp_svar(r, &rk->fini_time, "finalisation time"))
        return -1;
    rk->hostname = host;
    rk->binding = binding;
    /* 1.2 appended the measured overhead; a 1.0/1.1 file (or one written without it)
     * ends here and both stay 0. */
    if (rk->minor >= 2 && r->p != r->end) {
        if (pp_uvar(r, &rk->overhead_ps, "overhead per event (ps)") ||
            pp_uvar(r, &rk->copy_ps_per_byte, "copy cost per byte (ps)"))
            return -1;
        rk->has_overhead = 1;
    }
    return pp_finish(r, rk->minor, "RANKDEFS");
}

/* Function tables are usually identical on every rank: share the last one. */
typedef struct funcs_cache {
    uint8_t *payload;
    size_t len;
    size_t nfuncs;
    const vt_function *funcs;
} funcs_cache;

static int open_defs(vt_trace *t, const src_t *s, vt_error *err)
{
    uint32_t nranks;
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    int rc = -1;
    if (read_file_header(s, VT_MAGIC_DEFS, "VTRACE\\0D", &t->defs_minor, &nranks, err))
        return -1;
    if (nranks == 0)
        return vt__seterr(err, s->path, 12, "expected a number of ranks of at least 1, found 0");
    uint64_t off = VT_FILE_HEADER_SIZE;
    if (read_block_header(s, off, &h, err))
        goto out;
    if (h.type != VT_BLOCK_GLOBAL) {
        vt__seterr(err, s->path, off + 4, "expected a GLOBAL block, found a %s block (type %u)",
                   block_type_name(h.type), h.type);
        goto out;
    }
    if (load_payload(s, off, &h, &stored, &raw, NULL, &data, err))
        goto out;
    pp r;
    pp_init(&r, data, h.raw_len, s->path, off, h.codec != VT_CODEC_RAW, err);
    if (parse_global(t, &r, nranks))
        goto out;
    off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (read_block_header(s, off, &h, err))
        goto out;
    if (h.type != VT_BLOCK_END) {
        vt__seterr(err, s->path, off + 4, "expected an END block, found a %s block (type %u)", block_type_name(h.type),
                   h.type);
        goto out;
    }
    if (load_payload(s, off, &h, &stored, &raw, NULL, &data, err)) /* CRC and codec of the empty payload */
        goto out;
    off += VT_BLOCK_HEADER_SIZE;
    if (off != s->size) {
        vt__seterr(err, s->path, off, "expected end of file after END, found %llu more bytes",
                   (unsigned long long)(s->size - off));
        goto out;
    }
    t->bytes += s->size;
    rc = 0;
out:
    free(stored.p);
    free(raw.p);
    return rc;
}

static int open_rank(vt_trace *t, uint32_t rank, const src_t *s, funcs_cache *fc, vt_error *err)
{
    vt_rank *rk = &t->ranks[rank];
    rank_priv *rp = &t->priv[rank];
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    uint32_t value;
    int rc = -1;
    pp r;

    rk->path = s->path;
    rk->file_bytes = s->size;
    if (read_file_header(s, VT_MAGIC_RANK, "VTRACE\\0E", &rk->minor, &value, err))
        return -1;
    if (value != rank)
        return vt__seterr(err, s->path, 12, "expected rank %u in the file header, found %u", rank, value);

    uint64_t off = VT_FILE_HEADER_SIZE;
    if (read_block_header(s, off, &h, err))
        goto out;
    if (h.type != VT_BLOCK_FUNCS) {
        vt__seterr(err, s->path, off + 4, "expected a FUNCS block, found a %s block (type %u)", block_type_name(h.type),
                   h.type);
        goto out;
    }
    if (load_payload(s, off, &h, &stored, &raw, NULL, &data, err))
        goto out;
    if (fc->funcs && fc->len == h.raw_len && memcmp(fc->payload, data, h.raw_len) == 0) {
        rk->nfuncs = fc->nfuncs;
        rk->funcs = fc->funcs;
    } else {
        pp_init(&r, data, h.raw_len, s->path, off, h.codec != VT_CODEC_RAW, err);
        if (parse_funcs(t, rk, &r))
            goto out;
        /* cache tables parsed strictly (no trailing bytes of a higher minor) */
        uint8_t *copy = rk->minor <= VT_FORMAT_MINOR ? malloc(h.raw_len ? h.raw_len : 1) : NULL;
        if (copy) {
            memcpy(copy, data, h.raw_len);
            free(fc->payload);
            fc->payload = copy;
            fc->len = h.raw_len;
            fc->nfuncs = rk->nfuncs;
            fc->funcs = rk->funcs;
        }
    }
    off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;

    rp->ev_begin = off;
    for (;;) {
        if (read_block_header(s, off, &h, err))
            goto out;
        if (h.type == VT_BLOCK_RANKDEFS)
            break;
        /* the first event block says which kind of trace this rank file is */
        if (off == rp->ev_begin && h.type == VT_BLOCK_REDUCED)
            rk->reduced = 1;
        unsigned want = rk->reduced ? VT_BLOCK_REDUCED : VT_BLOCK_EVENTS;
        if (h.type != want) {
            vt__seterr(err, s->path, off + 4, "expected an %s or RANKDEFS block, found a %s block (type %u)",
                       block_type_name(want), block_type_name(h.type), h.type);
            goto out;
        }
        rk->nblocks++;
        rk->nrecords += h.nrecords;
        off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    }
    rp->ev_end = off;
    if (load_payload(s, off, &h, &stored, &raw, NULL, &data, err))
        goto out;
    pp_init(&r, data, h.raw_len, s->path, off, h.codec != VT_CODEC_RAW, err);
    if (parse_rankdefs(t, rk, &r))
        goto out;
    off += VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (read_block_header(s, off, &h, err))
        goto out;
    if (h.type != VT_BLOCK_END) {
        vt__seterr(err, s->path, off + 4, "expected an END block, found a %s block (type %u)", block_type_name(h.type),
                   h.type);
        goto out;
    }
    if (load_payload(s, off, &h, &stored, &raw, NULL, &data, err)) /* CRC and codec of the empty payload */
        goto out;
    off += VT_BLOCK_HEADER_SIZE;
    if (off != s->size) {
        vt__seterr(err, s->path, off, "expected end of file after END, found %llu more bytes",
                   (unsigned long long)(s->size - off));
        goto out;
    }
    t->bytes += s->size;
    t->nrecords += rk->nrecords;
    rc = 0;
out:
    free(stored.p);
    free(raw.p);
    return rc;
}

static char *path_join(arena *a, const char *dir, const char *name)
{
    if (!dir)
        return arena_strndup(a, name, strlen(name));
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = dl > 0 && dir[dl - 1] != '/';
    char *p = arena_alloc(a, dl + (size_t)slash + nl + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    if (slash)
        p[dl] = '/';
    memcpy(p + dl + (size_t)slash, name, nl + 1);
    return p;
}

static void rank_file_name(char out[32], uint32_t rank) { snprintf(out, 32, "rank-%06u.vte", rank); }

static int trace_load(vt_trace *t, vt_error *err)
{
    const char *dir = t->mem ? NULL : t->dir;
    char *path = path_join(&t->ar, dir, "vtrace.defs");
    if (!path)
        return vt__seterr(err, "vtrace.defs", 0, "expected vtrace.defs, found no memory to open it");
    t->defs_path = path;
    src_t s;
    if (trace_src_open(t, path, "vtrace.defs", &s, "the global definitions file vtrace.defs", err))
        return -1;
    int rc = open_defs(t, &s, err);
    src_close(&s);
    if (rc)
        return -1;
    funcs_cache fc = {0};
    for (uint32_t r = 0; r < t->nranks && rc == 0; r++) {
        char name[32];
        rank_file_name(name, r);
        path = path_join(&t->ar, dir, name);
        if (!path) {
            rc = vt__seterr(err, name, 0, "expected %s, found no memory to open it", name);
            break;
        }
        char what[64];
        snprintf(what, sizeof what, "the rank file of rank %u", r);
        if (trace_src_open(t, path, name, &s, what, err)) {
            rc = -1;
            break;
        }
        rc = open_rank(t, r, &s, &fc, err);
        src_close(&s);
    }
    free(fc.payload);
    return rc;
}

static int trace_new(vt_trace **out, vt_error *err, const char *dir)
{
    *out = NULL;
    vt_trace *t = calloc(1, sizeof *t);
    if (!t)
        return vt__seterr(err, dir, 0, "expected a trace, found no memory to open it");
    t->dir = strdup(dir);
    if (!t->dir) {
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
    arena_free(&t->ar);
    free(t->ranks);
    free(t->priv);
    free(t->dir);
    free(t);
}

/* ------------------------------------------------------------------ accessors */

unsigned vt_layout_field(char letter)
{
    switch (letter) {
    case 'c': return VT_F_COMM;
    case 'n': return VT_F_NEWCOMM;
    case 'p': return VT_F_PEER;
    case 't': return VT_F_TAG;
    case 'b': return VT_F_BYTES;
    case 'P': return VT_F_RPEER;
    case 'T': return VT_F_RTAG;
    case 'B': return VT_F_RBYTES;
    case 'o': return VT_F_ROOT;
    case 'q': return VT_F_COLLSEQ;
    case 'r': return VT_F_REQUEST;
    case 'R': return VT_F_STARTED;
    case 'k': return VT_F_DONE;
    case 'm': return VT_F_MSG;
    case 'f': return VT_F_FILE;
    case 'O': return VT_F_OFFSET;
    default: return 0;
    }
}

uint32_t vt_trace_nranks(const vt_trace *t) { return t ? t->nranks : 0; }
const char *vt_trace_dir(const vt_trace *t) { return t && t->dir ? t->dir : ""; }
const char *vt_trace_version(const vt_trace *t) { return t && t->version ? t->version : ""; }
const char *vt_trace_mpi_version(const vt_trace *t) { return t && t->mpi_version ? t->mpi_version : ""; }
const char *vt_trace_config(const vt_trace *t) { return t && t->config ? t->config : ""; }
uint64_t vt_trace_flags(const vt_trace *t) { return t ? t->flags : 0; }
uint64_t vt_trace_bytes(const vt_trace *t) { return t ? t->bytes : 0; }
uint64_t vt_trace_nrecords(const vt_trace *t) { return t ? t->nrecords : 0; }

const vt_rank *vt_trace_rank(const vt_trace *t, uint32_t rank)
{
    return t && rank < t->nranks ? &t->ranks[rank] : NULL;
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

void vt_trace_set_time_shift(vt_trace *t, vt_time_shift_fn fn, const void *arg)
{
    if (t) {
        t->shift = fn;
        t->shift_arg = arg;
    }
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
         * below 2^64 in magnitude, so the product fits an unsigned 128-bit integer */
        __int128 d = (__int128)c->off2 - c->off1;
        unsigned __int128 x = (unsigned __int128)((__int128)local_ns - c->t1);
        unsigned __int128 span = (unsigned __int128)((__int128)c->t2 - c->t1);
        unsigned __int128 mag = (unsigned __int128)(d < 0 ? -d : d) * x / span;
        off = (int64_t)(c->off1 + (d < 0 ? -(__int128)mag : (__int128)mag));
    }
    return (int64_t)((uint64_t)local_ns + (uint64_t)off + (uint64_t)fix);
}

/* ------------------------------------------------------------------ cursor */

struct vt_cursor {
    const vt_trace *t;
    const vt_rank *rk;
    src_t src;
    uint64_t pos, end;
    buf stored, raw;
    void *dctx;
    pp r;
    uint64_t block_off;
    uint32_t left;   /* records left in the current block */
    uint32_t inblock;
    uint64_t next_index;
    uint64_t next_callno; /* call records so far */
    uint64_t prev;   /* previous exit (two's complement) */
    uint64_t *started;
    size_t started_cap;
    vt_completion *done;
    size_t done_cap;
    /* reduced records */
    uint64_t prev_seq;
    vt_rmsg *rmsgs;
    size_t rmsgs_cap;
    vt_rssend *rssends;
    size_t rssends_cap;
    vt_rgate *rgates;
    size_t rgates_cap;
    int state; /* 0 reading, 1 end, -1 error */
    vt_error last;
};

int vt_cursor_open(const vt_trace *t, uint32_t rank, vt_cursor **out, vt_error *err)
{
    if (!out)
        return vt__seterr(err, "(cursor)", 0, "expected an output pointer, found NULL");
    *out = NULL;
    if (!t || rank >= t->nranks)
        return vt__seterr(err, t ? t->dir : "(null)", 0, "expected a rank below %u, found %u", t ? t->nranks : 0, rank);
    vt_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return vt__seterr(err, t->ranks[rank].path, 0, "expected a cursor, found no memory for it");
    c->t = t;
    c->rk = &t->ranks[rank];
    c->src.fd = -1;
    char name[32];
    rank_file_name(name, rank);
    if (trace_src_open(t, c->rk->path, name, &c->src, "the rank file", err)) {
        free(c);
        return -1;
    }
    if (c->src.size != c->rk->file_bytes) {
        vt__seterr(err, c->rk->path, 0, "expected a file of %llu bytes (as when opened), found %llu bytes",
                   (unsigned long long)c->rk->file_bytes, (unsigned long long)c->src.size);
        vt_cursor_close(c);
        return -1;
    }
    c->pos = t->priv[rank].ev_begin;
    c->end = t->priv[rank].ev_end;
    pp_init(&c->r, (const uint8_t *)"", 0, c->rk->path, 0, 0, err);
#ifdef HAVE_ZSTD
    c->dctx = ZSTD_createDCtx();
    if (!c->dctx) {
        vt__seterr(err, c->rk->path, 0, "expected a zstd context, found no memory for it");
        vt_cursor_close(c);
        return -1;
    }
#endif
    *out = c;
    return 0;
}

void vt_cursor_close(vt_cursor *c)
{
    if (!c)
        return;
    src_close(&c->src);
#ifdef HAVE_ZSTD
    ZSTD_freeDCtx(c->dctx);
#endif
    free(c->stored.p);
    free(c->raw.p);
    free(c->started);
    free(c->done);
    free(c->rmsgs);
    free(c->rssends);
    free(c->rgates);
    free(c);
}

/* Loads the next EVENTS block. 1: loaded, 0: no more blocks, -1: error. */
static int cursor_block(vt_cursor *c, vt_error *err)
{
    vt_block_header h;
    const uint8_t *data;
    if (c->pos >= c->end)
        return 0;
    if (read_block_header(&c->src, c->pos, &h, err))
        return -1;
    unsigned want = c->rk->reduced ? VT_BLOCK_REDUCED : VT_BLOCK_EVENTS;
    if (h.type != want)
        return vt__seterr(err, c->src.path, c->pos + 4, "expected an %s block, found a %s block (type %u)",
                          block_type_name(want), block_type_name(h.type), h.type);
    uint64_t next = c->pos + VT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_len;
    if (next > c->end)
        return vt__seterr(err, c->src.path, c->pos,
                          "expected EVENTS blocks ending at offset %llu, found a block ending at %llu",
                          (unsigned long long)c->end, (unsigned long long)next);
    if (load_payload(&c->src, c->pos, &h, &c->stored, &c->raw, c->dctx, &data, err))
        return -1;
    pp_init(&c->r, data, h.raw_len, c->src.path, c->pos, h.codec != VT_CODEC_RAW, err);
    c->block_off = c->pos;
    c->pos = next;
    uint64_t first;
    int64_t base;
    const uint8_t *at = c->r.p;
    if (pp_uvar(&c->r, &first, "first record index"))
        return -1;
    if (first != c->next_index) {
        c->r.p = at;
        return pp_err(&c->r, "expected first record index %llu, found %llu", (unsigned long long)c->next_index,
                      (unsigned long long)first);
    }
    if (pp_svar(&c->r, &base, "base time"))
        return -1;
    c->prev = (uint64_t)base;
    if (c->rk->reduced && pp_uvar(&c->r, &c->prev_seq, "base sequence number"))
        return -1;
    c->left = h.nrecords;
    c->inblock = 0;
    return 1;
}

static int decode_record(vt_cursor *c, vt_event *ev)
{
    pp *r = &c->r;
    const vt_rank *rk = c->rk;
    uint32_t nranks = c->t->nranks;
    uint64_t code, u;
    int64_t s;
    const uint8_t *at;

    /* a template copy: cheaper than memset and a dozen stores */
    static const vt_event none = {.fn = -1, .callsite = -1, .comm = -1, .newcomm = -1, .peer = VT_PEER_NONE,
                                  .tag = -1, .rpeer = VT_PEER_NONE, .rtag = -1, .root = VT_PEER_NONE,
                                  .collseq = VT_SEQ_NONE, .file = -1, .offset = -1};
    *ev = none;
    ev->index = c->next_index;
    ev->callno = c->next_callno;
    ev->block_offset = c->block_off;

    at = r->p;
    if (pp_uvar(r, &code, "record code"))
        return -1;
    ev->code = code;
    if (code < VT_CODE_FIRST_FN) {
        if (code != VT_CODE_FLUSH && code != VT_CODE_MARKER && code != VT_CODE_STOPPED) {
            r->p = at;
            return pp_err(r, "expected record code 1, 2, 3 or 16 and above, found %llu", (unsigned long long)code);
        }
    } else if (code - VT_CODE_FIRST_FN >= rk->nfuncs) {
        r->p = at;
        return pp_err(r, "expected a function id below %zu (record code below %llu), found code %llu", rk->nfuncs,
                      (unsigned long long)rk->nfuncs + VT_CODE_FIRST_FN, (unsigned long long)code);
    } else {
        ev->fn = (int64_t)(code - VT_CODE_FIRST_FN);
    }
    if (pp_svar(r, &s, "enter time delta") || pp_uvar(r, &u, "duration"))
        return -1;
    uint64_t enter = c->prev + (uint64_t)s;
    uint64_t exit_ = enter + u;
    ev->enter = (int64_t)enter;
    ev->exit = (int64_t)exit_;
    c->prev = exit_;

    if (ev->fn < 0) {
        if (code == VT_CODE_MARKER) {
            if (pp_uvar(r, &ev->marker_kind, "marker kind") || pp_svar(r, &ev->marker_value, "marker value"))
                return -1;
        } else if (code == VT_CODE_STOPPED) {
            if (pp_uvar(r, &ev->stop_reason, "stop reason"))
                return -1;
        }
        return 0;
    }

    const vt_function *f = &rk->funcs[ev->fn];
    if (rk->ncallsites == 0) {
        at = r->p;
        if (pp_uvar(r, &u, "call-site index"))
            return -1;
        if (u != 0) {
            r->p = at;
            return pp_err(r, "expected call-site index 0 (the rank has no call sites), found %llu",
                          (unsigned long long)u);
        }
    } else {
        if (pp_index(r, &u, rk->ncallsites, "call-site index"))
            return -1;
        ev->callsite = (int64_t)u;
    }
    ev->fields = f->fields | VT_F_CALLSITE;

    for (const char *l = f->layout; *l; l++) {
        switch (*l) {
        case 'c':
            if (pp_index(r, &u, rk->ncomms, "communicator index"))
                return -1;
            ev->comm = (int64_t)u;
            break;
        case 'n':
            at = r->p;
            if (pp_svar(r, &s, "created communicator index"))
                return -1;
            if (s < -1 || s >= (int64_t)rk->ncomms) {
                r->p = at;
                return pp_err(r, "expected created communicator index -1 to %lld, found %lld",
                              (long long)rk->ncomms - 1, (long long)s);
            }
            ev->newcomm = s;
            break;
        case 'p':
            if (pp_peer(r, &ev->peer, nranks, "send peer"))
                return -1;
            break;
        case 't':
            if (pp_svar(r, &ev->tag, "send tag"))
                return -1;
            break;
        case 'b':
            if (pp_uvar(r, &ev->bytes, "send bytes"))
                return -1;
            break;
        case 'P':
            if (pp_peer(r, &ev->rpeer, nranks, "receive peer"))
                return -1;
            break;
        case 'T':
            if (pp_svar(r, &ev->rtag, "receive tag"))
                return -1;
            break;
        case 'B':
            if (pp_uvar(r, &ev->rbytes, "receive bytes"))
                return -1;
            break;
        case 'o':
            if (pp_peer(r, &ev->root, nranks, "root"))
                return -1;
            break;
        case 'q':
            if (pp_uvar(r, &ev->collseq, "collective sequence number"))
                return -1;
            break;
        case 'r':
            if (pp_uvar(r, &ev->request, "request id"))
                return -1;
            break;
        case 'R': {
            uint64_t n;
            if (pp_count(r, &n, 1, "number of started requests"))
                return -1;
            if (n > c->started_cap) {
                uint64_t *p = realloc(c->started, (size_t)n * sizeof *p);
                if (!p)
                    return pp_nomem(r, "the started requests");
                c->started = p;
                c->started_cap = (size_t)n;
            }
            for (uint64_t i = 0; i < n; i++)
                if (pp_uvar(r, &c->started[i], "started request id"))
                    return -1;
            ev->nstarted = (size_t)n;
            ev->started = n ? c->started : NULL;
            break;
        }
        case 'k': {
            uint64_t n;
            if (pp_count(r, &n, 5, "number of completions"))
                return -1;
            if (n > c->done_cap) {
                vt_completion *p = realloc(c->done, (size_t)n * sizeof *p);
                if (!p)
                    return pp_nomem(r, "the completions");
                c->done = p;
                c->done_cap = (size_t)n;
            }
            for (uint64_t i = 0; i < n; i++) {
                vt_completion *d = &c->done[i];
                if (pp_uvar(r, &d->request, "completed request id") || pp_uvar(r, &d->flags, "completion flags"))
                    return -1;
                if (pp_peer(r, &d->peer, nranks, "completion peer") || pp_svar(r, &d->tag, "completion tag") ||
                    pp_uvar(r, &d->bytes, "completion bytes"))
                    return -1;
            }
            ev->ndone = (size_t)n;
            ev->done = n ? c->done : NULL;
            break;
        }
        case 'm':
            if (pp_uvar(r, &ev->msg, "matched-message id"))
                return -1;
            break;
        case 'f':
            if (pp_index(r, &u, rk->nfiles, "file index"))
                return -1;
            ev->file = (int64_t)u;
            break;
        case 'O':
            if (pp_svar(r, &ev->offset, "file offset"))
                return -1;
            break;
        default:
            return pp_err(r, "expected a known layout letter, found '%c'", *l);
        }
    }
    return 0;
}

/* The framing both kinds of records share: the next record's payload position, across
 * blocks. 1: a record is next (decode it, then call cursor_advance); 0: end; -1: error
 * (in c->last). */
static int cursor_ready(vt_cursor *c, const char *payload)
{
    if (c->state < 0)
        return -1;
    if (c->state > 0)
        return 0;
    c->r.err = &c->last;
    while (c->left == 0) {
        if (c->r.p != c->r.end) {
            pp_err(&c->r, "expected end of the %s payload after %u records (block header), found %zu more bytes",
                   payload, c->inblock, pp_left(&c->r));
            c->state = -1;
            return -1;
        }
        int rc = cursor_block(c, &c->last);
        if (rc < 0) {
            c->state = -1;
            return -1;
        }
        if (rc == 0) {
            c->state = 1;
            return 0;
        }
        c->r.err = &c->last;
    }
    if (c->r.p == c->r.end) {
        pp_err(&c->r, "expected %u more records (block header), found end of payload", c->left);
        c->state = -1;
        return -1;
    }
    return 1;
}

/* After a record was decoded (ok == 0) or failed to (ok != 0): the cursor's result. */
static int cursor_advance(vt_cursor *c, int ok, vt_error *err)
{
    if (ok != 0) {
        c->state = -1;
        if (err)
            *err = c->last;
        return -1;
    }
    c->left--;
    c->inblock++;
    c->next_index++;
    return 1;
}

static int cursor_fail(vt_cursor *c, vt_error *err)
{
    if (err)
        *err = c->last;
    return -1;
}

int vt_cursor_next(vt_cursor *c, vt_event *ev, vt_error *err)
{
    if (!c || !ev)
        return vt__seterr(err, "(cursor)", 0, "expected a cursor and an event, found NULL");
    if (c->rk->reduced)
        return vt__seterr(err, c->rk->path, 0, "expected a full trace (EVENTS blocks), found a reduced trace: "
                          "this tool needs every event");
    int rc = cursor_ready(c, "EVENTS");
    if (rc <= 0)
        return rc < 0 ? cursor_fail(c, err) : 0;
    if (cursor_advance(c, decode_record(c, ev), err) < 0)
        return -1;
    c->next_callno += ev->fn >= 0;
    return 1;
}

/* ------------------------------------------------------------------ reduced records */

int vt_trace_is_reduced(const vt_trace *t)
{
    if (!t || t->nranks == 0)
        return 0;
    for (uint32_t r = 0; r < t->nranks; r++)
        if (!t->ranks[r].reduced)
            return 0;
    return 1;
}

/* Grows an array of the cursor to hold n elements of size sz. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < n)
        nc *= 2;
    void *q = realloc(*p, nc * sz);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int decode_rrec(vt_cursor *c, vt_rrec *rec)
{
    pp *r = &c->r;
    const vt_rank *rk = c->rk;
    uint32_t nranks = c->t->nranks;
    uint64_t u, kind, n;
    int64_t sv;
    const uint8_t *at;

    memset(rec, 0, sizeof *rec);
    rec->index = c->next_index;
    rec->fn = -1;
    rec->callsite = -1;
    rec->block_offset = c->block_off;
    at = r->p;
    if (pp_uvar(r, &kind, "reduced record kind"))
        return -1;
    if (kind < VT_RREC_START || kind > VT_RREC_END) {
        r->p = at;
        return pp_err(r, "expected reduced record kind 1 to 5, found %llu", (unsigned long long)kind);
    }
    rec->kind = (unsigned)kind;
    if (pp_uvar(r, &u, "sequence number delta"))
        return -1;
    if (u > UINT64_MAX - c->prev_seq) {
        r->p = at;
        return pp_err(r, "expected a sequence number below 2^64, found an overflow");
    }
    rec->seq = c->prev_seq + u;
    c->prev_seq = rec->seq;
    if (pp_svar(r, &sv, "enter time delta") || pp_uvar(r, &u, "duration"))
        return -1;
    uint64_t enter = c->prev + (uint64_t)sv;
    rec->enter = (int64_t)enter;
    rec->exit = (int64_t)(enter + u);
    c->prev = enter + u;
    rec->rstar = rec->enter;
    if (kind == VT_RREC_START || kind == VT_RREC_END)
        return 0;
    at = r->p;
    if (pp_uvar(r, &u, "function id + 1"))
        return -1;
    if (u > rk->nfuncs) {
        r->p = at;
        return pp_err(r, "expected a function id + 1 of at most %zu, found %llu", rk->nfuncs, (unsigned long long)u);
    }
    rec->fn = (int64_t)u - 1;
    at = r->p;
    if (pp_uvar(r, &u, "call-site index + 1"))
        return -1;
    if (u > rk->ncallsites) {
        r->p = at;
        return pp_err(r, "expected a call-site index + 1 of at most %zu, found %llu", rk->ncallsites,
                      (unsigned long long)u);
    }
    rec->callsite = (int64_t)u - 1;
    if (kind == VT_RREC_CAND)
        return 0;
    if (kind == VT_RREC_NBCINIT) {
        if (grow((void **)&c->rgates, &c->rgates_cap, 1, sizeof *c->rgates))
            return pp_nomem(r, "a gate");
        vt_rgate *g = &c->rgates[0];
        memset(g, 0, sizeof *g);
        at = r->p;
        if (pp_uvar(r, &u, "initiation flags"))
            return -1;
        if (u > VT_RREC_F_CAND) {
            r->p = at;
            return pp_err(r, "expected initiation flags 0 or 1, found %llu", (unsigned long long)u);
        }
        rec->flags = (unsigned)u;
        if (pp_uvar(r, &g->comm, "communicator id") || pp_uvar(r, &g->collseq, "collective sequence number") ||
            pp_index(r, &u, (uint64_t)nranks + 1, "number of members"))
            return -1;
        g->nmembers = (uint32_t)u;
        g->nonblocking = 1;
        rec->gates = g;
        rec->ngates = 1;
        return 0;
    }
    /* COMP */
    at = r->p;
    if (pp_uvar(r, &u, "completion flags"))
        return -1;
    if (u > 7) {
        r->p = at;
        return pp_err(r, "expected completion flags 0 to 7, found %llu", (unsigned long long)u);
    }
    rec->flags = (unsigned)u;
    if (pp_uvar(r, &u, "R* - enter"))
        return -1;
    rec->rstar = rec->enter + (int64_t)u;
    if (pp_count(r, &n, 5, "number of messages"))
        return -1;
    if (grow((void **)&c->rmsgs, &c->rmsgs_cap, n, sizeof *c->rmsgs))
        return pp_nomem(r, "the messages of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rmsg *m = &c->rmsgs[i];
        memset(m, 0, sizeof *m);
        uint64_t src, sync;
        if (pp_index(r, &src, nranks, "sender rank") || pp_uvar(r, &m->send_seq, "send sequence number") ||
            pp_svar(r, &sv, "send time - enter") || pp_uvar(r, &m->bytes, "message bytes") ||
            pp_index(r, &sync, 2, "synchronous flag"))
            return -1;
        m->src = (uint32_t)src;
        m->S = rec->enter + sv;
        m->sync = (int)sync;
        if (sync) {
            if (pp_uvar(r, &m->post_seq, "posting call's sequence number") || pp_svar(r, &sv, "posting time - enter"))
                return -1;
            m->P = rec->enter + sv;
        }
    }
    rec->msgs = c->rmsgs;
    rec->nmsgs = (size_t)n;
    if (pp_count(r, &n, 4, "number of synchronous sends"))
        return -1;
    if (grow((void **)&c->rssends, &c->rssends_cap, n, sizeof *c->rssends))
        return pp_nomem(r, "the synchronous sends of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rssend *x = &c->rssends[i];
        uint64_t dst;
        if (pp_index(r, &dst, nranks, "receiver rank") || pp_uvar(r, &x->send_seq, "send sequence number") ||
            pp_svar(r, &sv, "send time - enter") || pp_uvar(r, &x->bytes, "message bytes"))
            return -1;
        x->dst = (uint32_t)dst;
        x->S = rec->enter + sv;
    }
    rec->ssends = c->rssends;
    rec->nssends = (size_t)n;
    if (pp_count(r, &n, 4, "number of gates"))
        return -1;
    if (grow((void **)&c->rgates, &c->rgates_cap, n, sizeof *c->rgates))
        return pp_nomem(r, "the gates of a record");
    for (uint64_t i = 0; i < n; i++) {
        vt_rgate *g = &c->rgates[i];
        uint64_t nb;
        if (pp_uvar(r, &g->comm, "communicator id") || pp_uvar(r, &g->collseq, "collective sequence number") ||
            pp_index(r, &u, (uint64_t)nranks + 1, "number of members") || pp_index(r, &nb, 2, "non-blocking flag"))
            return -1;
        g->nmembers = (uint32_t)u;
        g->nonblocking = (int)nb;
    }
    rec->gates = c->rgates;
    rec->ngates = (size_t)n;
    return 0;
}

int vt_cursor_next_reduced(vt_cursor *c, vt_rrec *rec, vt_error *err)
{
    if (!c || !rec)
        return vt__seterr(err, "(cursor)", 0, "expected a cursor and a record, found NULL");
    if (!c->rk->reduced)
        return vt__seterr(err, c->rk->path, 0, "expected a reduced trace (REDUCED blocks), found a full trace");
    int rc = cursor_ready(c, "REDUCED");
    if (rc <= 0)
        return rc < 0 ? cursor_fail(c, err) : 0;
    return cursor_advance(c, decode_rrec(c, rec), err);
}

int vt_trace_raw_block(const vt_trace *t, uint32_t rank, unsigned type, uint8_t **payload, size_t *len, vt_error *err)
{
    *payload = NULL;
    *len = 0;
    if (!t)
        return vt__seterr(err, "(trace)", 0, "expected an open trace, found none");
    int defs = type == VT_BLOCK_GLOBAL;
    if (!defs && rank >= t->nranks)
        return vt__seterr(err, t->dir, 0, "expected a rank below %u, found %u", t->nranks, rank);
    char name[32];
    if (defs)
        snprintf(name, sizeof name, "vtrace.defs");
    else
        rank_file_name(name, rank);
    const char *path = defs ? t->defs_path : t->ranks[rank].path;
    src_t s;
    if (trace_src_open(t, path, name, &s, "a trace file", err))
        return -1;
    buf stored = {0}, raw = {0};
    const uint8_t *data;
    vt_block_header h;
    int rc = -1;
    uint64_t off = type == VT_BLOCK_RANKDEFS ? t->priv[rank].ev_end : VT_FILE_HEADER_SIZE;
    if (read_block_header(&s, off, &h, err))
        goto out;
    if (h.type != type) {
        vt__seterr(err, s.path, off + 4, "expected a %s block, found a %s block (type %u)", block_type_name(type),
                   block_type_name(h.type), h.type);
        goto out;
    }
    if (load_payload(&s, off, &h, &stored, &raw, NULL, &data, err))
        goto out;
    *payload = malloc(h.raw_len ? h.raw_len : 1);
    if (!*payload) {
        vt__seterr(err, s.path, off, "expected memory for a %u-byte payload, found none", h.raw_len);
        goto out;
    }
    memcpy(*payload, data, h.raw_len);
    *len = h.raw_len;
    rc = 0;
out:
    free(stored.p);
    free(raw.p);
    src_close(&s);
    return rc;
}
