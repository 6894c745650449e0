/* Building small traces in memory for reader tests. */
#include "memtrace.h"
#include "util/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void mt_bytes(mt_buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

void mt_uvar(mt_buf *b, uint64_t v)
{
    uint8_t tmp[VT_UVAR_MAX];
    mt_bytes(b, tmp, (size_t)(vt_put_uvar(tmp, v) - tmp));
}

void mt_svar(mt_buf *b, int64_t v) { mt_uvar(b, vt_zigzag(v)); }

void mt_str(mt_buf *b, const char *s)
{
    mt_uvar(b, strlen(s));
    mt_bytes(b, s, strlen(s));
}

void mt_block(mt_buf *f, uint8_t type, const mt_buf *payload, uint32_t nrecords)
{
    size_t len = payload ? payload->n : 0;
    const uint8_t *data = payload && payload->p ? payload->p : (const uint8_t *)"";
    vt_block_header h = {VT_BLOCK_MAGIC, type, VT_CODEC_RAW, 0, (uint32_t)len, (uint32_t)len, 0, nrecords};
    h.crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)len);
    uint8_t hb[VT_BLOCK_HEADER_SIZE];
    vt_block_header_encode(hb, &h);
    mt_bytes(f, hb, sizeof hb);
    mt_bytes(f, data, len);
}

void mt_file_header(mt_buf *f, const char magic[8], uint32_t value)
{
    uint8_t h[VT_FILE_HEADER_SIZE];
    vt_file_header_encode(h, magic, value);
    mt_bytes(f, h, sizeof h);
}

void mt_global(mt_buf *b, uint32_t nranks)
{
    mt_str(b, "test");
    mt_str(b, "MPI test");
    mt_str(b, "");
    mt_uvar(b, nranks);
    for (uint32_t r = 0; r < nranks; r++) {
        for (int i = 0; i < 4; i++)
            mt_svar(b, 0);
        mt_uvar(b, 1);
        mt_str(b, "host");
    }
    mt_uvar(b, 0);
}

void mt_defs_file(mt_buf *f, uint32_t nranks)
{
    mt_buf g = {0};
    mt_global(&g, nranks);
    mt_file_header(f, VT_MAGIC_DEFS, nranks);
    mt_block(f, VT_BLOCK_GLOBAL, &g, 0);
    mt_block(f, VT_BLOCK_END, NULL, 0);
    mt_free(&g);
}

void mt_rankdefs(mt_buf *b, uint32_t rank, uint32_t nranks, int ncallsites, int nfiles)
{
    mt_rankdefs_comms(b, rank, nranks, ncallsites, nfiles, NULL, 0);
}

void mt_rankdefs_comms(mt_buf *b, uint32_t rank, uint32_t nranks, int ncallsites, int nfiles, const mt_buf *extra,
                       int nextra)
{
    mt_uvar(b, (uint64_t)ncallsites);
    for (int i = 0; i < ncallsites; i++) {
        mt_uvar(b, 0x1000u + (unsigned)i);
        mt_str(b, "/bin/t");
        mt_uvar(b, (uint64_t)i);
        mt_str(b, "f");
    }
    mt_uvar(b, 2 + (uint64_t)nextra);
    mt_uvar(b, 1); /* world (2.0: what the id is derived from, format/commid.h) */
    mt_uvar(b, 0);
    mt_uvar(b, nranks);
    for (uint32_t i = 0; i < nranks; i++)
        mt_uvar(b, i);
    mt_uvar(b, 0);
    mt_svar(b, -1);
    mt_str(b, "world");
    mt_uvar(b, 2); /* self: 2^63 + rank */
    mt_uvar(b, 0);
    mt_uvar(b, 1);
    mt_uvar(b, rank);
    mt_uvar(b, 0);
    mt_svar(b, -1);
    mt_str(b, "self");
    if (extra)
        mt_bytes(b, extra->p, extra->n);
    mt_uvar(b, (uint64_t)nfiles);
    for (int i = 0; i < nfiles; i++) {
        mt_str(b, "file.dat");
        mt_uvar(b, 0);
    }
    mt_uvar(b, 0);        /* profile */
    mt_str(b, "host");
    mt_svar(b, -1);
    mt_svar(b, -1);
    mt_str(b, "");
    mt_uvar(b, 0);
    mt_uvar(b, 0);
    mt_uvar(b, 0);
    mt_svar(b, 0);
    mt_svar(b, 0);
}

void mt_rank_file(mt_buf *f, uint32_t rank, const mt_buf *funcs, const mt_buf *events, int nrecords,
                  const mt_buf *rankdefs)
{
    mt_file_header(f, VT_MAGIC_RANK, rank);
    mt_block(f, VT_BLOCK_FUNCS, funcs, 0);
    if (nrecords >= 0)
        mt_block(f, VT_BLOCK_EVENTS, events, (uint32_t)nrecords);
    mt_block(f, VT_BLOCK_RANKDEFS, rankdefs, 0);
    mt_block(f, VT_BLOCK_END, NULL, 0);
}

size_t mt_trace_files(mt_trace *t)
{
    t->files[0] = (vt_mem_file){"vtrace.defs", t->defs.p, t->defs.n};
    for (uint32_t r = 0; r < t->nranks; r++) {
        snprintf(t->names[r], sizeof t->names[r], "rank-%06u.vte", r);
        t->files[r + 1] = (vt_mem_file){t->names[r], t->ranks[r].p, t->ranks[r].n};
    }
    return t->nranks + 1;
}

void mt_free(mt_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void mt_trace_free(mt_trace *t)
{
    mt_free(&t->defs);
    for (int i = 0; i < 8; i++)
        mt_free(&t->ranks[i]);
}
