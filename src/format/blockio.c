#include "vt_config.h"
#include "format/blockio.h"
#include "format/evdict.h"
#include "util/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

int vt_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -ENOSPC;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A block's header and payload in one writev(2) (one call a block, not two), until done. */
static int write_two(int fd, const void *a, size_t alen, const void *b, size_t blen)
{
    struct iovec v[2] = {{(void *)a, alen}, {(void *)b, blen}};
    struct iovec *p = v;
    int n = blen ? 2 : 1;
    while (n > 0) {
        ssize_t w = writev(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -ENOSPC;
        size_t k = (size_t)w;   /* a short write: on from where it stopped */
        while (n > 0 && k >= p->iov_len) {
            k -= p->iov_len;
            p++;
            n--;
        }
        if (n > 0) {
            p->iov_base = (uint8_t *)p->iov_base + k;
            p->iov_len -= k;
        }
    }
    return 0;
}

int vt_wbuf_put(vt_wbuf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 256;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (!np)
            return -ENOMEM;
        b->p = np;
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

void vt_wbuf_free(vt_wbuf *b)
{
    free(b->p);
    *b = (vt_wbuf){NULL, 0, 0};
}

int vt_file_header_write(int fd, const char magic[8], uint32_t value)
{
    uint8_t h[VT_FILE_HEADER_SIZE];
    vt_file_header_encode(h, magic, value);
    return vt_write_all(fd, h, sizeof h);
}

uint16_t vt_dict_check(const void *dict, size_t len)
{
    return (uint16_t)crc32(crc32(0L, Z_NULL, 0), dict, (uInt)len);
}

int vt_block_write(int fd, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level)
{
    return vt_block_write_dict(fd, type, payload, len, nrecords, zstd_level, NULL, 0);
}

#ifdef HAVE_ZSTD
/* The built-in dictionary digested for each level, once a process (the run time's
 * writer takes its lock, vtrace reduce and synth write from one thread; a race would
 * only make a CDict twice and free the loser's). */
static ZSTD_CDict *builtin_cdict(int level)
{
    static ZSTD_CDict *cd[20];
    if (level < 1 || level > 19)
        return NULL;
    ZSTD_CDict *c = __atomic_load_n(&cd[level], __ATOMIC_ACQUIRE);
    if (c)
        return c;
    size_t len;
    const void *dict = vt_evdict(&len);
    ZSTD_CDict *n = ZSTD_createCDict(dict, len, level);
    if (n && !__atomic_compare_exchange_n(&cd[level], &c, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        ZSTD_freeCDict(n);
        return c;
    }
    return n;
}

/* PAYLOAD compressed into PACKED (CAP bytes): against DICT (codec 2), the built-in
 * dictionary (BUILTIN: codec 3) or nothing (codec 1). With a dictionary the frames
 * leave out their size (the block header has it) and the dictionary's id (the header's
 * reserved field). Returns the frame's length or a zstd error. */
static size_t pack_payload(void *packed, size_t cap, const void *payload, size_t len, int level, const void *dict,
                       size_t dict_len, int builtin)
{
    if (!dict && !builtin)
        return ZSTD_compress(packed, cap, payload, len, level);
    ZSTD_CDict *cd = builtin ? builtin_cdict(level) : NULL;
    ZSTD_CCtx *cc = !builtin || cd ? ZSTD_createCCtx() : NULL;
    size_t n = !cc ? (size_t)-1
               : ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0)) ||
                       ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_dictIDFlag, 0)) ||
                       ZSTD_isError(cd ? ZSTD_CCtx_refCDict(cc, cd)
                                       : ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level)) ||
                       (!cd && ZSTD_isError(ZSTD_CCtx_loadDictionary(cc, dict, dict_len)))
                   ? (size_t)-1
                   : ZSTD_compress2(cc, packed, cap, payload, len);
    ZSTD_freeCCtx(cc);
    return n;
}
#endif

