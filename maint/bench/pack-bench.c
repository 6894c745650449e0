/* The cost and the gain of packing event blocks in columns (src/format/evcols.c) on a
 * real rank file: for each EVENTS block of RANKFILE (a trace written with
 * VTRACE_COMPRESS=0), the time per record to pack and unpack it, and its bytes as it
 * is, packed, and compressed with zstd at a few levels (packed and not). The function
 * table is the rank file's own FUNCS blocks or, when it has none (format 1.5), the one
 * in DEFSFILE (the trace's vtrace.defs). Built and run by maint/bench/pack-bench.sh. */
#include "format/evcols.h"
#include "util/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The file at PATH when it begins with MAGIC (a WHAT file); NULL, said on stderr, otherwise. */
static uint8_t *read_trace_file(const char *path, const char *magic, const char *what, size_t *len)
{
    uint8_t *b = slurp(path, len);
    if (!b || *len < VT_FILE_HEADER_SIZE || memcmp(b, magic, VT_MAGIC_LEN)) {
        fprintf(stderr, "pack-bench: cannot read %s: expected a vtrace %s file\n", path, what);
        free(b);
        return NULL;
    }
    return b;
}

static size_t zsize(const void *p, size_t n, int level, double *secs)
{
    size_t cap = ZSTD_compressBound(n);
    void *o = malloc(cap);
    double t0 = now();
    size_t r = ZSTD_compress(o, cap, p, n, level);
    *secs = now() - t0;
    free(o);
    return ZSTD_isError(r) ? 0 : r;
}

/* A block's payload, decompressed into *dec (to be freed) when its codec is zstd; NULL
 * when it does not decode. */
static const uint8_t *payload_of(const uint8_t *h, uint8_t **dec)
{
    uint32_t stored = vt_get_u32(h + 8), rawlen = vt_get_u32(h + 12);
    const uint8_t *pl = h + VT_BLOCK_HEADER_SIZE;
    *dec = NULL;
    if (h[5] != 1)
        return pl;
    *dec = malloc(rawlen ? rawlen : 1);
    if (!*dec || ZSTD_isError(ZSTD_decompress(*dec, rawlen, pl, stored)))
        return NULL;
    return *dec;
}

/* Appends the entries of a FUNCS payload to the layout table. */
static int add_funcs(const uint8_t *p, const uint8_t *end, const char ***layout, size_t *nfn)
{
    uint64_t n, l;
    if (vt_get_uvar(&p, end, &n) || n > (uint64_t)(end - p))
        return -1;
    const char **t = realloc(*layout, (*nfn + n) * sizeof *t);
    if (!t)
        return -1;
    *layout = t;
    for (uint64_t i = 0; i < n; i++) {
        if (vt_get_uvar(&p, end, &l) || l > (uint64_t)(end - p))
            return -1;
        p += l; /* the name */
        if (vt_get_uvar(&p, end, &l) || l > (uint64_t)(end - p))
            return -1;
        char *s = malloc(l + 1);
        memcpy(s, p, l);
        s[l] = 0;
        t[(*nfn)++] = s;
        p += l;
    }
    return 0;
}

