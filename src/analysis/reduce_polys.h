/* vtrace reduce --polys: the polynomial lines, in rank order (each rank's in the order
 * its events came), whatever the order in which the replay stepped the ranks: so that
 * the serial and the parallel replay (each process its block of ranks) write the same
 * file. The lines wait in a temporary file (spill.h), sorted by rank at the end when
 * they did not come so. */
#ifndef VT_REDUCE_POLYS_H
#define VT_REDUCE_POLYS_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/replay.h"
#include "analysis/spill.h"

typedef struct vt__polys {
    vt_spill sp;            /* parts of lines (reduce_polys.c) */
    int open, unsorted;
    uint32_t last;          /* the rank of the last line put */
    uint64_t bytes;         /* of the lines put */
} vt__polys;

/* 0, or -1 (errno). */
int vt__polys_open(vt__polys *ps);
/* One line of RANK (with its newline). 0, or -1 (errno). */
int vt__polys_put(vt__polys *ps, uint32_t rank, const char *line, size_t len);
/* Writes every line to OUT, rank by rank. Parallel (PC): each process holds its block of
 * ranks' lines, process 0 writes them all in process order (OUT only there), the others'
 * sent in rounds of at most a megabyte (added to *ROUNDS and *BYTES); 0 or -1 on every
 * process alike. */
int vt__polys_write(vt__polys *ps, FILE *out, const vt_par_comm *pc, uint64_t *rounds, uint64_t *bytes,
                    vt_error *err);
void vt__polys_close(vt__polys *ps);

#endif
