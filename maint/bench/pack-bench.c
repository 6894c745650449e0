/* The cost and the gain of packing event blocks in columns (src/format/evcols.c) on a
 * real rank file: for each EVENTS block of RANKFILE (a trace written with
 * VTRACE_COMPRESS=0), the time per record to pack and unpack it, and its bytes as it
 * is, packed, and compressed with zstd at a few levels (packed and not). Built and run
 * by maint/bench/pack-bench.sh. */
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pack-bench RANKFILE (written with VTRACE_COMPRESS=0)\n");
        return 2;
    }
    size_t flen;
    uint8_t *file = slurp(argv[1], &flen);
    if (!file || flen < VT_FILE_HEADER_SIZE) {
        fprintf(stderr, "pack-bench: cannot read %s\n", argv[1]);
        return 1;
    }
    const char **layout = NULL;
    size_t nfn = 0, off = VT_FILE_HEADER_SIZE;
    uint64_t records = 0, raw = 0, packed = 0;
    double t_pack = 0, t_unpack = 0;
    static const int levels[] = {1, 3, 9};
    uint64_t zraw[3] = {0}, zpacked[3] = {0};
    double tzraw[3] = {0}, tzpacked[3] = {0};
    while (off + VT_BLOCK_HEADER_SIZE <= flen) {
        const uint8_t *h = file + off;
        uint8_t type = h[4], codec = h[5];
        uint32_t stored = vt_get_u32(h + 8), rawlen = vt_get_u32(h + 12), nrec = vt_get_u32(h + 20);
        const uint8_t *pl = h + VT_BLOCK_HEADER_SIZE;
        if (off + VT_BLOCK_HEADER_SIZE + stored > flen)
            break;
        uint8_t *dec = NULL;
        if (codec == 1) {
            dec = malloc(rawlen ? rawlen : 1);
            if (ZSTD_isError(ZSTD_decompress(dec, rawlen, pl, stored))) {
                fprintf(stderr, "pack-bench: a zstd block does not decode\n");
                return 1;
            }
            pl = dec;
        }
        if (type == VT_BLOCK_FUNCS) {
            const uint8_t *p = pl, *end = pl + rawlen;
            uint64_t n, l;
            vt_get_uvar(&p, end, &n);
            layout = calloc(n, sizeof *layout);
            for (nfn = 0; nfn < n; nfn++) {
                vt_get_uvar(&p, end, &l);
                p += l;
                vt_get_uvar(&p, end, &l);
                char *s = malloc(l + 1);
                memcpy(s, p, l);
                s[l] = 0;
                layout[nfn] = s;
                p += l;
            }
        } else if (type == VT_BLOCK_EVENTS) {
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