/* The function table of the FUNCS blocks of a file (a rank file or vtrace.defs). */
static int read_funcs(const char *path, const uint8_t *file, size_t flen, const char ***layout, size_t *nfn)
{
    size_t off = VT_FILE_HEADER_SIZE;
    while (off + VT_BLOCK_HEADER_SIZE <= flen) {
        const uint8_t *h = file + off;
        uint32_t stored = vt_get_u32(h + 8), rawlen = vt_get_u32(h + 12);
        if (off + VT_BLOCK_HEADER_SIZE + stored > flen)
            break;
        if (h[4] == VT_BLOCK_FUNCS) {
            uint8_t *dec;
            const uint8_t *pl = payload_of(h, &dec);
            if (!pl || add_funcs(pl, pl + rawlen, layout, nfn)) {
                fprintf(stderr, "pack-bench: %s: the FUNCS block at offset %zu does not decode\n", path, off);
                return -1;
            }
            free(dec);
        }
        off += VT_BLOCK_HEADER_SIZE + stored;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: pack-bench RANKFILE [DEFSFILE] (written with VTRACE_COMPRESS=0)\n");
        return 2;
    }
    size_t flen;
    uint8_t *file = read_trace_file(argv[1], VT_MAGIC_RANK, "rank", &flen);
    if (!file)
        return 1;
    const char **layout = NULL;
    size_t nfn = 0, off = VT_FILE_HEADER_SIZE;
    if (read_funcs(argv[1], file, flen, &layout, &nfn))
        return 1;
    if (!nfn && argc == 3) {
        size_t dlen;
        uint8_t *defs = read_trace_file(argv[2], VT_MAGIC_DEFS, "definitions", &dlen);
        if (!defs)
            return 1;
        if (read_funcs(argv[2], defs, dlen, &layout, &nfn))
            return 1;
        free(defs);
    }
    if (!nfn) {
        fprintf(stderr, "pack-bench: no function table in %s%s%s\n", argv[1], argc == 3 ? " or " : "",
                argc == 3 ? argv[2] : "");
        return 1;
    }
    uint64_t records = 0, raw = 0, packed = 0;
    double t_pack = 0, t_unpack = 0;
    static const int levels[] = {1, 3, 9};
    uint64_t zraw[3] = {0}, zpacked[3] = {0};
    double tzraw[3] = {0}, tzpacked[3] = {0};
    while (off + VT_BLOCK_HEADER_SIZE <= flen) {
        const uint8_t *h = file + off;
        uint8_t type = h[4];
        uint32_t stored = vt_get_u32(h + 8), rawlen = vt_get_u32(h + 12), nrec = vt_get_u32(h + 20);
        const uint8_t *pl;
        if (off + VT_BLOCK_HEADER_SIZE + stored > flen)
            break;
        if (type != VT_BLOCK_EVENTS && type != VT_BLOCK_EVENTS_COLS) {
            off += VT_BLOCK_HEADER_SIZE + stored;
            continue;
        }
        uint8_t *dec;
        pl = payload_of(h, &dec);
        if (!pl) {
            fprintf(stderr, "pack-bench: %s: the block at offset %zu does not decode\n", argv[1], off);
            return 1;
        }
        if (type == VT_BLOCK_EVENTS) {
            vt_evcols_funcs fn = {layout, nfn};
            uint8_t *out, *back;
            size_t olen, blen;
            char err[256];
            double t0 = now();
            if (vt_evcols_pack(pl, rawlen, nrec, &fn, &out, &olen, err, sizeof err)) {
                fprintf(stderr, "pack-bench: %s\n", err);
                return 1;
            }
            double t1 = now();
            if (vt_evcols_unpack(out, olen, nrec, &fn, (size_t)1 << 30, &back, &blen, err, sizeof err) || blen != rawlen ||
                memcmp(back, pl, rawlen)) {
                fprintf(stderr, "pack-bench: the block does not unpack to itself (%s)\n", err);
                return 1;
            }
            t_unpack += now() - t1;
            t_pack += t1 - t0;
            for (int k = 0; k < 3; k++) {
                double s;
                zraw[k] += zsize(pl, rawlen, levels[k], &s);
                tzraw[k] += s;
                zpacked[k] += zsize(out, olen, levels[k], &s);
                tzpacked[k] += s;
            }
            records += nrec;
            raw += rawlen;
            packed += olen;
            free(out);
            free(back);
        } else if (type == VT_BLOCK_EVENTS_COLS) {
            fprintf(stderr, "pack-bench: %s holds packed blocks; write it with VTRACE_COMPRESS=0\n", argv[1]);
            return 1;
        }
        free(dec);
        off += VT_BLOCK_HEADER_SIZE + stored;
    }
    if (!records) {
        fprintf(stderr, "pack-bench: no EVENTS block in %s\n", argv[1]);
        return 1;
    }
    double r = (double)records;
    printf("%s: %llu records, %.2f bytes/record as written, %.2f packed\n", argv[1], (unsigned long long)records,
           (double)raw / r, (double)packed / r);
    printf("  pack %.1f ns/record, unpack %.1f ns/record\n", t_pack / r * 1e9, t_unpack / r * 1e9);
    for (int k = 0; k < 3; k++)
        printf("  zstd %d: as written %.2f bytes/record (%.1f ns/record); packed %.2f bytes/record (%.1f ns/record)\n",
               levels[k], (double)zraw[k] / r, tzraw[k] / r * 1e9, (double)zpacked[k] / r, tzpacked[k] / r * 1e9);
    return 0;
}