/* One block to FD, or appended to MEM when it is not NULL. */
static int block_write(int fd, vt_wbuf *mem, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level,
                       const void *dict, size_t dict_len, int builtin)
{
    if (len > VT_BLOCK_MAX_RAW)
        return -EFBIG;
    vt_block_header h = {VT_BLOCK_MAGIC, type, VT_CODEC_RAW, 0, (uint32_t)len, (uint32_t)len, 0, nrecords};
    const void *stored = payload;
    void *packed = NULL;
#ifdef HAVE_ZSTD
    /* a dictionary makes small payloads worth compressing (what they share with it) */
    if (zstd_level > 0 && (len > 64 || ((dict || builtin) && len > 8))) {
        size_t cap = ZSTD_compressBound(len);
        packed = malloc(cap);
        size_t n = packed ? pack_payload(packed, cap, payload, len, zstd_level, dict, dict_len, builtin) : (size_t)-1;
        if (!ZSTD_isError(n) && n < len) {
            stored = packed;
            h.codec = builtin ? VT_CODEC_ZSTD_BUILTIN : dict ? VT_CODEC_ZSTD_DICT : VT_CODEC_ZSTD;
            h.reserved = builtin ? VT_EVDICT_CHECK : dict ? vt_dict_check(dict, dict_len) : 0;
            h.stored_len = (uint32_t)n;
        }
    }
#else
    (void)zstd_level;
    (void)dict;
    (void)dict_len;
    (void)builtin;
#endif
    h.crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), stored, h.stored_len);
    uint8_t hb[VT_BLOCK_HEADER_SIZE];
    vt_block_header_encode(hb, &h);
    int rc;
    if (mem) {
        rc = vt_wbuf_put(mem, hb, sizeof hb);
        if (!rc)
            rc = vt_wbuf_put(mem, stored, h.stored_len);
    } else
        rc = write_two(fd, hb, sizeof hb, stored, h.stored_len);
    free(packed);
    return rc;
}

int vt_block_write_dict(int fd, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level,
                        const void *dict, size_t dict_len)
{
    /* event blocks (2.1): many small ones at scale, each decoded with the tables of the
     * built-in dictionary instead of tables of its own (doc/replay-scale.md) */
    return block_write(fd, NULL, type, payload, len, nrecords, zstd_level, dict, dict_len,
                       !dict && type == VT_BLOCK_EVENTS_COLS);
}

int vt_block_put(vt_wbuf *b, uint8_t type, const void *payload, size_t len, uint32_t nrecords, int zstd_level,
                 const void *dict, size_t dict_len)
{
    return block_write(-1, b, type, payload, len, nrecords, zstd_level, dict, dict_len,
                       !dict && type == VT_BLOCK_EVENTS_COLS);
}

size_t vt_funcs_payload_size(const char *const *name, const char *const *layout, size_t n, const uint8_t *define)
{
    size_t need = VT_UVAR_MAX + 2 * VT_UVAR_MAX * n;
    for (size_t i = 0; i < n; i++)
        if (!define || define[i])
            need += strlen(name[i]) + strlen(layout[i]);
    return need;
}

size_t vt_funcs_payload_write(uint8_t *out, const char *const *name, const char *const *layout, size_t n,
                              const uint8_t *define)
{
    uint8_t *w = vt_put_uvar(out, n);
    for (size_t i = 0; i < n; i++) {
        int on = !define || define[i];
        w = vt_put_str(w, on ? name[i] : "", on ? strlen(name[i]) : 0);
        w = vt_put_str(w, on ? layout[i] : "", on ? strlen(layout[i]) : 0);
    }
    return (size_t)(w - out);
}

uint8_t *vt_funcs_payload_encode(const char *const *name, const char *const *layout, size_t n, const uint8_t *define,
                                 size_t *len)
{
    uint8_t *p = malloc(vt_funcs_payload_size(name, layout, n, define));
    if (!p)
        return NULL;
    *len = vt_funcs_payload_write(p, name, layout, n, define);
    return p;
}

static int funcs_block(int fd, vt_wbuf *mem, const char *const *name, const char *const *layout, size_t n,
                       const uint8_t *define, int always, int zstd_level)
{
    int any = !define;
    for (size_t i = 0; i < n && !any; i++)
        any = define[i];
    if (!any && !always)
        return 0;
    size_t len;
    uint8_t *p = vt_funcs_payload_encode(name, layout, n, define, &len);
    if (!p)
        return -ENOMEM;
    int rc = block_write(fd, mem, VT_BLOCK_FUNCS, p, len, 0, zstd_level, NULL, 0, 0);
    free(p);
    return rc;
}

int vt_funcs_block_write(int fd, const char *const *name, const char *const *layout, size_t n, const uint8_t *define,
                         int always, int zstd_level)
{
    return funcs_block(fd, NULL, name, layout, n, define, always, zstd_level);
}

int vt_funcs_block_put(vt_wbuf *b, const char *const *name, const char *const *layout, size_t n,
                       const uint8_t *define, int always, int zstd_level)
{
    return funcs_block(-1, b, name, layout, n, define, always, zstd_level);
}
