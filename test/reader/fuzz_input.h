/* The input of the libFuzzer harnesses (fuzz_reader.c, test/analysis/fuzz_analyses.c): a
 * whole trace, the files concatenated, each starting with its magic ("VTRACE\0D" for
 * vtrace.defs, then "VTRACE\0E" for rank 0, 1, ...), cut before every "VTRACE\0" into
 * the files vt_trace_open_mem() opens. */
#ifndef VT_TEST_FUZZ_INPUT_H
#define VT_TEST_FUZZ_INPUT_H

#include "format/reader.h"

#include <stdio.h>
#include <string.h>

#define FUZZ_MAX_FILES 9

typedef struct fuzz_files {
    vt_mem_file f[FUZZ_MAX_FILES];
    char names[FUZZ_MAX_FILES][32];
    size_t n;
} fuzz_files;

static inline void fuzz_split(const uint8_t *data, size_t size, fuzz_files *out)
{
    static const char magic[7] = {'V', 'T', 'R', 'A', 'C', 'E', 0};
    size_t start[FUZZ_MAX_FILES + 1], n = 0;
    start[n++] = 0;
    for (size_t i = 1; i + sizeof magic <= size && n < FUZZ_MAX_FILES; i++)
        if (memcmp(data + i, magic, sizeof magic) == 0)
            start[n++] = i;
    start[n] = size;
    for (size_t i = 0; i < n; i++) {
        if (i == 0)
            snprintf(out->names[i], sizeof out->names[i], "vtrace.defs");
        else
            snprintf(out->names[i], sizeof out->names[i], "rank-%06zu.vte", i - 1);
        out->f[i] = (vt_mem_file){out->names[i], data + start[i], start[i + 1] - start[i]};
    }
    out->n = n;
}

#endif
