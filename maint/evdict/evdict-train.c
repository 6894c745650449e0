/* Trains a zstd dictionary on the EVENTS_COLS payloads of trace directories (the
 * built-in dictionary of codec 3, src/format/evdict.c: mkevdict.sh).
 *   evdict-train CAPACITY OUT DIR...
 * Reads every rank file (*.vte) of each DIR, decodes its EVENTS_COLS blocks of codec
 * 0 or 1 (those of codec 3 were compressed against a dictionary already) and writes a
 * dictionary of at most CAPACITY bytes to OUT. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

static uint8_t *all;
static size_t all_len, all_cap, *sizes, nsamples, sizes_cap;

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static int add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    int ok = b && fread(b, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    for (size_t o = 16; ok && o + 24 <= (size_t)n;) {
        uint8_t type = b[o + 4], codec = b[o + 5];
        uint32_t sl = rd32(b + o + 8), rl = rd32(b + o + 12);
        if (type == 15 || o + 24 + sl > (size_t)n)
            break;
        if (type == 6 && codec <= 1) {
            if (all_len + rl > all_cap && !(all = realloc(all, all_cap = (all_len + rl) * 2)))
                return -1;
            if (codec == 0 ? (memcpy(all + all_len, b + o + 24, rl), 0)
                           : ZSTD_decompress(all + all_len, rl, b + o + 24, sl) != rl) {
                fprintf(stderr, "evdict-train: %s: offset %zu: a block that does not decode\n", path, o);
                ok = 0;
                break;
            }
            if (nsamples == sizes_cap && !(sizes = realloc(sizes, (sizes_cap = sizes_cap * 2 + 64) * sizeof *sizes)))
                return -1;
            sizes[nsamples++] = rl;
            all_len += rl;
        }
        o += 24 + sl;
    }
    free(b);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: evdict-train CAPACITY OUT DIR...\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "evdict-train: %s: cannot open\n", argv[i]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(d));) {
            char path[4096];
            size_t l = strlen(e->d_name);
            if (l < 4 || strcmp(e->d_name + l - 4, ".vte"))
                continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (add_file(path))
                return 1;
        }
        closedir(d);
    }
    size_t cap = (size_t)atol(argv[1]);
    void *dict = malloc(cap);
    size_t n = dict ? ZDICT_trainFromBuffer(dict, cap, all, sizes, (unsigned)nsamples) : 0;
    if (!dict || ZDICT_isError(n)) {
        fprintf(stderr, "evdict-train: %s\n", dict ? ZDICT_getErrorName(n) : "no memory");
        return 1;
    }
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(dict, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "evdict-train: %s: cannot write\n", argv[2]);
        return 1;
    }
    printf("%zu samples, %zu bytes: a dictionary of %zu bytes\n", nsamples, all_len, n);
    return 0;
}
