/* Writes a small, valid synthetic trace directory (test/reader/synth.c). */
#ifndef VT_TEST_SYNTH_H
#define VT_TEST_SYNTH_H

#include <stddef.h>

typedef struct synth_opts {
    int zstd_level;        /* > 0: zstd blocks where they shrink (needs zstd) */
    int records_per_block; /* records per EVENTS block; 0: 8 */
    int unmatched;         /* 1: rank 1 leaves out its first MPI_Recv */
    int cols;              /* 1: event blocks packed in columns (EVENTS_COLS) */
    int shared;            /* 1 (1.5): vtrace.defs holds the function table of ranks 0 and 1
                            * (rank 2 keeps its own) and a dictionary, against which the
                            * rank files' RANKDEFS are compressed (with zstd_level > 0) */
} synth_opts;

/* Creates DIR if needed and writes vtrace.defs, config.txt and rank-00000N.vte for
 * 3 ranks. Returns 0, or -1 with a message in errbuf. */
int synth_write(const char *dir, const synth_opts *opts, char *errbuf, size_t errlen);

#define SYNTH_NRANKS 3

#endif
