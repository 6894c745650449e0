/* Clock synchronisation of the ranks (clocksync.c), on the layer's own communicator. */
#ifndef VT_TRACING_CLOCKSYNC_H
#define VT_TRACING_CLOCKSYNC_H

#include "tracing/clock.h"

#include <mpi.h>
#include <stdint.h>

/* The fastest round trip (ns) below which a series of ping-pongs stops early; an L
 * above twice this is worth a warning. */
#define VT_SYNC_GOOD_RTT 20000

typedef struct vt_clocksync {
    MPI_Comm comm;
    int size;
    vt_tsc_mark mark;        /* taken before PMPI_Init: the calibration's first end */
    int choice;              /* VTRACE_CLOCK: enum vt_clock_choice (util/settings.h) */
    int root_clock;          /* this rank reads rank 0's clock (vt_clocksync_choose) */
    uint8_t *same_clock;     /* rank 0: the ranks of its host (the same-clock flag), or NULL */
    int64_t at[2], off[2];   /* (local time, offset to rank 0) at MPI_Init (0) and MPI_Finalize (1) */
    int64_t min_rtt;         /* rank 0: the fastest ping-pong seen (INT64_MAX: none) */
    int64_t rtt_median;      /* rank 0: median round trip with rank 1 */
    int rtt_rounds;          /* ... and how many there were */
} vt_clocksync;

/* Rank 0 calibrates the TSC and broadcasts its scale; the ranks of its host take it. */
void vt_clocksync_choose(vt_clocksync *cs, int rank);

/* The ping-pongs with rank 0: at[WHICH], off[WHICH] (0: MPI_Init, 1: MPI_Finalize). */
void vt_clocksync_run(vt_clocksync *cs, int which);

#endif
