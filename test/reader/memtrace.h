/* Building small traces in memory for reader tests (test/reader/memtrace.c). */
#ifndef VT_TEST_MEMTRACE_H
#define VT_TEST_MEMTRACE_H

#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mt_buf {
    uint8_t *p;
    size_t n, cap;
} mt_buf;

void mt_bytes(mt_buf *b, const void *p, size_t n);
void mt_uvar(mt_buf *b, uint64_t v);
void mt_svar(mt_buf *b, int64_t v);
void mt_str(mt_buf *b, const char *s);
/* Appends a block (header with CRC, raw codec) holding payload. */
void mt_block(mt_buf *f, uint8_t type, const mt_buf *payload, uint32_t nrecords);
void mt_file_header(mt_buf *f, const char magic[8], uint32_t value);

/* A GLOBAL payload for nranks ranks with zero clock offsets. */
void mt_global(mt_buf *payload, uint32_t nranks);
/* vtrace.defs with that payload and END. */
void mt_defs_file(mt_buf *f, uint32_t nranks);
/* A RANKDEFS payload: ncallsites dummy call sites, the world communicator of nranks
 * plus MPI_COMM_SELF, nfiles files on world, no profile. */
void mt_rankdefs(mt_buf *payload, uint32_t rank, uint32_t nranks, int ncallsites, int nfiles);
/* The same with NEXTRA communicator entries (2.0's form, in EXTRA) after MPI_COMM_SELF. */
void mt_rankdefs_comms(mt_buf *payload, uint32_t rank, uint32_t nranks, int ncallsites, int nfiles,
                       const mt_buf *extra, int nextra);
/* A rank file: header, FUNCS, one EVENTS block (omitted when nrecords < 0),
 * RANKDEFS, END. */
void mt_rank_file(mt_buf *f, uint32_t rank, const mt_buf *funcs, const mt_buf *events, int nrecords,
                  const mt_buf *rankdefs);

/* In-memory trace of nranks rank files plus defs (names set by mt_trace_files). */
typedef struct mt_trace {
    mt_buf defs;
    mt_buf ranks[8];
    char names[8][32];
    vt_mem_file files[9];
    uint32_t nranks;
} mt_trace;
/* Fills files[] from defs and ranks[]; returns the number of files. */
size_t mt_trace_files(mt_trace *t);
void mt_trace_free(mt_trace *t);
void mt_free(mt_buf *b);

#endif
